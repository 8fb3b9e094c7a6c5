"""Methods the tests call by a name their class does not have, where the class has a method whose name the new
one extends or nearly repeats (`_extract_chapters` → `_extract_chapters_from_description`): the developers
renamed it, and the tests (written first, or the renaming commit forgotten) use the new name. The rename is the
fix a reviewer expects: the method's definition and the class's own calls of it get the new name, nothing else.

Tried before any repair, as a fix like any other: kept only when the tests that called the new name pass and the
whole suite breaks nothing (bot/fix/pipeline.py). A class attribute that is not a method is not guessed."""
from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from bot.agent.source.code import changed_lines
from bot.failures import Failure
from bot.fix.repair.briefing import target_source
from bot.fix.repair.missing import calls_name
from bot.fix.result import TargetRepair
from bot.fix.types import CodeTarget

_NO_ATTRIBUTE = re.compile(r"(?:type object '(\w+)'|'(\w+)' object) has no attribute '(\w+)'")
CLOSE = 0.8  # difflib's ratio at which a name that does not extend the other still counts as a respelling
MAX_RENAMES = 3  # candidates tried: each costs a whole-suite run


@dataclass(frozen=True, kw_only=True)
class Rename:
    """`cls` in `path` defines `old`; the failing `tests` call `new`, which it lacks."""

    path: str
    cls: str
    old: str
    new: str
    tests: tuple[str, ...]


def _lacking(failure: Failure) -> tuple[str, str] | None:
    """(class name, attribute) when the failure says an instance or a class lacks an attribute."""
    found = _NO_ATTRIBUTE.search(failure.error_line)
    return None if found is None else (found.group(1) or found.group(2), found.group(3))


def _extends(longer: str, shorter: str) -> bool:
    return longer.startswith(shorter + "_") or longer.endswith("_" + shorter)


def closest_method(methods: Iterable[str], new: str) -> str | None:
    """The method `new` renames: one whose name it extends (or that extends it), else a near respelling."""
    names = [m for m in methods if m != new and not (m.startswith("__") and m.endswith("__"))]
    extended = [m for m in names if _extends(new, m) or _extends(m, new)]
    if extended:
        return max(extended, key=len)
    close = difflib.get_close_matches(new, names, n=1, cutoff=CLOSE)
    return close[0] if close else None


def _classes(tree: ast.AST, name: str) -> list[ast.ClassDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name]


def _defined(cls: ast.ClassDef) -> set[str]:
    """The names the class body binds: methods, and attributes assigned there."""
    names = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for node in cls.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _parsed(files: Mapping[str, bytes], path: str) -> ast.Module | None:
    try:
        return ast.parse(files[path].decode("utf-8", "surrogateescape"))
    except (SyntaxError, ValueError):
        return None


def find_renames(failures: Iterable[Failure], files: Mapping[str, bytes],
                 is_project: Callable[[str], bool]) -> list[Rename]:
    """The renames the failing tests ask for: each class they name that lacks the method they call, where the
    class has a method the new name renames and the tests do not call by its old name."""
    tests: dict[str, ast.Module | None] = {}  # each failing test's module, parsed once
    wanted: dict[tuple[str, str], list[tuple[str, ast.Module]]] = {}
    for failure in failures:
        path = failure.test_id.partition("::")[0]
        if path not in tests:
            tests[path] = _parsed(files, path) if path in files else None
        lacking, tree = _lacking(failure), tests[path]
        if lacking is not None and tree is not None and calls_name(tree, lacking[1]):
            wanted.setdefault(lacking, []).append((failure.test_id, tree))
    found: list[Rename] = []
    for (cls_name, new), failing in wanted.items():
        mark = f"class {cls_name}".encode()
        for path in sorted(p for p in files if p.endswith(".py") and mark in files[p] and is_project(p)):
            module = _parsed(files, path)
            for cls in _classes(module, cls_name) if module is not None else ():
                old = None if new in _defined(cls) else closest_method(_methods(cls), new)
                if old is not None and not any(calls_name(tree, old) for _, tree in failing):
                    found.append(Rename(path=path, cls=cls_name, old=old, new=new,
                                        tests=tuple(test_id for test_id, _ in failing)))
    return found[:MAX_RENAMES]


def _methods(cls: ast.ClassDef) -> list[str]:
    return [n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _class_node(tree: ast.Module, rename: Rename) -> ast.ClassDef:
    return next(c for c in _classes(tree, rename.cls) if rename.old in _methods(c))


def _name_edits(cls: ast.ClassDef, lines: list[bytes], rename: Rename) -> list[tuple[int, int]]:
    """(line index, byte offset) of each `old` to replace: the method's name in its `def`, and the attribute of
    every `self.old`, `cls.old`, `Class.old` and `super().old` in the class."""
    edits = []
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == rename.old:
            line = lines[node.lineno - 1]
            found = re.compile(rb"def\s+(%s)\b" % re.escape(rename.old.encode())).search(line, node.col_offset)
            if found is not None:
                edits.append((node.lineno - 1, found.start(1)))
    owners = {"self", "cls", rename.cls}
    for child in ast.walk(cls):
        if isinstance(child, ast.Attribute) and child.attr == rename.old and _owned(child.value, owners) \
                and child.end_lineno is not None and child.end_col_offset is not None:
            edits.append((child.end_lineno - 1, child.end_col_offset - len(rename.old.encode())))
    return edits


def _owned(value: ast.expr, owners: set[str]) -> bool:
    """`value.old` is the class's own: `self`, `cls`, the class by name, or `super()`."""
    return isinstance(value, ast.Name) and value.id in owners \
        or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def rename_repair(files: Mapping[str, bytes], rename: Rename) -> TargetRepair:
    """The rename as a repair of the whole class: its span, the class before and after. Line numbers do not move."""
    source = files[rename.path]
    tree = ast.parse(source.decode("utf-8", "surrogateescape"))
    cls = _class_node(tree, rename)
    lines = source.splitlines(keepends=True)
    old, new = rename.old.encode(), rename.new.encode()
    for index, offset in sorted(set(_name_edits(cls, lines, rename)), reverse=True):
        line = lines[index]
        if line[offset:offset + len(old)] == old:
            lines[index] = line[:offset] + new + line[offset + len(old):]
    start = min([cls.lineno] + [d.lineno for d in cls.decorator_list])
    target = CodeTarget(path=rename.path, qualname=rename.cls, start=start, end=cls.end_lineno or cls.lineno,
                        score=1.0, reasons=(f"the tests call `{rename.new}`, which `{rename.cls}` lacks: its "
                                            f"`{rename.old}` renamed",))
    before = target_source(files, target)
    after = target_source({rename.path: b"".join(lines)}, target)
    return TargetRepair(target=target, tests=rename.tests, status="fixed", stop_reason="renamed", made_by="rename",
                        attempts=(), changed_lines=changed_lines(before, after), wall_s=0.0, original=before,
                        fixed=after)


def rename_explanation(repair: TargetRepair) -> str:
    """The root cause of a kept rename, from the class before and after: which method became which, and how many
    of the class's calls followed."""
    before, after = (_classes(ast.parse(text), repair.target.qualname)[0] for text in (repair.original,
                                                                                     repair.fixed or ""))
    old, new = (", ".join(sorted(set(_methods(a)) - set(_methods(b)))) for a, b in ((before, after), (after, before)))
    calls = sum(isinstance(n, ast.Attribute) and n.attr == new for n in ast.walk(after)) \
        - sum(isinstance(n, ast.Attribute) and n.attr == new for n in ast.walk(before))
    return (f"`{repair.target.qualname}` ({repair.target.path}) has no method `{new}`, which the tests call "
            f"({', '.join(f'`{t}`' for t in repair.tests[:2])}); its method `{old}` is renamed to it, with the "
            f"class's {calls} call{'s' if calls != 1 else ''} of it.")
