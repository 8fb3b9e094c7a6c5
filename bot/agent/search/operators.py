"""The mutation operators: one generator per family of one-span edits, tried in the order of `OPERATORS`.

Each family reads a `Scope` (the function's body, or the values of an assignment target, with its nodes and
bound names) and yields `(family, edit)` pairs; bot/agent/search/mutate.py applies, checks and ranks them.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bot.agent.search.guards import guard_edits, own_lines_indent
from bot.agent.search.regex import literal_edits, pattern_literals
from bot.agent.search.returns import return_edits
from bot.agent.search.strings import string_edits
from bot.agent.search.text import Edit, Text, paren
from bot.agent.source.code import assigned_names, statement_blocks

Function = ast.FunctionDef | ast.AsyncFunctionDef
Edits = Iterator[tuple[str, Edit]]  # (the operator's family, the edit)

COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
           ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
COMPARE_SWAPS = {"<": ["<=", ">", ">=", "!=", "=="], "<=": ["<", ">=", ">", "=="], ">": [">=", "<", "<=", "!=", "=="],
                 ">=": [">", "<=", "<", "=="], "==": ["!=", "<=", ">=", "<", ">"], "!=": ["==", "<", ">"],
                 "is": ["is not"], "is not": ["is"], "in": ["not in"], "not in": ["in"]}
BINOP = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
         ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
BINOP_SWAPS = {"+": ["-", "*"], "-": ["+"], "*": ["/", "//", "+", "**"], "/": ["//", "*"], "//": ["/", "%", "*"],
               "%": ["//"], "**": ["*"], "&": ["|", "^"], "|": ["&", "^"], "^": ["|", "&"], "<<": [">>"],
               ">>": ["<<"]}
NON_COMMUTATIVE = {ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow}
CALL_FAMILIES = [("min", "max"), ("any", "all"), ("sorted", "reversed"), ("append", "extend"),
                 ("lower", "upper"), ("islower", "isupper"), ("startswith", "endswith"),
                 ("floor", "ceil"), ("int", "round"),
                 ("isdigit", "isalpha"), ("find", "rfind"), ("index", "rindex"), ("strip", "lstrip", "rstrip"),
                 ("sum", "len"), ("keys", "values", "items"), ("remove", "pop")]
SWAP_CALL = {name: [other for other in family if other != name] for family in CALL_FAMILIES for name in family}
WRAPPERS = ("abs", "int", "float", "str", "list", "sorted", "reversed", "set", "len", "round", "max", "min")


@dataclass(frozen=True, kw_only=True)
class Scope:
    """What the operators edit: a function's body (docstring left out), or an assignment target's values."""

    text: Text
    func: Function | ast.Module  # a Module: the assignments of a target such as a table of lambdas
    body: list[ast.stmt]
    nodes: list[ast.AST]  # every node of the body, outside f-strings (their positions are not reliable)
    variables: list[str]  # names the scope binds, in order of first appearance

    def segment(self, node: ast.AST) -> str:
        return self.text.segment(node)


def body_after_docstring(func: Function | ast.Module) -> list[ast.stmt]:
    """The statements an edit may touch: a function's docstring is not code."""
    docstring = not isinstance(func, ast.Module) and ast.get_docstring(func, clean=False) is not None
    return func.body[1:] if docstring else func.body


def scope_of(text: Text, func: Function | ast.Module) -> Scope:
    body = body_after_docstring(func)
    in_fstring = {id(m) for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.JoinedStr)
                  for m in ast.walk(n) if m is not n}
    nodes = [n for stmt in body for n in ast.walk(stmt) if id(n) not in in_fstring]
    return Scope(text=text, func=func, body=body, nodes=nodes, variables=scope_names(func))


def scope_names(func: ast.AST) -> list[str]:
    """Parameters and names the function (or the lambdas of an assignment) binds, in order of first appearance."""
    names: list[str] = []
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = func.args
        names = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
        names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    own = {n for stmt in func.body for n in assigned_names(stmt)} if isinstance(func, ast.Module) else set()
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in own:
            names.append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not func:
            names += [x.arg for x in node.args.args]
    return list(dict.fromkeys(names))


def compare(s: Scope) -> Edits:
    for n in s.nodes:
        if isinstance(n, ast.Compare):
            operands = [n.left, *n.comparators]
            for i, op in enumerate(n.ops):
                where = s.text.between(operands[i], operands[i + 1], COMPARE[type(op)])
                if where:
                    for new in COMPARE_SWAPS[COMPARE[type(op)]]:
                        yield "compare", (*where, new)


def _number(node: ast.AST) -> int | float | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def is_identity(left: ast.AST, op: str, right: ast.AST) -> bool:
    """`x * 1`, `x + 0`, `1 * x`...: the other operand unchanged. Such a swap would pass exactly where dropping the
    constant passes, and `len(xs)` reads better in a fix than `len(xs) * 1`: `drop_operand` writes that one."""
    if _number(right) == 1 and op in ("*", "/", "//", "**") or _number(right) == 0 and op in ("+", "-", "<<", ">>"):
        return True
    return _number(left) == 1 and op == "*" or _number(left) == 0 and op == "+"


def arithmetic(s: Scope) -> Edits:
    """Arithmetic operators, in expressions and augmented assignments (`x += 1` made `x *= 1` is dropping it)."""
    for n in s.nodes:
        if isinstance(n, ast.BinOp) and type(n.op) in BINOP:
            left, right, where = n.left, n.right, s.text.between(n.left, n.right, BINOP[type(n.op)])
            suffix = ""
        elif isinstance(n, ast.AugAssign) and type(n.op) in BINOP:
            left, right, where = n.target, n.value, s.text.between(n.target, n.value, BINOP[type(n.op)] + "=")
            suffix = "="
        else:
            continue
        if where:
            for new in BINOP_SWAPS[BINOP[type(n.op)]]:
                if not is_identity(left, new, right):
                    yield "arithmetic", (*where, new + suffix)


def boolean(s: Scope) -> Edits:
    for n in s.nodes:
        if isinstance(n, ast.BoolOp):
            old, new = ("and", "or") if isinstance(n.op, ast.And) else ("or", "and")
            for left, right in zip(n.values, n.values[1:]):
                where = s.text.between(left, right, old)
                if where:
                    yield "boolean", (*where, new)


def _kept(s: Scope, start: int, end: int, operand: ast.AST) -> Edit:
    """The span `start:end` replaced by `operand`; `(len(xs) + 1)` becomes `len(xs)`, not `(len(xs))`: parentheses
    of their own (not a call's or a subscript's) go with the dropped operand when the kept one needs none."""
    text, kept = s.text.source, s.segment(operand)
    own = start > 0 and text[start - 1] == "(" and text[end:end + 1] == ")"
    before = text[:start - 1].rstrip()[-1:]  # a name or a closing bracket: a call's or a subscript's parentheses
    after = text[end + 1:end + 2]  # `(x + 1)if`: without the parentheses, `1if` would not parse
    if own and paren(kept) == kept and not re.fullmatch(r"[\w)\]]", before) and not re.fullmatch(r"[\w.]", after):
        return start - 1, end + 1, kept
    return start, end, paren(kept)


def _balanced(text: str) -> bool:
    """Every bracket of `text` closed inside it, none closing one opened before it."""
    depth = 0
    for char in text:
        depth += (char in "([{") - (char in ")]}")
        if depth < 0:
            return False
    return depth == 0


def drop_operand(s: Scope) -> Edits:
    """Dropped operands: the excess-logic bugs."""
    for n in s.nodes:
        if isinstance(n, ast.BinOp):
            start, end = s.text.span(n)
            yield "drop-operand", _kept(s, start, end, n.left)
            yield "drop-operand", _kept(s, start, end, n.right)
        elif isinstance(n, ast.BoolOp):
            start, end = s.text.span(n)
            for i in range(len(n.values)):
                rest = [s.segment(v) for j, v in enumerate(n.values) if j != i]
                joined = f" {'and' if isinstance(n.op, ast.And) else 'or'} ".join(rest)
                yield "drop-operand", (start, end, joined if len(rest) == 1 else f"({joined})")
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Not, ast.USub, ast.Invert)):
            yield "drop-operand", (*s.text.span(n), paren(s.segment(n.operand)))


def _negated_at_once(s: Scope) -> Edits:
    """Every bool of the function negated, where it has both: `return True` inside a loop and `return False`
    after it, a predicate that answers the wrong way round. One span, the text between the bools kept."""
    flags = sorted((s.text.span(n), n.value) for n in s.nodes
                   if isinstance(n, ast.Constant) and isinstance(n.value, bool))
    if len({flag for _, flag in flags}) == 2:
        first, last = flags[0][0][0], flags[-1][0][1]
        cut, parts = first, []
        for (start, end), flag in flags:
            parts += [s.text.source[cut:start], str(not flag)]
            cut = end
        yield "negate-all", (first, last, "".join(parts))


def constant(s: Scope) -> Edits:
    """Numbers +-1 (or 0, 1), a bool negated, and then every bool at once (`_negated_at_once`)."""
    for n in s.nodes:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):  # bool is an int
            start, end = s.text.span(n)
            value = n.value
            if isinstance(value, bool):
                yield "constant", (start, end, str(not value))
            elif isinstance(value, int):
                for number in dict.fromkeys([value + 1, value - 1, 0, 1]):
                    if number != value and number >= 0:
                        yield "constant", (start, end, str(number))
            else:
                yield "constant", (start, end, repr(value + 1))
                yield "constant", (start, end, repr(value - 1))
    yield from _negated_at_once(s)


def regex(s: Scope) -> Edits:
    """Edits of regular expressions (bot/agent/search/regex.py)."""
    for n in pattern_literals(s.nodes, s.segment):
        start = s.text.span(n)[0]
        for begin, end, new in literal_edits(s.segment(n), str(n.value)):
            yield "regex", (start + begin, start + end, new)


def guard(s: Scope) -> Edits:
    """Missing None checks (bot/agent/search/guards.py); not for an assignment target."""
    if not isinstance(s.func, ast.Module):
        yield from (("guard", edit) for edit in guard_edits(s.text, s.func, s.body))


def call(s: Scope) -> Edits:
    """Calls from the same family (min/max, any/all, ...), a sort reversed (`reverse=True` added), and a wrapper
    call dropped."""
    for n in s.nodes:
        if isinstance(n, ast.Call):
            name_node = n.func
            name = name_node.id if isinstance(name_node, ast.Name) else (
                name_node.attr if isinstance(name_node, ast.Attribute) else None)
            if name in SWAP_CALL:
                start, end = s.text.span(name_node)
                if isinstance(name_node, ast.Attribute):
                    start = end - len(name)
                for other in SWAP_CALL[name]:
                    yield "call", (start, end, other)
            if name in ("sorted", "sort") and not any(k.arg == "reverse" for k in n.keywords):
                end = s.text.span(n)[1] - 1  # the closing parenthesis
                yield "call", (end, end, ", reverse=True" if n.args or n.keywords else "reverse=True")
            if isinstance(name_node, ast.Name) and name in WRAPPERS and len(n.args) == 1 and not n.keywords:
                yield "unwrap", (*s.text.span(n), paren(s.segment(n.args[0])))


def bound(s: Scope) -> Edits:
    """+-1 on range arguments, slice bounds and indices."""
    for n in s.nodes:
        bounds: list[ast.AST] = []
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "range":
            bounds = list(n.args[:2])
        elif isinstance(n, ast.Slice):
            bounds = [b for b in (n.lower, n.upper) if b is not None]
        elif isinstance(n, ast.Subscript) and not isinstance(n.slice, (ast.Slice, ast.Tuple)):
            bounds = [n.slice]
        for b in bounds:
            if not isinstance(b, ast.Constant):
                start, end = s.text.span(b)
                for delta in (" + 1", " - 1"):
                    yield "bound", (start, end, paren(s.segment(b)) + delta)


def negate_or_insert(s: Scope) -> Edits:
    """Negated conditions, and an inserted not / - / abs."""
    for n in s.nodes:
        test = n.test if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)) else None
        if test is not None and not isinstance(test, ast.Compare):
            yield "negate", (*s.text.span(test), f"not {paren(s.segment(test))}")
        if isinstance(n, ast.Return) and n.value is not None and not isinstance(n.value, (ast.Constant, ast.Tuple)):
            start, end = s.text.span(n.value)
            yield "insert", (start, end, f"not {paren(s.segment(n.value))}")
            yield "insert", (start, end, f"-{paren(s.segment(n.value))}")
            yield "insert", (start, end, f"abs({s.segment(n.value)})")
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub):
            yield "insert", (*s.text.span(n), f"abs({s.segment(n)})")


def variable(s: Scope) -> Edits:
    """Another variable of the same scope; and the argument of a one-argument call replaced by the argument of
    another call to the same function (`ord(ch)` where `ord("a")` belongs, beside it)."""
    for n in s.nodes:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in s.variables:
            for other in s.variables:
                if other != n.id:
                    yield "variable", (*s.text.span(n), other)
    calls: dict[str, list[ast.Call]] = {}
    for n in s.nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and len(n.args) == 1 and not n.keywords:
            calls.setdefault(n.func.id, []).append(n)
    for same in calls.values():
        texts = list(dict.fromkeys(s.segment(c.args[0]) for c in same))
        for c in same:
            for other in texts:
                if other != s.segment(c.args[0]):
                    yield "variable", (*s.text.span(c.args[0]), other)


def swap(s: Scope) -> Edits:
    """Swapped operands of a non-commutative operator, swapped arguments of a two-argument call, and neighbours
    swapped in a tuple (a target's names or a tuple's values)."""
    for n in s.nodes:
        if isinstance(n, ast.BinOp) and type(n.op) in NON_COMMUTATIVE:
            where = s.text.between(n.left, n.right, BINOP[type(n.op)])
            if where:
                start, end = s.text.span(n)
                left, right = paren(s.segment(n.left)), paren(s.segment(n.right))
                yield "swap", (start, end, f"{right} {BINOP[type(n.op)]} {left}")
        elif isinstance(n, ast.Call) and len(n.args) == 2 and not any(isinstance(a, ast.Starred) for a in n.args):
            yield "swap", _swapped(s, *n.args)
        elif isinstance(n, ast.Tuple) and 2 <= len(n.elts) <= 4 and not any(isinstance(e, ast.Starred) for e in n.elts):
            for a, b in zip(n.elts, n.elts[1:]):  # neighbours: `day, month, year = ...` -> `month, day, year = ...`
                yield "swap", _swapped(s, a, b)


def _swapped(s: Scope, a: ast.AST, b: ast.AST) -> Edit:
    """`a` and `b` trade places; the text between them (`, `, `,`, a line break) stays, so the diff shows only the
    swap."""
    (start, middle), (after, end) = s.text.span(a), s.text.span(b)
    return start, end, s.segment(b) + s.text.source[middle:after] + s.segment(a)


def string(s: Scope) -> Edits:
    """Edits of string literals other than regular expressions (bot/agent/search/strings.py)."""
    patterns = pattern_literals(s.nodes, s.segment)
    yield from (("string", edit) for edit in string_edits(s.text, s.nodes, s.segment, patterns))


def delete(s: Scope) -> Edits:
    """A deleted statement (the only one of its block: `pass`); never in an assignment target, whose statement
    defines the name."""
    if isinstance(s.func, ast.Module):
        return
    for block in statement_blocks(s.body):
        for stmt in block:
            start, end = s.text.span(stmt)
            line_start, line_end = s.text.starts[stmt.lineno - 1], s.text.starts[stmt.end_lineno]  # type: ignore[index]
            if len(block) > 1 and own_lines_indent(s.text, stmt) is not None:
                yield "delete", (line_start, line_end, "")
            else:
                yield "delete", (start, end, "pass")


# the order edits are tried in: the rare and cheap first, the many (another variable, a deleted statement) last
OPERATORS: tuple[Callable[[Scope], Edits], ...] = (
    compare, arithmetic, boolean, drop_operand, constant, regex, guard, return_edits, call, bound, negate_or_insert,
    variable, swap, string, delete)


def scope_edits(text: Text, func: Function | ast.Module) -> Edits:
    """Every edit of a function's body, or of the values of an assignment target (a Module of assignments)."""
    scope = scope_of(text, func)
    for operator in OPERATORS:
        yield from operator(scope)
