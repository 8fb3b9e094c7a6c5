"""Whose turn it is in the repair loop (bot/fix/pipeline.py): how long one target may keep the model and on which
terms, and when the targets that failed get another pass."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from bot.agent import RepairOptions, Schedule
from bot.fix.types import CodeTarget
from bot.fix.work import Work

TARGET_SHARE = 0.5  # of the time left, for one target while another ranked one is untried (see share)
PASS_MIN_S = 45.0  # time left, at least, for another pass over the targets that failed (see another_pass)
MAX_PASSES = 3
PASS_SEED = 10_000  # each pass's seeds start this far from the last one's
OTHER_SCHEDULE: dict[Schedule, Schedule] = {"rising": "falling", "falling": "rising"}


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


def turn(repair: RepairOptions, passes: int, last: bool) -> tuple[RepairOptions, int]:
    """The repair's options and first seed for this turn. A later pass has other seeds and, every other pass, the
    other temperature schedule. Answers that leave the function unchanged give a target up so that the next one
    gets the model (`Budgets.unchanged`); the last of a pass has nothing to go on to, and keeps it."""
    later = passes - 1
    schedule = repair.schedule if not later % 2 else OTHER_SCHEDULE[repair.schedule]
    budgets = replace(repair.budgets, unchanged=None) if last else repair.budgets
    return replace(repair, schedule=schedule, budgets=budgets), PASS_SEED * later


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
