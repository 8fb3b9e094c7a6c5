"""pytest output -> the few lines a small model can act on: the failing line, the values, the exception."""
from __future__ import annotations

import re

FUNCTION_REPR = re.compile(r"<function (\w+) at 0x[0-9a-f]+>")
FRAME = re.compile(r"^\S+\.py:\d+: in \S+")
MAX_LINES = 14
MAX_LINE_CHARS = 300
WRAPPER_FRAMES = ("in test_check",)  # the harness's own wrapper, never useful to the model


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 3] + "..."


def _failure_section(output: str) -> list[str]:
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"^=+ (FAILURES|ERRORS) =+$", line)), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^=+ .* =+$", lines[i])), len(lines))
    return [line for line in lines[start + 1:end] if not re.match(r"^_{3,} .* _{3,}$", line)]


def pytest_feedback(output: str, *, timed_out: bool = False, timeout_s: float | None = None) -> str:
    if timed_out:
        limit = f" after {timeout_s:g} s" if timeout_s else ""
        return f"The tests timed out{limit}: the function probably loops forever (check loop conditions and updates)."
    section = _failure_section(output)
    kept: list[str] = []
    skip_next = False
    for line in section:
        if skip_next:
            skip_next = False
            continue
        if FRAME.match(line) and line.endswith(WRAPPER_FRAMES):
            skip_next = True  # and the code line under it
            continue
        if line.strip():
            kept.append(_clip(FUNCTION_REPR.sub(r"\1", line.rstrip())))
    if not kept:
        tail = [line for line in output.strip().splitlines() if line.strip()][-MAX_LINES:]
        return "\n".join(_clip(line) for line in tail) or "The tests failed without output."
    if len(kept) > MAX_LINES:  # keep the innermost frames and the error lines: they say what went wrong
        kept = ["..."] + kept[-MAX_LINES:]
    return "\n".join(kept)
