"""unittest's text output (`python -m unittest`, any verbosity, Python 3.8 to 3.13, and runners that print through
unittest's TextTestResult) → list[Failure], the same records pytest's output gives.

After the run unittest prints one block per failing test:

    ======================================================================
    FAIL: test_add (tests.test_calc.TestCalc.test_add)     <- 3.11+; before: (tests.test_calc.TestCalc)
    <the docstring's first line, if any>
    ----------------------------------------------------------------------
    Traceback (most recent call last):
      File "/abs/tests/test_calc.py", line 8, in test_add
        self.assertEqual(add(1, 2), 3)
    AssertionError: -1 != 3

The header names a module, not a file: the frame whose path ends in the module's path gives the test file, and
the directory above it (or the Actions workspace) the root that every frame is made relative to, so the ids are
pytest's node ids (`tests/test_calc.py::TestCalc::test_add`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.failures.traceback import MESSAGE_CAP, SYNTAX_TYPES, anchor_frame, comparison, relativize
from bot.failures.types import Failure, Frame, ParseError

_SEP1 = re.compile(r"^={60,}$")
_SEP2 = re.compile(r"^-{60,}$")
# A subtest adds ` [msg] (i=1)` after the parenthesis.
_HEADER = re.compile(r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>[\w.]+) \((?P<where>[\w.]+)\)(?: .*)?$")
# -v: `test_x (pkg.mod.Class.test_x) ... FAIL`, indented for a subtest; a docstring puts the verdict a line below.
_PROGRESS = re.compile(r"^\s*(?P<name>[\w.]+) \((?P<where>[\w.]+)\)(?: .*)? \.\.\. (?:FAIL|ERROR|unexpected success)$")
_PROGRESS_NAME = re.compile(r"^(?P<name>[\w.]+) \((?P<where>[\w.]+)\)$")
_VERDICT = re.compile(r" \.\.\. (?:FAIL|ERROR|unexpected success)$")
_RAN = re.compile(r"^Ran \d+ tests? in \d+(?:\.\d+)?s$")
_FRAME = re.compile(r'^  File "(?P<path>.+)", line (?P<line>\d+)(?:, in (?P<function>.+))?$')
_ERROR_TYPE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s|:?$)")
_CHAIN = {"During handling of the above exception, another exception occurred:",
          "The above exception was the direct cause of the following exception:"}
# Actions' workspace (hosted and self-hosted runners): the repository's top, whatever the module names say.
_WORKSPACE = re.compile(r"^(?P<root>.*?[/\\]_?work[/\\][^/\\]+[/\\][^/\\]+)[/\\]")
# unittest's own frames (its loader importing a test module): pytest's reports leave its machinery out too.
_UNITTEST_FRAME = re.compile(r"[/\\]lib[/\\]python[\d.]*[/\\]unittest[/\\]\w+\.py$")
_MODULE_LEVEL = {"setUpModule", "tearDownModule"}
_CLASS_LEVEL = {"setUpClass", "tearDownClass"}


@dataclass
class _Block:
    kind: str
    name: str
    where: str
    body: list[str]
    in_body: bool = False  # past the `-----` line that ends the header and its docstring line


@dataclass(frozen=True)
class _Traceback:
    frames: tuple[Frame, ...]  # the last exception's, paths as printed
    message: str
    syntax: Frame | None  # the `File "...", line N` entry of a SyntaxError (no function)


def parse_unittest_output(text: str, root: str | None = None) -> list[Failure]:
    """All failing and erroring tests in `text`. `root` makes absolute paths relative (by default the directory
    the module names are relative to). Raises ParseError when the text shows no unittest run; a green run
    gives []. A test reported twice (subtests, a re-run) keeps its first report."""
    lines = [line.rstrip() for line in text.splitlines()]
    blocks, progress, seen = _scan(lines)
    if not seen:
        raise ParseError("no unittest output found (no FAIL:/ERROR: block, no `Ran N tests` line)")
    failures: dict[str, Failure] = {}
    reported: set[tuple[str, str]] = set()
    for block in blocks:
        failure = _failure(block, root)
        failures.setdefault(failure.test_id, failure)
        reported.add((block.name, _strip_name(block.where, block.name)))
    for name, where in progress:  # verbose progress lines whose report the log lost (cut, or never printed)
        if (name, _strip_name(where, name)) not in reported:
            failure = _failure(_Block("FAIL", name, where, [], True), root)
            failures.setdefault(failure.test_id, failure)
    return list(failures.values())


def _scan(lines: list[str]) -> tuple[list[_Block], list[tuple[str, str]], bool]:
    """One pass: report blocks, verbose progress lines of failing tests, and whether this is unittest at all."""
    blocks: list[_Block] = []
    progress: list[tuple[str, str]] = []
    current: _Block | None = None
    seen = False
    for n, line in enumerate(lines):
        if _SEP1.match(line) or _SEP2.match(line):
            if current and not current.in_body and _SEP2.match(line):
                current.in_body = True
            else:
                current = None
            continue
        head = _HEADER.match(line)
        if head and (head["kind"] == "UNEXPECTED SUCCESS" or (n and _SEP1.match(lines[n - 1]))):
            seen = True
            block = _Block(head["kind"], head["name"], head["where"], [])
            blocks.append(block)
            current = None if head["kind"] == "UNEXPECTED SUCCESS" else block  # listed, never followed by a body
            continue
        if current is not None:
            if current.in_body:
                current.body.append(line)
            continue
        if _RAN.match(line):
            seen = True
        elif (m := _PROGRESS.match(line) or (n + 1 < len(lines) and _VERDICT.search(lines[n + 1])
                                              and _PROGRESS_NAME.match(line))):
            seen = True
            progress.append((m["name"], m["where"]))
    return blocks, progress, seen


def _strip_name(where: str, name: str) -> str:
    """3.11+ repeats the test's name inside the parenthesis: `(pkg.mod.Class.test_x)`."""
    return where[:-len(name) - 1] if where.endswith("." + name) else where


def _read_traceback(body: list[str]) -> _Traceback:
    """The last traceback in the report (a chained or re-raised exception prints several; unittest's import
    failure prints its own line first) and the message under it."""
    frames: list[Frame] = []
    message: list[str] = []
    syntax: Frame | None = None
    want_code = False
    for line in body:
        if line in ("Stdout:", "Stderr:"):
            break  # -b (buffer) appends the test's output after the traceback
        if line.startswith("Traceback (most recent call last):"):
            frames, message, syntax, want_code = [], [], None, False
            continue
        if line in _CHAIN:
            continue
        frame = _FRAME.match(line)
        if frame and not message:
            frames.append(Frame(frame["path"], int(frame["line"]), frame["function"] or "<module>", None))
            syntax = None if frame["function"] else frames[-1]
            want_code = True
            continue
        if not message and line.startswith("  ") and frames:
            code = line.strip()
            if want_code and code and not set(code) <= set("^~ "):  # 3.11+ underlines the expression
                last = frames[-1]
                frames[-1] = Frame(last.path, last.line, last.function, code)
                syntax = frames[-1] if syntax is not None else None
                want_code = False
            continue
        if line.strip() or message:
            message.append(line)
    text = "\n".join(message).strip("\n")
    if len(text) > MESSAGE_CAP:
        text = text[:MESSAGE_CAP] + "\n…"
    return _Traceback(tuple(frames), text, syntax)


def _failure(block: _Block, root: str | None) -> Failure:
    tb = _read_traceback(block.body)
    test_id, base = _identify(block.name, _strip_name(block.where, block.name), tb.frames, root)
    frames = tuple(Frame(relativize(f.path, base), f.line, f.function, f.code) for f in tb.frames
                   if not _UNITTEST_FRAME.search(f.path))
    first = tb.message.splitlines()[0] if tb.message else ""
    m = _ERROR_TYPE.match(first)
    error_type = m["type"] if m else None
    message = tb.message or ("Unexpected success" if block.kind == "UNEXPECTED SUCCESS" else None)
    anchor = anchor_frame(frames, test_id.split("::", 1)[0])
    if error_type in SYNTAX_TYPES and tb.syntax is not None:  # the broken module is where the fix goes
        anchor = Frame(relativize(tb.syntax.path, base), tb.syntax.line, tb.syntax.function, tb.syntax.code)
    actual, expected = comparison(tb.message, anchor.code if anchor else None) if error_type == "AssertionError" \
        else (None, None)
    return Failure(test_id=test_id, file=anchor.path if anchor else None, line=anchor.line if anchor else None,
                   assertion=anchor.code if anchor else None, expected=expected, actual=actual,
                   error_type=error_type, message=message, traceback=frames)


def _identify(name: str, where: str, frames: tuple[Frame, ...], root: str | None) -> tuple[str, str | None]:
    """(node id, root for the frames). `name (where)` is a test method of module.Class; setUpClass names the
    class, setUpModule the module, and a module that failed to import is unittest's `_FailedTest`."""
    if where.startswith("unittest.loader."):  # `tests.test_x (unittest.loader._FailedTest)`
        parts, test, whole = name.split("."), None, True
    elif name in _MODULE_LEVEL:
        parts, test, whole = where.split("."), None, True
    else:
        parts, test, whole = where.split("."), None if name in _CLASS_LEVEL else name, False
    found = _module_file(parts, frames, whole)
    if found:
        k, path, candidate = found
        base = root or _workspace(path) or path[:len(path) - len(candidate)].rstrip("/\\") or None
        file = relativize(path, base)
        if file.startswith("/") or re.match(r"^[A-Za-z]:[/\\]", file):  # not under the given root
            file = candidate
    else:
        k = len(parts) if whole else _module_length(parts)
        # `__main__` (a test file run as a script) is no module path: the frame of the test (or setUpClass) is
        own = next((f for f in frames if f.function == (test or name)), None)
        base = root or (own and _workspace(own.path)) or None
        file = relativize(own.path, base) if own else "/".join(parts[:k]) + ".py"
    return "::".join([file, *parts[k:], *([test] if test else [])]), base


def _module_file(parts: list[str], frames: tuple[Frame, ...], whole: bool) -> tuple[int, str, str] | None:
    """The longest leading parts that are the module of a frame: (how many, the frame's path, the module's path
    relative to its import root)."""
    for k in ([len(parts)] if whole else range(len(parts) - 1, 0, -1)):
        rel = "/".join(parts[:k])
        for candidate in (rel + ".py", rel + "/__init__.py"):
            for frame in frames:
                path = frame.path.replace("\\", "/")
                if path == candidate or path.endswith("/" + candidate):
                    return k, frame.path, candidate
    return None


def _module_length(parts: list[str]) -> int:
    """Without a traceback: module parts run until the first capitalised one (a class)."""
    k = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts) - 1)
    return max(k, 1)


def _workspace(path: str) -> str | None:
    m = _WORKSPACE.match(path)
    return m["root"] if m else None
