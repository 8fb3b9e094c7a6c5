"""Line edits applied to the function they name, deterministically: the new code placed at the indentation of the
lines it replaces, other readings of its layout tried when the plain one does not parse (a small model's
indentation, a `for` line given its body's range, a lost colon).

In: the function's source, edits parsed by bot/agent/designs/edits.py. Out: the function with the edits in place.
Never: the `def` line changed, overlapping edits merged (an `EditError` for the model instead)."""
from __future__ import annotations

import ast
import re
import textwrap

from bot.agent.designs.edits import Delete, EditError, Insert, Replace


def _indent_of(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _place(code: str, indent: str, rebase: bool) -> list[str]:
    """The new lines. A replacement starts at the indentation of the line it replaces (small models get the
    absolute indentation wrong more often than the relative one); an insertion written flush left gets the
    indentation of where it goes."""
    lines = _lines(code)
    first = next((line for line in lines if line.strip()), "")
    if rebase or (indent and not first.startswith(" ")):
        lines = textwrap.dedent("\n".join(lines)).splitlines()
        return [indent + line if line.strip() else line for line in lines]
    return lines


def _lines(code: str) -> list[str]:
    return code.replace("\t", "    ").rstrip("\n").splitlines() or [""]


CLAUSE = re.compile(r"(?:elif\b|else\s*:|except\b|finally\s*:)")  # a line that continues a block above it


def _relayouts(code: str, indent: str, replaced: list[str], above: list[str]) -> list[list[str] | None]:
    """Other readings of new code's indentation, tried in this order only when the plain one does not parse
    (the index is the `layout`; None where a reading does not apply):
    0. as many lines as it replaces: each takes the indentation of the line it replaces (the model flattened a
       block: `if x:` and its body at one level, "expected an indented block");
    1. the first line flush left, the others as copied from the numbered view: they keep their indentation
       exactly (a replacement that runs from inside one block into the next, "unexpected indent");
    2. the first line flush left, the others indented relative to it: one level under a first line that opens
       a block, keeping their indentation relative to each other;
    3. a first line that continues a block (`elif`, `else:`, `except`, `finally:`) at the indentation of the
       nearest block header above whose body runs down to the edit, its `if` or `try` (an `elif` inserted after
       the last line of an `if` body otherwise lands inside that body), the rest relative to it."""
    lines = _lines(code)
    per_line = ([_indent_of(old) + new.strip() if new.strip() else new for new, old in zip(lines, replaced)]
                if replaced and len(lines) == len(replaced) else None)
    absolute = relative = None
    rest = [line for line in lines[1:] if line.strip()]
    if rest and not lines[0].startswith(" ") and rest[0].startswith(" "):
        absolute = [indent + lines[0]] + lines[1:]
        step = indent + ("    " if lines[0].rstrip().endswith(":") else "")
        relative = [indent + lines[0]] + [step + line if line.strip() else line
                                          for line in textwrap.dedent("\n".join(lines[1:])).splitlines()]
    opener = _opener_indent(above) if CLAUSE.match(lines[0].strip()) else None
    clause = ([opener + line if line.strip() else line for line in textwrap.dedent("\n".join(lines)).splitlines()]
              if opener is not None else None)
    return [per_line, absolute, relative, clause]


def _opener_indent(above: list[str]) -> str | None:
    """The indentation of the nearest block header above whose body runs down to the edit: the `if` that an
    `elif` there continues."""
    floor = None
    for line in reversed(above):
        if not line.strip():
            continue
        width = len(_indent_of(line))
        if floor is not None and width < floor and line.rstrip().endswith(":"):
            return _indent_of(line)
        floor = width if floor is None else min(floor, width)
    return None


def _same_def(code: str, def_line: str) -> bool:
    """Whether `code` starts with a `def` line of the same function."""
    first, name = code.lstrip("\n").split("\n", 1)[0].strip(), re.match(r"\s*(?:async\s+)?def\s+(\w+)", def_line)
    return name is not None and re.match(rf"(?:async\s+)?def\s+{name.group(1)}\s*\(", first) is not None


def _insert_indent(lines: list[str], after: int) -> str:
    """Where code inserted after line `after` goes: one level under a block header, else at that line's level;
    after a blank line, at the level of the code that follows it (a blank line has none)."""
    anchor = lines[after - 1]
    if not anchor.strip():
        following = next((line for line in lines[after:] if line.strip()), None)
        if following is not None:
            return _indent_of(following)
        anchor = next((line for line in reversed(lines[:after]) if line.strip()), "")
    return _indent_of(anchor) + ("    " if anchor.rstrip().endswith(":") else "")


def _indent_at(lines: list[str], start: int, end: int) -> str:
    """The indentation of line `start`; of the next code line when it is blank (a blank line has none)."""
    for line in lines[start - 1:] + lines[:start - 1][::-1]:
        if line.strip():
            return _indent_of(line)
    return ""


def apply_edits(source: str, edits: list[Replace | Insert | Delete]) -> str:
    """Apply edits that refer to `source`'s line numbers; they may not overlap or change the `def` line. When
    the result does not parse, other readings of the new code's indentation are tried (`_relayouts`), then the
    same with each replaced range shrunk to as many lines as its new code has (the model gave a `for` line the
    range of the loop and its body, and the body went: "expected an indented block"), then with the colon a
    block header lost put back; the first that parses is taken, else the plain one (whose syntax error then goes
    back to the model)."""
    plain = _apply(source, edits, layout=-1)
    if _parses(plain):
        return plain
    lines = source.rstrip("\n").splitlines()
    shrunk = [_shrunk(e) for e in edits]
    readings = [list(edits), shrunk, [_with_colon(e, lines) for e in shrunk], [_with_colon(e, lines) for e in edits]]
    for reading in [r for i, r in enumerate(readings) if r not in readings[:i]]:
        for layout in range(-1, 4):
            try:
                other = _apply(source, reading, layout)
            except EditError:
                continue
            if other != plain and _parses(other):
                return other
    return plain


BLOCK = re.compile(r"\s*(?:for|while|if|elif|else|with|try|except|finally|def|class|async)\b")


def _with_colon(e: Replace | Insert | Delete, lines: list[str]) -> Replace | Insert | Delete:
    """A one-line replacement of a block header (`for ...:`) by another that lost its colon, with the colon."""
    if not isinstance(e, Replace) or "\n" in e.code.strip() or not 1 <= e.start <= len(lines):
        return e
    old, new = lines[e.start - 1].rstrip(), e.code.rstrip()
    if old.endswith(":") and BLOCK.match(new) and BLOCK.match(old) and not new.endswith(":"):
        return Replace(op="replace", start=e.start, end=e.end, code=new + ":")
    return e


def _shrunk(e: Replace | Insert | Delete) -> Replace | Insert | Delete:
    """A replacement of more lines than its code has, cut to the first lines of its range, one for each."""
    if not isinstance(e, Replace) or len(_lines(e.code)) >= e.end - e.start + 1:
        return e
    return Replace(op="replace", start=e.start, end=e.start + len(_lines(e.code)) - 1, code=e.code)


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _apply(source: str, edits: list[Replace | Insert | Delete], layout: int) -> str:
    lines = source.rstrip("\n").splitlines()
    n = len(lines)
    spans: list[tuple[int, int, int, list[str]]] = []  # (first line replaced, last, order, new lines)
    for i, e in enumerate(edits, 1):
        if isinstance(e, Insert):
            if not 1 <= e.after <= n:
                raise EditError(f"edit {i}: insert after line {e.after}, but the function has lines 1-{n}")
            indent = _insert_indent(lines, e.after)
            other = _relayouts(e.code, indent, [], lines[:e.after])[layout] if layout >= 0 else None
            spans.append((e.after + 1, e.after, i, other or _place(e.code, indent, rebase=False)))
            continue
        if not 1 <= e.start <= e.end <= n:
            raise EditError(f"edit {i}: lines {e.start}-{e.end} are not a range of the function's lines 1-{n}")
        if e.start == 1 and isinstance(e, Replace) and e.end > 1 and _same_def(e.code, lines[0]):
            # the model copied the def line along (even with its parameters changed): the original's stays
            e = Replace(op="replace", start=2, end=e.end, code="\n".join(e.code.splitlines()[1:]))
        if e.start == 1:
            raise EditError(f"edit {i}: line 1 is the `def` line; keep the name and parameters")
        new: list[str] = []
        if isinstance(e, Replace):
            indent = _indent_at(lines, e.start, e.end)
            new = _place(e.code, indent, rebase=True)
            other = (_relayouts(e.code, indent, lines[e.start - 1:e.end], lines[:e.start - 1])[layout]
                     if layout >= 0 else None)
            new = other or new
        spans.append((e.start, e.end, i, new))
    spans.sort(key=lambda s: (s[0], s[1], s[2]))
    for (_, a_end, a_i, _), (b_start, _, b_i, _) in zip(spans, spans[1:]):
        if b_start <= a_end:
            raise EditError(f"edits {a_i} and {b_i} overlap; give each line to one edit")
    for start, end, _, new in reversed(spans):  # bottom up, so earlier line numbers stay right
        lines[start - 1:end] = new
    return "\n".join(lines) + "\n"
