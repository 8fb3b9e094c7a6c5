"""One-edit mutants for a name the failure says is not defined: the standard-library module of that name
imported at the top of the function's body (`urllib.parse.quote(x)` without `import urllib.parse`, a forgotten
import), else each use of it replaced by a name the function does bind, the closest in spelling first
(`output_path` -> `output`). A variable renamed in one place and not the other is a common slip, and NameError
names it exactly; the plain `variable` family only swaps names that are bound, so it never touches the one that
is not.
"""
from __future__ import annotations

import ast
import difflib
import importlib.util
import re
import sys
from collections.abc import Iterator
from typing import Protocol

Edit = tuple[int, int, str]  # start, end (offsets in the function's text), replacement
PER_USE = 4  # replacements tried per use, closest first


class Text(Protocol):
    """What of bot/agent/search/text.py's `Text` the renames need."""

    def span(self, node: ast.AST) -> tuple[int, int]: ...

    def segment(self, node: ast.AST) -> str: ...


def undefined(feedback: str) -> list[str]:
    """The names the failure's NameErrors say are not defined (`name 'x' is not defined`)."""
    return list(dict.fromkeys(re.findall(r"NameError: (?:free variable |name )'(\w+)' is not defined", feedback)))


def rename_edits(text: Text, func: ast.AST, names: list[str], bound: list[str]) -> Iterator[Edit]:
    """Each load of an undefined name replaced by the PER_USE bound names closest to it in spelling."""
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            others = [b for b in bound if b != node.id]
            closest = sorted(others, key=lambda b: -difflib.SequenceMatcher(None, node.id, b).ratio())
            for other in closest[:PER_USE]:
                yield (*text.span(node), other)


def _stdlib_module(dotted: str) -> bool:
    """`dotted` is a module of the standard library (only those are looked up: finding a submodule imports its
    package, and this runs in fixbot's own process)."""
    if dotted.partition(".")[0] not in sys.stdlib_module_names:
        return False
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def import_edits(text: Text, func: ast.AST, names: list[str]) -> Iterator[Edit]:
    """For an undefined name that is a standard-library module, `import` it (the longest dotted path the function
    uses that is a module: `import urllib.parse` for `urllib.parse.urlencode(...)`) before the body's first
    statement past the docstring."""
    body = getattr(func, "body", None)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not body:
        return
    first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        else body[0]
    start = text.span(first)[0]
    for name in names:
        paths = {text.segment(n) for n in ast.walk(func) if isinstance(n, ast.Attribute)
                 and text.segment(n).startswith(name + ".")}
        dotted = [p for p in sorted(paths | {name}, key=len, reverse=True)
                  if re.fullmatch(r"[\w.]+", p) and _stdlib_module(p)]
        if dotted:
            yield start, start, f"import {dotted[0]}\n{' ' * first.col_offset}"
