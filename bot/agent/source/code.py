"""Model text -> one checked function: extract it, check its signature, hash it (making it faithful to the
original's text is bot/agent/source/faithful.py).

A target may also be an assignment statement (a module constant, a dict of lambdas, a class attribute), or
several functions (a caller and its helper, bot/agent/source/parts.py): the original's own shape decides, so every
caller keeps passing (text, name, original). For an assignment, the answer's top-level statement assigning the
same names is the candidate, and "the signature" is those names; several functions are each handled as one.
"""
from __future__ import annotations

import ast
import difflib
import hashlib
import textwrap
from collections.abc import Iterator
from typing import Literal

from bot.agent.source.blocks import (
    FENCE,
    Extracted,
    find_function,
    function_span,
    parsed_blocks,
    segment,
    syntax_detail,
)
from bot.agent.source.parts import extract_parts, function_parts, join_parts

Kind = Literal["function", "assignment", "functions"]


def _plain_names(target: ast.expr) -> list[str] | None:
    """The names an assignment target binds (through tuples, lists and `*`), or None for `x.a` / `x[i]`."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _plain_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        names = [_plain_names(e) for e in target.elts]
        return None if any(n is None for n in names) else [x for n in names for x in n]  # type: ignore[union-attr]
    return None


def assigned_names(node: ast.AST) -> tuple[str, ...]:
    """The names an `=` or annotated assignment with a value binds, in order; () for any other statement, or
    one that also stores into an attribute or an item (that changes another object, not a name)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return ()
    names = [_plain_names(t) for t in targets]
    if any(n is None for n in names):
        return ()
    return tuple(dict.fromkeys(x for n in names for x in n))  # type: ignore[union-attr]


def _assignments(code: str) -> list[tuple[str, ...]] | None:
    """The names each top-level statement of `code` assigns, when every statement is such an assignment."""
    try:
        body = ast.parse(textwrap.dedent(code)).body
    except (SyntaxError, ValueError):
        return None
    names = [assigned_names(n) for n in body]
    return names if body and all(names) else None


def target_kind(source: str) -> Kind:
    """"assignment" when the target's code is assignment statements only, "functions" when it is several
    functions (a two-span repair), else "function"."""
    if _assignments(source) is not None:
        return "assignment"
    return "functions" if function_parts(source) else "function"


def unwritten(source: str) -> bool:
    """A function not written yet: its body (past a docstring) only raises NotImplementedError."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and len(body) > 1:
        body = body[1:]
    raised = body[0].exc if len(body) == 1 and isinstance(body[0], ast.Raise) else None
    called = raised.func if isinstance(raised, ast.Call) else raised
    return isinstance(called, ast.Name) and called.id == "NotImplementedError"


def extract_function(text: str, name: str, original: str) -> Extracted:
    """The function `name` from a model's answer: fenced or not, whole or body only. For an assignment target,
    its statements (see `extract_assignment`)."""
    wanted = _assignments(original)
    if wanted is not None:
        return extract_assignment(text, wanted, name)
    parts = function_parts(original)
    if parts:
        return extract_parts(text, parts)
    parsed, first_error = parsed_blocks(text)
    for source, tree in parsed:
        node = find_function(tree, name)
        if node is not None:
            return Extracted(segment(source, node))
        if tree.body and not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in tree.body):
            # A body without its `def` line: give it the original header.
            wrapped = _with_original_header(original, source)
            if wrapped:
                return Extracted(wrapped)
    if first_error is not None:
        return Extracted(None, "syntax", syntax_detail(first_error))
    return Extracted(None, "missing", f"the answer has no function named `{name}`")


def extract_assignment(text: str, wanted: list[tuple[str, ...]], name: str) -> Extracted:
    """From a model's answer, for each original statement the last top-level statement assigning the same names
    (imports, helpers and prints around it are dropped; a class around it too), in the original's order."""
    first_error: SyntaxError | None = None
    for block in [m.group(1) for m in FENCE.finditer(text)] or [text]:
        source = textwrap.dedent(block).strip("\n") + "\n"
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            first_error = first_error or exc
            continue
        # a class attribute may come back inside its class
        statements = [s for n in tree.body for s in (n.body if isinstance(n, ast.ClassDef) else [n])]
        last = {assigned_names(n): n for n in statements if assigned_names(n)}
        if all(names in last for names in wanted):
            lines = source.splitlines()
            return Extracted("".join(textwrap.dedent("\n".join(lines[last[n].lineno - 1:last[n].end_lineno])) + "\n"
                                     for n in wanted))
    if first_error is not None:
        return Extracted(None, "syntax", syntax_detail(first_error))
    return Extracted(None, "missing", f"the answer has no assignment to `{name}`")


def _with_original_header(original: str, body: str) -> str | None:
    try:
        node = find_function(ast.parse(original), function_name(original))
    except (SyntaxError, StopIteration):  # the header itself may be what is broken
        return None
    if node is None:
        return None
    first, _ = function_span(node)
    header = original.splitlines()[first - 1:node.body[0].lineno - 1]
    candidate = "\n".join(header) + "\n" + textwrap.indent(body, "    ")
    try:
        ast.parse(candidate)
    except SyntaxError:
        return None
    return candidate


_OPEN = ((), (), "args", (), "kwargs", 0)  # `def f(*args, **kwargs)`: a stub to be written, any parameters will do


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[object, ...]:
    a = node.args
    return (tuple(x.arg for x in a.posonlyargs), tuple(x.arg for x in a.args), a.vararg and a.vararg.arg,
            tuple(x.arg for x in a.kwonlyargs), a.kwarg and a.kwarg.arg, len(a.defaults))


def signature_problem(candidate: str, original: str, name: str) -> str | None:
    """Why the candidate cannot replace the original (wrong name or parameters; for an assignment, other names
    assigned), or None."""
    parts = function_parts(original)
    if parts:
        parts_got = dict(function_parts(candidate))
        return next((p for n, part in parts if (p := signature_problem(parts_got.get(n, ""), part, n))), None)
    wanted = _assignments(original)
    if wanted is not None:
        got = _assignments(candidate)
        shown = "; ".join(", ".join(n) for n in wanted)
        return None if got == wanted else f"assign exactly the same names as before, and nothing else: {shown}"
    new = find_function(ast.parse(candidate), name)
    try:
        old = find_function(ast.parse(textwrap.dedent(original)), name)
    except SyntaxError:  # the original does not parse (the bug is a syntax error): the name must still match
        return None if new is not None else f"the function must be named `{name}`"
    if new is None or old is None:
        return f"the function must be named `{name}`"
    if _params(new) != _params(old) and _params(old) != _OPEN:
        return f"keep the parameters exactly as they are: {name}({ast.unparse(old.args)})"
    return None


_Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module


class _StripDocstrings(ast.NodeTransformer):
    def _strip(self, node: _Scope) -> _Scope:
        self.generic_visit(node)
        body = node.body
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Module = _strip


def statement_blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """Every list of sibling statements: `body`, and each nested body, else, finally and handler body."""
    yield body
    for stmt in body:
        for n in ast.walk(stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(n, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    yield block


def normalized_dump(code: str) -> str:
    """The code's AST without docstrings, formatting or comments: equal for the same program."""
    tree = _StripDocstrings().visit(ast.parse(textwrap.dedent(code)))
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def code_hash(code: str) -> str:
    try:
        key = normalized_dump(code)
    except SyntaxError:  # a target broken by a syntax error: its text, whitespace aside, is its identity
        key = " ".join(code.split())
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def docstring_lines(code: str) -> tuple[int, int] | None:
    try:
        node = find_function(ast.parse(code), function_name(code))
    except (SyntaxError, StopIteration):  # a broken target shows its docstring inline
        return None
    if node and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
            and isinstance(node.body[0].value.value, str):
        return node.body[0].lineno, node.body[0].end_lineno or node.body[0].lineno
    return None


def function_name(code: str) -> str:
    node = next(n for n in ast.parse(code).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return node.name


def body_start(code: str) -> int:
    node = find_function(ast.parse(code), function_name(code))
    assert node is not None
    return node.body[0].lineno


def changed_lines(before: str, after: str) -> int:
    """Lines changed by a fix: per differing region, the larger of lines removed and lines added."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal")


def split_docstring(source: str) -> tuple[str, str]:
    """(the function without its docstring, the docstring's text). Shown apart, the model cannot echo it.
    Several functions: each without its docstring, and their docstrings one paragraph each."""
    parts = function_parts(source)
    if parts:
        split = [split_docstring(text) for _, text in parts]
        return join_parts([code for code, _ in split]), "\n\n".join(doc for _, doc in split if doc)
    source = textwrap.dedent(source)
    span = docstring_lines(source)
    if span is None:
        return source, ""
    node = find_function(ast.parse(source), function_name(source))
    doc = ast.get_docstring(node) if node else None
    lines = source.splitlines(keepends=True)
    return "".join(lines[: span[0] - 1] + lines[span[1]:]), doc or ""
