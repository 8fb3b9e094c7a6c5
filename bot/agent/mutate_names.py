"""One-edit mutants for a name the failure says is not defined: each use of it replaced by a name the function
does bind, the closest in spelling first (`output_path` -> `output`). A variable renamed in one place and not
the other is a common slip, and NameError names it exactly; the plain `variable` family only swaps names that
are bound, so it never touches the one that is not.
"""
from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator
from typing import Protocol

Edit = tuple[int, int, str]  # start, end (offsets in the function's text), replacement
PER_USE = 4  # replacements tried per use, closest first


class Text(Protocol):
    """What of bot/agent/mutate_text.py's `Text` the renames need."""

    def span(self, node: ast.AST) -> tuple[int, int]: ...


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
