"""The real-bug judge, independent of fixbot's own claims: the project's whole suite (the command its CI runs, as
`fixbot init` finds it: realbugs_corpus.suite_command) in fixbot's Docker sandbox at `bug-N`, at the developers'
`fix-N` and with fixbot's patch applied (by `git apply`) to a fresh `bug-N`, each version in a pytest process of
its own; the patch is compared with the developers' fix by the files and spans it changes and by the modules' ASTs.

  reproduced   every exposing test fails at bug-N and passes at fix-N
  set aside    tests no verdict is judged by, counted per bug: those that tried to reach another machine (the
               sandbox has no network), those that fail at bug-N and at fix-N alike (the environment, or broken
               before the bug), and those that pass at bug-N and fail at fix-N (changed by the developers' fix)
  regression   a test that passed at bug-N and at fix-N fails with the patch, and fails again when run alone (one
               that passes then is counted flaky, not a regression)
  fixed        fixbot exited 0, its patch applies, every exposing test passes with it, and there is no regression

The runs at bug-N and fix-N depend on the bug and its environment only, so they are kept in `cache` (a JSON file
per bug, keyed by the environment's image and the command) and a second bench run of the bug runs the suite once;
a patch whose tree is fix-N's, byte for byte, is judged by fix-N's run."""
from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from realbugs_changes import changed_files, identical, patch_anti_patterns, spans_between, text_of
from realbugs_corpus import Bug, Bundles, SuiteCommand

from bot.checkout.repository import Checkout, load_checkout
from bot.environment.prepare import prepare_environment
from bot.errors import UserError
from bot.fix.reproduce.by_module import run_by_module
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from bot.fix.run import SUITE_LIMITS
from bot.fix.types import TestRun
from sandbox import open_sandbox

SUITE_TIMEOUT_S = 1200.0  # one whole-suite run of one version
TEST_TIMEOUT_S = 60.0  # one test: a patch that makes a test hang fails that test, not the judging
ERROR_CHARS = 200


@dataclass(frozen=True)
class SuiteOutcome:
    """One whole-suite run as the judge keeps it."""

    passed: frozenset[str]
    failed: frozenset[str]
    network: frozenset[str]  # tests (or modules) that tried another machine, or a local service nothing runs
    errors: Mapping[str, str]  # failed test -> one line: its error type and message
    seconds: float
    timed_out: bool = False

    @classmethod
    def of(cls, run: TestRun) -> SuiteOutcome:
        errors = {}
        for f in run.failures:
            message = " ".join((f.message or f.assertion or "").split())
            text = message if not f.error_type or message.startswith(f.error_type) else f"{f.error_type}: {message}"
            errors[f.test_id] = text[:ERROR_CHARS]
        return cls(run.passed, run.failed, frozenset(run.network) | frozenset(run.services), errors,
                   round(run.duration_s, 1), run.timed_out)

    def to_json(self) -> dict:
        return {"passed": sorted(self.passed), "failed": sorted(self.failed), "network": sorted(self.network),
                "errors": dict(self.errors), "seconds": self.seconds, "timed_out": self.timed_out}

    @classmethod
    def from_json(cls, d: dict) -> SuiteOutcome:
        return cls(frozenset(d["passed"]), frozenset(d["failed"]), frozenset(d["network"]), d["errors"],
                   d["seconds"], d.get("timed_out", False))


@dataclass(frozen=True)
class SetAside:
    network: int = 0
    environment: int = 0  # fail at bug-N and at fix-N alike
    changed_by_fix: int = 0  # pass at bug-N, fail at fix-N


@dataclass(frozen=True)
class Verdict:
    reproduced: bool
    why_not: str  # not reproduced: why, in one line
    set_aside: SetAside
    patch_applies: bool | None = None  # None: no patch
    exposing_pass: bool | None = None  # with the patch
    regressions: tuple[str, ...] = ()  # passed at bug-N and fix-N, fail with the patch (twice)
    flaky: tuple[str, ...] = ()  # failed with the patch once, passed when run again alone
    fixed: bool = False
    claimed: bool = False  # fixbot exited 0

    @property
    def regression(self) -> bool:
        """fixbot claimed a fix (exit 0) whose patch breaks a test that passed."""
        return bool(self.regressions) and self.patch_applies is True and self.claimed


@dataclass(frozen=True)
class Score:
    verdict: Verdict | None  # None: the judge could not run (its error says why)
    same_functions: bool | None = None  # None: no patch
    identical: bool | None = None
    fixbot_spans: tuple[str, ...] = ()  # "path::qualname" the patch changes
    developer_spans: tuple[str, ...] = ()
    fixbot_files: tuple[str, ...] = ()
    developer_files: tuple[str, ...] = ()
    anti_patterns: tuple[str, ...] = ()  # `path::qualname: rule` of a wrong fix the patch looks like
    seconds: float = 0.0
    error: str = ""
    counts: dict = field(default_factory=dict)  # passed/failed per version


def members(test: str, nodes: frozenset[str]) -> set[str]:
    """The nodes `test` names: itself, a parametrized test's cases, a class's tests."""
    return {n for n in nodes if n == test or n.startswith((test + "[", test + "::"))}


def covers(ids: tuple[str, ...], nodes: frozenset[str]) -> bool:
    """Every id is among `nodes`: a parametrized test by its cases, a class by its tests."""
    return all(members(i, nodes) for i in ids)


def failed_in(ids: tuple[str, ...], failed: frozenset[str]) -> bool:
    """Every id failed: itself, a parametrized test's case, a test of its class, or its module, which did not
    import (a test file of the fix commit that imports what only the fix adds fails at bug-N that way)."""
    return all(covers((i,), failed) or i.partition("::")[0] in failed for i in ids)


def _base(test: str) -> str:
    return test.split("[", 1)[0]


def exposing(bug: Bug, test: str) -> bool:
    return any(test in members(i, frozenset({test})) for i in bug.pytest_ids)


def _status(test: str, run: SuiteOutcome) -> str:
    if failed_in((test,), run.failed):
        return "fails"
    return "passes" if covers((test,), run.passed) else "does not run"


def _error(test: str, run: SuiteOutcome) -> str:
    found = [e for t, e in run.errors.items() if t == test or _base(t) == test] or \
        [e for t, e in run.errors.items() if t == test.partition("::")[0]]  # its module did not import
    return found[0] if found else ""


_PROJECT_NAME = re.compile(r"module '([\w.]+)' has no attribute|cannot import name '\w+' from '([\w.]+)'")


def _names_project_code(bug: Bug, error: str) -> bool:
    """The error is a name missing from one of the project's own modules (not a dependency's: the environment's)."""
    found = _PROJECT_NAME.search(error)
    if found is None:
        return False
    top = (found.group(1) or found.group(2)).split(".")[0]
    return top in {path.split("/")[0].removesuffix(".py") for path in bug.fix_files}


def why_not_reproduced(bug: Bug, at_bug: SuiteOutcome, at_fix: SuiteOutcome) -> str:
    """One line: the first exposing test that does not pass at fix-N (the network, or the environment, with its
    error), else the first that does not fail at bug-N."""
    for test in bug.pytest_ids:
        if covers((test,), at_fix.passed) and not members(test, at_fix.failed):
            continue
        module = test.partition("::")[0]
        if any(t == test or _base(t) == test or t == module for t in at_fix.network):
            return f"network: {test} tries to reach another machine or a local service (the sandbox has neither)"
        if at_fix.timed_out:
            return f"environment: the suite did not finish at fix-N ({test} {_status(test, at_fix)})"
        error = _error(test, at_fix)
        if error.startswith("FileNotFoundError"):  # a data file the corpus's snapshots do not hold
            return f"files: {test} needs a file neither bug-N nor fix-N holds: {error}"
        if _names_project_code(bug, error):  # a later commit's code that the fix commit's test already uses
            return f"files: {test} needs project code neither bug-N nor fix-N holds: {error}"
        return f"environment: {test} {_status(test, at_fix)} at fix-N too" + (f": {error}" if error else "")
    for test in bug.pytest_ids:
        if not failed_in((test,), at_bug.failed):
            return f"bug-N: the exposing test {test} {_status(test, at_bug)} at bug-N"
    return ""


def set_aside(bug: Bug, at_bug: SuiteOutcome, at_fix: SuiteOutcome) -> tuple[frozenset[str], SetAside]:
    """The tests no verdict is judged by (see the module doc), and their counts."""
    network = at_bug.network | at_fix.network
    both = frozenset(t for t in at_bug.failed & at_fix.failed if not exposing(bug, t)) - network
    changed = frozenset(t for t in at_bug.passed & at_fix.failed if not exposing(bug, t)) - network
    return network | both | changed, SetAside(len(network), len(both), len(changed))


def judge(bug: Bug, claimed: bool, at_bug: SuiteOutcome, at_fix: SuiteOutcome, patched: SuiteOutcome | None,
          applies: bool | None, passes_alone: frozenset[str] = frozenset()) -> Verdict:
    """The verdict on the runs; `passes_alone`: of the tests that failed with the patch, those that passed when
    run again."""
    reproduced = failed_in(bug.pytest_ids, at_bug.failed) and covers(bug.pytest_ids, at_fix.passed) and \
        not any(members(i, at_fix.failed) for i in bug.pytest_ids)
    why = "" if reproduced else why_not_reproduced(bug, at_bug, at_fix)
    aside, counts = set_aside(bug, at_bug, at_fix)
    if patched is None:
        return Verdict(reproduced, why, counts, applies, claimed=claimed)
    exposing_pass = covers(bug.pytest_ids, patched.passed) and not any(members(i, patched.failed)
                                                                       for i in bug.pytest_ids)
    lost = sorted((at_bug.passed & at_fix.passed) - patched.passed - aside)
    flaky = tuple(t for t in lost if t in passes_alone)
    regressions = tuple(t for t in lost if t not in passes_alone)
    fixed = claimed and bool(applies) and exposing_pass and not regressions
    return Verdict(reproduced, why, counts, applies, exposing_pass, regressions, flaky, fixed, claimed)


# --- spans and identity ----------------------------------------------------------------------------------------

def _apply(patch: str, root: Path) -> bool:
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=root, input=patch, text=True,
                          capture_output=True)
    return proc.returncode == 0


def tree_files(root: Path) -> dict[str, bytes]:
    # a worktree's .git is a file naming its own worktree: never part of what is compared
    return {p: data for p, data in load_checkout(root).files.items() if p != ".git"}


def score_bug(bug: Bug, bundles: Bundles, suite: SuiteCommand, patch: str, claimed: bool, scratch: Path, *,
              client, cache: Path | None = None, timeout: float = SUITE_TIMEOUT_S) -> Score:
    """Judge fixbot's `patch` (may be empty) for `bug`; worktrees under `scratch` are removed afterwards."""
    dirs = {name: scratch / name for name in ("bug", "fix", "patched")}
    start = time.monotonic()
    try:
        score = _score(bug, bundles, suite, patch, claimed, dirs, client=client, cache=cache, timeout=timeout)
    except UserError as exc:  # the environment or pytest refused: the bug cannot be judged here
        score = Score(None, error=" ".join(str(exc).split())[:2 * ERROR_CHARS])
    finally:
        for d in dirs.values():
            bundles.remove(bug.project, d)
        if scratch.is_dir() and not any(scratch.iterdir()):
            scratch.rmdir()
    return Score(**{**score.__dict__, "seconds": round(time.monotonic() - start, 1)})


class SuiteRunner:
    """The bug's environment and sandbox, and one whole-suite run per version."""

    def __init__(self, sandbox, command: TestCommand, pythonpath: tuple[str, ...], timeout: float) -> None:
        self.sandbox, self.command, self.pythonpath, self.timeout = sandbox, command, pythonpath, timeout

    def run(self, files: Mapping[str, bytes], select: frozenset[str] = frozenset()) -> SuiteOutcome:
        """One run; a whole suite that does not finish, or runs out of memory, runs again a module at a time, as
        fixbot's own runs do (bot/fix/reproduce/by_module.py)."""
        run = run_tests(self.sandbox, files, self.command, pythonpath=self.pythonpath, select=select,
                        timeout=self.timeout, test_timeout=TEST_TIMEOUT_S, strict=False)
        if (run.timed_out or run.oom_killed) and not select:
            run = run_by_module(self.sandbox, files, self.command, pythonpath=self.pythonpath,
                                test_timeout=TEST_TIMEOUT_S, deadline=time.monotonic() + 2 * self.timeout,
                                coverage=False) or run
        return SuiteOutcome.of(run)


RUNS = 2  # how the judge runs a suite (limits, by module): a change here never reuses the runs of another


def runs_key(image_id: str, command: str, timeout: float) -> dict:
    """What the runs at bug-N and fix-N depend on: the environment's image (its id: a tag can move), the command,
    and how the judge runs them (its limits and time limits)."""
    return {"image": image_id, "command": command, "runs": RUNS, "limits": asdict(SUITE_LIMITS),
            "timeout": timeout, "test_timeout": TEST_TIMEOUT_S}


def cached_runs(cache: Path | None, key: dict, compute) -> tuple[SuiteOutcome, SuiteOutcome]:
    """The runs at bug-N and fix-N from `cache` when it holds them for `key`, else computed and kept there."""
    if cache is not None and cache.exists():
        try:
            saved = json.loads(cache.read_text(encoding="utf-8"))
            if saved.get("key") == key:
                return SuiteOutcome.from_json(saved["bug"]), SuiteOutcome.from_json(saved["fix"])
        except (ValueError, KeyError):
            pass
    at_bug, at_fix = compute()
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"key": key, "bug": at_bug.to_json(), "fix": at_fix.to_json()}) + "\n",
                         encoding="utf-8")
    return at_bug, at_fix


def _score(bug: Bug, bundles: Bundles, suite: SuiteCommand, patch: str, claimed: bool, dirs: dict[str, Path], *,
           client, cache: Path | None, timeout: float) -> Score:
    root = bundles.checkout(bug.project, bug.bug_tag, dirs["bug"])
    base = Checkout(str(root), tree_files(root))
    fix = tree_files(bundles.checkout(bug.project, bug.fix_tag, dirs["fix"]))
    patched: dict[str, bytes] | None = None
    applies: bool | None = None
    if patch.strip():
        root = bundles.checkout(bug.project, bug.bug_tag, dirs["patched"])
        applies = _apply(patch, root)
        patched = tree_files(root) if applies else None
    env = prepare_environment(base, bug.env_request(base.root), client=client, log=lambda _m: None)  # as fixbot
    key = runs_key(client.images.get(env.image).id, suite.command, timeout)
    with open_sandbox("docker", image=env.image, pool_size=1, limits=SUITE_LIMITS) as sandbox:
        runner = SuiteRunner(sandbox, TestCommand.parse(suite.command), tuple(env.pythonpath), timeout)
        at_bug, at_fix = cached_runs(cache, key, lambda: (runner.run(env.with_generated(base.files)),
                                                          runner.run(env.with_generated(fix))))
        # a patch that makes fix-N's very tree (the developers' own fix) has fix-N's run: one run per tree
        with_patch = None if patched is None else at_fix if patched == fix else \
            runner.run(env.with_generated(patched))
        again = frozenset()
        if with_patch is not None and patched is not None:
            lost = (at_bug.passed & at_fix.passed) - with_patch.passed
            if lost:
                again = runner.run(env.with_generated(patched), select=frozenset(lost)).passed
    verdict = judge(bug, claimed, at_bug, at_fix, with_patch, applies, again)
    counts = {name: {"passed": len(r.passed), "failed": len(r.failed), "seconds": r.seconds}
              for name, r in (("bug", at_bug), ("fix", at_fix), ("patched", with_patch)) if r is not None}
    theirs = spans_between(base.files, fix)
    score = Score(verdict, developer_spans=tuple(sorted(theirs)),
                  developer_files=tuple(sorted(changed_files(base.files, fix))), counts=counts)
    if patched is None:
        return score
    mine = spans_between(base.files, patched)
    tests = "\n".join(text_of(base.files, t) for t in bug.test_files if t.endswith(".py"))
    return Score(**{**score.__dict__, "same_functions": mine == theirs,
                    "anti_patterns": patch_anti_patterns(base.files, patched, tests),
                    "identical": identical(base.files, patched, fix), "fixbot_spans": tuple(sorted(mine)),
                    "fixbot_files": tuple(sorted(changed_files(base.files, patched)))})


def score_json(score: Score) -> dict:
    return asdict(score)
