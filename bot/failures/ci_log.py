"""A raw CI log (GitHub Actions) → list[Failure]: clean the runner's decoration, then read pytest's output."""
from __future__ import annotations

import re

from bot.failures.pytest_output import parse_pytest_output
from bot.failures.types import Failure, ParseError

# Every line of a downloaded Actions log starts with an ISO timestamp in UTC, 7 fractional digits.
_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
# CSI sequences (colours, cursor moves) and the rarer OSC (`ESC ] ... BEL`) ones pytest plugins may emit.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def clean_ci_log(log: bytes | str) -> str:
    """The log as plain text: undecodable bytes replaced (logs mix encodings), timestamps, ANSI codes and the
    runner's `##[group]`/`##[endgroup]`/`##[error]` command lines removed."""
    text = log.decode("utf-8", errors="replace") if isinstance(log, (bytes, bytearray)) else log
    out = []
    for line in text.splitlines():
        line = _ANSI.sub("", _TIMESTAMP.sub("", line.lstrip("\ufeff")))
        if line.startswith("##["):
            continue  # workflow commands are the runner's, never pytest's
        out.append(line)
    return "\n".join(out)


def parse_ci_log(log: bytes | str, root: str | None = None) -> list[Failure]:
    """Failures of every pytest run in the log. Raises ParseError when no pytest run is in it (the job failed
    before the tests, or ran another tool)."""
    try:
        return parse_pytest_output(clean_ci_log(log), root=root)
    except ParseError as exc:
        raise ParseError(f"CI log: {exc}") from None
