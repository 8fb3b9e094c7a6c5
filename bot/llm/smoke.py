"""`python -c 'from bot.llm.smoke import main; main()'`: load the bundled model and ask it for one token.

Run by scripts/setup.sh in its own process, so that a llama.cpp build that crashes on this CPU (a native build
using AMX kernels, say) is reported at set-up with what to do, not as a segfault in the middle of a run."""
from __future__ import annotations

import time

from bot.llm.registry import open_llm
from bot.llm.spec import DEFAULT_MODEL
from bot.llm.types import Message


def main() -> None:
    start = time.monotonic()
    llm = open_llm(DEFAULT_MODEL)
    try:
        llm.complete([Message("user", "Say ok.")], max_tokens=1)
    finally:
        close = getattr(llm, "close", None)
        if close:
            close()
    print(f"\033[1m[setup]\033[0m {DEFAULT_MODEL} answers ({time.monotonic() - start:.1f} s to load and reply)")
