"""Line edits, the thought-patch agent's answer: JSON from the model, validated here and applied
deterministically by edit_layout.py.

    {"edits": [{"op": "replace", "line": "return a - b", "code": "    return a + b"},
               {"op": "insert", "after": "total = 0", "code": "    if not xs:\\n        return 0"},
               {"op": "delete", "line": "print(xs)"}]}

An edit names a line of the original function (shown without its docstring, 1 = the `def` line) by its text
without indentation (`anchors`); numbers (`"start": 4, "end": 5`, `"after": 7`) are read too. Every problem is
an `EditError` whose message is written for the model: it goes back to the Patch node as the reason.
"""
from __future__ import annotations

import json
import re
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
    a schema cannot say (no overlap, code that parses) is still checked when the edits are applied
    (edit_layout.py). Given the `lines` a plan names (`quoted`), only those can be replaced or deleted: a plan
    about one line's fix was written down, again and again, as an edit of the line next to it."""
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
