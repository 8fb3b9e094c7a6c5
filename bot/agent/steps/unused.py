"""Locals a function assigns and never reads: the trace a missing-logic bug often leaves (a lookup table built
and never looked up, a result computed and another value returned). The prompt names them, in a linter's words,
so that the model looks at what the code forgot to do with them. Parameters are left out: an override or a
callback ignores some by design, and a note would have the model use them."""
from __future__ import annotations

import ast
import textwrap

Function = ast.FunctionDef | ast.AsyncFunctionDef


def unused(source: str) -> dict[str, tuple[str, ...]]:
    """Each function of `source` (a function, or a caller and its helper) that assigns a local it never reads,
    with those locals in order of first assignment."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return {}
    found = {f.name: _unread(f) for f in tree.body if isinstance(f, Function)}
    return {name: names for name, names in found.items() if names}


def _unread(func: Function) -> tuple[str, ...]:
    """Names bound by a plain assignment (`x = ...`, `x: T = ...`, `(x := ...)`; not a loop's, a `with`'s or an
    unpacking's, which idiom leaves unread) that no code of the function reads, `del`s or declares global; none
    when it calls `locals()`."""
    quiet: set[str] = set()
    assigned: dict[str, None] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("locals", "vars") \
                and not node.args:
            return ()  # `'{indent}{name}'.format(**locals())` reads every local
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            quiet.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            quiet.update(node.names)  # bound for code elsewhere to read
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assigned.update((t.id, None) for t in targets if isinstance(t, ast.Name))
    return tuple(n for n in assigned if n not in quiet and not n.startswith("_"))


def unused_note(source: str) -> str:
    """A line for the prompt, or "" when every local is read."""
    parts = [f"in `{function}`, " + ", ".join(f"`{n}` is assigned but never used" for n in names)
             for function, names in unused(source).items()]
    return ("A linter notes: " + "; ".join(parts) + ".") if parts else ""
