"""Scoring one bug independently of fixbot's own claims: the exposing tests and their neighbours run in
fixbot's Docker sandbox at `bug-N`, at `fix-N` and with fixbot's patch applied (by `git apply`) to a fresh
`bug-N`; the patch is compared with the developers' fix by the spans it changes and by the modules' ASTs."""
from __future__ import annotations

import ast
import difflib
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from realbugs_corpus import Bug, Bundles

from bot.errors import UserError
from bot.fix.checkout import load_checkout
from bot.fix.environment import prepare_environment
from bot.fix.testrun import TestCommand, run_many
from bot.fix.types import Checkout, TestRun
from sandbox import open_sandbox

TESTS_TIMEOUT_S = 600.0  # a whole file of tests, once per version
TEST_TIMEOUT_S = 60.0  # one test: a patch that makes a test hang fails that test, not the scoring


@dataclass(frozen=True)
class Verdict:
    # at bug-N the exposing tests fail, at fix-N they pass, and every other test that passes at bug-N passes at
    # fix-N too (one that fails at bug-N and passes at fix-N is the same bug, which the manifest did not name)
    reproduced: bool
    patch_applies: bool | None  # None: no patch
    exposing_pass: bool | None  # with the patch
    broken: tuple[str, ...]  # passed at bug-N, fail (or are gone) with the patch
    fixed: bool
    regression: bool  # fixbot exited 0 with a patch that breaks a test that passed


@dataclass(frozen=True)
class Score:
    verdict: Verdict
    same_functions: bool | None = None  # None: no patch
    identical: bool | None = None
    fixbot_spans: tuple[str, ...] = ()  # "path::qualname" the patch changes
    developer_spans: tuple[str, ...] = ()
    tests_s: float = 0.0
    error: str = ""  # the scoring itself failed (the environment, a test run): nothing above is known
    counts: dict = field(default_factory=dict)  # passed/failed per version, for the record


def covers(ids: tuple[str, ...], nodes: frozenset[str]) -> bool:
    """Every id is among `nodes`, a parametrized test by all of its cases."""
    return all(i in nodes or any(n.startswith(i + "[") for n in nodes) for i in ids)


def failed_in(ids: tuple[str, ...], failed: frozenset[str]) -> bool:
    """Every id failed: itself, all of a parametrized test's cases, or its module, which did not import (a test
    file of the fix commit that imports what only the fix adds fails at bug-N that way)."""
    return all(covers((i,), failed) or i.partition("::")[0] in failed for i in ids)


def others(bug: Bug, nodes: frozenset[str]) -> set[str]:
    return {n for n in nodes if n.split("[", 1)[0] not in bug.pytest_ids}


def judge(bug: Bug, exit_code: int, at_bug: TestRun, at_fix: TestRun, patched: TestRun | None,
          applies: bool | None) -> Verdict:
    reproduced = (failed_in(bug.pytest_ids, at_bug.failed) and covers(bug.pytest_ids, at_fix.passed)
                  and others(bug, at_bug.passed) <= others(bug, at_fix.passed))
    if patched is None:
        return Verdict(reproduced, applies, None, (), False, False)
    exposing_pass = covers(bug.pytest_ids, patched.passed)
    broken = tuple(sorted(at_bug.passed - patched.passed))
    fixed = exit_code == 0 and bool(applies) and exposing_pass and not broken
    return Verdict(reproduced, applies, exposing_pass, broken, fixed, exit_code == 0 and bool(broken))


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


def _text(files: Mapping[str, bytes], path: str) -> str:
    return files.get(path, b"").decode("utf-8", "surrogateescape")


def spans_between(base: Mapping[str, bytes], changed: Mapping[str, bytes]) -> set[str]:
    paths = {p for p in set(base) | set(changed) if p.endswith(".py") and base.get(p) != changed.get(p)}
    return {f"{p}::{name}" for p in paths for name in changed_spans(_text(base, p), _text(changed, p))}


def _module_dump(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(text))
    except SyntaxError:
        return None


def identical(base: Mapping[str, bytes], patched: Mapping[str, bytes], fix: Mapping[str, bytes]) -> bool:
    """Every file either change touches is the same module in both after normalisation (layout and comments
    apart: equal ASTs; files that do not parse must be equal bytes)."""
    paths = {p for p in set(base) | set(patched) | set(fix)
             if base.get(p) != patched.get(p) or base.get(p) != fix.get(p)}
    for p in paths:
        if patched.get(p) == fix.get(p):
            continue
        if not p.endswith(".py") or None in (patched.get(p), fix.get(p)):
            return False
        dump = _module_dump(_text(patched, p))
        if dump is None or dump != _module_dump(_text(fix, p)):
            return False
    return True


def _apply(patch: str, root: Path) -> bool:
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=root, input=patch, text=True,
                          capture_output=True)
    return proc.returncode == 0


def score_bug(bug: Bug, bundles: Bundles, patch: str, exit_code: int, scratch: Path, *, client,
              timeout: float = TESTS_TIMEOUT_S) -> Score:
    """Score fixbot's `patch` (may be empty) for `bug`; worktrees under `scratch` are removed afterwards."""
    dirs = {name: scratch / name for name in ("bug", "fix", "patched")}
    try:
        return _score(bug, bundles, patch, exit_code, dirs, client=client, timeout=timeout)
    except UserError as exc:  # the environment or pytest refused: the bug cannot be scored here
        empty = Verdict(False, None, None, (), False, False)
        return Score(empty, error=str(exc))
    finally:
        for d in dirs.values():
            bundles.remove(bug.project, d)
        if scratch.is_dir() and not any(scratch.iterdir()):
            scratch.rmdir()


def tree_files(root: Path) -> dict[str, bytes]:
    # a worktree's .git is a file naming its own worktree: never part of what is compared
    return {p: data for p, data in load_checkout(root).files.items() if p != ".git"}


def _score(bug: Bug, bundles: Bundles, patch: str, exit_code: int, dirs: dict[str, Path], *, client,
           timeout: float) -> Score:
    root = bundles.checkout(bug.project, bug.bug_tag, dirs["bug"])
    at_bug = Checkout(str(root), tree_files(root))
    at_fix = tree_files(bundles.checkout(bug.project, bug.fix_tag, dirs["fix"]))
    variants = [at_bug.files, at_fix]
    applies: bool | None = None
    if patch.strip():
        root = bundles.checkout(bug.project, bug.bug_tag, dirs["patched"])
        applies = _apply(patch, root)
        if applies:
            variants.append(tree_files(root))
    env = prepare_environment(at_bug, bug.env_request, client=client, log=lambda _m: None)  # as fixbot's own run
    start = time.monotonic()
    with open_sandbox("docker", image=env.image, pool_size=2) as sandbox:
        # not strict: a version whose tests cannot be collected has failed runs, like any other failure
        runs = run_many(sandbox, variants, TestCommand.parse(bug.test_cmd), pythonpath=env.pythonpath,
                        timeout=timeout, test_timeout=TEST_TIMEOUT_S, strict=False)
    tests_s = time.monotonic() - start
    patched = runs[2] if len(runs) > 2 else None
    verdict = judge(bug, exit_code, runs[0], runs[1], patched, applies)
    counts = {name: {"passed": len(r.passed), "failed": len(r.failed)}
              for name, r in zip(("bug", "fix", "patched"), runs)}
    if patched is None:
        return Score(verdict, tests_s=tests_s, counts=counts)
    mine, theirs = spans_between(at_bug.files, variants[2]), spans_between(at_bug.files, at_fix)
    return Score(verdict, same_functions=mine == theirs, identical=identical(at_bug.files, variants[2], at_fix),
                 fixbot_spans=tuple(sorted(mine)), developer_spans=tuple(sorted(theirs)), tests_s=tests_s,
                 counts=counts)
