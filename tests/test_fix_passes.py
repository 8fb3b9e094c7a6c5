"""Another pass over the targets that failed (bot/fix/loop/targets.py, another_pass): when every target has been
tried and time is left, they are tried again with other seeds and the other temperature schedule."""
from __future__ import annotations

from bot.agent import Budgets, RepairOptions
from bot.agent.steps.nodes import REPEAT_CALLS
from bot.fix.loop.targets import MAX_PASSES
from bot.fix.loop.turn import PASS_SEED, turn
from bot.llm import Completion

from .test_fix import fix_example
from .test_fix_realrepo import make_repo

MIDDLE = "def middle(a, b, c):\n    return sorted([a, b, c])[0]\n"
WRONG = "def middle(a, b, c):\n    return sorted([a, b, c])[-1]\n"
FIXED = "def middle(a, b, c):\n    return sorted([a, b, c])[1]\n"
TESTS = "from mid import middle\n\n\ndef test_middle():\n    assert middle(3, 1, 2) == 2\n"


class SeedLLM:
    """Scripted: the same wrong answer for the seeds of the first pass, the fix for a later pass's seeds (or,
    with `fix_at=None`, never)."""

    name = "by-seed"

    def __init__(self, fix_at: int | None = PASS_SEED) -> None:
        self.fix_at = fix_at
        self.calls: list[tuple[int | None, float]] = []

    def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None) -> Completion:
        self.calls.append((seed, temperature))
        fixed = self.fix_at is not None and seed is not None and seed >= self.fix_at
        return Completion(text=f"```python\n{FIXED if fixed else WRONG}```", prompt_tokens=10, completion_tokens=10,
                          latency_s=0.0, model=self.name)


def test_a_target_that_failed_is_tried_again_with_other_seeds_and_the_other_schedule(tmp_path, docker_client,
                                                                                      sandbox_image):
    root = make_repo(tmp_path / "mid", {"mid.py": MIDDLE, "tests/test_mid.py": TESTS})
    llm = SeedLLM()
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed", result.message
    first = [c for c in llm.calls if c[0] is not None and c[0] < PASS_SEED]
    later = [c for c in llm.calls if c[0] is not None and c[0] >= PASS_SEED]
    # the first pass's three iterations: one wrong answer, then repeats, which are not charged (up to twice the calls)
    assert len(first) == 3 * REPEAT_CALLS and later
    assert first[0][1] == 0.0 and later[0][1] == 0.8  # rising first (greedy), then falling (varied first)
    assert [r.target.qualname for r in result.repairs] == ["middle", "middle"]
    assert "+    return sorted([a, b, c])[1]" in result.diff


def test_the_passes_end_after_the_last_one(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "mid", {"mid.py": MIDDLE, "tests/test_mid.py": TESTS})
    llm = SeedLLM(fix_at=None)
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "not_fixed"
    assert len(result.repairs) == MAX_PASSES
    assert len(llm.calls) == 3 * REPEAT_CALLS * MAX_PASSES  # one wrong answer a pass, then its repeats
    assert {seed // PASS_SEED for seed, _ in llm.calls if seed is not None} == set(range(MAX_PASSES))


class UnchangedLLM:
    """Scripted: the function unchanged, twice, then the fix."""

    name = "unchanged"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None) -> Completion:
        self.calls += 1
        return Completion(text=f"```python\n{FIXED if self.calls > 2 else MIDDLE}```", prompt_tokens=10,
                          completion_tokens=10, latency_s=0.0, model=self.name)


def test_the_only_target_is_not_given_up_for_answers_that_leave_it_unchanged(tmp_path, docker_client,
                                                                             sandbox_image):
    """Two unchanged answers give a target up so that the next one gets the model; with none left to go on to,
    the target keeps it: fixed in the first pass, by its third answer."""
    root = make_repo(tmp_path / "mid", {"mid.py": MIDDLE, "tests/test_mid.py": TESTS})
    llm = UnchangedLLM()
    result, _ = fix_example(docker_client, sandbox_image, root, llm, budgets=Budgets(iterations=4, unchanged=2))
    assert result.status == "fixed", result.message
    assert [r.stop_reason for r in result.repairs] == ["passed"] and llm.calls == 3


def test_a_target_with_another_after_it_is_given_up_for_unchanged_answers():
    budgets = Budgets(unchanged=2)
    first, seed = turn(RepairOptions(budgets=budgets), passes=1, last=False)
    assert first.budgets.unchanged == 2 and seed == 0 and first.schedule == "rising"
    final, seed = turn(RepairOptions(budgets=budgets), passes=2, last=True)
    assert final.budgets.unchanged is None and seed == PASS_SEED and final.schedule == "falling"
