"""How a patch compares with the developers' fix, for the real-bug judge (bench/realbugs_score.py) and the
anti-pattern bench (bench/antipatterns.py): the files and the spans (functions, methods, module statements) each
changes, whether both are the same modules once layout and comments are set aside, and the anti-pattern rules
(bot/agent/antipatterns.py) a patch's changed functions break.

In: the files of a version, by path (bytes). Out: sets of names, a verdict, the rules that fired. Never: a file read
from disk or run; the judge's suite runs are realbugs_score.py's."""
from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping

from bot.agent.antipatterns import anti_patterns


def _statement_names(body: list[ast.stmt], line: int, prefix: str = "") -> str | None:
    for node in body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        if not start <= line <= (node.end_lineno or node.lineno):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return prefix + node.name  # nested functions and lambdas belong to it
        if isinstance(node, ast.ClassDef):
            inner = _statement_names(node.body, line, f"{prefix}{node.name}.")
            return inner or prefix + node.name  # a class attribute, a base, a decorator: the class body
        if prefix:
            return None  # a class attribute: the class body is one span
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        return ",".join(names) or None
    return None


def span_names(source: str, lines: set[int]) -> set[str]:
    """The top-level spans holding `lines`: functions and methods by qualname, class bodies by class, named
    module-level assignments by their names, anything else at module level as <module>."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return {"<unparsed>"}
    text = source.splitlines()
    return {(_statement_names(module.body, n) if n - 1 < len(text) and text[n - 1].strip() else None)
            or "<module>" for n in lines if n - 1 >= len(text) or text[n - 1].strip()}


def changed_spans(old: str, new: str) -> set[str]:
    """The spans a change touches: its removed and replaced lines named in the old text, its added lines in
    the new text (so that a line added inside a function names the function)."""
    a, b = old.splitlines(), new.splitlines()
    old_lines: set[int] = set()
    new_lines: set[int] = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            old_lines.update(range(i1 + 1, i2 + 1))
            new_lines.update(range(j1 + 1, j2 + 1))
    return span_names(old, old_lines) | span_names(new, new_lines)


def text_of(files: Mapping[str, bytes], path: str) -> str:
    return files.get(path, b"").decode("utf-8", "surrogateescape")


def changed_files(base: Mapping[str, bytes], changed: Mapping[str, bytes]) -> set[str]:
    return {p for p in set(base) | set(changed) if base.get(p) != changed.get(p)}


def spans_between(base: Mapping[str, bytes], changed: Mapping[str, bytes]) -> set[str]:
    paths = {p for p in changed_files(base, changed) if p.endswith(".py")}
    return {f"{p}::{name}" for p in paths for name in changed_spans(text_of(base, p), text_of(changed, p))}


def _functions(text: str) -> dict[str, str]:
    """Every function and method of a module by qualname, with its source."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    found: dict[str, str] = {}
    # ast.get_source_segment splits the whole text again on every call: quadratic on a module of a thousand defs
    lines = [line.encode() for line in re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)]

    def segment(node: ast.stmt) -> str:
        assert node.end_lineno is not None and node.end_col_offset is not None
        if node.end_lineno == node.lineno:
            return lines[node.lineno - 1][node.col_offset:node.end_col_offset].decode()
        return b"".join([lines[node.lineno - 1][node.col_offset:], *lines[node.lineno:node.end_lineno - 1],
                         lines[node.end_lineno - 1][:node.end_col_offset]]).decode()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name] = segment(node)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
    visit(tree.body, "")
    return found


def patch_anti_patterns(base: Mapping[str, bytes], patched: Mapping[str, bytes], tests: str) -> tuple[str, ...]:
    """`path::qualname: rule` for each function the patch changes in a way bot/agent/antipatterns.py names."""
    found = []
    for path in sorted(p for p in changed_files(base, patched) if p.endswith(".py") and p in base and p in patched):
        old, new = _functions(text_of(base, path)), _functions(text_of(patched, path))
        for name in sorted(old.keys() & new.keys()):
            if old[name] != new[name]:
                found += [f"{path}::{name}: {rule}" for rule in anti_patterns(old[name], new[name], tests)]
    return tuple(found)


def _module_dump(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(text))
    except SyntaxError:
        return None


def identical(base: Mapping[str, bytes], patched: Mapping[str, bytes], fix: Mapping[str, bytes]) -> bool:
    """Every file either change touches is the same module in both after normalisation (layout and comments
    apart: equal ASTs; files that do not parse must be equal bytes)."""
    for p in changed_files(base, patched) | changed_files(base, fix):
        if patched.get(p) == fix.get(p):
            continue
        if not p.endswith(".py") or None in (patched.get(p), fix.get(p)):
            return False
        dump = _module_dump(text_of(patched, p))
        if dump is None or dump != _module_dump(text_of(fix, p)):
            return False
    return True


# --- the runs --------------------------------------------------------------------------------------------------
