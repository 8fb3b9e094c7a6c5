"""How the pipeline shares its time between targets (bot/fix/loop/targets.py): the ranking is a guess, so one target
may not spend it all."""
from __future__ import annotations

import time

from bot.checkout.repository import Checkout
from bot.fix.loop.targets import TARGET_SHARE, alone, share
from bot.fix.loop.work import Work
from bot.fix.types import CodeTarget


def target(name: str) -> CodeTarget:
    return CodeTarget(path="m.py", qualname=name, start=1, end=2, score=1.0)


def work_with(ranked: list[str], tried: list[str]) -> Work:
    work = Work(Checkout("/nowhere", {}), {})
    work.ranked = [target(n) for n in ranked]
    work.tried = {("m.py", n) for n in tried}
    return work


def test_a_target_gets_its_share_while_another_is_untried():
    deadline = time.monotonic() + 100
    end = share(alone(work_with(["caller", "helper"], ["caller"]), 4, (target("caller"),)), deadline)
    assert not alone(work_with(["caller", "helper"], ["caller"]), 4, (target("caller"),))
    assert abs((end - time.monotonic()) - 100 * TARGET_SHARE) < 1


def test_the_last_target_a_pair_or_the_only_one_get_all_the_time():
    deadline = time.monotonic() + 100
    both = (target("caller"), target("helper"))
    assert share(alone(work_with(["caller", "helper"], ["caller", "helper"]), 4, both), deadline) == deadline
    assert share(alone(work_with(["only"], ["only"]), 4, (target("only"),)), deadline) == deadline
    assert alone(work_with(["only"], ["only"]), 4, (target("only"),))  # nothing to go on to: no unchanged limit
    last = work_with(["a", "b", "c"], ["a", "b"])
    assert share(alone(last, 2, (target("b"),)), deadline) == deadline
