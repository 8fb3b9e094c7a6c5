"""Asserts the model writes from the docstring, as inputs with the results it expects: the second kind of evidence
(after agreement among candidates) by which bot/agent/choose/select.py chooses among fixes that pass weak tests, as in
CodeT's dual execution agreement. A small model computes some expected results wrongly; a wrong one is usually
failed by every candidate alike, so it does not tip the choice, while a right one separates a fix from an overfit.
Each assert is read on its own line, so one that does not parse costs only itself."""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

MAX_EXPECTATIONS = 10
BLOCK = re.compile(r"```[\w+-]*\n(.*?)(?:```|\Z)", re.S)


@dataclass(frozen=True, kw_only=True)
class Expectation:
    args: tuple[Any, ...]  # literal arguments of one call of the function
    expected: Any  # the literal result the assert says it returns


def literal_call_args(node: ast.AST, names: frozenset[str]) -> tuple[Any, ...] | None:
    """The arguments of a call of one of `names` whose arguments are all literals (no keywords), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
            and not node.keywords):
        return None
    try:
        return tuple(ast.literal_eval(arg) for arg in node.args)
    except (ValueError, SyntaxError, TypeError):
        return None


def _expectation(test: ast.expr, names: frozenset[str]) -> Expectation | None:
    """`f(a) == b`, `f(a) is True`, `f(a)` and `not f(a)`; anything else (a tolerance, a second call) is None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        args = literal_call_args(test.operand, names)
        return Expectation(args=args, expected=False) if args is not None else None
    if not isinstance(test, ast.Compare):
        args = literal_call_args(test, names)
        return Expectation(args=args, expected=True) if args is not None else None
    if len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return None
    args = literal_call_args(test.left, names)
    try:
        expected = ast.literal_eval(test.comparators[0])
    except (ValueError, SyntaxError, TypeError):
        return None
    return Expectation(args=args, expected=expected) if args is not None else None


def parse_asserts(text: str, name: str) -> list[Expectation]:
    """The distinct expectations in the answer's code (or its whole text without a code block), first input first,
    at most MAX_EXPECTATIONS."""
    blocks = BLOCK.findall(text)
    code = "\n".join(blocks) if blocks else text
    names = frozenset({name, "candidate"})
    found: dict[str, Expectation] = {}
    for line in code.splitlines():
        if not line.strip().startswith("assert "):
            continue
        try:
            statement = ast.parse(line.strip()).body[0]
        except SyntaxError:
            continue
        got = _expectation(statement.test, names) if isinstance(statement, ast.Assert) else None
        if got is not None:
            found.setdefault(repr(got.args), got)  # two answers for one input: the first is kept
    return list(found.values())[:MAX_EXPECTATIONS]


def agrees(output: str, expected: Any) -> bool:
    """Whether a candidate's output on an input (the repr a Judge reports) is the expected result, as the assert's
    `==` would say; floats within a relative 1e-6."""
    try:
        got = ast.literal_eval(output)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return output == repr(expected)
    if isinstance(got, float) or isinstance(expected, float):
        try:
            return math.isclose(float(got), float(expected), rel_tol=1e-6, abs_tol=1e-9)
        except (TypeError, ValueError):
            return False
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return list(got) == list(expected)  # a model writes a tuple as a list, and the other way round
    return bool(got == expected)
