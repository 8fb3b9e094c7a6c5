"""One-edit mutants at the border of str and bytes, the commonest bug of code written for Python 2 and run on 3:
callers hand bytes to code written for str, or callers want bytes from code that builds a str.

Only when the failure shows bytes (`bytes_shown`): a `b'...'` literal or the word `bytes` on a line of the test it
shows (`isinstance(data, bytes)`), or an error that names bytes. Then
- each parameter, and all of them at once, decoded at the top of the body:
  `if isinstance(p, bytes): p = p.decode('utf-8')`;
- each returned value, and all of them at once, encoded: `return x` -> `return x.encode('utf-8')`;
- each `.encode(...)` or `.decode(...)` call dropped, `x.encode('utf-8')` -> `x`: code that converts a value
  which is already what it needs (`'bytes' object has no attribute 'encode'`), once its callers or a model's
  edit hand it the other type.

And when the failure is a UnicodeEncodeError or UnicodeDecodeError (a file written or read in the locale's
encoding, which is not UTF-8 everywhere): each text-mode `open(...)`, `x.open(...)`, `read_text()` and
`write_text(...)` without an encoding given one, `encoding='utf-8'`.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from bot.agent.search.guards import own_lines_indent, parameters
from bot.agent.search.operators import body_after_docstring
from bot.agent.search.text import Edit, Text, paren


def bytes_shown(feedback: str) -> bool:
    """Whether the failure shows bytes: on a code line pytest shows (`>` lines and assertion lines) a bytes
    literal or the name `bytes`, or an error message that names bytes."""
    for line in feedback.splitlines():
        code = line.strip()
        if re.match(r"^(?:E\s+)?\w*(?:Error|Exception):.*\bbytes\b", code):
            return True
        if (code.startswith(">") or "assert" in code) and re.search(r"(?:^|[\s(\[{,=>])b['\"]|\bbytes\b", code):
            return True
    return False


def bytes_edits(text: Text, func: ast.AST) -> Iterator[tuple[str, Edit]]:
    """Decoded parameters, encoded return values, then dropped conversions (see the module's docstring)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    yield from (("decode", e) for e in _decode_edits(text, func))
    yield from (("encode", e) for e in _encode_edits(text, func))
    yield from (("drop-codec", e) for e in _dropped_conversions(text, func))


def _dropped_conversions(text: Text, func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Edit]:
    for call in _own_nodes(func):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr in ("encode", "decode"):
            yield *text.span(call), paren(text.segment(call.func.value))


def _decode_edits(text: Text, func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Edit]:
    body = body_after_docstring(func)
    if not body or (indent := own_lines_indent(text, body[0])) is None:
        return
    at = text.starts[body[0].lineno - 1]
    decode = [f"{indent}if isinstance({p}, bytes):\n{indent}    {p} = {p}.decode('utf-8')\n"
              for p in parameters(func)]
    for lines in decode + (["".join(decode)] if len(decode) > 1 else []):
        yield at, at, lines


def _encode_edits(text: Text, func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Edit]:
    values = [n.value for n in _own_nodes(func) if isinstance(n, ast.Return) and n.value is not None
              and not (isinstance(n.value, ast.Constant) and n.value.value is None)]
    encoded = sorted((*text.span(v), f"{paren(text.segment(v))}.encode('utf-8')") for v in values)
    yield from encoded
    if len(encoded) > 1:  # all at once: one edit spanning them, the text between kept
        start, end = encoded[0][0], encoded[-1][1]
        pieces, at = [], start
        for s, e, new in encoded:
            pieces += [text.source[at:s], new]
            at = e
        yield start, end, "".join(pieces)


UNICODE_ERRORS = frozenset(("UnicodeEncodeError", "UnicodeDecodeError"))
_TEXT_FILE_CALLS = ("open", "read_text", "write_text")


def _binary_mode(call: ast.Call) -> bool:
    modes = [*call.args[:2], *(k.value for k in call.keywords if k.arg == "mode")]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and re.fullmatch(r"[rwxabt+]+", m.value)
               and "b" in m.value for m in modes)


def encoding_edits(text: Text, func: ast.AST) -> Iterator[tuple[str, Edit]]:
    """`encoding='utf-8'` added to each text-file call that gives none, then to all of them at once (see the
    module's docstring)."""
    added: list[Edit] = []
    for call in _own_nodes(func):
        if not isinstance(call, ast.Call) or any(k.arg == "encoding" or k.arg is None for k in call.keywords):
            continue
        name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
        if name not in _TEXT_FILE_CALLS or name == "open" and _binary_mode(call):
            continue
        end = text.span(call)[1] - 1  # the closing parenthesis
        inside = text.source[text.span(call.func)[1]:end].strip()
        separator = "" if inside == "(" else " " if inside.endswith(",") else ", "
        added.append((end, end, f"{separator}encoding='utf-8'"))
    added.sort()
    yield from (("encoding", e) for e in added)
    if len(added) > 1:  # one edit from the first insertion to the last, the text between kept
        pieces = [added[0][2]] + [text.source[a[1]:b[0]] + b[2] for a, b in zip(added, added[1:])]
        yield "encoding", (added[0][0], added[-1][1], "".join(pieces))


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, nested functions and classes (whose returns are theirs) left out."""
    for child in ast.iter_child_nodes(func):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield child
            yield from _own_nodes(child)
