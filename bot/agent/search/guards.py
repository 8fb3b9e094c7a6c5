"""One-edit mutants that add a missing None check, the commonest fix template of program repair (PAR, TBar):
real code crashes or misbehaves on a value that may be None more often than on a wrong operator.

Two forms, each inserted as whole lines with the surrounding indentation, so every other byte stays:
- an early return at the top of the body, or just after the top-level assignment of a name:
  `if param is None: return <v>`, where <v> is None or the empty value of a kind the function already returns
  (`[]` when it returns lists, `''` for strings, ...);
- a guarded return: `return f(x)` -> `if x is not None: return f(x)` (the function then returns None for None).

A skipped None: when the failure says a None was used as an object (`'NoneType' object has no attribute 'decode'`,
`... is not subscriptable`), the statement the traceback shows doing so gets `if x is None: continue` before it
inside a loop (skip that item), or an early return outside one, for each name it uses that way; a comprehension
the traceback shows gets `if x is not None` for its loop variable (the None used in the function it calls). An
empty string used where the failure shows it (`KeyError: ''`, `int('')`) is skipped the same way, by `if x`:
`''.split(',')` is `['']`, not `[]`.

And a caught exception: the statement the failure's traceback shows raising a builtin exception, wrapped in
`try: ... except ThatError:` (a return falls through to the rest of the body, an assignment gets None), the other
common fix template when real input is stranger than the code expected.
"""
from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import Protocol

Edit = tuple[int, int, str]  # start, end (offsets in the function's text), replacement
EMPTY = {ast.List: "[]", ast.ListComp: "[]", ast.Dict: "{}", ast.DictComp: "{}", ast.Tuple: "()", ast.Set: "set()"}


class Text(Protocol):
    """What of bot/agent/search/text.py's `Text` the guards need."""
    source: str
    starts: list[int]

    def span(self, node: ast.AST) -> tuple[int, int]: ...


def guard_edits(text: Text, func: ast.FunctionDef | ast.AsyncFunctionDef, body: list[ast.stmt]) -> Iterator[Edit]:
    """Early returns for a parameter at the top of the body, and for a name just after the top-level statement
    that assigns it (`param = params.get(param)`); then guarded returns."""
    values = _empty_values(func)
    checks = [(body[0], False, name) for name in parameters(func)] if body else []
    checks += [(stmt, True, stmt.targets[0].id) for stmt in body if isinstance(stmt, ast.Assign)
               and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)]
    for stmt, after, name in checks:
        indent = own_lines_indent(text, stmt)
        if indent is None:
            continue
        at = text.starts[stmt.end_lineno if after else stmt.lineno - 1]  # type: ignore[index]
        for value in values:
            yield at, at, f"{indent}if {name} is None:\n{indent}    return {value}\n"
    yield from _guarded_returns(text, func, body)


def raised(feedback: str) -> list[str]:
    """Builtin exceptions the failure shows being raised (pytest's `E   ValueError: ...`, a traceback's last line),
    the test's own AssertionError and a NameError aside (catching one hides a misspelt name: mutate_names)."""
    names = re.findall(r"^(?:E\s+)?([A-Z]\w*(?:Error|Exception))(?::|$)", feedback, re.M)
    return [name for name in dict.fromkeys(names) if name not in ("AssertionError", "NameError", "UnboundLocalError")
            and isinstance(getattr(builtins, name, None), type) and issubclass(getattr(builtins, name), Exception)]


NONE_USES = {"subscript": r"'NoneType' object is not subscriptable", "iterate": r"'NoneType' object is not iterable",
             "call": r"'NoneType' object is not callable", "operand": r"unsupported operand type\(s\) for .*'NoneType'"}


def none_uses(feedback: str) -> list[str]:
    """How the failure says a None was used: `attr:<name>` for a missing attribute, or a key of NONE_USES."""
    uses = [f"attr:{a}" for a in re.findall(r"'NoneType' object has no attribute '(\w+)'", feedback)]
    uses += [use for use, pattern in NONE_USES.items() if re.search(pattern, feedback)]
    return list(dict.fromkeys(uses))


# a failure of an empty string used as a key or a number: `''.split(',')` gives `['']`, not `[]`
EMPTY_USES = re.compile(r"^(?:E\s+)?(?:KeyError: ''|ValueError: (?:invalid literal for \w+\(\) with base \d+|"
                        r"could not convert string to float): '')$", re.M)


def empty_used(feedback: str) -> bool:
    return bool(EMPTY_USES.search(feedback))


def skip_edits(text: Text, func: ast.AST, hot_lines: AbstractSet[int], uses: list[str]) -> Iterator[Edit]:
    """`if x is None:` + `continue` (in a loop) or an early return, before each statement on a line the
    traceback shows, for each name x the statement uses as the failure says a None was used."""
    if not uses or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    values = _empty_values(func)
    for stmt, in_loop in _statements(func.body, False):
        if stmt.lineno not in hot_lines or (indent := own_lines_indent(text, stmt)) is None:
            continue
        at = text.starts[stmt.lineno - 1]
        if text.source[at:].lstrip().startswith("elif"):  # a check before it would split the if-chain
            continue
        for name in _used_as(_header(stmt), uses):
            for body in ["continue"] if in_loop else [f"return {v}" for v in values]:
                yield at, at, f"{indent}if {name} is None:\n{indent}    {body}\n"


def filter_edits(text: Text, func: ast.AST, hot_lines: AbstractSet[int], condition: str) -> Iterator[Edit]:
    """` if x<condition>` (` is not None`, or `` for a non-empty x) at the end of a comprehension on lines the
    traceback shows, for each of its loop variables x that its element uses: the item skipped, as `continue`
    skips it in a loop, when a None or an empty string was used further down (in the element, or in the function
    it calls, `[build(s) for s in parts]`)."""
    for node in ast.walk(func):
        if not isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) \
                or not hot_lines & set(range(node.lineno, (node.end_lineno or node.lineno) + 1)):
            continue
        element = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        used = {n.id for part in element for n in ast.walk(part) if isinstance(n, ast.Name)}
        close = text.span(node)[1] - 1  # the comprehension's closing bracket (a call's, for a lone generator)
        if text.source[close:close + 1] not in ("]", "}", ")"):
            continue
        for generator in node.generators:
            if isinstance(generator.target, ast.Name) and generator.target.id in used:
                yield close, close, f" if {generator.target.id}{condition}"


def _statements(body: list[ast.stmt], in_loop: bool) -> Iterator[tuple[ast.stmt, bool]]:
    """Every statement of a body with whether a loop of the same function encloses it."""
    for stmt in body:
        yield stmt, in_loop
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        loop = isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, field, []), in_loop or (loop and field == "body"))
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body, in_loop)


def _header(stmt: ast.stmt) -> ast.AST:
    """The part of a statement that runs on its first line: a compound statement's test, or its loop (a loop's
    iterable is iterated, as a comprehension's)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt.test
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return ast.comprehension(target=ast.Name(id="_", ctx=ast.Store()), iter=stmt.iter, ifs=[], is_async=0)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return ast.Tuple(elts=[item.context_expr for item in stmt.items], ctx=ast.Load())
    if isinstance(stmt, (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return ast.Pass()
    return stmt


def _used_as(node: ast.AST, uses: list[str]) -> list[str]:
    """Names the code uses in one of the ways `uses` lists, in the order they appear."""
    found: list[tuple[int, int, str]] = []
    for n in ast.walk(node):
        objects: list[ast.AST] = []
        if isinstance(n, ast.Attribute) and f"attr:{n.attr}" in uses:
            objects = [n.value]
        elif isinstance(n, ast.Subscript) and "subscript" in uses:
            objects = [n.value]
        elif isinstance(n, ast.Call) and "call" in uses:
            objects = [n.func]
        elif isinstance(n, ast.comprehension) and "iterate" in uses:
            objects = [n.iter]
        elif isinstance(n, ast.BinOp) and "operand" in uses:
            objects = [n.left, n.right]
        found += [(o.lineno, o.col_offset, o.id) for o in objects if isinstance(o, ast.Name)]
    return list(dict.fromkeys(name for *_, name in sorted(found)))


def except_edits(text: Text, func: ast.AST, hot_lines: AbstractSet[int], exceptions: list[str]) -> Iterator[Edit]:
    """Each simple statement on a line the traceback shows, on lines of its own, wrapped in `try:` with an
    `except` for the exceptions raised."""
    if not exceptions:
        return
    caught = exceptions[0] if len(exceptions) == 1 else f"({', '.join(exceptions)})"
    for node in ast.walk(func):
        if not isinstance(node, (ast.Return, ast.Assign, ast.Expr)) or node.lineno not in hot_lines:
            continue
        indent = own_lines_indent(text, node)
        if indent is None:
            continue
        handler = "pass"
        if isinstance(node, ast.Assign):
            if not (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            handler = f"{node.targets[0].id} = None"
        start, end, indented = _indented(text, node)
        yield start, end, f"{indent}try:\n{indented}{indent}except {caught}:\n{indent}    {handler}\n"


def parameters(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = func.args
    return [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs] if x.arg not in ("self", "cls")]


def _empty_values(func: ast.AST) -> list[str]:
    """None, then the empty value of each kind of thing the function returns."""
    values = ["None"]
    for node in ast.walk(func):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                values.append("''")
            elif isinstance(value, ast.Constant) and type(value.value) in (int, float):
                values.append("0")
            elif type(value) in EMPTY:
                values.append(EMPTY[type(value)])
    return list(dict.fromkeys(values))


def _guarded_returns(text: Text, func: ast.AST, body: list[ast.stmt]) -> Iterator[Edit]:
    """`return f(x)` on lines of its own -> the same return under `if x is not None:`."""
    locals_ = set(parameters(func)) | {n.id for n in ast.walk(func)  # type: ignore[arg-type]
                                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for stmt in body:
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Return) and isinstance(node.value, ast.Call)):
                continue
            indent = own_lines_indent(text, node)
            if indent is None:
                continue
            names = [a.id for a in node.value.args if isinstance(a, ast.Name) and a.id in locals_]
            start, end, indented = _indented(text, node)
            for name in dict.fromkeys(names):
                yield start, end, f"{indent}if {name} is not None:\n{indented}"


def _indented(text: Text, node: ast.stmt) -> tuple[int, int, str]:
    """The statement's whole lines (start and end offsets) and those lines indented one level more."""
    start, end = text.starts[node.lineno - 1], text.starts[node.end_lineno]  # type: ignore[index]
    lines = text.source[start:end]
    indented = "".join("    " + line if line.strip() else line for line in lines.splitlines(True))
    return start, end, indented if indented.endswith("\n") else indented + "\n"


def own_lines_indent(text: Text, node: ast.stmt) -> str | None:
    """The statement's indentation, when it is alone on its lines (no `;` neighbours)."""
    line = text.source[text.starts[node.lineno - 1]:text.starts[node.lineno]]
    indent = line[:len(line) - len(line.lstrip())]
    if len(indent) != node.col_offset or node.end_lineno is None or node.end_col_offset is None:
        return None
    last = text.source[text.starts[node.end_lineno - 1]:text.starts[node.end_lineno]]
    tail = last.encode("utf-8")[node.end_col_offset:].decode("utf-8", "replace").strip()
    return indent if not tail or tail.startswith("#") else None
