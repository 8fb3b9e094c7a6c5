"""The repair loop of one `fixbot fix` run: which target next, the mutation search alone on every ranked target
first (the sweep), each target's turn with the agent (bot/fix/loop/turn.py) and its share of the time and
its pass, the steps besides the agent (a method renamed, stubs written), and each fix verified by the whole
suite before it becomes the base of the next target.

In: the run's context (bot/fix/context.py), what it has found so far (`Work`: the reproduction), the options. Out:
`Work` with its repairs, kept or undone. Never: a fix kept that broke a test that passed before; more than a
target's share of the time while another ranked target is untried."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from bot.checkout.paths import in_paths
from bot.checkout.repository import Checkout
from bot.fix.context import FixRun
from bot.fix.locate.project_files import folders_of_tests, is_target_file
from bot.fix.locate.rank import locate
from bot.fix.loop.deferred import defer, fall_back, until
from bot.fix.loop.turn import ModelFailed, repair_one
from bot.fix.loop.work import Work, still_failing, test_roots
from bot.fix.options import FixOptions
from bot.fix.repair.briefing import blamed_tests
from bot.fix.repair.harness import tests_pass, with_code
from bot.fix.repair.missing import described, missing_names, with_stubs
from bot.fix.repair.pairs import next_pair, pair_key
from bot.fix.repair.renames import find_renames, rename_repair
from bot.fix.reproduce.runs import suite_run
from bot.fix.result import TargetRepair
from bot.fix.types import CodeTarget

TARGET_SHARE = 0.5  # of the time left, for one target while another ranked one is untried (see share)
PASS_MIN_S = 45.0  # time left, at least, for another pass over the targets that failed (see another_pass)
MAX_PASSES = 3
SWEEP_SHARE, SWEEP_FIRST, SWEEP_WIDER = 0.4, 12, 4  # see _sweep: its share of the time, its rounds' sizes


def alone(work: Work, max_targets: int, spans: tuple[CodeTarget, ...]) -> bool:
    """Nothing else is left to go on to in this pass: a pair, the last target the budget allows, or no other
    ranked target untried."""
    untried = [t for t in work.ranked if (t.path, t.qualname) not in work.tried]
    return len(spans) > 1 or len(work.tried) + len(work.pairs) >= max_targets or not untried

def share(last: bool, deadline: float) -> float:
    """Where this target's time ends. The ranking is a guess (the function the test calls, or the helper it
    reaches?), so while another ranked target is still untried, one target may spend only TARGET_SHARE of the
    time left; the `last` of a pass (`alone`) gets all of it."""
    if last:
        return deadline
    now = time.monotonic()
    return now + (deadline - now) * TARGET_SHARE

def another_pass(say: Callable[[str], None], work: Work, deadline: float) -> bool:
    """When every target has been tried with time to spare (a small model's answers for one target soon repeat
    what it already tried, and its iterations run out long before the budget), the targets that failed are tried
    again: other seeds, and the other temperature schedule."""
    left = deadline - time.monotonic()
    failed = {(r.target.path, r.target.qualname) for r in work.repairs if r.status != "fixed"} & work.tried
    if left < PASS_MIN_S or work.passes >= MAX_PASSES or not failed:
        return False
    work.tried -= failed
    work.pairs.clear()
    work.passes += 1
    say(f"every target has been tried and {left:.0f} s are left: trying the {len(failed)} that failed again "
        f"with other answers (pass {work.passes} of at most {MAX_PASSES})")
    return True


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


def rename_missing(ctx: FixRun, work: Work, options: FixOptions, deadline: float) -> None:
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


def stub_missing(ctx: FixRun, work: Work, options: FixOptions, deadline: float) -> None:
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
    first: a misspelt name, a caught exception), then the rest of each target's `slow_mutants`, then up to
    SWEEP_WIDER times that many, so that a long first target does not spend the sweep before the others are
    tried, and where mutants are cheap (a fraction of a second each on a project that imports fast) many more of
    them are tried before the model's first call, which takes as long as hundreds of them. Takes at most
    SWEEP_SHARE of the time left; the model repairs skip the searches done here."""
    repair = options.repair
    if repair.search is None or not repair.iterations:
        return
    ends = time.monotonic() + (deadline - time.monotonic()) * SWEEP_SHARE
    slow = repair.search.slow_mutants
    done = 0
    for upto in sorted({min(SWEEP_FIRST, slow), slow, SWEEP_WIDER * slow}):
        search_only = replace(repair, budgets=replace(repair.budgets, iterations=0),
                              search=replace(repair.search, slow_mutants=upto, skip=done))
        _sweep_round(ctx, work, replace(options, repair=search_only), ends, deadline)
        done = upto


def _sweep_round(ctx: FixRun, work: Work, options: FixOptions, ends: float, deadline: float) -> None:
    search = options.repair.search
    assert search is not None
    searched: set[tuple[str, str]] = set()
    while work.remaining and len(searched) < options.max_targets and \
            time.monotonic() < min(ends, until(work, deadline)):
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
        repaired = repair_one(ctx, work, (target,), tests, options, min(ends, until(work, deadline)))
        if defer(ctx, work, repaired):  # the model still gets the target (its first search round done)
            continue
        if repaired.fixed is None:
            work.swept.append(replace(repaired, stop_reason="search_only"))
            continue
        work.tried.add((target.path, target.qualname))
        work.repairs.append(_verify(ctx, work, repaired, options, deadline))


def repair_loop(ctx: FixRun, work: Work, options: FixOptions, deadline: float, model: str) -> None:
    """The sweep, then each target's turn with the agent until the tests pass or the time is spent; a fix that
    looks wrong is kept only when nothing else fixed its tests (bot/fix/loop/deferred.py)."""
    def verify(repaired: TargetRepair) -> TargetRepair:
        return _verify(ctx, work, repaired, options, deadline)

    try:
        _sweep(ctx, work, options, deadline)
        _turns(ctx, work, options, deadline, model)
    except ModelFailed as exc:  # the model is gone, the time is not: a deferred fix may still be all it takes
        fall_back(ctx, work, verify)
        if work.remaining:
            raise
        work.repairs.append(exc.repair)
        return
    except BaseException:  # stopped: no time to verify, but the report keeps them
        fall_back(ctx, work, None)
        raise
    fall_back(ctx, work, verify)


def _turns(ctx: FixRun, work: Work, options: FixOptions, deadline: float, model: str) -> None:
    swept = {(r.target.path, r.target.qualname) for r in (*work.swept, *(d.repair for d in work.deferred))}
    while work.remaining and time.monotonic() < until(work, deadline):
        chosen = _next_spans(ctx, work, options, model) \
            if len(work.tried) + len(work.pairs) < options.max_targets else None
        if chosen is None and another_pass(ctx.say, work, until(work, deadline)):
            chosen = _next_spans(ctx, work, options, model)
        if chosen is None:
            return
        searched = len(chosen[0]) == 1 and (chosen[0][0].path, chosen[0][0].qualname) in swept
        search = options.repair.search
        opts = replace(options, repair=replace(options.repair, search=replace(search, first_round=False))) \
            if searched and search else options
        last = alone(work, options.max_targets, chosen[0])
        repaired = repair_one(ctx, work, *chosen, opts, share(last, until(work, deadline)), last)
        if defer(ctx, work, repaired):
            continue
        if repaired.fixed is not None:
            repaired = _verify(ctx, work, repaired, options, deadline)
        work.repairs.append(repaired)
