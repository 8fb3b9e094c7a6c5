"""The project's functions a target calls, as a developer reads them before changing a call: each one's `def`
line and the first line of its docstring. A call missing an argument, or passing them in the wrong order, is
visible only against the callee's parameters.

In: the checkout's files, the target's path and code. Out: a few lines of text for the model's context. Never: a
callee's body (the model would copy it, or repair the wrong function), more than MAX_CALLEES, or anything found
outside the target's module and the project modules it imports names from."""
from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Mapping

MAX_CALLEES = 8
_Def = ast.FunctionDef | ast.AsyncFunctionDef


def called_names(source: str) -> list[str]:
    """The names the code calls (`f(...)`, `obj.f(...)`), in order of first call."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return []
    names = [n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))]
    return list(dict.fromkeys(names))


def _defs(tree: ast.Module) -> Iterator[_Def]:
    """Top-level functions and the methods of top-level classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _parsed(files: Mapping[str, bytes], path: str) -> ast.Module | None:
    try:
        return ast.parse(files[path].decode("utf-8", "surrogateescape"))
    except (SyntaxError, ValueError, KeyError):
        return None


def _imported_modules(tree: ast.Module, files: Mapping[str, bytes], path: str) -> list[str]:
    """The project files the module imports names from (`from pkg.mod import f`, `from .mod import f`)."""
    package = path.rsplit("/", 1)[0].split("/") if "/" in path else []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        parts = (package[:len(package) - node.level + 1] if node.level else []) + (node.module or "").split(".")
        stem = "/".join(p for p in parts if p)
        for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
            if candidate in files and candidate != path:
                found.append(candidate)
    return found


def _signature(node: _Def) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    doc = (ast.get_docstring(node) or "").strip().splitlines()
    said = f'  # {doc[0].strip()}' if doc else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}: ...{said}"


def callee_signatures(files: Mapping[str, bytes], path: str, source: str, own: frozenset[str] = frozenset()) -> str:
    """The `def` lines of the project functions `source` calls: its own module's first, then those of the
    modules it imports from; `own` (the target's own names) left out."""
    wanted = [n for n in called_names(source) if n not in own]
    tree = _parsed(files, path)
    if not wanted or tree is None:
        return ""
    trees = [tree, *filter(None, (_parsed(files, p) for p in _imported_modules(tree, files, path)))]
    found: dict[str, str] = {}
    for t in trees:
        here: dict[str, set[str]] = {}
        for node in _defs(t):
            if node.name in wanted and node.name not in found:
                here.setdefault(node.name, set()).add(_signature(node))
        # two different functions of one name (methods of two classes): which one is called is not known
        found.update({name: sigs.pop() for name, sigs in here.items() if len(sigs) == 1})
    lines = [found[n] for n in wanted if n in found][:MAX_CALLEES]
    return "# the project functions it calls:\n" + "\n".join(lines) if lines else ""
