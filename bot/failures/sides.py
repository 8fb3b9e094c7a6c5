"""Which side of a failed equality the code computed and which the test wrote, read from the assertion's line.

unittest prints `first != second` and pytest `assert left == right`, in the order the test wrote them; tests write
`assertEqual(expected, actual)` as often as the other way round. Where one side is a literal and the other is
not, the literal is what the test expects. In: the assertion's source line. Out: the computed expression and
its position. Never: a guess where both sides or neither are literals, or where the line does not parse (an
assertion written over several lines)."""
from __future__ import annotations

import ast

# assertions that compare two values: the unittest spellings, nose's, and pytest's `assert a == b`
_EQUALITY = frozenset({"assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual", "assertDictEqual",
                       "assertSetEqual", "assertSequenceEqual", "assertMultiLineEqual", "assertIs", "assertAlmostEqual",
                       "assertCountEqual", "assert_equal", "assert_equals"})


def computed(assertion: str | None) -> tuple[str, int] | None:
    """The expression the code computed in an equality assertion's line, and its position (0: first/left, 1:
    second/right); None where the line does not tell."""
    pair = _compared(assertion.strip()) if assertion else None
    if pair is None:
        return None
    literal = [_literal(node) for node in pair]
    if literal[0] == literal[1]:
        return None
    at = 1 if literal[0] else 0
    return ast.unparse(pair[at]), at


def _compared(line: str) -> list[ast.expr] | None:
    try:
        node = ast.parse(line).body[0]
    except (SyntaxError, ValueError, IndexError, RecursionError, MemoryError):
        return None
    if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 \
            and isinstance(node.test.ops[0], ast.Eq):
        return [node.test.left, node.test.comparators[0]]
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and len(node.value.args) >= 2:
        func = node.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return list(node.value.args[:2]) if name in _EQUALITY else None
    return None


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
