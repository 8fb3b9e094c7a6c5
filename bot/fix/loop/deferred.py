"""Deferred fixes: a change that makes its tests pass but breaks an anti-pattern rule (bot/agent/antipatterns.py:
it swallows the exception, deletes the path the failure points at, answers the test's input) is not kept when it
is found. The run goes on looking for a change that passes without looking like a wrong fix (the sweep's other
rounds and targets, the model's turns), keeping back the time that verifying the deferred ones takes; only when
nothing else has fixed its tests is a deferred fix verified and kept, flagged for review. A patch that hides the
failure is worse than none to a maintainer, and one that only looks wrong (a developer's own fix may swallow an
exception) is still offered when it is all there is.

In: the loop's repairs as they end, `Work`. Out: the loop's deadline with that time kept back, and the deferred
fixes verified at the end (or recorded with the stop reason `deferred`). Never: a deferred fix kept while a clean
one of the same tests was; a deferred fix put on a file that another kept fix changed since it was found."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from bot.fix.context import FixRun
from bot.fix.loop.work import Deferred, Work
from bot.fix.result import TargetRepair

RESERVE_FACTOR, RESERVE_MIN_S = 1.5, 10.0  # kept back per deferred fix: times the last suite run, at least


def defer(ctx: FixRun, work: Work, repaired: TargetRepair) -> bool:
    """Defer `repaired` when it fixed its tests with a change that breaks a rule; True when it is deferred. The
    same change found again is recorded at once as deferred, so that the turn's attempts stay in the report."""
    if repaired.fixed is None or not repaired.anti_patterns:
        return False
    if any(d.repair.fixed == repaired.fixed for d in work.deferred):
        work.repairs.append(_not_kept(repaired))
        return True
    work.deferred.append(Deferred(repaired, {s.path: work.files[s.path] for s in repaired.spans}))
    ctx.say(f"  deferred: the change looks like a wrong fix ({', '.join(repaired.anti_patterns)}); looking for "
            "another, and keeping it only if none is found")
    return True


def until(work: Work, deadline: float) -> float:
    """Where the loop's time ends: with fixes deferred, early enough to verify them."""
    if not work.deferred:
        return deadline
    last = work.run.duration_s if work.run is not None else 0.0
    return deadline - len(work.deferred) * max(RESERVE_MIN_S, RESERVE_FACTOR * last)


def fall_back(ctx: FixRun, work: Work, verify: Callable[[TargetRepair], TargetRepair] | None) -> None:
    """The deferred fixes whose tests still fail, fewest changed lines first, verified and kept if the whole suite
    allows, flagged; the others recorded as deferred. Without `verify` (a run stopped before its end), and for
    those after a verification that raised, all are recorded."""
    pending = sorted(work.deferred, key=lambda d: d.repair.changed_lines or 0)
    work.deferred.clear()
    for at, deferred in enumerate(pending):
        repair = deferred.repair
        unchanged = all(work.files.get(path) == text for path, text in deferred.files.items())
        if verify is None or not set(repair.tests) & work.remaining or not unchanged:
            work.repairs.append(_not_kept(repair))
            continue
        ctx.say(f"nothing else fixed it: keeping the deferred change of {repair.target.qualname}, flagged for review "
                f"({', '.join(repair.anti_patterns)})")
        try:
            work.repairs.append(verify(repair))
        except BaseException:
            work.repairs.extend(_not_kept(d.repair) for d in pending[at:])
            raise


def _not_kept(repair: TargetRepair) -> TargetRepair:
    return replace(repair, status="not_fixed", stop_reason="deferred")
