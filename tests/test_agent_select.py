"""Choosing among fixes that all pass weak tests (bot/agent/choose/select.py), with the scripted model and a judge that
runs the candidates in this process."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, TestOutcome, repair
from bot.agent.choose.expectations import agrees, parse_asserts
from bot.agent.choose.select import EXTRA_ANSWERS, choose
from bot.llm import ScriptedLLM
from bot.llm.scripted import ScriptedScorer

from .in_process import InProcessHarness

BUGGY = '''def absolute(x):
    """The absolute value of x."""
    return x
'''
# the only visible test: absolute(3) == 3, which the buggy function, a wrong clamp and the real fix all pass
WEAK = "```python\ndef absolute(x):\n    return max(x, 0)\n```"
RIGHT = "```python\ndef absolute(x):\n    return abs(x)\n```"
ALSO_RIGHT = "```python\ndef absolute(x):\n    return x if x >= 0 else -x\n```"
WRONG = "```python\ndef absolute(x):\n    return x * x\n```"
NO_ASSERTS = "I cannot write tests for this."  # the model's asserts answer, when it writes none


def _call(source: str, x: int) -> str:
    namespace: dict = {}
    exec(source, namespace)
    return repr(namespace["absolute"](x))


class WeakTest(InProcessHarness):
    def check(self, function_source: str) -> TestOutcome:
        passed = _call(function_source, 3) == "3"
        return TestOutcome(passed, "" if passed else "E   assert absolute(3) == 3")


class Judge:
    """Runs each candidate on inputs beyond the visible test's."""

    def __init__(self, own_inputs: Sequence[int] = (3, -2, 0, 5)) -> None:
        self.asked: list[int] = []
        self.own_inputs = own_inputs  # none: a task with no visible test, whose calls the judge varies

    def outputs(self, sources: Sequence[str], inputs: Sequence[tuple[Any, ...]] | None = None) -> list[list[str]]:
        self.asked.append(len(sources))
        xs = self.own_inputs if inputs is None else [args[0] for args in inputs]
        return [[_call(s, x) for x in xs] for s in sources]


def run(answers: list[str], judge: Judge | None, likelihoods: dict[str, float] | None = None, buggy: str = BUGGY,
        original_passes: bool = False, **options) -> tuple:  # type: ignore[no-untyped-def]
    llm = ScriptedLLM(answers) if likelihoods is None else ScriptedScorer(answers, likelihoods=likelihoods)
    ctx = AgentContext(llm=llm, harness=WeakTest(), target=Target("absolute", buggy),
                       briefing=Briefing("The visible tests pass, but the function is not what its docstring says."),
                       options=RepairOptions(**options), judge=judge, original_passes=original_passes)
    return repair(ctx), llm


def test_the_answer_given_most_often_wins_over_the_first_that_passed():
    result, llm = run([WEAK, RIGHT, ALSO_RIGHT, RIGHT.replace("abs(x)", "abs( x )"), NO_ASSERTS], Judge())
    # the first answer passes; three more are drawn: abs, an equivalent of it that behaves the same on every input,
    # and abs again (the same code): one vote against three, and of the three, abs changes the fewest lines
    assert len(llm.calls) == 1 + EXTRA_ANSWERS + 1  # and the asserts, of which there are none
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    s = result.selection
    assert (s.candidates, s.groups, s.votes, s.changed, s.drawn, s.asserts) == (3, 2, 3, True, EXTRA_ANSWERS, 0)
    assert [a.node for a in result.attempts] == ["draft", "select", "select", "select", "asserts"]
    assert [a.outcome for a in result.attempts] == ["passed"] * 4 + ["written"]
    assert "What it should do:" in llm.calls[-1][1].content and "return x" not in llm.calls[-1][1].content


def test_candidates_that_behave_alike_need_no_asserts():
    result, llm = run([RIGHT, ALSO_RIGHT, RIGHT, ALSO_RIGHT], Judge())  # one behaviour: no fifth call
    assert len(llm.calls) == 1 + EXTRA_ANSWERS and result.selection.groups == 1 and result.selection.asserts == 0
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")


def test_a_judge_without_inputs_of_its_own_asks_the_model_s_asserts():
    """No visible test to vary: the candidates cannot differ on the judge's inputs, so the asserts' inputs decide
    (the constant's three votes lose to abs, which passes both asserts)."""
    asserts = "```python\nassert absolute(-2) == 2\nassert absolute(4) == 4\n```"
    result, llm = run([WEAK, WEAK, RIGHT, WEAK, asserts], Judge(own_inputs=()))
    assert len(llm.calls) == 1 + EXTRA_ANSWERS + 1
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    s = result.selection
    assert (s.candidates, s.groups, s.votes, s.asserts, s.agreed) == (2, 2, 1, 2, 2)


def test_the_model_s_asserts_outweigh_the_votes():
    """Three answers of `return max(x, 0)` against one of abs: the asserts the model writes from the docstring (one
    of them wrong, which neither passes) choose abs."""
    asserts = "```python\nassert absolute(-2) == 2\nassert absolute(0) == 0\nassert absolute(5) == 6\n```"
    result, llm = run([WEAK, WEAK, RIGHT, WEAK, asserts], Judge())
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    s = result.selection
    assert (s.candidates, s.votes, s.changed, s.asserts, s.agreed) == (2, 1, True, 3, 2)


def test_a_drawn_answer_that_fails_the_visible_tests_has_no_vote():
    # abs and the constant, one vote each: a tie, the first
    result, _ = run([RIGHT, WRONG, WRONG, WEAK, NO_ASSERTS], Judge())
    assert result.final_code == BUGGY.replace("return x", "return abs(x)") and not result.selection.changed
    assert [a.outcome for a in result.attempts] == ["passed", "failed", "failed", "passed", "written"]


def test_without_a_judge_the_first_fix_stands_and_nothing_more_is_asked():
    result, llm = run([WEAK, RIGHT], None)
    assert result.final_code == BUGGY.replace("return x", "return max(x, 0)") and result.selection is None
    assert len(llm.calls) == 1


def test_the_search_alone_asks_no_model_for_votes():
    from bot.agent.options import SearchOptions

    judge = Judge()
    result, llm = run([], judge, budgets=Budgets(iterations=0), search=SearchOptions(mutants=50))
    assert llm.calls == [] and result.selection is not None and result.selection.drawn == 0


def test_choose_weighs_votes_then_changed_lines():
    original = "def f(x):\n    return x\n"
    one = "def f(x):\n    return x + 1\n"
    two = "def f(x):\n    y = x\n    return y + 1\n"
    other = "def f(x):\n    return x - 1\n"
    assert choose(original, [one, other], [1, 2], ["a", "b"]) == (1, 2)  # more votes
    assert choose(original, [two, other], [1, 1], ["a", "b"]) == (1, 1)  # a tie: fewer changed lines
    assert choose(original, [two, one, other], [1, 1, 1], ["a", "a", "b"]) == (1, 2)  # a group's votes add up
    assert choose(original, [one, other], [5, 1], ["a", "b"], [0, 1]) == (1, 1)  # an assert passed beats votes
    # the likeliest code wins over asserts and votes; on a tie, the fewer changed lines
    assert choose(original, [one, other], [5, 1], ["a", "b"], [1, 0], [-9.0, -2.0]) == (1, 1)
    assert choose(original, [two, one, other], [1, 1, 3], ["a", "a", "b"], [], [-2.0, -2.0, -3.0]) == (1, 2)


def test_a_model_that_scores_texts_chooses_the_likeliest_candidate_and_writes_no_asserts():
    """Three answers of `return max(x, 0)` against one of abs: the model finds abs the likelier body after the
    docstring."""
    result, llm = run([WEAK, WEAK, RIGHT, WEAK], Judge(), likelihoods={"abs(x)": -3.0, "max(x, 0)": -7.0})
    assert len(llm.calls) == 1 + EXTRA_ANSWERS  # no asserts asked
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    s = result.selection
    assert (s.candidates, s.groups, s.votes, s.changed, s.asserts, s.scored) == (2, 2, 1, True, 0, 2)
    assert [a.node for a in result.attempts][-1] == "score" and result.attempts[-1].outcome == "scored"
    ((prefix, texts),) = llm.scored  # one prefix: the docstring, then the `def` line both candidates share
    assert prefix == "# The absolute value of x.\n```python\ndef absolute(x):\n"
    assert texts == ["    return max(x, 0)\n```", "    return abs(x)\n```"]


def test_every_passing_mutant_of_the_search_is_a_candidate():
    """The search finds three mutants that pass the weak test and takes the first (`return x`); all three join the
    vote with the answers drawn for it, and the likeliest (not the first) is the fix."""
    from bot.agent.options import SearchOptions

    buggy = BUGGY.replace("return x", "return -x")  # fails absolute(3) == 3
    result, llm = run([WEAK] * EXTRA_ANSWERS, Judge(), likelihoods={"abs(": 0.0}, buggy=buggy,
                      search=SearchOptions(mutants=400))
    assert result.searches[0].fixed and result.searches[0].edit == "line 3: `-x` -> `x`"
    assert len(llm.calls) == EXTRA_ANSWERS
    ((_, texts),) = llm.scored
    assert sorted(texts) == sorted(f"    return {body}\n```" for body in ("max(x, 0)", "x", "-(-x)", "abs(-x)"))
    assert result.final_code == buggy.replace("return -x", "return abs(-x)")
    assert (result.selection.candidates, result.selection.scored, result.selection.changed) == (4, 4, True)


def test_a_drawn_answer_that_is_the_original_unchanged_has_no_vote():
    """The buggy function passes the examples of some tasks: the model handing it back must not out-vote a fix."""
    result, _ = run([RIGHT, "```python\ndef absolute(x):\n    return x\n```"] * 2, Judge())
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    assert [a.outcome for a in result.attempts] == ["passed", "repeat", "passed", "repeat"]


def test_the_asserts_are_read_one_line_at_a_time():
    text = """Here they are:
```python
assert f([1, 2], 3) == 4
assert f('a')
assert not f('b')
assert abs(f(1.0) - 2) < 1e-6
assert f(x) == 3
assert f([1, 2], 3) == 5
assert f(2) == [1, 2] and more(
assert candidate(7) is None
```"""
    assert [(e.args, e.expected) for e in parse_asserts(text, "f")] == [
        (([1, 2], 3), 4), (("a",), True), (("b",), False), ((7,), None)]  # a second answer for an input: the first
    assert parse_asserts("assert f(1) == 2\nassert f(2) == 3", "f")[1].expected == 3  # no code block: the text


def test_an_output_agrees_as_the_assert_s_equality_would():
    assert agrees("4", 4) and agrees("4", 4.0) and agrees("0.30000000000000004", 0.3) and agrees("True", 1)
    assert agrees("(1, 2)", [1, 2]) and agrees("'a'", "a") and not agrees("'a'", "b")
    assert not agrees("<object at 0x1>", 3) and not agrees("!ValueError", 3) and not agrees("timeout", "timeout ")


def test_without_a_judge_the_likeliest_passing_mutant_is_kept_when_asked():
    """`fixbot fix --choose likeliest`: no judge and no model answer (the search alone); the searches' passing
    mutants are scored and the likeliest, not the first, is the fix."""
    from bot.agent.options import SearchOptions

    buggy = BUGGY.replace("return x", "return -x")
    result, llm = run([], None, likelihoods={"abs(": 0.0}, buggy=buggy, budgets=Budgets(iterations=0),
                      search=SearchOptions(mutants=400), choose="likeliest")
    assert llm.calls == [] and len(llm.scored) == 1
    assert result.final_code == buggy.replace("return -x", "return abs(-x)")
    assert (result.selection.candidates, result.selection.scored, result.selection.changed) == (3, 3, True)
    assert result.attempts[-1].node == "score" and result.attempts[-1].feedback.endswith("replaces the first found")
    # the default keeps the first, and scores nothing
    first, llm = run([], None, likelihoods={"abs(": 0.0}, buggy=buggy, budgets=Budgets(iterations=0),
                     search=SearchOptions(mutants=400))
    assert first.final_code == buggy.replace("return -x", "return x") and llm.scored == [] and first.selection is None


def test_a_model_that_cannot_score_keeps_the_first_fix():
    from bot.agent.options import SearchOptions

    buggy = BUGGY.replace("return x", "return -x")
    result, llm = run([], None, buggy=buggy, budgets=Budgets(iterations=0), search=SearchOptions(mutants=400),
                      choose="likeliest")
    assert result.final_code == buggy.replace("return -x", "return x") and result.selection is None
    assert [a.node for a in result.attempts] == []
