"""The missing-return family: a function that computes its result and falls off the end, or off the end of a
branch, returns None instead (a failure that shows `None` where a value was expected). The edit returns what the
block's last statement computed: `result = f(x)` gets `return result` after it; a bare call `f(x)` becomes
`return f(x)`.

In: a function's scope (bot/agent/search/operators.py). Out: ("return", edit) pairs. Never: an edit in an
assignment target, in a generator (its return means something else), after a statement that already leaves the
block, or in a function that returns nothing anywhere and is not the last statement (a procedure)."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from bot.agent.search.guards import own_lines_indent
from bot.agent.search.text import Edit
from bot.agent.source.code import statement_blocks

_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _returns_values(func: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(func))


def _generator(func: ast.AST) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(func))


def return_edits(scope) -> Iterator[tuple[str, Edit]]:  # type: ignore[no-untyped-def]  # operators.Scope
    """`return NAME` after a block's last `NAME = ...`, and `return CALL` for a block's last bare call: in every
    block of a function that returns a value somewhere, and at the end of the body of one that returns none."""
    func = scope.func
    if isinstance(func, ast.Module) or _generator(func) or not scope.body:
        return
    blocks = list(statement_blocks(scope.body)) if _returns_values(func) else [scope.body]
    for block in blocks:
        last = block[-1]
        if isinstance(last, _LEAVES):
            continue
        indent = own_lines_indent(scope.text, last)
        if indent is None:
            continue
        if isinstance(last, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            target = last.targets[0] if isinstance(last, ast.Assign) and len(last.targets) == 1 else \
                getattr(last, "target", None)
            if isinstance(target, ast.Name):
                end = scope.text.span(last)[1]
                yield "return", (end, end, f"\n{indent}return {target.id}")
        elif isinstance(last, ast.Expr) and isinstance(last.value, (ast.Call, ast.BinOp, ast.BoolOp)):
            start, _ = scope.text.span(last)
            yield "return", (start, start, "return ")
