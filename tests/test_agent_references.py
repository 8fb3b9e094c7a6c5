"""Functions written from the docstring alone as evidence for the vote (bot/agent/choose/references.py), with the
scripted model and the in-process judge of tests/test_agent_select.py."""
from __future__ import annotations

from bot.agent.choose.references import consensus, favoured, met
from bot.agent.choose.select import EXTRA_ANSWERS

from .test_agent_select import BUGGY, RIGHT, WEAK, WRONG, Judge, run

ALSO_WEAK = "```python\ndef absolute(x):\n    return x if x > 0 else 3\n```"  # passes absolute(3) == 3 too
REWRITE = "```python\ndef absolute(x):\n    if x < 0:\n        return -x\n    return x\n```"


def test_the_consensus_is_what_every_reference_returns_where_none_raises():
    assert consensus([["1", "2", "!ValueError", "timeout"], ["1", "3", "!ValueError", "timeout"]]) == \
        [None if i else "1" for i in range(4)]
    assert consensus([["1", "2"]]) == [None, None]  # one reference is no consensus
    assert consensus([]) == []
    assert met(["1", "5", "7"], ["1", None, "8"]) == 1


def test_the_fixes_that_meet_the_most_stay_unless_a_reference_meets_more():
    assert favoured([2, 3, 3], [3, 3]) == ([1, 2], [])  # a tie keeps the fixes
    assert favoured([1, 0], [3, 2]) == ([], [0])
    assert favoured([0, 0], []) == ([0, 1], [])  # no reference: every fix stays
    assert favoured([0], [2, 2, 2], ["a", "b", "a"]) == ([], [0, 1])  # one of each text
    assert favoured([], [0, 1]) == ([], [1])  # no fix left: the references are all there is


def test_references_that_agree_outweigh_the_likelier_fix():
    """The model finds `return max(x, 0)` the likelier body, and gives it three times; two of three references
    (written from the docstring alone) pass the visible test and return abs(x) on the judge's inputs, so abs stays
    in the choice and the clamp does not."""
    answers = [WEAK, WEAK, RIGHT, WEAK] + [REWRITE, WRONG, REWRITE]
    result, llm = run(answers, Judge(), likelihoods={"abs(x)": -9.0, "max(x, 0)": -1.0}, references=3)
    assert len(llm.calls) == 1 + EXTRA_ANSWERS + 3
    reference_prompt = llm.calls[-1][1].content
    assert "What it should do:" in reference_prompt and "return x" not in reference_prompt  # never the buggy code
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    s = result.selection
    assert (s.references, s.expected, s.met, s.rewritten) == (2, 4, 4, False)  # the same text twice: two answers
    assert [a.node for a in result.attempts][-3:] == ["reference"] * 3  # one fix left: nothing to score
    assert [a.outcome for a in result.attempts if a.node == "reference"] == ["passed", "failed", "passed"]


def test_a_reference_is_chosen_when_no_fix_behaves_as_the_references_agree():
    """Every fix keeps part of the bug (both pass the weak visible test); the references agree on abs, so the
    likeliest of them is the fix, kept whole (no minimizing back to what the visible test checks)."""
    answers = [WEAK, ALSO_WEAK, WEAK, ALSO_WEAK] + [REWRITE, REWRITE, RIGHT]
    result, _ = run(answers, Judge(), likelihoods={"abs(x)": -2.0, "if x < 0": -5.0}, references=3)
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    s = result.selection
    assert (s.rewritten, s.references, s.changed, s.scored) == (True, 3, True, 2)  # two texts scored


def test_a_lone_reference_and_the_original_agree_where_the_bug_does_not_show():
    """Only one reference passes the visible test. The original (`return x`) is wrong only on negative inputs;
    where it and the reference return the same (3, 0, 5), that is expected, and the only fix (`return min(x, 3)`)
    meets two of three: the reference takes its place (the visible test passes on the original, so its bug is
    narrow)."""
    capped = "```python\ndef absolute(x):\n    return min(x, 3)\n```"
    answers = [capped] * (1 + EXTRA_ANSWERS) + [REWRITE, WRONG, WRONG]
    result, _ = run(answers, Judge(), references=3, original_passes=True)
    assert "if x < 0:" in result.final_code
    s = result.selection
    assert (s.references, s.expected, s.met, s.rewritten, s.changed) == (1, 3, 3, True, True)


def test_where_the_original_passes_a_reference_that_repeats_it_gives_no_vote():
    """The visible test passes on the original (`return x`), so it is wrong somewhere. The fix and two of the
    references behave like it on every input of the judge: set aside. The one reference that differs is left."""
    like_original = "```python\ndef absolute(x):\n    return x + 0\n```"
    repeats = "```python\ndef absolute(x):\n    return x\n```"
    answers = [like_original] * (1 + EXTRA_ANSWERS) + [repeats, repeats, REWRITE]
    result, _ = run(answers, Judge(), references=3, original_passes=True)
    assert "if x < 0:" in result.final_code
    s = result.selection
    assert (s.references, s.set_aside, s.rewritten) == (3, 3, True)
    result, _ = run(answers, Judge(), references=3)  # not told the original is wrong: the two that agree decide
    assert "return x + 0" in result.final_code and result.selection.set_aside == 0


def test_references_that_disagree_leave_the_choice_to_the_likelihood():
    answers = [WEAK, WEAK, RIGHT, WEAK] + [RIGHT, ALSO_WEAK, WEAK]  # all pass the visible test; no input agreed
    result, _ = run(answers, Judge(own_inputs=(-2, 0)), likelihoods={"abs(x)": -9.0, "max(x, 0)": -1.0},
                    references=3)
    assert result.final_code == BUGGY.replace("return x", "return max(x, 0)")
    assert (result.selection.expected, result.selection.rewritten) == (0, False)


def test_without_references_nothing_more_is_asked():
    result, llm = run([WEAK, WEAK, RIGHT, WEAK], Judge(), likelihoods={"abs(x)": -9.0, "max(x, 0)": -1.0})
    assert len(llm.calls) == 1 + EXTRA_ANSWERS and result.selection.references == 0
    assert result.final_code == BUGGY.replace("return x", "return max(x, 0)")
