"""The original's likely one-edit neighbours (choose/neighbours.py), where the visible tests pass on the original:
found with the scripted scorer, and chosen by the vote (bot/agent/choose/select.py)."""
from __future__ import annotations

from bot.agent import AgentContext, Briefing, RepairOptions, Target, TestOutcome, repair
from bot.agent.choose.neighbours import MARGIN, likely_neighbours
from bot.agent.choose.select import EXTRA_ANSWERS
from bot.llm import ScriptedLLM
from bot.llm.scripted import ScriptedScorer

from .test_agent_select import BUGGY, WEAK, Judge, WeakTest


class Safe(WeakTest):
    """The visible test, absolute(3) == 3, where a mutant that raises fails it."""

    def check(self, function_source: str) -> TestOutcome:
        try:
            return super().check(function_source)
        except Exception as exc:
            return TestOutcome(False, f"E   {exc!r}")

ABS = BUGGY.replace("return x", "return abs(x)")


def test_a_neighbour_far_likelier_than_the_original_is_found():
    # the original's body ("return x" and the fence) scores -3 words; `abs(x)` scores 0: exactly MARGIN above
    found = likely_neighbours(BUGGY, "absolute", ScriptedScorer([], likelihoods={"abs(": -3 + MARGIN}), WeakTest(),
                              None)
    assert found is not None and found.codes == [ABS]
    assert found.tried == 4  # a guard, `not x`, `-x`, `abs(x)`: two pass the visible test
    assert found.scored == 2


def test_a_neighbour_not_far_likelier_is_not_found():
    found = likely_neighbours(BUGGY, "absolute", ScriptedScorer([], likelihoods={"abs(": -3 + MARGIN - 0.1}),
                              WeakTest(), None)
    assert found is not None and found.codes == []


def test_a_deleted_statement_is_never_a_neighbour():
    """Deleting `x = x + 0` makes a shorter text that passes (5 words fewer: likelier by 5 > MARGIN); it is not
    tried at all, and `x = x` (2 words fewer) is not likely enough."""
    buggy = BUGGY.replace("    return x", "    x = x + 0\n    return x")
    llm = ScriptedScorer([])
    found = likely_neighbours(buggy, "absolute", llm, Safe(), None)
    assert found is not None and found.codes == [] and found.scored > 1
    ((_, texts),) = llm.scored
    assert "    return x\n```" not in texts and "    x = x\n    return x\n```" in texts


def test_a_model_that_cannot_score_finds_none():
    assert likely_neighbours(BUGGY, "absolute", ScriptedLLM([]), WeakTest(), None) is None


def _repair(original_passes: bool):  # type: ignore[no-untyped-def]
    llm = ScriptedScorer([WEAK] * (1 + EXTRA_ANSWERS), likelihoods={"abs(": 0.0})
    ctx = AgentContext(llm=llm, harness=WeakTest(), target=Target("absolute", BUGGY),
                       briefing=Briefing("The visible tests pass, but the function is not what its docstring says."),
                       options=RepairOptions(), judge=Judge(), original_passes=original_passes)
    return repair(ctx)


def test_the_vote_chooses_a_likely_neighbour_where_the_tests_pass_on_the_original():
    """The model only ever answers `return max(x, 0)`; the neighbour `abs(x)` joins the vote and is likelier."""
    result = _repair(original_passes=True)
    assert result.final_code == ABS
    assert result.selection.neighbours == 1 and result.selection.candidates == 2
    scored = [a for a in result.attempts if a.node == "score"]
    assert scored[0].feedback == "2 of 4 neighbour(s) of the original pass the visible tests; 1 far likelier than it"


def test_no_neighbours_are_sought_where_the_tests_fail_on_the_original():
    result = _repair(original_passes=False)
    assert result.final_code == BUGGY.replace("return x", "return max(x, 0)")
    assert result.selection.neighbours == 0
