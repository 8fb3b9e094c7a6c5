"""`python -m unittest ...` as pytest arguments.

fixbot runs every suite with pytest (its probe plugin gives exact node ids and per-test coverage, JUnit XML the
failure details), and pytest collects unittest.TestCase classes itself. This module says which of them unittest
would run: dotted names become node ids (`pkg/mod.py::Class::test_x`, a package its directory), discovery becomes
the start directory with unittest's file pattern, and unittest's flags become pytest's. Names are resolved
against the checkout's files, so the translation waits until they are known; the flags are checked as soon as
the command is read.
"""
from __future__ import annotations

import argparse
import ast
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from bot.fix.reproduce.command_env import BadTestCommand

UNITTEST_PREFIXES = (("python", "-m", "unittest"), ("python3", "-m", "unittest"))
DEFAULT_PATTERN = "test*.py"
# unittest runs TestCase subclasses only; pytest would also collect plain `test_*` functions and `Test*` classes
# (whose fixture-style arguments then error). pytest's unittest support does not consult these two settings.
ONLY_TESTCASES = ("-o", "python_classes=", "-o", "python_functions=")
_FLAGS = {"verbose": ("-v",), "quiet": ("-q",), "failfast": ("-x",), "locals": ("--showlocals",)}
_WILDCARDS = set("*?[")


class UnknownTestName(BadTestCommand):
    """A unittest test name (dotted or a file path) that names nothing in the repository."""


@dataclass(frozen=True)
class UnittestArgs:
    """What a `python -m unittest` command asks for. No `names` means discovery from `start`."""

    names: tuple[str, ...] = ()
    start: str = "."
    pattern: str = DEFAULT_PATTERN
    options: tuple[str, ...] = ()  # pytest's equivalents of unittest's flags


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print its usage and exit the process
        raise BadTestCommand(message)


def _parser(discovery: bool) -> argparse.ArgumentParser:
    """unittest's own command line (unittest/main.py), option for option; -b and -c change nothing under pytest
    (it captures output, and Ctrl-C ends fixbot's run, not one test)."""
    parser = _Parser(prog="python -m unittest", add_help=False)
    parser.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const="verbose")
    parser.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const="quiet")
    parser.add_argument("--locals", action="store_true")
    parser.add_argument("--durations", type=int)
    parser.add_argument("-f", "--failfast", action="store_true")
    parser.add_argument("-c", "--catch", action="store_true")
    parser.add_argument("-b", "--buffer", action="store_true")
    parser.add_argument("-k", dest="patterns", action="append", default=[])
    if not discovery:
        parser.add_argument("tests", nargs="*")
        return parser
    parser.add_argument("-s", "--start-directory", dest="start")
    parser.add_argument("-p", "--pattern", dest="pattern")
    # The top-level directory only sets unittest's import root; pytest finds that itself (rootdir, packages).
    parser.add_argument("-t", "--top-level-directory", dest="top")
    for name in ("start", "pattern", "top"):
        parser.add_argument(f"{name}_arg", nargs="?")
    return parser


def parse_unittest(args: Sequence[str], label: str = "") -> UnittestArgs:
    """The arguments after `-m unittest`, read as unittest reads them; a BadTestCommand where unittest would
    refuse them, or where pytest cannot do the same (a -k pattern with wildcards). `label` prefixes messages."""
    prefix = f"--test-cmd {label!r}: " if label else ""
    discovery = bool(args) and args[0].lower() == "discover"
    try:
        ns = _parser(discovery).parse_args(list(args[1:] if discovery else args))
    except BadTestCommand as exc:
        raise BadTestCommand(f"{prefix}unittest refuses it: {exc}") from None
    options: list[str] = [*_FLAGS.get(ns.verbosity or "", ())]
    for flag in ("failfast", "locals"):
        if getattr(ns, flag):
            options += _FLAGS[flag]
    if ns.durations is not None:
        options.append(f"--durations={ns.durations}")
    options += _keyword(ns.patterns, prefix)
    if not discovery:
        return UnittestArgs(names=tuple(dict.fromkeys(ns.tests)), options=tuple(options))
    return UnittestArgs(start=ns.start or ns.start_arg or ".", pattern=ns.pattern or ns.pattern_arg or DEFAULT_PATTERN,
                        options=tuple(options))


def _keyword(patterns: Sequence[str], prefix: str) -> list[str]:
    """unittest's -k (a substring of `pkg.mod.Class.test_x`, several or-ed) as pytest's -k expression; a
    dotted pattern needs every part among the test's names. Other wildcards have no pytest equivalent."""
    exprs = []
    for pattern in patterns:
        if len(pattern) > 2 and pattern[0] == pattern[-1] == "*":
            pattern = pattern[1:-1]  # `*name*` is the substring unittest makes of a plain pattern
        if _WILDCARDS & set(pattern):
            raise BadTestCommand(f"{prefix}-k {pattern!r}: fixbot runs the tests with pytest, whose -k takes no "
                                 "wildcards; give part of the test's name")
        parts = [p for p in pattern.split(".") if p]
        if parts:
            exprs.append(" and ".join(parts))
    if not exprs:
        return []
    return ["-k", exprs[0] if len(exprs) == 1 else " or ".join(f"({e})" for e in exprs)]


def pytest_args(command: UnittestArgs, files: Mapping[str, bytes], *,
                pythonpath: Sequence[str] = ()) -> tuple[str, ...]:
    """pytest's arguments for `command` over the checkout's `files` (`pythonpath`: the sandbox's import roots
    besides the repository's top). Raises UnknownTestName."""
    options = (*command.options, "-o", f"python_files={command.pattern}", *ONLY_TESTCASES)
    index = _Index(files)
    if command.names:
        roots = tuple(dict.fromkeys(_norm(p) for p in ("", *pythonpath)))
        nodes = [resolve_name(name, index, roots) for name in command.names]
        return (*options, *dict.fromkeys(nodes))
    start = _start_dir(command.start, index)
    ignored = (f"--ignore={d}" for d in outside_discovery(start, command.pattern, index))
    return (*options, *ignored, start or ".")


class _Index:
    """The checkout's paths, and every directory that holds a Python file (a module's possible package)."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = files
        self.dirs: set[str] = set()
        for path in files:
            if path.endswith(".py"):
                parent = posixpath.dirname(path)
                while parent and parent not in self.dirs:
                    self.dirs.add(parent)
                    parent = posixpath.dirname(parent)


def _norm(path: str) -> str:
    path = posixpath.normpath(path.replace("\\", "/")) if path else ""
    return "" if path == "." else path


def resolve_name(name: str, index: _Index, roots: Sequence[str] = ("",)) -> str:
    """A unittest test name as a pytest argument: a file path as it is, `pkg.mod.Class.test_x` as
    `pkg/mod.py::Class::test_x` (the longest prefix that is a module, as unittest's loader imports it), a package
    as its directory. `roots` are the import roots (the repository first)."""
    if name.lower().endswith(".py"):  # unittest turns an existing file's path into its module name
        path = _norm(name)
        if path in index.files:
            return path
        raise UnknownTestName(f"unittest test name {name!r}: no such file in the repository")
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        raise UnknownTestName(f"unittest test name {name!r} is neither a dotted name nor a .py file")
    for root in roots:
        for k in range(len(parts), 0, -1):
            node = _node(posixpath.join(root, *parts[:k]), parts[k:], index)
            if node:
                return node
    raise UnknownTestName(f"unittest test name {name!r} names nothing in the repository")


def _node(base: str, rest: Sequence[str], index: _Index) -> str | None:
    """The node for module path `base` (no suffix) and attribute names `rest`, or None when `base` is no module
    or does not define rest[0]. A regular package wins over a module of the same name, as in Python's import."""
    init = f"{base}/__init__.py"
    if init in index.files:
        module = init
    elif f"{base}.py" in index.files:
        module = f"{base}.py"
    elif base in index.dirs and not rest:  # a namespace package: only its submodules are attributes
        return base
    else:
        return None
    if not rest:
        return base if module == init else module
    if _defines(index.files[module], rest[0]) is False:
        return None
    return "::".join((module, *rest))


def _defines(source: bytes, name: str) -> bool | None:
    """Whether the module binds `name` at its top level (also inside if/try/with); None when that cannot be told
    (a syntax error, a star import)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                return True
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack += getattr(node, field, [])
        elif isinstance(node, ast.ExceptHandler):
            stack += node.body
    return False


def _start_dir(start: str, index: _Index) -> str:
    """Discovery's start directory, repository-relative ("" for the top). unittest also takes a package's
    dotted name there."""
    path = _norm(start)
    if path == "" or path in index.dirs or any(p.startswith(path + "/") for p in index.files):
        return path
    dotted = start.replace(".", "/")
    if all(p.isidentifier() for p in start.split(".")) and dotted in index.dirs:
        return dotted
    raise UnknownTestName(f"unittest discovery: the start directory {start!r} is not in the repository")


def outside_discovery(start: str, pattern: str, index: _Index) -> list[str]:
    """The directories under `start` that pytest would search and unittest's discovery does not: it enters only
    packages (a directory with __init__.py), from `start` down. Only those holding a matching file matter."""
    reached = {start}
    skipped: list[str] = []
    below = sorted(d for d in index.dirs if start == "" or d.startswith(start + "/"))
    for d in below:  # sorted: a parent comes before its children
        if posixpath.dirname(d) not in reached:
            continue
        if f"{d}/__init__.py" in index.files:
            reached.add(d)
        elif any(p.startswith(d + "/") and fnmatchcase(posixpath.basename(p), pattern) for p in index.files):
            skipped.append(d)
    return skipped
