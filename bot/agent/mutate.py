"""One-edit mutants of a function: the bugs a small model leaves (or a human makes) are often one token away.

Every mutant is the function's own text with one span replaced, so that untouched characters (docstring,
comments, spacing) stay byte for byte and the diff shows one edit. Operators, in the order they are tried: a
statement the failure's traceback shows raising a builtin exception, wrapped in try/except (when the search knows
the failure: `ranked_mutants`); a name that a lambda returns instead of calling it; comparison, arithmetic and
boolean operator swaps; dropped operands; constants +-1; edits of regular expressions (bot/agent/mutate_regex.py);
missing None checks (bot/agent/mutate_guards.py); swapped calls from small families (min/max, any/all, ...); +-1
on range/slice/index bounds; removed or inserted `not`/`-`/`abs`; another variable of the same scope; swapped
arguments; a deleted statement. `rank` puts the lines the failure names first and caps the list. An assignment
target (a table of lambdas, a constant) gets the same edits of its value, except deleting the statement: that
would drop the name it defines. A target of several functions gets the edits of each function, one at a time.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from .blocks import find_function
from .code import assigned_names, code_hash, statement_blocks
from .mutate_guards import except_edits, guard_edits, own_lines_indent
from .mutate_names import rename_edits
from .mutate_regex import literal_edits, pattern_literals
from .parts import function_parts

Edit = tuple[int, int, str]  # start, end (character offsets in the function's text), replacement


@dataclass(frozen=True)
class Mutant:
    source: str  # the whole function with one edit applied
    operator: str  # which family of edit, e.g. "compare", "constant"
    line: int  # 1-based line of the function where the edit starts
    description: str  # for people: "line 4: `<` -> `<=`"


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
CALL_FAMILIES = [("min", "max"), ("any", "all"), ("sorted", "reversed"), ("append", "extend"), ("lower", "upper"),
                 ("islower", "isupper"), ("startswith", "endswith"), ("floor", "ceil"), ("int", "round"),
                 ("isdigit", "isalpha"), ("find", "rfind"), ("index", "rindex"), ("strip", "lstrip", "rstrip"),
                 ("sum", "len"), ("keys", "values", "items"), ("remove", "pop")]
SWAP_CALL = {name: [other for other in family if other != name] for family in CALL_FAMILIES for name in family}
WRAPPERS = ("abs", "int", "float", "str", "list", "sorted", "reversed", "set", "len", "round", "max", "min")


class _Text:
    """The function's text with ast positions (1-based lines, UTF-8 byte columns) turned into offsets."""

    def __init__(self, source: str):
        self.source = source
        self.lines = source.splitlines(True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def line_of(self, offset: int) -> int:
        # the text's end (an insertion after the last statement) is on the last line
        return next((i for i in range(len(self.lines)) if self.starts[i + 1] > offset), len(self.lines) - 1) + 1

    def between(self, left: ast.AST, right: ast.AST, token: str) -> tuple[int, int] | None:
        """Where the operator `token` sits between two operands (parentheses and spaces around it skipped)."""
        start, end = self.span(left)[1], self.span(right)[0]
        pattern = r"\s+".join(re.escape(word) for word in token.split())
        boundary = r"(?<![\w<>=!*/])" if token[0].isalpha() or token[0] in "<>=!*/" else ""
        after = r"(?![\w=])" if token[-1].isalpha() else r"(?![=<>*/])"
        match = re.search(boundary + pattern + after, self.source[start:end])
        return (start + match.start(), start + match.end()) if match else None


def _paren(text: str) -> str:
    return text if re.fullmatch(r"[\w.]+(\(.*\)|\[.*\])?", text, re.S) else f"({text})"


def _scope_names(func: ast.AST) -> list[str]:
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


def _edits(text: _Text, func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module) -> Iterator[tuple[str, Edit]]:
    """The edits of a function's body, or of the values of an assignment target (a Module of assignments)."""
    assignment = isinstance(func, ast.Module)
    docstring = not assignment and ast.get_docstring(func, clean=False) is not None
    body = func.body[1:] if docstring else func.body
    variables = _scope_names(func)
    in_fstring = {id(m) for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.JoinedStr)
                  for m in ast.walk(n) if m is not n}  # positions inside f-strings are not reliable
    nodes = [n for stmt in body for n in ast.walk(stmt) if id(n) not in in_fstring]
    seg = text.segment

    yield from (("uncalled", edit) for edit in _uncalled(text, nodes, variables))
    for n in nodes:  # comparison operators
        if isinstance(n, ast.Compare):
            operands = [n.left, *n.comparators]
            for i, op in enumerate(n.ops):
                where = text.between(operands[i], operands[i + 1], COMPARE[type(op)])
                if where:
                    for new in COMPARE_SWAPS[COMPARE[type(op)]]:
                        yield "compare", (*where, new)
    for n in nodes:  # arithmetic operators, in expressions and augmented assignments
        if isinstance(n, ast.BinOp) and type(n.op) in BINOP:
            where = text.between(n.left, n.right, BINOP[type(n.op)])
            if where:
                for new in BINOP_SWAPS[BINOP[type(n.op)]]:
                    yield "arithmetic", (*where, new)
        elif isinstance(n, ast.AugAssign) and type(n.op) in BINOP:
            where = text.between(n.target, n.value, BINOP[type(n.op)] + "=")
            if where:
                for new in BINOP_SWAPS[BINOP[type(n.op)]]:
                    yield "arithmetic", (*where, new + "=")
    for n in nodes:  # and/or
        if isinstance(n, ast.BoolOp):
            old, new = ("and", "or") if isinstance(n.op, ast.And) else ("or", "and")
            for left, right in zip(n.values, n.values[1:]):
                where = text.between(left, right, old)
                if where:
                    yield "boolean", (*where, new)
    for n in nodes:  # dropped operands: the excess-logic bugs
        if isinstance(n, ast.BinOp):
            start, end = text.span(n)
            yield "drop-operand", (start, end, _paren(seg(n.left)))
            yield "drop-operand", (start, end, _paren(seg(n.right)))
        elif isinstance(n, ast.BoolOp):
            start, end = text.span(n)
            for i in range(len(n.values)):
                rest = [seg(v) for j, v in enumerate(n.values) if j != i]
                joined = f" {'and' if isinstance(n.op, ast.And) else 'or'} ".join(rest)
                yield "drop-operand", (start, end, joined if len(rest) == 1 else f"({joined})")
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Not, ast.USub, ast.Invert)):
            yield "drop-operand", (*text.span(n), _paren(seg(n.operand)))
    for n in nodes:  # constants
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):  # bool is an int
            start, end = text.span(n)
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
    for n in pattern_literals(nodes, seg):  # regular expressions (bot/agent/mutate_regex.py)
        start = text.span(n)[0]
        for begin, end, new in literal_edits(seg(n), str(n.value)):
            yield "regex", (start + begin, start + end, new)
    if not assignment:  # missing None checks (bot/agent/mutate_guards.py)
        yield from (("guard", edit) for edit in guard_edits(text, func, body))  # type: ignore[arg-type]
    for n in nodes:  # calls from the same family
        if isinstance(n, ast.Call):
            name_node = n.func
            name = name_node.id if isinstance(name_node, ast.Name) else (
                name_node.attr if isinstance(name_node, ast.Attribute) else None)
            if name in SWAP_CALL:
                start, end = text.span(name_node)
                if isinstance(name_node, ast.Attribute):
                    start = end - len(name)
                for other in SWAP_CALL[name]:
                    yield "call", (start, end, other)
            if isinstance(name_node, ast.Name) and name in WRAPPERS and len(n.args) == 1 and not n.keywords:
                yield "unwrap", (*text.span(n), _paren(seg(n.args[0])))
    for n in nodes:  # bounds: range arguments, slice bounds, indices
        bounds: list[ast.AST] = []
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "range":
            bounds = list(n.args[:2])
        elif isinstance(n, ast.Slice):
            bounds = [b for b in (n.lower, n.upper) if b is not None]
        elif isinstance(n, ast.Subscript) and not isinstance(n.slice, (ast.Slice, ast.Tuple)):
            bounds = [n.slice]
        for b in bounds:
            if not isinstance(b, ast.Constant):
                start, end = text.span(b)
                for delta in (" + 1", " - 1"):
                    yield "bound", (start, end, _paren(seg(b)) + delta)
    for n in nodes:  # negated conditions and inserted not / - / abs
        test = n.test if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)) else None
        if test is not None and not isinstance(test, ast.Compare):
            yield "negate", (*text.span(test), f"not {_paren(seg(test))}")
        if isinstance(n, ast.Return) and n.value is not None and not isinstance(n.value, (ast.Constant, ast.Tuple)):
            start, end = text.span(n.value)
            yield "insert", (start, end, f"not {_paren(seg(n.value))}")
            yield "insert", (start, end, f"-{_paren(seg(n.value))}")
            yield "insert", (start, end, f"abs({seg(n.value)})")
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub):
            yield "insert", (*text.span(n), f"abs({seg(n)})")
    for n in nodes:  # another variable of the same scope
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in variables:
            for other in variables:
                if other != n.id:
                    yield "variable", (*text.span(n), other)
    for n in nodes:  # swapped operands and arguments
        if isinstance(n, ast.BinOp) and type(n.op) in NON_COMMUTATIVE:
            where = text.between(n.left, n.right, BINOP[type(n.op)])
            if where:
                start, end = text.span(n)
                yield "swap", (start, end, f"{_paren(seg(n.right))} {BINOP[type(n.op)]} {_paren(seg(n.left))}")
        elif isinstance(n, ast.Call) and len(n.args) == 2 and not any(isinstance(a, ast.Starred) for a in n.args):
            a, b = n.args
            start, end = text.span(a)[0], text.span(b)[1]
            yield "swap", (start, end, f"{seg(b)}, {seg(a)}")
    for block in [] if assignment else statement_blocks(body):  # deleted statements (the only one of its block: `pass`)
        for stmt in block:
            start, end = text.span(stmt)
            line_start, line_end = text.starts[stmt.lineno - 1], text.starts[stmt.end_lineno]  # type: ignore[index]
            if len(block) > 1 and own_lines_indent(text, stmt) is not None:
                yield "delete", (line_start, line_end, "")
            else:
                yield "delete", (start, end, "pass")


def _uncalled(text: _Text, nodes: list[ast.AST], variables: list[str]) -> Iterator[Edit]:
    """A lambda that returns a function instead of calling it: `lambda a, b: not check` -> `not check(a, b)`, for
    a name of the enclosing scope that the lambda neither takes nor calls. Rare, so tried first: a few edits."""
    for n in nodes:
        if not isinstance(n, ast.Lambda) or not n.args.args:
            continue
        params = [a.arg for a in n.args.args]
        called = {id(c.func) for c in ast.walk(n.body) if isinstance(c, ast.Call)}
        for name in ast.walk(n.body):
            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load) and id(name) not in called \
                    and name.id in variables and name.id not in params:
                yield (*text.span(name), f"{name.id}({', '.join(params)})")


def _apply(source: str, edit: Edit) -> str:
    start, end, new = edit
    return source[:start] + new + source[end:]


def _raw_edits(function_source: str, name: str, hot_lines: set[int] = frozenset(),  # type: ignore[assignment]
               exceptions: Sequence[str] = (), undefined: Sequence[str] = ()
               ) -> tuple[_Text, list[tuple[str, tuple[int, int, str]]]]:
    """Every one-edit change of the function (or assignment, or caller and helper), unchecked, in operator order;
    first, the `undefined` names (NameError) replaced by bound ones, then, where the failure raised `exceptions`
    on `hot_lines`, those statements wrapped in try/except."""
    try:
        tree = ast.parse(function_source)
    except SyntaxError:
        return _Text(function_source), []
    func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module | None = find_function(tree, name)
    if func is None and tree.body and all(assigned_names(n) for n in tree.body):
        func = tree
    scopes: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Module] = [func] if func is not None else []
    if func is None and function_parts(function_source):  # a caller and its helper: one edit in one of them
        scopes = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    text = _Text(function_source)
    renamed = [("undefined", e) for scope in scopes
               for e in rename_edits(text, scope, list(undefined), _scope_names(scope))] if undefined else []
    caught = [("except", e) for scope in scopes for e in except_edits(text, scope, hot_lines, list(exceptions))]
    return text, renamed + caught + [e for scope in scopes for e in _edits(text, scope)]


def _checked(function_source: str, text: _Text, edits: Iterable[tuple[str, Edit]], seen: set[str],
             limit: int | None) -> list[Mutant]:
    """The edits that parse and give code not seen yet, in the given order, at most `limit` of them."""
    found: list[Mutant] = []
    for operator, edit in edits:
        if limit is not None and len(found) >= limit:
            break
        candidate = _apply(function_source, edit)
        try:
            ast.parse(candidate)
            key = code_hash(candidate)
        except SyntaxError:
            continue
        if key in seen:
            continue
        seen.add(key)
        line = text.line_of(edit[0])
        old = function_source[edit[0]:edit[1]]
        found.append(Mutant(candidate, operator, line, f"line {line}: `{_short(old)}` -> `{_short(edit[2])}`"))
    return found


def mutants(function_source: str, name: str, exclude: frozenset[str] = frozenset()) -> list[Mutant]:
    """Every distinct one-edit mutant that parses, keeps the function's name (an assignment target: the names it
    assigns), and differs from the original and from the code whose hashes are in `exclude` (already tested)."""
    text, edits = _raw_edits(function_source, name)
    return _checked(function_source, text, edits, {code_hash(function_source), *exclude}, None)


def ranked_mutants(function_source: str, name: str, exclude: frozenset[str] = frozenset(),
                   hot_lines: set[int] = frozenset(), cap: int = 400,  # type: ignore[assignment]
                   exceptions: Sequence[str] = (), undefined: Sequence[str] = ()) -> list[Mutant]:
    """`rank(mutants(...), hot_lines, cap)` without building the rest: the edits are ordered first (lines the
    failure names, then the operators' own order) and only checked (parsed, hashed) until `cap` are found. A long
    function has thousands of edits; parsing and hashing each was most of a search's time. `exceptions`: builtin
    exceptions the failure raised, caught where the traceback shows them (mutate_guards.except_edits); `undefined`:
    names its NameErrors say are not defined, replaced by bound ones (mutate_names.rename_edits)."""
    text, edits = _raw_edits(function_source, name, hot_lines, exceptions, undefined)
    order: dict[str, int] = {}
    for operator, _edit in edits:
        order.setdefault(operator, len(order))
    ordered = sorted(edits, key=lambda e: (text.line_of(e[1][0]) not in hot_lines, order[e[0]]))
    return _checked(function_source, text, ordered, {code_hash(function_source), *exclude}, cap)


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def rank(found: list[Mutant], hot_lines: set[int] = frozenset(), cap: int = 400) -> list[Mutant]:  # type: ignore[assignment]
    """Lines the failure names first, then the operators' own order (cheapest and likeliest first); capped."""
    order = {m.operator: i for i, m in reversed(list(enumerate(found)))}
    ordered = sorted(found, key=lambda m: (m.line not in hot_lines, order[m.operator]))
    return ordered[:cap]
