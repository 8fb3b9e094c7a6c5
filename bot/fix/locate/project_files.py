"""A checkout's files as the ranking reads them (bot/fix/locate/rank.py): which paths are project code and which are
tests, each file decoded, parsed and cut into spans on demand, and paths from frames and coverage made relative."""
from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Sequence
from functools import cache

from bot.checkout.paths import clean_root, is_test_path, under
from bot.checkout.repository import Checkout
from bot.fix.locate.spans import Span, code_spans

SANDBOX_WORKDIR = "/work/"  # where the sandbox puts the checkout; frames inside it carry this prefix
_ENV_DIRS = {"site-packages", "dist-packages", "venv", "__pypackages__", "node_modules"}


def is_project_file(path: str) -> bool:
    """Project code: a .py file that is neither a test nor part of an environment or a dot-directory."""
    if not path.endswith(".py") or is_test_path(path):
        return False
    return not any(p in _ENV_DIRS or p.startswith(".") for p in path.split("/")[:-1])


def is_target_file(path: str, test_folders: Sequence[str]) -> bool:
    """Project code outside the tests' folders (`folders_of_tests`): a file whose code may be a target."""
    return is_project_file(path) and not under(path, test_folders)


def folders_of_tests(files: Iterable[str], roots: Sequence[str]) -> tuple[str, ...]:
    """The roots as checkout paths, and the folder of each root that is a file when that folder's name says test
    (`python_testcases/`): its other modules are the tests' helpers. A folder that does not say so may be the
    project's own package with its tests beside the modules."""
    known = set(files)
    out = [clean_root(r) for r in roots]
    folders = [posixpath.dirname(r) for r in out if r in known]
    out += [f for f in folders if "test" in posixpath.basename(f).lower()]
    return tuple(dict.fromkeys(r for r in out if r))


class ProjectFiles:
    """The checkout's files, decoded and parsed on demand (a file that is not UTF-8 is skipped)."""

    def __init__(self, checkout: Checkout, test_roots: Sequence[str] = ()) -> None:
        self.checkout = checkout
        self.roots = folders_of_tests(checkout.files, test_roots)
        self.project = sorted(p for p in checkout.files if is_target_file(p, self.roots))
        self.text = cache(self._text)
        self.tree = cache(self._tree)
        self.spans = cache(self._spans)
        self.function = cache(self._function)
        self.reads = cache(self._reads)
        self.relative = cache(self._relative)

    def _text(self, path: str) -> str | None:
        try:
            return self.checkout.files[path].decode("utf-8").removeprefix("\ufeff")
        except (KeyError, UnicodeDecodeError):
            return None

    def _tree(self, path: str) -> ast.Module | None:
        text = self.text(path)
        try:
            return ast.parse(text) if text is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def _spans(self, path: str) -> list[tuple[Span, list[range]]]:
        """(span, the groups of lines a test runs) per function and assignment: a function's body (its def line
        and decorators run at import), each lambda body of an assignment (the rest of it runs at import)."""
        tree = self.tree(path)
        if tree is None:
            return []
        body = {min([n.lineno, *(d.lineno for d in n.decorator_list)]): n.body[0].lineno
                for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        lambdas = [range(n.body.lineno, (n.body.end_lineno or n.body.lineno) + 1)
                   for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
        return [(s, [range(body.get(s.start, s.start), s.end + 1)] if s.kind == "function"
                 else [r for r in lambdas if s.start <= r.start and r.stop - 1 <= s.end])
                for s in code_spans(self.text(path) or "")]

    def _function(self, path: str, span: Span) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The `def` node of a function span."""
        tree = self.tree(path)
        return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == span.start), None) if tree else None

    def _reads(self, path: str, span: Span) -> tuple[frozenset[str], frozenset[str]]:
        """What a function reads: names, and attributes of `self`/`cls`."""
        node = self.function(path, span)
        if node is None:
            return frozenset(), frozenset()
        walked = list(ast.walk(node))
        names = {n.id for n in walked if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        attrs = {n.attr for n in walked if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
                 and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")}
        return frozenset(names), frozenset(attrs)

    def placeholder(self, path: str, span: Span) -> bool:
        """An assignment of None alone (`params = None`, `cache: dict | None = None`): a declaration that the code
        fills in at run time, with no value of its own to repair."""
        tree = self.tree(path)
        node = next((n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                     and n.lineno == span.start), None) if tree else None
        return node is not None and (node.value is None or isinstance(node.value, ast.Constant)
                                     and node.value.value is None)

    def enclosing(self, path: str, line: int) -> Span | None:
        return next((s for s, _ in self.spans(path) if s.start <= line <= s.end), None)

    def _relative(self, raw: str) -> str | None:
        """A frame's or coverage's path as a checkout path: absolute in the sandbox, on the host, or relative to a
        rootdir below the checkout root (matched by a unique suffix). None for anything outside."""
        path = raw.replace("\\", "/")
        prefixes = (self.checkout.root.replace("\\", "/").rstrip("/") + "/", SANDBOX_WORKDIR)
        tries = [path[len(p):] for p in prefixes if path.startswith(p)]
        if not tries and not (path.startswith("/") or re.match(r"[A-Za-z]:/", path)):
            tries = [path]
        for rel in map(posixpath.normpath, tries):
            if rel in self.checkout.files:
                return rel
            matches = [p for p in self.checkout.files if p.endswith("/" + rel)]
            if len(matches) == 1:
                return matches[0]
        return None

    def project_path(self, raw: str | None) -> str | None:
        path = self.relative(raw) if raw else None
        return path if path is not None and is_target_file(path, self.roots) else None
