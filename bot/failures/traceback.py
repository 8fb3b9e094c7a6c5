"""One pytest failure report (the text under a `____ test ____` header, or inside a JUnit <failure>) → `Failure`.

Handles pytest's long entries (source with a `>` line, then `path:line: ErrorType`), short/auto entries
(`path:line: in func` then the code line) and the `E ` lines in one pass, since `--tb=auto` mixes the two and
collection errors are always printed short, whatever `--tb` says."""
from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from pathlib import PurePosixPath, PureWindowsPath

from bot.failures.sides import computed
from bot.failures.types import Failure, Frame

# `path:line: rest` at column 0. rest is `in func` (short) or the error type / nothing (long).
_LOCATION = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+):(?: (?P<rest>.*))?$")
_MARKED = re.compile(r"^>\s?(?P<code>.*)$")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(?P<name>\w+)\s*\(")
_ERROR_TYPE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s|:?$)")
_SYNTAX_FILE = re.compile(r'^\s*File "(?P<path>.+)", line (?P<line>\d+)')
SYNTAX_TYPES = {"SyntaxError", "IndentationError", "TabError"}
_CAPTURED = re.compile(r"^-{3,} .* -{3,}$")
_TYPE_PREFIX = re.compile(r"^[A-Za-z_][\w.]*: ")
_DIFFER = re.compile(r"^[A-Z][a-z]+ differ: ")  # assertSequenceEqual: `Lists differ: [1] != [2]`
_WITHIN = re.compile(r" within (?:\S+ places|\S+ delta) \(.*\)$")  # assertAlmostEqual
MESSAGE_CAP = 2000  # a huge diff in the E lines is noise for the agent; keep its head


def relativize(path: str, root: str | None) -> str:
    """A path under `root` becomes root-relative, so frames match the test id's file; others stay as they are."""
    if not root or not path:
        return path
    for pure in (PurePosixPath, PureWindowsPath):
        try:
            return str(pure(path).relative_to(pure(root))).replace("\\", "/")
        except ValueError:
            continue
    return path


def relativize_text(text: str, root: str | None) -> str:
    """Paths under `root` inside free text (a SyntaxError's `File "/work/run-x/0/calc.py"`) as root-relative."""
    return text.replace(root.rstrip("/") + "/", "") if root else text


def parse_report(test_id: str, lines: list[str], root: str | None = None) -> Failure:
    """Parse one report's lines. Never raises on odd input: unknown lines are ignored."""
    frames: list[Frame] = []
    e_lines: list[str] = []
    location_types: list[str] = []
    entry_def: str | None = None  # the first `def` of the current long entry names its function
    entry_code: str | None = None  # the `>` line of the current long entry
    want_code = False  # a short frame just started: its next indented line is the code
    for raw in lines:
        line = raw.rstrip("\r\n")
        if _CAPTURED.match(line):
            break  # captured stdout/log follows: not part of the traceback
        if line.startswith("E ") or line == "E":
            e_lines.append(line[2:] if len(line) > 1 else "")
            want_code = False
            continue
        loc = _LOCATION.match(line)
        if loc and not line.startswith((" ", "\t", ">")):
            path, lineno, rest = relativize(loc["path"], root), int(loc["line"]), (loc["rest"] or "").strip()
            if rest.startswith("in "):
                frames.append(Frame(path, lineno, rest[3:].strip() or None, None))
                want_code = True
            else:
                frames.append(Frame(path, lineno, entry_def, entry_code))
                if rest and _ERROR_TYPE.match(rest):
                    location_types.append(rest)
                entry_def, entry_code, want_code = None, None, False
            continue
        marked = _MARKED.match(line)
        if marked:
            entry_code = marked["code"].strip() or None
            continue
        if want_code and line.startswith((" ", "\t")) and line.strip():
            want_code = False
            if frames[-1].code is None and line.strip() != "???":
                last = frames[-1]
                frames[-1] = Frame(last.path, last.line, last.function, line.strip())
            continue
        d = _DEF.match(line)
        if d and entry_def is None:
            entry_def = d["name"]
    return _assemble(test_id, frames, e_lines, location_types, root)


def _assemble(test_id: str, frames: list[Frame], e_lines: list[str], location_types: list[str],
              root: str | None) -> Failure:
    text = textwrap.dedent("\n".join(e_lines)).strip("\n")
    error_type = location_types[-1] if location_types else _type_from_e_lines(text)
    test_file = test_id.split("::", 1)[0]
    anchor = anchor_frame(frames, test_file)
    file, line = (anchor.path, anchor.line) if anchor else (None, None)
    assertion = anchor.code if anchor else None
    actual, expected = comparison(text, assertion)
    if error_type in SYNTAX_TYPES:
        # The broken module is where the fix goes: point there, and add it as the innermost frame.
        for i, e in enumerate(text.splitlines()):
            m = _SYNTAX_FILE.match(e)
            if m:
                file, line = relativize(m["path"], root), int(m["line"])
                rest = text.splitlines()[i + 1:i + 2]
                assertion = rest[0].strip() if rest and rest[0].strip() else None
                frames.append(Frame(file, line, "<module>", assertion))
                break
    text = relativize_text(text, root)
    if len(text) > MESSAGE_CAP:
        text = text[:MESSAGE_CAP] + "\n…"
    return Failure(test_id=test_id, file=file, line=line, assertion=assertion, expected=expected, actual=actual,
                   error_type=error_type, message=text or None, traceback=tuple(frames))


def anchor_frame(frames: Sequence[Frame], test_file: str) -> Frame | None:
    """The deepest frame in the test's own file (the assertion, even when a helper in that file made it);
    the deepest frame at all when none is there."""
    if not frames:
        return None
    norm = test_file.replace("\\", "/")
    for f in reversed(frames):
        p = f.path.replace("\\", "/")
        if norm and (p == norm or p.endswith("/" + norm) or norm.endswith("/" + p)):
            return f
    return frames[-1]


def _type_from_e_lines(text: str) -> str | None:
    """The exception name from the last unindented `Name: message` E line; rewritten asserts are AssertionError."""
    found: str | None = None
    for e in text.splitlines():
        if e[:1].isspace() or not e:
            continue
        m = _ERROR_TYPE.match(e)
        if m and m["type"][:1].isupper():
            found = m["type"]
    if found is None and text.startswith("assert "):
        return "AssertionError"
    return found


def error_type_from_message(message: str | None) -> str | None:
    """For summary lines: `IndexError: list index out of range` → IndexError, `assert 1 == 2` → AssertionError."""
    return _type_from_e_lines(message.strip()) if message else None


def comparison(text: str, assertion: str | None = None) -> tuple[str | None, str | None]:
    """(actual, expected) from `assert LEFT == RIGHT` (pytest's rewriting) or unittest's `FIRST != SECOND`: the
    first side is the actual one unless the `assertion`'s line shows the test wrote the expected value first
    (bot/failures/sides.py)."""
    first, second = _sides(text)
    said = computed(assertion)
    return (second, first) if said is not None and said[1] == 1 else (first, second)


def _sides(text: str) -> tuple[str | None, str | None]:
    for i, e in enumerate(text.splitlines()):
        s = e.strip()
        asserted = s.startswith("AssertionError: ")
        if asserted:
            s = s[len("AssertionError: "):]
        if s.startswith("assert "):
            parts = split_top_level(s[len("assert "):], " == ")
        elif i == 0 and " != " in s and (asserted or not _TYPE_PREFIX.match(s)):  # not `ValueError: a != b`
            return _unittest_sides(s)
        else:
            continue
        if len(parts) == 2:
            return parts[0].strip(), parts[1].strip()
        return None, None
    return None, None


def _unittest_sides(s: str) -> tuple[str | None, str | None]:
    """unittest's assertEqual family: `first (actual) != second (expected)`, maybe after `Lists differ: `,
    maybe followed by assertAlmostEqual's `within ...` and the test's own ` : message`."""
    parts = split_top_level(_DIFFER.sub("", s, count=1), " != ")
    if len(parts) != 2:
        return None, None
    expected = _WITHIN.sub("", split_top_level(parts[1], " : ")[0])
    return parts[0].strip(), expected.strip()


def split_top_level(s: str, sep: str) -> list[str]:
    """Split on `sep` outside brackets and quotes, so `[1, 2] == f(a == b)` splits once."""
    parts: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and s.startswith(sep, i):
            parts.append(s[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(s[start:])
    return parts
