"""A target of several functions: a caller and the helper it calls, repaired together when the bug is split
between them (a two-span repair).

Its code is the functions' own texts, each dedented, the caller first, two blank lines apart. The model answers
with each function whole (two ```python blocks, or both in one); each part is extracted by its name here, and
checked (bot/agent/source/code.py) and made faithful (bot/agent/source/faithful.py) as a function of its own, each
dispatching on the original's shape; the repository harness splices each part into its own span.
"""
from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence

from bot.agent.source.blocks import Extracted, find_function, parsed_blocks, segment, syntax_detail

SEPARATOR = "\n\n\n"


def function_parts(source: str) -> list[tuple[str, str]]:
    """(name, text) of each top-level function, in order, when `source` is two or more functions and nothing
    else; [] for any other code (one function, assignments, code that does not parse)."""
    source = textwrap.dedent(source)
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    defs = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(defs) < 2 or len(defs) != len(body):
        return []
    return [(n.name, segment(source, n)) for n in defs]


def function_names(source: str) -> tuple[str, ...]:
    return tuple(name for name, _ in function_parts(source))


def join_parts(texts: Sequence[str]) -> str:
    """The code of a several-function target from its functions' texts (each dedented), in order."""
    return SEPARATOR.join(textwrap.dedent(t).strip("\r\n") for t in texts) + "\n"


def extract_parts(text: str, parts: Sequence[tuple[str, str]]) -> Extracted:
    """Each function of a several-function target, by its own name, from any block of the answer. One the answer
    leaves out stays as it was (the model changed only the other), unless a block of the answer did not parse."""
    found: dict[str, str] = {}
    parsed, first_error = parsed_blocks(text)
    for source, tree in parsed:
        for name, _ in parts:
            node = find_function(tree, name)
            if node is not None:
                found.setdefault(name, segment(source, node))
    if first_error is not None and len(found) < len(parts):
        return Extracted(None, "syntax", syntax_detail(first_error))
    if not found:
        return Extracted(None, "missing", "the answer has none of the functions "
                                          + " and ".join(f"`{name}`" for name, _ in parts))
    return Extracted(join_parts([found.get(name, part) for name, part in parts]))
