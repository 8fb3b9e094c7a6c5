"""Whole-suite runs of the pipeline: reproduce the failure, re-run it, verify a fix; and the per-test time limit
that the suite's own speed sets."""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.errors import UserError
from bot.failures import Failure
from bot.fix.context import FixRun
from bot.fix.reproduce.by_module import run_by_module
from bot.fix.reproduce.classify import Setting, broken_plugins, classify
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from bot.fix.result import RunSummary
from bot.fix.types import CodeTarget, EnvCause, FixStatus, TestRun

CRASH = "<pytest>"
FIRST_TEST_TIMEOUT_S = 60.0  # per test, before the suite has shown how fast its tests are
MIN_TEST_TIMEOUT_S = 5.0
SLOWEST_FACTOR = 10.0  # a test may take this many times the slowest passing test before it counts as hung


class SuiteTimeout(UserError):
    """The whole suite did not finish within --suite-timeout."""


class SuiteCrashed(UserError):
    """pytest ended before reporting any test."""


def derived_test_timeout(run: TestRun, explicit: float | None) -> float:
    """The per-test limit for the rest of the run: the user's, else ten times the slowest test that passed (at
    least MIN_TEST_TIMEOUT_S, at most the first run's limit)."""
    if explicit:
        return explicit
    slowest = max((d for t, d in run.durations.items() if t in run.passed), default=0.0)
    return min(FIRST_TEST_TIMEOUT_S, max(MIN_TEST_TIMEOUT_S, SLOWEST_FACTOR * slowest))


def suite_run(ctx: FixRun, files: Mapping[str, bytes], command: TestCommand, purpose: str, *, timeout: float,
              test_timeout: float, deadline: float, select=(), coverage: bool = False) -> TestRun:
    """One run of (part of) the suite, bounded by the suite timeout and the run's deadline, logged as it ends."""
    limit = max(1.0, min(timeout, deadline - time.monotonic()))
    by_module = run_by_module(ctx.sandbox, files, command, pythonpath=ctx.pythonpath, test_timeout=test_timeout,
                              deadline=deadline, coverage=coverage) if ctx.by_module and not select else None
    run = by_module or run_tests(ctx.sandbox, files, command, pythonpath=ctx.pythonpath, select=select,
                                 coverage=coverage, timeout=limit, test_timeout=test_timeout,
                                 strict=purpose == "reproduce")
    ctx.runs.append(RunSummary.of(purpose, run))
    ctx.tests_s += run.duration_s
    hung = f", {len(run.timeouts)} timed out" if run.timeouts else ""
    ctx.say(f"  {purpose}: {len(run.passed)} passed, {len(run.failed)} failed{hung} ({run.duration_s:.1f} s)")
    return run


def same_test(logged: str, here: str) -> bool:
    """A CI log's ids may be relative to another rootdir (`pkg/tests/t.py::x` against `tests/t.py::x`), may
    name a class whose setUpClass failed (`t.py::TestX`) where the sandbox reports its tests (`t.py::TestX::y`),
    and come from pytest before 4 (`t.py::TestX::()::y`; bot/inside/probe.py names it `t.py::TestX::y`); a logged
    test whose module fails here as a whole (`t.py`: it does not import) failed here too, and one logged without
    its parameters (`t.py::y`) is each of them here (`t.py::y[1]`)."""
    a, b = logged.replace("::()", ""), here
    if "::" not in b and "::" in a:
        a = a.partition("::")[0]
    if "[" in b and "[" not in a:  # a log that names a parametrized test without its parameters names them all
        b = b.partition("[")[0]
    return a == b or a.endswith("/" + b) or b.endswith("/" + a) or b.startswith(a + "::")


@dataclass(frozen=True)
class Reproduced:
    before: TestRun  # the first full run, with per-test coverage
    failing: frozenset[str]  # failed twice: what is to be fixed
    flaky: tuple[str, ...]  # failed once only, or named by the log and not failing here
    test_timeout_s: float  # the per-test limit for the rest of the run
    # failed after trying to reach another machine, or a port of this one nothing listens on: they need the
    # network, or a service (a database) the sandbox does not run
    offline: tuple[str, ...] = ()
    lacking: tuple[str, ...] = ()  # failed after running a program the sandbox does not have
    environment: tuple[EnvCause, ...] = ()  # failed because of the environment, not the code (classify.py)


def unrunnable(found: Reproduced) -> tuple[FixStatus, str]:
    """The outcome when every failing test was set aside for what the sandbox lacks (and none is flaky)."""
    if any(c.tests for c in found.environment):
        tests = sum(len(c.tests) for c in found.environment)
        return "environment", (f"{tests} failing test(s) fail because of the environment, not the code: "
                               + "; ".join(c.line() for c in found.environment))
    if found.offline:
        return "needs_network", (f"{len(found.offline)} failing test(s) need the network, which the sandbox does "
                                 "not have: not fixed")
    return "not_fixed", (f"{len(found.lacking)} failing test(s) run programs the sandbox does not have: not fixed "
                         "(the report names them)")


def reproduce(ctx: FixRun, files: Mapping[str, bytes], command: TestCommand, *, log_failures: Sequence[Failure],
              suite_timeout_s: float, test_timeout_s: float | None, deadline: float) -> Reproduced:
    ctx.say(f"reproducing: {command} in the sandbox (network off)")
    before = suite_run(ctx, files, command, "reproduce", timeout=suite_timeout_s, coverage=True, deadline=deadline,
                       test_timeout=test_timeout_s or FIRST_TEST_TIMEOUT_S)
    if before.timed_out or before.oom_killed:
        why = "ran out of memory" if before.oom_killed else f"did not finish in {suite_timeout_s:g} s"
        ctx.say(f"  the suite {why} as a whole: running it again one test module at a time, each test with its "
                "time limit")
        ctx.by_module = True
        before = suite_run(ctx, files, command, "reproduce, by module", timeout=suite_timeout_s, coverage=True,
                           deadline=deadline, test_timeout=test_timeout_s or FIRST_TEST_TIMEOUT_S)
        if not before.passed and not before.failed:
            raise SuiteTimeout(f"the test suite did not finish in {suite_timeout_s:g} s, and no test module ran "
                               "within the time budget (raise --wall or --suite-timeout)")
    limit = derived_test_timeout(before, test_timeout_s)
    failing = before.failed - {CRASH}
    if CRASH in before.failed and not failing:
        raise SuiteCrashed("pytest stopped before reporting any test: " + " | ".join(before.output.splitlines()[-6:]))
    missing: tuple[str, ...] = ()
    if log_failures:
        wanted = [f.test_id for f in log_failures]
        missing = tuple(w for w in wanted if not any(same_test(w, t) for t in failing))
        failing = frozenset(t for t in failing if any(same_test(w, t) for w in wanted))
    reached = {t: (*before.network.get(t, ()), *before.services.get(t, ())) for t in failing
               if t in before.network or t in before.services}
    offline = tuple(sorted(reached))
    if offline:
        hosts = sorted({h for found in reached.values() for h in found})
        ctx.say(f"  {len(offline)} failing test(s) tried to reach {', '.join(hosts[:3])}"
                f"{' and others' if len(hosts) > 3 else ''}: the sandbox has no network and runs no service, so "
                "they are set aside")
        failing -= set(offline)
    lacking = _lacking(ctx, before, failing)
    failing -= set(lacking)
    environment = _environment(ctx, files, before, failing)
    failing -= {t for cause in environment for t in cause.tests}
    if not failing:
        return Reproduced(before, frozenset(), missing, limit, offline, lacking, environment)
    again = suite_run(ctx, files, command, "re-run failing", timeout=suite_timeout_s, select=failing,
                      deadline=deadline, test_timeout=limit)
    flaky = tuple(sorted(failing - again.failed)) + missing
    return Reproduced(before, failing & again.failed, flaky, limit, offline, lacking, environment)


def _environment(ctx: FixRun, files: Mapping[str, bytes], before: TestRun,
                 failing: frozenset[str]) -> tuple[EnvCause, ...]:
    """The failing tests' environment causes (bot/fix/reproduce/classify.py), each said in one line."""
    if not ctx.python:
        return ()
    setting = Setting(files, ctx.python, ctx.older)
    causes = classify(before.failures, failing, setting) + broken_plugins(before.output, setting)
    for cause in causes:
        ctx.say(f"  the environment, not the code: {cause.line()}")
    return causes


# what running a missing program raises; a test that failed otherwise (code that caught it and fell back) may fail
# for a real bug, and stays to be repaired
_NO_PROGRAM = frozenset(("FileNotFoundError", "CalledProcessError", "OSError"))


def _lacking(ctx: FixRun, before: TestRun, failing: frozenset[str]) -> tuple[str, ...]:
    """The failing tests that ran a program the sandbox does not have (bot/inside/probe_network.py) and failed with
    what that raises."""
    raised = {f.test_id for f in before.failures if (f.error_type or "").rpartition(".")[2] in _NO_PROGRAM}
    lacking = tuple(sorted(t for t in failing if t in before.programs and t in raised))
    if lacking:
        programs = sorted({p for t in lacking for p in before.programs[t]})
        more = " and others" if len(programs) > 3 else ""
        ctx.say(f"  {len(lacking)} failing test(s) ran {', '.join(programs[:3])}{more}, which the sandbox does not "
                "have: set aside")
    return lacking


def guards_for(before: TestRun | None, spans: Sequence[CodeTarget], tests: frozenset[str]) -> frozenset[str]:
    """The tests besides `tests` that passed before and ran a line of one of `spans` (per-test coverage); for a
    span no test ran at all (module-level code runs at import, outside any test), the passing tests of the failing
    tests' files. None without a run before."""
    if before is None:
        return frozenset()
    failing_files = {t.partition("::")[0] for t in tests}
    guards: set[str] = set()
    for span in spans:
        lines = (before.coverage or {}).get(span.path, {})
        ran = {t for line, ids in lines.items() if span.start <= line <= span.end for t in ids}
        guards |= ran & before.passed if ran else {t for t in before.passed if t.partition("::")[0] in failing_files}
    return frozenset(guards - tests)
