"""`fixbot fix` end to end: reproduce → locate → repair → verify → patch, into one `FixResult`.

Resolve first, publish second: nothing here touches the user's tree (the CLI applies the patch on request) or
GitHub (bot.github publishes the artifact). Only verified changes become the base of the next target: a target
whose fix breaks a test in the whole suite is undone. The run holds its time budget (`wall_s`, a hard limit) and,
when stopped by it or by a signal, reports what it has."""
from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bot.agent import FIX_REPAIR, AgentContext, Attempt, Briefing, RepairOptions, Target
from bot.agent.antipatterns import anti_patterns
from bot.agent.types import RepairInterrupted, SearchRound
from bot.checkout.paths import in_paths
from bot.checkout.repository import Checkout
from bot.errors import Stopped, UserError
from bot.failures import Failure
from bot.fix.context import FixRun
from bot.fix.locate.excerpt import Excerpt, answer_tokens, excerpt_context, excerpt_for
from bot.fix.locate.project_files import folders_of_tests, is_target_file
from bot.fix.locate.rank import locate
from bot.fix.repair.briefing import agent_target, blamed_tests, explanation, target_source, tests_shown
from bot.fix.repair.harness import RepoHarness, tests_pass, with_code
from bot.fix.repair.missing import described, is_stub, missing_names, with_stubs
from bot.fix.repair.pairs import next_pair, pair_key
from bot.fix.repair.renames import find_renames, rename_explanation, rename_repair
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.env_retry import with_remedied
from bot.fix.reproduce.hold_back import with_held_back
from bot.fix.reproduce.runs import (
    Reproduced,
    guards_for,
    reproduce,
    suite_run,
    unrunnable,
)
from bot.fix.result import FixResult, MadeBy, RepairStatus, RepairStop, TargetRepair, Timings
from bot.fix.stop import alarm_at
from bot.fix.turns import alone, another_pass, share, turn
from bot.fix.types import CodeTarget, FixStatus
from bot.fix.verify.patch import PatchRejected, make_patch, validate
from bot.fix.work import Work, best_attempt, still_failing, test_roots
from sandbox.errors import SandboxError

__all__ = ["FixOptions", "ModelFailed", "fix"]
STOP_GRACE_S = 5.0  # past the budget, the alarm stops whatever still runs
SWEEP_SHARE, SWEEP_FIRST, SWEEP_WIDER = 0.4, 12, 4  # see _sweep: its share of the time, its rounds' sizes


class ModelFailed(Exception):
    """The model failed during a repair; carries that repair's attempts so the report keeps them."""

    def __init__(self, message: str, repair: TargetRepair) -> None:
        super().__init__(message)
        self.repair = repair


@dataclass(frozen=True)
class FixOptions:
    test_command: TestCommand = TestCommand()
    log_failures: tuple[Failure, ...] = ()  # from --from-log: only these are to be fixed
    max_targets: int = 4  # targets tried in all
    wall_s: float = 1800.0  # a hard limit: the run reports within it
    suite_timeout_s: float = 600.0  # a whole-suite run; the backstop, since every test has its own limit
    test_timeout_s: float | None = None  # per test; None: ten times the slowest passing test (reproduce/runs.py)
    paths: tuple[str, ...] = ("**/*.py",)  # files a fix may change (.github/fixbot.yml `paths`); tests never
    repair: RepairOptions = FIX_REPAIR  # the agent's design, iterations per target, answers per call, search


def _progress(ctx: FixRun):
    def say(item: Attempt | SearchRound) -> None:
        if isinstance(item, SearchRound):
            ctx.say(f"    search around {item.base}: {item.candidates} mutants, "
                    f"{'found ' + item.edit if item.fixed else 'none passed'} · {item.seconds:.1f} s")
        elif item.node == "score":
            ctx.say(f"    {item.feedback} · {item.latency_s:.1f} s")
        else:
            ctx.say(f"    attempt {item.iteration} ({item.node}): {item.outcome} · {item.completion_tokens} tokens · "
                    f"{item.latency_s:.1f} s")
    return say


def _repair_one(ctx: FixRun, work: Work, spans: tuple[CodeTarget, ...], tests: frozenset[str],
                options: FixOptions, deadline: float, last: bool = False) -> TargetRepair:
    """Repair one target: one span, or a caller and the helper it calls together (`spans`, the caller first);
    `last`: nothing else is left to go on to in this pass (bot/fix/turns.py)."""
    harness = RepoHarness(ctx.sandbox, work.files, spans, tests, options.test_command, tuple(ctx.pythonpath),
                          work.test_timeout_s, guards=guards_for(work.baseline, spans, tests), deadline=deadline,
                          shown=tests_shown(work.files, tests))
    source = target_source(work.files, *spans)
    start = time.monotonic()

    def record(status: RepairStatus, stop_reason: RepairStop, attempts: Sequence[Attempt] = (),
               changed: int | None = None, fixed: str | None = None, searches: Sequence[SearchRound] = (),
               made_by: MadeBy | None = None) -> TargetRepair:
        return TargetRepair(target=spans[0], tests=tuple(sorted(tests)), status=status, stop_reason=stop_reason,
                            attempts=tuple(attempts), changed_lines=changed, wall_s=time.monotonic() - start,
                            original=source, fixed=fixed, searches=tuple(searches), guards=len(harness.guards),
                            helper=spans[1] if len(spans) > 1 else None, made_by=made_by, stub=is_stub(source),
                            anti_patterns=anti_patterns(source, fixed, harness.shown) if fixed else ())

    ctx.say(f"  guarding {len(harness.guards)} test(s) that passed before and ran it")
    part: Excerpt | None = None
    try:
        first = harness.check(source)
        if first.passed:  # the blamed tests pass with this function as it is: not the culprit
            return record("not_fixed", "passed_without_change")
        target = agent_target(work.files, *spans)
        part = _excerpt(ctx, work, spans, tests, options, target, first.feedback)
        if part is not None:
            harness = replace(harness, expand=part.expand)
            target = replace(target, source=part.source, context=excerpt_context(target, part))
        terms, seed = turn(options.repair, work.passes, last)
        budgets = replace(terms.budgets, wall_s=max(1.0, deadline - time.monotonic()),
                          max_tokens_per_call=answer_tokens(target.source, terms.budgets.max_tokens_per_call))
        from bot.agent.graph import repair  # langgraph's second of imports only when a repair runs

        result = repair(AgentContext(llm=ctx.llm, harness=harness, target=target,
                                     briefing=Briefing(summary=first.feedback, tests=harness.shown),
                                     options=replace(terms, budgets=budgets), seed=seed, progress=_progress(ctx)))
    except RepairInterrupted as exc:
        repaired = record("not_fixed", "stopped" if exc.stop else "error", exc.attempts)
        if exc.stop:
            work.repairs.append(repaired)
            raise exc.stop from None
        raise ModelFailed(str(exc), repaired) from exc
    except (SandboxError, UserError):  # the machine or the user's input: the run's to report, not this target's
        raise
    except Exception as exc:  # a bug of fixbot's own, in this target's repair: the other targets still get theirs
        _report_internal_error(ctx, exc)
        return record("not_fixed", "internal_error")
    finally:
        ctx.tests_s += sum(run.duration_s for run in harness.runs)
    fixed = part.expand(result.final_code) if part is not None and result.final_code is not None \
        else result.final_code
    status: RepairStatus = "fixed" if fixed is not None else "not_fixed"
    if result.stop_reason == "unchanged":
        ctx.say(f"  the model answered with {spans[0].qualname} unchanged {options.repair.budgets.unchanged} times: "
                "it sees nothing to mend there; going on")
    return record(status, result.stop_reason, result.attempts, result.changed_lines, fixed, result.searches,
                  result.fixed_by)


def _report_internal_error(ctx: FixRun, exc: Exception) -> None:
    where = traceback.extract_tb(exc.__traceback__)[-1]
    ctx.say(f"  fixbot failed on this target ({type(exc).__name__}: {exc}, at "
            f"{Path(where.filename).name}:{where.lineno}); going on with the next. Please report it:\n"
            + "".join(traceback.format_exception(exc)).rstrip())


def _excerpt(ctx: FixRun, work: Work, spans: tuple[CodeTarget, ...], tests: frozenset[str], options: FixOptions,
             target: Target, feedback: str) -> Excerpt | None:
    """The part of a long function that the model is shown and answers with (bot/fix/locate/excerpt.py), if any."""
    if not options.repair.iterations or len(spans) > 1 or work.run is None:
        return None
    part = excerpt_for(work.checkout.root, work.files, work.run, spans[0], tests, target, feedback)
    if part is not None:
        ctx.say(f"  showing the model lines {part.first + 1}-{part.stop} of its {len(target.source.splitlines())} "
                "(where the failing tests' evidence points)")
    return part


def _ranked(work: Work, options: FixOptions) -> list[CodeTarget]:
    """The targets not tried yet, best first, for the tests still failing."""
    assert work.run is not None
    current = Checkout(work.checkout.root, work.files)
    targets = [t for t in locate(current, work.run, [f for f in work.run.failures if f.test_id in work.remaining],
                                 limit=options.max_targets + len(work.tried),
                                 test_roots=test_roots(work, options.test_command))
               if (t.path, t.qualname) not in work.tried and in_paths(t.path, options.paths)]
    work.ranked += [t for t in targets if t not in work.ranked]
    return targets


def _next_target(work: Work, options: FixOptions) -> CodeTarget | None:
    targets = _ranked(work, options)
    return targets[0] if targets else None


def _rename_missing(ctx: FixRun, work: Work, options: FixOptions, deadline: float) -> None:
    """Methods the failing tests call by a name their class lacks, beside a method the name renames
    (bot/fix/repair/renames.py): each rename is kept as a fix when its tests pass and the whole suite breaks nothing."""
    assert work.run is not None
    roots = folders_of_tests(work.files, test_roots(work, options.test_command))
    for rename in find_renames([f for f in work.run.failures if f.test_id in work.remaining], work.files,
                               lambda path: is_target_file(path, roots) and in_paths(path, options.paths)):
        ctx.say(f"the tests call {rename.cls}.{rename.new}, which {rename.path} does not define: trying its "
                f"{rename.old} renamed")
        repaired = _verify(ctx, work, rename_repair(work.files, rename), options, deadline)
        if repaired.status == "fixed":
            work.repairs.append(repaired)


def _stub_missing(ctx: FixRun, work: Work, options: FixOptions, deadline: float) -> None:
    """Functions that failing tests import or call and the project does not define (bot/fix/repair/missing.py): a stub
    for each, and the suite again, so that the tests that use them run and fail inside the stubs, which are then
    repaired (written) like any other target."""
    assert work.run is not None
    roots = folders_of_tests(work.files, test_roots(work, options.test_command))
    lacking = missing_names([f for f in work.run.failures if f.test_id in work.remaining], work.files,
                            lambda path: is_target_file(path, roots) and in_paths(path, options.paths))
    if not lacking:
        return
    ctx.say(f"  the tests use {described(lacking)}, not defined yet: a stub for each, to be written")
    files = with_stubs(work.files, lacking)
    run = suite_run(ctx, files, options.test_command, "with stubs", timeout=options.suite_timeout_s, coverage=True,
                    test_timeout=work.test_timeout_s, deadline=deadline)
    if run.timed_out:
        return
    work.files, work.run, work.stubbed, work.stubs = files, run, run, tuple(lacking)
    work.remaining = still_failing(run, work.failing, work.set_aside, bool(options.log_failures))


def _verify(ctx: FixRun, work: Work, repaired: TargetRepair, options: FixOptions, deadline: float) -> TargetRepair:
    """Run the whole suite with the fix; keep it as the new base only when nothing that passed before fails. A
    rename (bot/fix/repair/renames.py), which no test run has checked before, must also make its tests pass."""
    unchecked = repaired.stop_reason == "renamed"
    baseline = work.baseline
    assert repaired.fixed is not None and baseline is not None
    files = with_code(work.files, repaired.spans, repaired.fixed)
    run = suite_run(ctx, files, options.test_command, "renamed" if unchecked else "verify",
                    timeout=options.suite_timeout_s, coverage=True, test_timeout=work.test_timeout_s, deadline=deadline)
    broken = tuple(sorted(baseline.passed - run.passed - set(work.set_aside)))
    if broken or run.timed_out:
        ctx.say(f"  undone: the fix of {' and '.join(t.qualname for t in repaired.spans)} breaks {len(broken)} "
                "test(s) that passed before")
        return replace(repaired, status="regressed", broken=broken)
    if unchecked and not tests_pass(run, frozenset(repaired.tests)):
        ctx.say("  not kept: its tests still fail")
        return replace(repaired, status="not_fixed")
    work.files, work.run = files, run
    work.remaining = still_failing(run, work.failing, work.set_aside, bool(options.log_failures))
    return repaired


def _next_spans(ctx: FixRun, work: Work, options: FixOptions, model: str
                ) -> tuple[tuple[CodeTarget, ...], frozenset[str]] | None:
    """What to repair next and for which failing tests: a caller and its helper together when the one-span repairs
    of both just failed (bot/fix/repair/pairs.py), else the best target not tried yet; None when nothing is left."""
    assert work.run is not None
    pair = next_pair(work.files, work.repairs, work.remaining, work.pairs)
    if pair is not None:
        caller, helper, tests = pair
        work.pairs.add(pair_key(caller, helper))
        ctx.say(f"repairing {caller.path}::{caller.qualname} and {helper.path}::{helper.qualname}, which it calls, "
                f"together (neither alone fixed it) for {len(tests)} failing test(s) with {model or 'the model'}")
        return (caller, helper), tests
    target = _next_target(work, options)
    if target is None:
        return None
    work.tried.add((target.path, target.qualname))
    tests = blamed_tests(target, work.run, work.remaining)
    ctx.say(f"repairing {target.path}::{target.qualname} ({', '.join(target.reasons) or 'ranked'}) "
            f"for {len(tests)} failing test(s) with {model or 'the model'}")
    return (target,), tests


def _sweep(ctx: FixRun, work: Work, options: FixOptions, deadline: float) -> None:
    """The mutation search alone on each ranked target before any model call: a one-edit fix of the second or
    third target takes seconds, and would otherwise wait behind the first target's model calls (up to a minute
    each on a CPU). In rounds: the SWEEP_FIRST best-ranked mutants of every target (the rare, precise edits rank
    first: a caught exception, an uncalled function), then the rest of each target's `slow_mutants`, then up to
    SWEEP_WIDER times that many, so that a long first target does not spend the sweep before the others are
    tried, and where mutants are cheap (a fraction of a second each on a project that imports fast) many more of
    them are tried before the model's first call, which takes as long as hundreds of them. Takes at most
    SWEEP_SHARE of the time left; the model repairs skip the searches done here."""
    repair = options.repair
    if repair.search is None or not repair.iterations:
        return
    until = time.monotonic() + (deadline - time.monotonic()) * SWEEP_SHARE
    slow = repair.search.slow_mutants
    done = 0
    for upto in sorted({min(SWEEP_FIRST, slow), slow, SWEEP_WIDER * slow}):
        search_only = replace(repair, budgets=replace(repair.budgets, iterations=0),
                              search=replace(repair.search, slow_mutants=upto, skip=done))
        _sweep_round(ctx, work, replace(options, repair=search_only), until, deadline)
        done = upto


def _sweep_round(ctx: FixRun, work: Work, options: FixOptions, until: float, deadline: float) -> None:
    search = options.repair.search
    assert search is not None
    searched: set[tuple[str, str]] = set()
    while work.remaining and len(searched) < options.max_targets and time.monotonic() < until:
        assert work.run is not None
        target = next((t for t in _ranked(work, options) if (t.path, t.qualname) not in searched), None)
        if target is None:
            return
        searched.add((target.path, target.qualname))
        tests = blamed_tests(target, work.run, work.remaining)
        tried = f"mutants {search.skip + 1}-{search.slow_mutants}" if search.skip \
            else f"the first {search.slow_mutants} mutants"
        ctx.say(f"searching {target.path}::{target.qualname} for a one-edit fix ({len(tests)} failing test(s); "
                f"{tried})")
        repaired = _repair_one(ctx, work, (target,), tests, options, until)
        if repaired.fixed is None:
            work.swept.append(replace(repaired, stop_reason="search_only"))
            continue
        work.tried.add((target.path, target.qualname))
        work.repairs.append(_verify(ctx, work, repaired, options, deadline))


def _repair_loop(ctx: FixRun, work: Work, options: FixOptions, deadline: float, model: str) -> None:
    _sweep(ctx, work, options, deadline)
    swept = {(r.target.path, r.target.qualname) for r in work.swept}
    while work.remaining and time.monotonic() < deadline:
        chosen = _next_spans(ctx, work, options, model) \
            if len(work.tried) + len(work.pairs) < options.max_targets else None
        if chosen is None and another_pass(ctx.say, work, deadline):
            chosen = _next_spans(ctx, work, options, model)
        if chosen is None:
            return
        searched = len(chosen[0]) == 1 and (chosen[0][0].path, chosen[0][0].qualname) in swept
        search = options.repair.search
        opts = replace(options, repair=replace(options.repair, search=replace(search, first_round=False))) \
            if searched and search else options
        last = alone(work, options.max_targets, chosen[0])
        repaired = _repair_one(ctx, work, *chosen, opts, share(last, deadline), last)
        if repaired.fixed is not None:
            repaired = _verify(ctx, work, repaired, options, deadline)
        work.repairs.append(repaired)


def fix(checkout: Checkout, ctx: FixRun, options: FixOptions = FixOptions(), *, model: str = "") -> FixResult:
    started = time.monotonic()
    deadline = started + options.wall_s - ctx.setup_s  # the budget covers building the environment too
    work = Work(checkout, dict(checkout.files))

    def done(status: FixStatus, message: str, **more: Any) -> FixResult:
        attempts = [a for r in work.repairs for a in r.attempts]
        timings = Timings(round(ctx.setup_s, 2), round(ctx.tests_s, 2), round(sum(a.latency_s for a in attempts), 2),
                          round(time.monotonic() - started + ctx.setup_s, 2),
                          round(sum(a.prompt_eval_s for a in attempts), 2))
        return FixResult(status=status, message=message, runs=tuple(ctx.runs), timings=timings, failures=work.failures,
                         flaky=work.flaky, offline=work.offline, lacking=work.lacking, environment=work.environment,
                         held_back=work.held_back, env_changes=work.env_changes,
                         targets=tuple(work.ranked),
                         repairs=tuple(work.swept + work.repairs), repository=checkout.root,
                         test_command=str(options.test_command), model=model, **more)

    try:
        with alarm_at(deadline + STOP_GRACE_S):
            return _fix(ctx, work, options, deadline, model, done)
    except (Stopped, KeyboardInterrupt) as exc:
        stop = exc if isinstance(exc, Stopped) else Stopped("interrupted", signal_number=2)
        if stop.by_signal:
            return done("interrupted", f"stopped by a signal ({stop.reason}) after {len(work.repairs)} target(s)",
                        best=best_attempt(work))
        return done("not_fixed", f"the time budget ({options.wall_s:g} s) ran out after {len(work.repairs)} "
                                 "target(s)", best=best_attempt(work))
    except ModelFailed as exc:
        work.repairs.append(exc.repair)
        return done("not_fixed", f"the model failed: {exc}", error=f"the model failed: {exc}", best=best_attempt(work))
    except SandboxError as exc:  # the machine's failure, not the code's: exit 2, with the report of what was done
        return done("not_fixed", f"the sandbox failed: {exc}", error=f"the sandbox failed: {exc}",
                    best=best_attempt(work))


def _fix(ctx: FixRun, work: Work, options: FixOptions, deadline: float, model: str, done) -> FixResult:
    def reproduced(run: FixRun) -> Reproduced:
        return reproduce(run, work.files, options.test_command, log_failures=options.log_failures,
                         suite_timeout_s=options.suite_timeout_s, test_timeout_s=options.test_timeout_s,
                         deadline=deadline)

    found, work.held_back = with_held_back(ctx, reproduced(ctx), reproduced)
    found, rebuilt = with_remedied(ctx, found, reproduced, work.held_back)
    work.env_changes = tuple(change.describe() for change in rebuilt)
    work.before, work.flaky, work.test_timeout_s = found.before, found.flaky, found.test_timeout_s
    work.offline, work.lacking, work.environment = found.offline, found.lacking, found.environment
    work.failing = work.remaining = found.failing
    work.run = found.before
    if not found.before.failed:
        return done("nothing_to_fix", "all tests pass: nothing to fix")
    if not found.failing and (found.offline or found.lacking or any(c.tests for c in found.environment)) \
            and not found.flaky:
        return done(*unrunnable(found))
    if not found.failing:
        return done("flaky", f"{len(found.flaky)} failing test(s) did not fail again in the sandbox: flaky, not fixed")
    ctx.say(f"  per-test time limit: {work.test_timeout_s:.3g} s")
    _rename_missing(ctx, work, options, deadline)
    _stub_missing(ctx, work, options, deadline)
    _repair_loop(ctx, work, options, deadline, model)
    fixed = [r for r in work.repairs if r.status == "fixed"]
    if not fixed or work.remaining:
        pairs = f" and {len(work.pairs)} caller-helper pair(s)" if work.pairs else ""
        why = (f"{len(work.remaining)} test(s) still fail after trying {len(work.tried)} target(s){pairs}"
               if time.monotonic() < deadline else
               f"the time budget ({options.wall_s:g} s) ran out with {len(work.remaining)} test(s) still failing")
        return done("not_fixed", why, best=best_attempt(work))
    diff = make_patch(work.checkout.files, work.files)
    changed = sum(r.changed_lines or 0 for r in fixed)
    try:
        validate(diff, work.checkout.root, {t.path for r in fixed for t in r.spans})
    except PatchRejected as exc:
        return done("not_fixed", f"the patch was rejected: {exc}", best=best_attempt(work))
    why = " ".join(rename_explanation(r) if r.stop_reason == "renamed" else
                   explanation(r.target, r.original, r.fixed or "", work.failures, r.tests, r.helper) for r in fixed)
    aside = sum(len(c.tests) for c in work.environment)
    rest = f"; {aside} other failing test(s) fail because of the environment, not the code" if aside \
        else "; the whole suite passes"
    return done("fixed", f"fixed {len(work.failing)} failing test(s) with {changed} changed line(s){rest}",
                explanation=why, diff=diff, changed_lines=changed)
