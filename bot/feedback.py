"""pytest output -> the few lines a small model can act on: the failing line, the values, the exception."""
from __future__ import annotations

import re
from collections.abc import Sequence

from bot.failures import Failure
from bot.failures.pytest_output import report_blocks
from bot.failures.sides import computed

# `Failure.error_type` of the records bot.fix.reproduce.testrun makes from its pytest plugin's report
TIMEOUT_ERROR = "TestTimeout"  # the per-test time limit stopped the test
MEMORY_ERROR = "TestMemoryLimit"  # the memory guard stopped the test before the container ran out of memory
NOT_COLLECTED = "NotCollected"  # a selected test id that the run did not collect
FUNCTION_REPR = re.compile(r"<function (\w+) at 0x[0-9a-f]+>")
FRAME = re.compile(r"^\S+\.py:\d+: in \S+")
NOISE = re.compile(r"^(_ )+_$|^-+ generated xml file: .* -+$")  # long-traceback separators, the JUnit note
HEADER = re.compile(r"^(=+ test session starts =+|platform |rootdir: |plugins: |cachedir: |collected |collecting )")
FATAL = re.compile(r"^Fatal Python error: .+$", re.M)  # faulthandler, on a crash of the interpreter
DUMP_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)$')
ROOTDIR = re.compile(r"^rootdir: (?P<root>[^,\s]+)", re.M)
MAX_LINES = 14
MAX_LINE_CHARS = 300
MAX_TIMEOUT_FRAMES = 4  # the innermost frames of a timed-out test: the loop and its caller


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 3] + "..."


def _failure_section(output: str) -> list[str]:
    """The lines of pytest's first report section (FAILURES, or ERRORS when the run could not start its tests)."""
    blocks = report_blocks(output)
    return [line for block in blocks if block.section == blocks[0].section for line in block.body]


def pytest_feedback(output: str, *, timed_out: bool = False, timeout_s: float | None = None,
                    failures: Sequence[Failure] = (), wrapper_frames: tuple[str, ...] = ()) -> str:
    """`failures`: the run's records; a test stopped by its time limit or the memory guard is described by where
    it was running, a selected test that was not collected by one line, ahead of pytest's own report.
    `wrapper_frames`: the ends of frame lines (`in test_check`) of a harness's own wrapper, left out with the
    code line under each: never useful to the model."""
    hung = [f for f in failures if f.error_type in (TIMEOUT_ERROR, MEMORY_ERROR)]
    if hung:
        return _timeout_feedback(hung, len(failures) - len(hung))
    if timed_out:
        limit = f" after {timeout_s:g} s" if timeout_s else ""
        return f"The tests timed out{limit}: the function probably loops forever (check loop conditions and updates)."
    missing = [f"{f.message}." for f in failures if f.error_type == NOT_COLLECTED][:3]
    report = _crash_report(output) or _report(output, wrapper_frames)
    if report or missing:
        said = next(filter(None, map(in_words, failures)), None)
        return "\n".join(missing + ([report] if report else []) + ([said] if said else []))
    tail = [line for line in output.strip().splitlines() if line.strip() and not HEADER.match(line)][-MAX_LINES:]
    return "\n".join(_clip(line) for line in tail) or "The tests failed without output."


def _timeout_feedback(hung: Sequence[Failure], others: int) -> str:
    first = hung[0]
    if first.error_type == MEMORY_ERROR:
        head = f"{first.test_id}: {first.message or 'the test used too much memory'}; it was growing here " \
               "(innermost last):"
        hint = "A loop there probably never ends and keeps adding to a list: check its condition and that every " \
               "pass makes progress."
    else:
        head = f"{first.test_id}: {first.message or 'the test timed out'}; it was still running here when stopped " \
               "(innermost last):"
        hint = "A loop there probably never ends: check its condition and that every pass makes progress."
    lines = [head]
    for frame in first.traceback[-MAX_TIMEOUT_FRAMES:]:
        where = f"{frame.path}:{frame.line} in {frame.function}" if frame.function else f"{frame.path}:{frame.line}"
        lines.append(_clip(f"  {where}: {frame.code}" if frame.code else f"  {where}"))
    lines.append(hint)
    if len(hung) > 1:
        lines.append(f"{len(hung) - 1} more test(s) timed out or used too much memory too.")
    if others:
        lines.append(f"{others} other test(s) failed.")
    return "\n".join(lines)


def _report(output: str, wrapper_frames: tuple[str, ...]) -> str:
    """pytest's FAILURES/ERRORS section, cut to the lines that say what went wrong ("" when there is none)."""
    section = _failure_section(output)
    kept: list[str] = []
    skip_next = False
    for line in section:
        if skip_next:
            skip_next = False
            continue
        if wrapper_frames and FRAME.match(line) and line.endswith(wrapper_frames):
            skip_next = True  # and the code line under it
            continue
        if line.strip() and not NOISE.match(line.rstrip()):
            kept.append(_clip(FUNCTION_REPR.sub(r"\1", line.rstrip())))
    if len(kept) > MAX_LINES:  # keep the innermost frames and the error lines: they say what went wrong
        kept = ["..."] + kept[-MAX_LINES:]
    return "\n".join(kept)


def _crash_report(output: str) -> str:
    """An interpreter that crashed (faulthandler's dump): the error and the project's frames it was in."""
    fatal = FATAL.search(output)
    if fatal is None:
        return ""
    root = ROOTDIR.search(output)
    prefix = root["root"].rstrip("/") + "/" if root else "\0"
    dump = output[fatal.end():]
    current = dump.find("Current thread")
    frames: list[str] = []
    for line in dump[max(current, 0):].splitlines()[1:]:
        found = DUMP_FRAME.match(line)
        if found is None:
            if frames:
                break  # the end of the crashed thread's stack
            continue
        path = found["path"]
        if path.startswith(prefix) or not frames:  # the project's frames, and the innermost one wherever it is
            frames.append(_clip(f"  {path.removeprefix(prefix)}:{found['line']} in {found['function']}"))
    project = frames[:MAX_TIMEOUT_FRAMES]
    return "\n".join([f"The test process crashed ({fatal.group(0)}) here (innermost last):", *reversed(project)])


def in_words(failure: Failure) -> str | None:
    """A failed comparison said with its direction: "So `f(None)` gave `0.0`; the test expects `None`." unittest
    prints `0.0 != None`, which does not say which side the code computed: a small model read it the wrong way
    round. Said only where the assertion's line shows it (bot/failures/sides.py); None otherwise."""
    said = computed(failure.assertion)
    if said is None or failure.actual is None or failure.expected is None:
        return None
    return f"So `{said[0]}` gave `{failure.actual}`; the test expects `{failure.expected}`."
