"""`fixbot fix` end to end: reproduce → locate → repair → verify → patch, into one `FixResult`.

Resolve first, publish second: nothing here touches the user's tree (the CLI applies the patch on request) or
GitHub (bot.github publishes the artifact)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from sandbox import Sandbox

from bot.agent import AgentContext, Budgets, repair
from bot.agent.search import SearchOptions
from bot.agent.types import AgentName
from bot.agent.types import RepairInterrupted
from bot.errors import UserError
from bot.failures import Failure
from bot.llm import LLM

from .briefing import agent_failure, agent_target, blamed_tests, explanation, target_source
from .harness import RepoHarness, with_function
from .locate import locate
from .patch import PatchRejected, make_patch, validate
from .paths import in_paths
from .result import FixResult, RunSummary, TargetRepair, Timings
from .testrun import TestCommand, run_tests
from .types import Checkout, CodeTarget, TestRun

CRASH = "<pytest>"


class SuiteTimeout(UserError):
    """The whole suite did not finish within --suite-timeout."""


class SuiteCrashed(UserError):
    """pytest ended before reporting any test."""


class ModelFailed(Exception):
    """The model failed during a repair; carries that repair's attempts so the report keeps them."""

    def __init__(self, message: str, repair: TargetRepair) -> None:
        super().__init__(message)
        self.repair = repair


@dataclass(frozen=True)
class FixOptions:
    test_command: TestCommand = TestCommand()
    log_failures: tuple[Failure, ...] = ()  # from --from-log: only these are to be fixed
    iterations: int = 10  # model calls per target
    max_targets: int = 4  # targets tried in all
    wall_s: float = 1800.0
    suite_timeout_s: float = 600.0
    test_timeout_s: float = 120.0
    paths: tuple[str, ...] = ("**/*.py",)  # files a fix may change (.github/fixbot.yml `paths`); tests never
    search: SearchOptions | None = SearchOptions()  # one-edit mutants before and between model calls
    agent: AgentName = "reflect"  # the repair design (bot/agent/graph.py)
    samples: int = 1  # answers per model call, tested in one batch (reflect)


@dataclass
class FixRun:
    """Run-time dependencies and what one `fix` call accumulates."""

    llm: LLM
    sandbox: Sandbox
    pythonpath: Sequence[str] = ()
    setup_s: float = 0.0
    say: Callable[[str], None] = lambda message: None
    runs: list[RunSummary] = field(default_factory=list)
    tests_s: float = 0.0


def _suite(ctx: FixRun, files, options: FixOptions, purpose: str, *, select=(), coverage=False) -> TestRun:
    run = run_tests(ctx.sandbox, files, options.test_command, pythonpath=ctx.pythonpath, select=select,
                    coverage=coverage, timeout=options.suite_timeout_s)
    ctx.runs.append(RunSummary.of(purpose, run))
    ctx.tests_s += run.duration_s
    ctx.say(f"  {purpose}: {len(run.passed)} passed, {len(run.failed)} failed ({run.duration_s:.1f} s)")
    return run


def _same_test(a: str, b: str) -> bool:
    """A CI log's ids may be relative to another rootdir (`pkg/tests/t.py::x` against `tests/t.py::x`)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _reproduce(ctx: FixRun, checkout: Checkout, options: FixOptions) -> tuple[TestRun, frozenset[str], tuple[str, ...]]:
    """(the first full run, the failing tests that reproduce, the flaky ones)."""
    ctx.say(f"reproducing: {options.test_command} in the sandbox (network off)")
    before = _suite(ctx, checkout.files, options, "reproduce", coverage=True)
    if before.timed_out:
        raise SuiteTimeout(f"the test suite did not finish in {options.suite_timeout_s:g} s (raise --suite-timeout)")
    failing = before.failed - {CRASH}
    if CRASH in before.failed and not failing:
        raise SuiteCrashed("pytest stopped before reporting any test: " + " | ".join(before.output.splitlines()[-6:]))
    missing: tuple[str, ...] = ()
    if options.log_failures:
        wanted = [f.test_id for f in options.log_failures]
        missing = tuple(w for w in wanted if not any(_same_test(w, t) for t in failing))
        failing = frozenset(t for t in failing if any(_same_test(w, t) for w in wanted))
    if not failing:
        return before, frozenset(), missing
    again = _suite(ctx, checkout.files, options, "re-run failing", select=failing)
    flaky = tuple(sorted(failing - again.failed)) + missing
    return before, failing & again.failed, flaky


def _repair_one(ctx: FixRun, files, target: CodeTarget, tests: frozenset[str], options: FixOptions,
                deadline: float) -> TargetRepair:
    harness = RepoHarness(ctx.sandbox, files, target, tests, options.test_command, tuple(ctx.pythonpath),
                          options.test_timeout_s)
    source = target_source(files, target)
    start = time.monotonic()
    try:
        first = harness.check(source)
        if first.passed:  # the blamed tests pass with this function as it is: not the culprit
            return TargetRepair(target, tuple(sorted(tests)), "not_fixed", "passed_without_change", (), None,
                                time.monotonic() - start, source)
        budgets = Budgets(iterations=options.iterations, wall_s=max(1.0, deadline - time.monotonic()))
        result = repair(AgentContext(llm=ctx.llm, harness=harness, target=agent_target(files, target),
                                     failure=agent_failure(files, first.feedback, tests), budgets=budgets,
                                     search=options.search, agent=options.agent,
                                     samples=options.samples))
    except RepairInterrupted as exc:
        raise ModelFailed(str(exc), TargetRepair(target, tuple(sorted(tests)), "not_fixed", "error", exc.attempts,
                                                 None, time.monotonic() - start, source)) from exc
    finally:
        ctx.tests_s += sum(run.duration_s for run in harness.runs)
    for a in result.attempts:
        ctx.say(f"    attempt {a.iteration} ({a.node}): {a.outcome} · {a.completion_tokens} tokens · "
                f"{a.latency_s:.1f} s")
    for r in result.searches:
        ctx.say(f"    search around {r.base}: {r.candidates} mutants, "
                f"{'found ' + r.edit if r.fixed else 'none passed'} · {r.seconds:.1f} s")
    status = "fixed" if result.final_code is not None else "not_fixed"
    return TargetRepair(target, tuple(sorted(tests)), status, result.stop_reason, result.attempts,
                        result.changed_lines, time.monotonic() - start, source, result.final_code,
                        result.searches)


def _still_failing(run: TestRun, failing: frozenset[str], flaky: Sequence[str], only_logged: bool) -> frozenset[str]:
    """What is left to fix after a run. With --from-log only the logged tests count (and the tests of a logged
    module that failed to collect before)."""
    left = run.failed - {CRASH} - set(flaky)
    if only_logged:
        left = frozenset(t for t in left if any(_same_test(t, f) or t.startswith(f + "::") for f in failing))
    return left


def fix(checkout: Checkout, ctx: FixRun, options: FixOptions = FixOptions(), *, model: str = "") -> FixResult:
    started = time.monotonic()
    deadline = started + options.wall_s
    base = dict(repository=checkout.root, test_command=str(options.test_command), model=model)

    def done(status, message, **more) -> FixResult:
        model_s = sum(a.latency_s for r in more.get("repairs", ()) for a in r.attempts)
        timings = Timings(round(ctx.setup_s, 2), round(ctx.tests_s, 2), round(model_s, 2),
                          round(time.monotonic() - started + ctx.setup_s, 2))
        return FixResult(status=status, message=message, runs=tuple(ctx.runs), timings=timings, **base, **more)

    before, failing, flaky = _reproduce(ctx, checkout, options)
    failures = before.failures
    if not before.failed:
        return done("nothing_to_fix", "all tests pass: nothing to fix")
    if not failing:
        return done("flaky", f"{len(flaky)} failing test(s) did not fail again in the sandbox: flaky, not fixed",
                    failures=failures, flaky=flaky)
    files = dict(checkout.files)
    run, remaining = before, failing
    tried: set[tuple[str, str]] = set()
    repairs: list[TargetRepair] = []
    ranked: list[CodeTarget] = []
    while remaining and len(tried) < options.max_targets and time.monotonic() < deadline:
        current = Checkout(checkout.root, files)
        targets = [t for t in locate(current, run, [f for f in run.failures if f.test_id in remaining],
                                     limit=options.max_targets + len(tried))
                   if (t.path, t.qualname) not in tried and in_paths(t.path, options.paths)]
        ranked += [t for t in targets if t not in ranked]
        if not targets:
            break
        target = targets[0]
        tried.add((target.path, target.qualname))
        tests = blamed_tests(target, run, remaining)
        ctx.say(f"repairing {target.path}::{target.qualname} ({', '.join(target.reasons) or 'ranked'}) "
                f"for {len(tests)} failing test(s) with {model or 'the model'}")
        try:
            repaired = _repair_one(ctx, files, target, tests, options, deadline)
        except ModelFailed as exc:
            repairs.append(exc.repair)
            return done("not_fixed", f"the model failed: {exc}", failures=failures, flaky=flaky,
                        targets=tuple(ranked), repairs=tuple(repairs), error=f"the model failed: {exc}")
        repairs.append(repaired)
        if repaired.fixed is None:
            continue
        files = with_function(files, target, repaired.fixed)
        run = _suite(ctx, files, options, "verify", coverage=True)
        remaining = _still_failing(run, failing, flaky, bool(options.log_failures))
    fixed = [r for r in repairs if r.status == "fixed"]
    diff = make_patch(checkout.files, files)
    more = dict(failures=failures, flaky=flaky, targets=tuple(ranked), repairs=tuple(repairs), diff=diff,
                changed_lines=sum(r.changed_lines or 0 for r in fixed))
    regressions = before.passed - run.passed if fixed else frozenset()
    if not fixed or remaining or regressions:
        why = (f"{len(regressions)} test(s) that passed before now fail" if regressions and not remaining else
               f"{len(remaining)} test(s) still fail after trying {len(tried)} target(s)")
        return done("not_fixed", why, **more)
    try:
        validate(diff, checkout.root, {r.target.path for r in fixed})
    except PatchRejected as exc:
        return done("not_fixed", f"the patch was rejected: {exc}", **more)
    why = " ".join(explanation(r.target, r.original, r.fixed or "", failures, r.tests) for r in fixed)
    return done("fixed", f"fixed {len(failing)} failing test(s) with {more['changed_lines']} changed line(s); "
                         "the whole suite passes", explanation=why, **more)
