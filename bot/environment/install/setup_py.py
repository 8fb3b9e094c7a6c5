"""What a setup.py declares that can be read without running it: the names of its extras and its tests_require.

Read with `ast` only: a setup.py is the project's code, and it runs (through pip) only inside the build container.
A value is read when it is a literal, or a module-level name bound to a literal; anything computed is unreadable.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TypeGuard


@dataclass(frozen=True)
class SetupPy:
    extras: tuple[str, ...] | None = None  # the extras' names; None: no literal `extras_require` found
    extras_require: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (extra, requirements) where both are literal
    tests_require: tuple[str, ...] | None = None  # requirement strings; None: absent or not a literal
    name: str | None = None  # the distribution's name; None: absent or not a literal


def read_setup_py(source: str) -> SetupPy:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # e.g. a Python 2 setup.py: pip, not us, reports whether it builds
        return SetupPy()
    call = _setup_call(tree)
    if call is None:
        return SetupPy()
    bindings = _module_bindings(tree)
    keywords = {k.arg: _resolve(k.value, bindings) for k in call.keywords if k.arg}
    name = keywords.get("name")
    return SetupPy(extras=_extra_names(keywords.get("extras_require")),
                   extras_require=_extra_lists(keywords.get("extras_require"), bindings),
                   tests_require=_strings(keywords.get("tests_require")),
                   name=name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None)


def _is_setup(node: ast.AST) -> TypeGuard[ast.Call]:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "setup") or (isinstance(func, ast.Attribute)
                                                                    and func.attr == "setup")


def _setup_call(tree: ast.Module) -> ast.Call | None:
    """The `setup(...)` call (also `setuptools.setup`, or one inside `if __name__ == ...`); of several, the first
    that passes extras_require or tests_require, else the first."""
    calls = [node for node in ast.walk(tree) if _is_setup(node)]
    wanted = [c for c in calls if any(k.arg in ("extras_require", "tests_require") for k in c.keywords)]
    return next(iter(wanted or calls), None)


def _module_bindings(tree: ast.Module) -> dict[str, ast.expr]:
    """Names bound at the top of the module to a value, the last binding winning (`x = [...]`, `x: list = [...]`)."""
    bound: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name):
            bound[target.id] = value
    return bound


def _resolve(node: ast.expr, bindings: dict[str, ast.expr]) -> ast.expr:
    if isinstance(node, ast.Name) and node.id in bindings:
        return bindings[node.id]
    return node


def _extra_names(node: ast.expr | None) -> tuple[str, ...] | None:
    """The keys of a dict literal or a `dict(name=...)` call. A key `"test:python_version<'3'"` is the extra `test`
    with a marker; `":sys_platform=='win32'"` is no extra at all (a conditional dependency of the project)."""
    if isinstance(node, ast.Dict):
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            return None  # a computed key, or `**other`
        keys = [k.value for k in node.keys]  # type: ignore[union-attr]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        if any(k.arg is None for k in node.keywords):
            return None
        keys = [k.arg for k in node.keywords if k.arg is not None]  # none is None: checked above
    else:
        return None
    names = (key.partition(":")[0].strip() for key in keys)
    return tuple(dict.fromkeys(name for name in names if name))


def _extra_lists(node: ast.expr | None, bindings: dict[str, ast.expr]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The extras of a dict literal whose values are literal lists, each with its requirement strings."""
    if not isinstance(node, ast.Dict):
        return ()
    found = []
    for key, value in zip(node.keys, node.values):
        requirements = _strings(_resolve(value, bindings))
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and requirements is not None:
            found.append((key.value.partition(":")[0].strip(), requirements))
    return tuple((name, reqs) for name, reqs in found if name)


def _strings(node: ast.expr | None) -> tuple[str, ...] | None:
    """A list, tuple or set of string literals, or one string of lines (setuptools accepts both)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        lines = (line.strip() for line in node.value.splitlines())
        return tuple(line for line in lines if line and not line.startswith("#"))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    return None
