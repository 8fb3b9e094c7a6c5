"""After an answer that left the code unchanged, the reflect design asks which line is wrong before it asks for
the fix again: a small model that sees no bug rewrites the whole function as it was, again and again (hotter
answers included), but names a line when asked for one line, and changes a line it is pointed at.

In: the model's answer to the question (bot/agent/steps/prompts.py, `line_question`), the target, the lines named
before. Out: a line of the target's code (stripped), which the next request for a fix points at. Never: a line of
the docstring, the `def` line or a line named before; a line that is not in the code (the model's quote is
matched to the code, else nothing); a line picked out of the code written out again (no line was named)."""
from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from bot.agent.source.code import split_docstring
from bot.agent.types import Target

SUSPECT_TOKENS = 80  # one line of code, fenced
CLOSE = 0.8  # how alike a quote must be to a line of the code to stand for it (difflib's ratio)
_FENCE = re.compile(r"```[\w-]*\n(.*?)(?:```|$)", re.S)
_COMMENT = re.compile(r"\s+#.*$")  # a trailing comment, which a quote may leave out


def candidates(target: Target, named: Sequence[str]) -> list[str]:
    """The code's lines the answer may name: not the docstring, not a `def` or decorator line, not blank or a
    comment, not named before."""
    code, _ = split_docstring(target.source)
    lines = [line.strip() for line in code.splitlines()]
    return list(dict.fromkeys(line for line in lines if line and not line.startswith(("def ", "async def ", "@", "#"))
                              and line not in named))


def suspect(answer: str, target: Target, named: Sequence[str]) -> str | None:
    """The line of the code the answer names: its first line that is one of `candidates`, or close to one."""
    found = _FENCE.search(answer)
    quoted = [line.strip() for line in (found.group(1) if found else answer).splitlines() if line.strip()]
    if any(line.startswith(("def ", "async def ")) for line in quoted):
        return None  # the code written out again: no line named
    lines = candidates(target, named)
    bare = {_COMMENT.sub("", line): line for line in reversed(lines)}  # the first line of each code wins
    for quote in quoted[:3]:
        if quote in lines:
            return quote
        close = difflib.get_close_matches(_COMMENT.sub("", quote), list(bare), n=1, cutoff=CLOSE)
        if close:
            return bare[close[0]]
    return None

