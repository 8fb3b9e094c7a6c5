"""How the pipeline shares its time between targets: the ranking is a guess, so one target may not spend it all."""
from __future__ import annotations

import time

from bot.fix.pipeline import TARGET_SHARE, FixOptions, _share
from bot.fix.types import Checkout, CodeTarget
from bot.fix.work import Work


def target(name: str) -> CodeTarget:
    return CodeTarget(path="m.py", qualname=name, start=1, end=2, score=1.0)


def work_with(ranked: list[str], tried: list[str]) -> Work:
    work = Work(Checkout("/nowhere", {}), {})
    work.ranked = [target(n) for n in ranked]
    work.tried = {("m.py", n) for n in tried}
    return work


def test_a_target_gets_its_share_while_another_is_untried():
    deadline = time.monotonic() + 100
    end = _share(work_with(["caller", "helper"], ["caller"]), FixOptions(max_targets=4), (target("caller"),), deadline)
    assert abs((end - time.monotonic()) - 100 * TARGET_SHARE) < 1


def test_the_last_target_a_pair_or_the_only_one_get_all_the_time():
    deadline = time.monotonic() + 100
    both = (target("caller"), target("helper"))
    assert _share(work_with(["caller", "helper"], ["caller", "helper"]), FixOptions(), both, deadline) == deadline
    assert _share(work_with(["only"], ["only"]), FixOptions(), (target("only"),), deadline) == deadline
    last = work_with(["a", "b", "c"], ["a", "b"])
    assert _share(last, FixOptions(max_targets=2), (target("b"),), deadline) == deadline
