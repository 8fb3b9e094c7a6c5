"""pytest's terminal output (any `--tb` style, `-q` or verbose) → list[Failure].

The FAILURES/ERRORS sections give the full records; the `short test summary info` lines give the test ids (the
`____ name ____` headers drop the file) and still yield records when the log was cut or run with `--tb=no`."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from bot.failures.traceback import comparison, error_type_from_message, parse_report, relativize
from bot.failures.types import Failure, ParseError

_SECTION = re.compile(r"^=+ (?P<title>.+?) =+$")
_HEADER = re.compile(r"^_+ (?P<name>.+?) _+$")
_SUMMARY = re.compile(r"^(?P<kind>FAILED|ERROR) (?P<id>.+?)(?: - (?P<msg>.*))?$")
_VERBOSE = re.compile(r"^(?P<id>\S+::\S.*?) (?:FAILED|ERROR)(?:\s+\[\s*\d+%\])?$")
_ROOTDIR = re.compile(r"^rootdir: (?P<root>.+?)(?:, (?:configfile|inifile|testpaths|plugins): .*)?$")
_STATS = re.compile(r"\b\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected)\b.* in \d+(?:\.\d+)?s\b")
_CONFTEST = re.compile(r"^ImportError while loading conftest '(?P<path>[^']+)'\.?$")
_REPORT_SECTIONS = {"FAILURES", "ERRORS"}
_KNOWN_SECTIONS = _REPORT_SECTIONS | {"test session starts", "short test summary info", "PASSES", "warnings summary"}


class ReportBlock(NamedTuple):
    """One test's entry in pytest's FAILURES or ERRORS section."""

    section: str  # "FAILURES" or "ERRORS"
    name: str  # the `____ name ____` header
    body: list[str]  # its lines, right-stripped, `_ _ _` separators of long tracebacks included


def report_blocks(text: str) -> list[ReportBlock]:
    """The FAILURES and ERRORS entries of pytest's output, in order (also what bot/feedback.py reads)."""
    return _scan(text.splitlines(), _is_cut(text))[0]


def _is_cut(text: str) -> bool:
    return bool(text) and not text.endswith(("\n", "\r"))


def parse_pytest_output(text: str, root: str | None = None) -> list[Failure]:
    """All failing and erroring tests in `text`. `root` (default: pytest's `rootdir:` line) makes absolute paths
    relative. Raises ParseError when the text shows no sign of a pytest run; a green run gives []."""
    lines = text.splitlines()
    root = root or _find_root(lines)
    # A log cut mid-line (`FAILED tests/test_a`) would invent a test id: an unterminated last line counts only
    # for the "is this pytest" check and the report blocks, never as a summary line.
    blocks, summary, is_pytest = _scan(lines, _is_cut(text))
    if not is_pytest:
        raise ParseError("no pytest output found (no session header, FAILURES/ERRORS section, summary or stats line)")
    failures: list[Failure] = []
    used: set[str] = set()
    for _, header, body in blocks:
        test_id = _resolve_id(header, body, summary, used, root)
        used.add(test_id)
        failure = parse_report(test_id, body, root)
        msg = summary.get(test_id)
        if failure.message is None and msg:
            failure = replace(failure, message=msg, error_type=failure.error_type or error_type_from_message(msg))
        failures.append(failure)
    for test_id, msg in summary.items():
        if test_id not in used:  # only the summary (or a verbose progress line) saw this one
            failures.append(_from_summary(test_id, msg, root))
    return _dedupe(failures)


def parse_conftest_error(text: str, root: str | None = None) -> Failure | None:
    """pytest's report of a conftest that raised on import, which stops it before any test (a usage error): one
    Failure whose test id is the conftest's path, relative to `root` when under it; None without such a report."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _CONFTEST.match(line.strip())
        if m:
            return parse_report(relativize(m["path"], root), lines[i + 1:], root)
    return None


def _scan(lines: list[str], cut: bool) -> tuple[list[ReportBlock], dict[str, str | None], bool]:
    """One pass: report blocks, summary ids → message, and whether this is pytest at all."""
    blocks: list[ReportBlock] = []
    summary: dict[str, str | None] = {}
    section: str | None = None
    is_pytest = False
    for n, line in enumerate(lines):
        line = line.rstrip()
        partial = cut and n == len(lines) - 1
        sec = _SECTION.match(line)
        if sec:
            title = sec["title"]
            section = title if title in _KNOWN_SECTIONS else None
            is_pytest = is_pytest or section is not None or bool(_STATS.search(title))
            continue
        if section in _REPORT_SECTIONS:
            head = _HEADER.match(line)
            if head and not set(line) <= {"_", " "}:  # `_ _ _ _` separates entries inside one report
                blocks.append(ReportBlock(section, head["name"], []))
            elif blocks:
                blocks[-1].body.append(line)
            continue
        if section == "PASSES":
            continue  # captured output of passing tests may contain anything
        m = _SUMMARY.match(line)
        if m and (section == "short test summary info" or "::" in m["id"] or m["id"].endswith(".py")):
            if not partial:
                summary.setdefault(m["id"].strip(), m["msg"])
            is_pytest = True
            continue
        v = _VERBOSE.match(line)
        if v and not partial:
            summary.setdefault(v["id"].strip(), None)
        elif _STATS.search(line) and not line.startswith(" "):
            is_pytest = True  # `-q` ends with a bare stats line
    return blocks, summary, is_pytest


def _find_root(lines: list[str]) -> str | None:
    for line in lines[:200]:  # the header is at the top of a run; do not scan a whole CI log twice
        m = _ROOTDIR.match(line.strip())
        if m:
            return m["root"].strip()
    return None


def _resolve_id(header: str, body: list[str], summary: dict[str, str | None], used: set[str],
                root: str | None) -> str:
    """The node id for a report header: `test_add`, `TestThing.test_method`, `ERROR collecting pkg/test_x.py`,
    `ERROR at setup of test_y`. The summary knows the file; otherwise the first frame's path stands in."""
    for prefix in ("ERROR collecting ",):
        if header.startswith(prefix):
            return relativize(header[len(prefix):].strip(), root)
    name = re.sub(r"^ERROR at (?:setup|teardown|call) of ", "", header).strip()
    first = _first_path(body, root)
    candidates = [i for i in summary if "::" in i and _key(i) == name]
    for cand in candidates:
        if first and cand.split("::", 1)[0] == first and cand not in used:
            return cand
    for cand in candidates:
        if cand not in used:
            return cand
    if candidates:
        return candidates[0]
    base, bracket, params = name.partition("[")
    return f"{first or '?'}::{base.replace('.', '::')}{bracket}{params}"


def _key(test_id: str) -> str:
    """How pytest titles a report: the node id after the file, `::` shown as `.` (parameters left alone)."""
    rest = test_id.split("::", 1)[1]
    base, bracket, params = rest.partition("[")
    return base.replace("::", ".") + bracket + params


def _first_path(body: list[str], root: str | None) -> str | None:
    """The first location line's path: in pytest's reports that is the test's own file."""
    loc = re.compile(r"^(\S.*?):\d+:(?: |$)")
    for line in body:
        m = loc.match(line)
        if m and not line.startswith(("E ", ">")):
            return relativize(m[1], root)
    return None


def _from_summary(test_id: str, msg: str | None, root: str | None) -> Failure:
    actual, expected = comparison(msg or "")
    test_id = relativize(test_id, root)
    return Failure(test_id=test_id, file=test_id.split("::", 1)[0], line=None, assertion=None, expected=expected,
                   actual=actual, error_type=error_type_from_message(msg), message=msg or None)


def _dedupe(failures: list[Failure]) -> list[Failure]:
    """A CI log may hold the same run twice (a retry step); keep the first of identical records."""
    seen: set[Failure] = set()
    out = []
    for f in failures:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out
