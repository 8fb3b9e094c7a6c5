"""Deferred fixes: a change that makes its tests pass but breaks an anti-pattern rule (bot/agent/antipatterns.py:
it swallows the exception, deletes the path the failure points at, answers the test's input) is not kept when it
is found. The run goes on looking for a change that passes without looking like a wrong fix (the sweep's other
rounds and targets, the model's turns), keeping back the time that verifying the deferred one takes; only
when nothing else is found is it verified and kept, flagged for review. A patch that hides the failure is worse than
none to a maintainer, and one that only looks wrong (a developer's own fix may swallow an exception) is still
offered when it is all there is.

In: the loop's repairs as they end, `Work`. Out: the loop's deadline with that time kept back, and the deferred
fix verified at the end (or recorded as `deferred` when a clean one fixed its tests). Never: a deferred fix kept
while a clean one of the same tests was; a deferred fix put on files other than those it was found on."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from bot.fix.context import FixRun
from bot.fix.result import TargetRepair
from bot.fix.work import Deferred, Work

RESERVE_FACTOR, RESERVE_MIN_S = 1.5, 10.0  # kept back for verifying a deferred fix: times the last suite run, at least


def defer(ctx: FixRun, work: Work, repaired: TargetRepair) -> bool:
    """Defer `repaired` when it fixed its tests with a change that breaks a rule; True when it is deferred."""
    if repaired.fixed is None or not repaired.anti_patterns:
        return False
    if all(d.repair.fixed != repaired.fixed for d in work.deferred):
        work.deferred.append(Deferred(repaired, work.files))
        ctx.say(f"  deferred: the change looks like a wrong fix ({', '.join(repaired.anti_patterns)}); looking for "
                "another, and keeping it only if none is found")
    return True


def until(work: Work, deadline: float) -> float:
    """Where the loop's time ends: with a fix deferred, early enough to verify it."""
    if not work.deferred:
        return deadline
    last = work.run.duration_s if work.run is not None else 0.0
    return deadline - max(RESERVE_MIN_S, RESERVE_FACTOR * last)


def fall_back(ctx: FixRun, work: Work, verify: Callable[[TargetRepair], TargetRepair] | None) -> None:
    """The deferred fixes whose tests still fail, fewest changed lines first, verified on the files they were found
    on and kept if the whole suite allows, flagged; the others recorded as deferred (all of them, without
    `verify`: a run stopped before its end)."""
    for deferred in sorted(work.deferred, key=lambda d: d.repair.changed_lines or 0):
        repair = deferred.repair
        if verify is not None and set(repair.tests) & work.remaining and deferred.files is work.files:
            ctx.say(f"nothing else fixed it: keeping the deferred change of {repair.target.qualname}, flagged "
                    f"for review ({', '.join(repair.anti_patterns)})")
            work.repairs.append(verify(repair))
        else:
            work.repairs.append(replace(repair, status="not_fixed", stop_reason="deferred"))
    work.deferred.clear()
