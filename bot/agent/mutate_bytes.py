"""One-edit mutants at the border of str and bytes, the commonest bug of code written for Python 2 and run on 3:
callers hand bytes to code written for str, or callers want bytes from code that builds a str.

Only when the failure shows bytes (`bytes_shown`): a `b'...'` literal or the word `bytes` on a line of the test it
shows (`isinstance(data, bytes)`), or an error that names bytes. Then
- each parameter, and all of them at once, decoded at the top of the body:
  `if isinstance(p, bytes): p = p.decode('utf-8')`;
- each returned value, and all of them at once, encoded: `return x` -> `return x.encode('utf-8')`.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from .mutate_guards import own_lines_indent, parameters
from .mutate_operators import body_after_docstring
from .mutate_text import Edit, Text, paren


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
    """Decoded parameters, then encoded return values (see the module's docstring)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    yield from (("decode", e) for e in _decode_edits(text, func))
    yield from (("encode", e) for e in _encode_edits(text, func))


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


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, nested functions and classes (whose returns are theirs) left out."""
    for child in ast.iter_child_nodes(func):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield child
            yield from _own_nodes(child)
