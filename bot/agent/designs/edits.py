"""Line edits, the thought-patch agent's answer: JSON from the model, validated and applied deterministically.

    {"edits": [{"op": "replace", "line": "return a - b", "code": "    return a + b"},
               {"op": "insert", "after": "total = 0", "code": "    if not xs:\\n        return 0"},
               {"op": "delete", "line": "print(xs)"}]}

An edit names a line of the original function (shown without its docstring, 1 = the `def` line) by its text
without indentation (`anchors`); numbers (`"start": 4, "end": 5`, `"after": 7`) are read too. Every problem is
an `EditError` whose message is written for the model: it goes back to the Patch node as the reason.
"""
from __future__ import annotations

import ast
import json
import re
import textwrap
from collections import Counter
from collections.abc import Collection
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class EditError(ValueError):
    """The edit cannot be applied; the message says why, for the model."""


class _Edit(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Replace(_Edit):
    op: Literal["replace"]
    start: int
    end: int
    code: str


class Insert(_Edit):
    op: Literal["insert"]
    after: int  # 0 inserts before the first line
    code: str


class Delete(_Edit):
    op: Literal["delete"]
    start: int
    end: int


Edit = Annotated[Replace | Insert | Delete, Field(discriminator="op")]
_EDITS = TypeAdapter(list[Edit])
_JSON = re.compile(r"```(?:json)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)


MAX_EDITS = 3


def anchors(source: str) -> dict[str, int]:
    """How an edit names a line: its text without indentation (`prod_value = 0`), with `  # line N` after it
    where two lines read the same; blank lines have none. A small model picks the line it means by its text far
    more reliably than by its number: it named line 8 for `prod_value = 0`, which is line 4."""
    texts = [_spelled(line.strip()) for line in source.rstrip("\n").splitlines()]
    count = Counter(t for t in texts if t)
    return {(t if count[t] == 1 else f"{t}  # line {n}"): n for n, t in enumerate(texts, 1) if t}


def _spelled(text: str) -> str:
    """A line's text as an enum value that llama-cpp-python turns into a valid grammar: its converter does not
    escape the backslashes of JSON escapes, and a grammar that does not parse crashed the model process. So a
    double quote is written as a single one, a backslash as a slash, a tab as a space, anything else outside
    printable ASCII as `?`; what the model writes is read through the same spelling."""
    text = text.replace('"', "'").replace("\\", "/").replace("\t", " ")
    return "".join(c if " " <= c <= "~" else "?" for c in text)


def quoted(source: str, plan: str) -> list[str]:
    """The lines of `source` (as `anchors` names them) that a fix plan names: by their text or a `quoted` part of
    it, spaces aside (`i %3` names `elif i%3 != 0:`); else by number (`line 5`), which a small model miscounts
    more often than it misquotes. The plan's fix (the new text) may match other lines too, which only widens the
    set."""
    said = _squeezed(plan)
    parts = [_squeezed(p) for p in re.findall(r"`([^`\n]+)`", plan)]
    names = anchors(source)
    lines = source.splitlines()
    texts = {name: _squeezed(lines[n - 1]) for name, n in names.items()}
    named = [name for name, text in texts.items()
             if (len(text) >= 4 and text in said) or any(len(p) >= 3 and p in text for p in parts)]
    if named:
        return named
    numbers = {int(n) for n in re.findall(r"\blines? (\d+)", plan, re.I)}
    return [name for name, n in names.items() if n in numbers]


def _squeezed(text: str) -> str:
    """Text as `quoted` compares it: spelled as line names are (`_spelled`), without whitespace."""
    return _spelled("".join(text.split()))


def edit_schema(source: str, lines: Collection[str] = ()) -> dict[str, Any]:
    """The JSON Schema of an answer that can be applied to `source`: ops from the set, each naming a line of the
    function by its text (`anchors`), never the `def` line (insert after it is fine), at most MAX_EDITS edits.
    A backend that samples under it cannot write prose, a line the function does not have or a misspelt op; what
    a schema cannot say (no overlap, code that parses) is still checked when the edits are applied. Given the
    `lines` a plan names (`quoted`), only those can be replaced or deleted: a plan about one line's fix was
    written down, again and again, as an edit of the line next to it."""
    names = anchors(source)
    body = [name for name, n in names.items() if n > 1] or list(names)
    body = [name for name in body if name in lines] or body
    code = {"type": "string"}
    items = [{"type": "object", "properties": {"op": {"const": "replace"}, "line": {"enum": body}, "code": code},
              "required": ["op", "line", "code"]},
             {"type": "object", "properties": {"op": {"const": "insert"}, "after": {"enum": list(names)}, "code": code},
              "required": ["op", "after", "code"]},
             {"type": "object", "properties": {"op": {"const": "delete"}, "line": {"enum": body}},
              "required": ["op", "line"]}]
    return {"type": "object", "required": ["edits"],
            "properties": {"edits": {"type": "array", "minItems": 1, "maxItems": MAX_EDITS, "items": {"anyOf": items}}}}


def _line_number(text: str, names: dict[str, int]) -> int:
    """The line an edit names by its text: as `anchors` names it, else the one line that reads so."""
    text = _spelled(text)
    if text in names:
        return names[text]
    plain = text.strip()
    same = sorted({n for name, n in names.items() if name.split("  # line ")[0] == plain})
    if len(same) == 1:
        return same[0]
    if same:
        raise EditError(f"lines {', '.join(map(str, same))} all read `{plain}`; name one as `{plain}  # line N`")
    raise EditError(f"no line of the function reads `{plain}`; copy the line as it reads now")


def _numbered_edit(item: object, names: dict[str, int]) -> object:
    """An edit that names its line by text, as one that gives the line's number (what `apply_edits` reads)."""
    if not isinstance(item, dict):
        return item
    if isinstance(item.get("line"), str):
        n = _line_number(item["line"], names)
        item = {**item, "start": n, "end": n}
    if isinstance(item.get("after"), str):
        item = {**item, "after": _line_number(item["after"], names)}
    return item


def numbered(source: str) -> str:
    lines = source.rstrip("\n").splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(lines, 1))


def parse_edits(text: str, source: str = "") -> list[Replace | Insert | Delete]:
    """The edits in a model's answer: bare JSON or fenced, an object with "edits" or a bare list. The model
    sometimes writes the numbered view in a fence first and the JSON after it in prose, so every fence is
    read, then the whole answer, each from every `{` or `[` until one decodes as edits. An edit names its line
    by text (`"line"`, `"after"`; resolved against `source`) or by number (`"start"`, `"end"`, `"after"`)."""
    data, error = None, None
    for block in [m.group(1) for m in _JSON.finditer(text)] + [text]:
        data, block_error = _first_edits_json(block)
        error = error or block_error
        if data is not None:
            break
    if data is None:
        raise EditError(f"the answer is not JSON ({error})" if error is not None else
                        'the answer holds no JSON object; reply with {"edits": [...]}')
    if isinstance(data, dict):
        data = data.get("edits", [data] if "op" in data else None)
    if not isinstance(data, list) or not data:
        raise EditError('expected {"edits": [...]} with at least one edit')
    names = anchors(source)
    for i, item in enumerate(data):
        try:
            data[i] = _numbered_edit(item, names)
        except EditError as exc:
            raise EditError(f"edit {i + 1}: {exc}") from None
    try:
        return _EDITS.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        index, *field = first["loc"]  # the edit's position in the list, then the field
        where = f"edit {index + 1 if isinstance(index, int) else index}" + (f" field {field[-1]!r}" if field else "")
        raise EditError(f"{where}: {first['msg']}") from None


def _looks_like_edits(data: object) -> bool:
    if isinstance(data, dict):
        return "edits" in data or "op" in data
    return isinstance(data, list) and any(isinstance(item, dict) for item in data)


def _first_edits_json(text: str) -> tuple[object, ValueError | None]:
    """The first JSON value in text that looks like edits, or None and the first decoding error."""
    decoder, error = json.JSONDecoder(strict=False), None  # a line break left raw in a string still reads
    for match in re.finditer(r"[{\[]", text):
        try:
            data, _ = decoder.raw_decode(text[match.start():])
        except ValueError as exc:
            error = error or exc
            continue
        if _looks_like_edits(data):
            return data, None
    return None, error


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
