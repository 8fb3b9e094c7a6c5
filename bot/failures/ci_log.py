"""A raw CI log (GitHub Actions) → list[Failure]: clean the runner's decoration, then read pytest's and unittest's
output (a job may run both)."""
from __future__ import annotations

import re

from bot.failures.pytest_output import parse_conftest_error, parse_pytest_output
from bot.failures.types import Failure, ParseError
from bot.failures.unittest_output import parse_unittest_output

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
    """Failures of every pytest and unittest run in the log. Raises ParseError when neither ran in it (the job
    failed before the tests, or ran another tool)."""
    text = clean_ci_log(log)
    failures: list[Failure] = []
    readable = False
    for parse in (parse_pytest_output, parse_unittest_output):
        try:
            failures += parse(text, root=root)
        except ParseError:
            continue
        readable = True
    conftest = parse_conftest_error(text, root)  # pytest stopped before any test: no session, no summary
    if conftest is not None:
        failures.append(conftest)
        readable = True
    if not readable:
        raise ParseError("CI log: no pytest or unittest output found (no pytest session or summary, no unittest "
                         "FAIL:/ERROR: block or `Ran N tests` line)")
    return failures
