"""Functions the tests use that the project does not define yet: a test module that fails at
`from pkg.mod import name` (ImportError: cannot import name), or a test that calls `mod.name(...)` (AttributeError:
module has no attribute). Written test-first, or the commit that adds the function was forgotten; either way the
failing tests are the specification, and there is no function to repair.

Each such name gets a stub appended to its module, a function of any arguments that raises NotImplementedError.
The suite is then run again: the module imports, the tests that use the name fail inside the stub (a traceback
frame, so `locate` ranks it first), and the stub is repaired like any other function: the model writes the body
from the tests. A stub that is not replaced by a verified fix never reaches the patch."""
from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from bot.failures import Failure

STUB_MARK = "not defined yet: the tests use it"  # in every stub's exception; how a stub is recognised later
_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_NO_ATTRIBUTE = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")


@dataclass(frozen=True)
class MissingName:
    """A function the tests use that `path` (a project module) does not define."""

    path: str  # relative to the repository root
    name: str


def _module_path(module: str, files: Mapping[str, bytes]) -> str | None:
    base = module.replace(".", "/")
    for candidate in (base + ".py", base + "/__init__.py"):
        for path in files:  # a src/ layout or a package below the root: the module is a suffix of the path
            if path == candidate or path.endswith("/" + candidate):
                return path
    return None


def _named(failure: Failure) -> tuple[str, str] | None:
    """(module, name) when the failure says a module lacks a name."""
    text = failure.error_line
    if (found := _CANNOT_IMPORT.search(text)) is not None:
        return found.group(2), found.group(1)
    if (found := _NO_ATTRIBUTE.search(text)) is not None:
        return found.group(1), found.group(2)
    return None


def calls_name(tree: ast.AST, name: str) -> bool:
    """The test module calls `name(...)` or `something.name(...)`."""
    return any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) and n.func.id == name
                                            or isinstance(n.func, ast.Attribute) and n.func.attr == name)
               for n in ast.walk(tree))


def _module_level(tree: ast.Module) -> Iterable[ast.AST]:
    """The module's nodes outside function and class bodies (an `if`/`try` at the top level included)."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _defines(source: str, name: str) -> bool:
    """The module binds `name` somewhere at its top level (perhaps under a condition that did not hold): then the
    failure is another bug's, not a missing function's."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return True  # a module that does not parse is a syntax error's to report, not a missing name's
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name
               or isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               or isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name
               for n in _module_level(tree))


def missing_names(failures: Iterable[Failure], files: Mapping[str, bytes],
                  is_project: Callable[[str], bool]) -> list[MissingName]:
    """The functions that failing tests import or call from a project module that does not define them. Only a
    name the tests call becomes a stub (a constant or a class is not guessed), and not a CamelCase one."""
    found: dict[tuple[str, str], None] = {}
    for failure in failures:
        named = _named(failure)
        if named is None or named[1][:1].isupper():
            continue
        module, name = named
        path = _module_path(module, files)
        if path is None or not is_project(path) or _defines(files[path].decode("utf-8", "replace"), name):
            continue
        test_file = failure.test_id.partition("::")[0]
        try:
            tree = ast.parse(files[test_file].decode("utf-8", "replace")) if test_file in files else None
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None and calls_name(tree, name):
            found[(path, name)] = None
    return [MissingName(path, name) for path, name in found]


def stub(missing: MissingName) -> str:
    """Open parameters: the model's function may take whatever the tests pass (bot/agent/source/code.py accepts any
    parameters in place of `*args, **kwargs`)."""
    return (f"def {missing.name}(*args, **kwargs):\n"
            f"    raise NotImplementedError(\"{missing.name} is {STUB_MARK}\")\n")


def is_stub(source: str) -> bool:
    return STUB_MARK in source and "NotImplementedError" in source


def _appended(module: bytes, item: MissingName) -> bytes:
    """What `with_stubs` appends to a module: every byte of it stays as it was, the stub follows two blank lines."""
    gap = b"" if not module.strip() else (b"\n\n" if module.endswith(b"\n") else b"\n\n\n")
    return gap + stub(item).encode("utf-8")


def with_stubs(files: Mapping[str, bytes], missing: Iterable[MissingName]) -> dict[str, bytes]:
    """The files with each missing function's stub appended to its module."""
    out = dict(files)
    for item in missing:
        out[item.path] += _appended(out[item.path], item)
    return out


def without_stubs(files: Mapping[str, bytes], originals: Mapping[str, bytes],
                  missing: Iterable[MissingName]) -> dict[str, bytes]:
    """The files with the stubs that no verified fix replaced taken out again (the modules' other changes stay)."""
    built, tails = dict(originals), []
    for item in missing:  # as with_stubs appended them
        tails.append((item.path, _appended(built[item.path], item)))
        built[item.path] += tails[-1][1]
    out = dict(files)
    for path, tail in reversed(tails):  # the last appended first: a stub still at its module's end
        if out[path].endswith(tail):
            out[path] = out[path][:-len(tail)]
    return out


def described(missing: Iterable[MissingName]) -> str:
    return ", ".join(f"{m.name} in {posixpath.basename(m.path)}" for m in missing)
