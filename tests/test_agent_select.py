"""Choosing among fixes that all pass weak tests (bot/agent/select.py), with the scripted model and a judge that
runs the candidates in this process."""
from __future__ import annotations

import json
from collections.abc import Sequence

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, TestOutcome, repair
from bot.agent.select import EXTRA_ANSWERS, choose
from bot.llm import ScriptedLLM

from .in_process import InProcessHarness

BUGGY = '''def absolute(x):
    """The absolute value of x."""
    return x
'''
# the only visible test: absolute(3) == 3, which the buggy function, a constant and the real fix all pass
WEAK = "```python\ndef absolute(x):\n    return 3\n```"
RIGHT = "```python\ndef absolute(x):\n    return abs(x)\n```"
ALSO_RIGHT = "```python\ndef absolute(x):\n    return x if x >= 0 else -x\n```"
WRONG = "```python\ndef absolute(x):\n    return x * x\n```"


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

    def __init__(self) -> None:
        self.asked: list[int] = []

    def signatures(self, sources: Sequence[str]) -> list[str]:
        self.asked.append(len(sources))
        return [json.dumps([_call(s, x) for x in (3, -2, 0, 5)]) for s in sources]


def run(answers: list[str], judge: Judge | None, **options) -> tuple:  # type: ignore[no-untyped-def]
    llm = ScriptedLLM(answers)
    ctx = AgentContext(llm=llm, harness=WeakTest(), target=Target("absolute", BUGGY),
                       briefing=Briefing("The visible tests pass, but the function is not what its docstring says."),
                       options=RepairOptions(**options), judge=judge)
    return repair(ctx), llm


def test_the_answer_given_most_often_wins_over_the_first_that_passed():
    result, llm = run([WEAK, RIGHT, ALSO_RIGHT, RIGHT.replace("abs(x)", "abs( x )")], Judge())
    # the first answer passes; three more are drawn: abs, an equivalent of it that behaves the same on every input,
    # and abs again (the same code): one vote against three, and of the three, abs changes the fewest lines
    assert len(llm.calls) == 1 + EXTRA_ANSWERS
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    s = result.selection
    assert (s.candidates, s.groups, s.votes, s.changed, s.drawn) == (3, 2, 3, True, EXTRA_ANSWERS)
    assert [a.node for a in result.attempts] == ["draft", "select", "select", "select"]
    assert all(a.outcome == "passed" for a in result.attempts)


def test_a_drawn_answer_that_fails_the_visible_tests_has_no_vote():
    result, _ = run([RIGHT, WRONG, WRONG, WEAK], Judge())  # abs and the constant, one vote each: a tie, the first
    assert result.final_code == BUGGY.replace("return x", "return abs(x)") and not result.selection.changed
    assert [a.outcome for a in result.attempts] == ["passed", "failed", "failed", "passed"]


def test_without_a_judge_the_first_fix_stands_and_nothing_more_is_asked():
    result, llm = run([WEAK, RIGHT], None)
    assert result.final_code == BUGGY.replace("return x", "return 3") and result.selection is None
    assert len(llm.calls) == 1


def test_the_search_alone_asks_no_model_for_votes():
    from bot.agent.search import SearchOptions

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


def test_a_drawn_answer_that_is_the_original_unchanged_has_no_vote():
    """The buggy function passes the examples of some tasks: the model handing it back must not out-vote a fix."""
    result, _ = run([RIGHT, "```python\ndef absolute(x):\n    return x\n```"] * 2, Judge())
    assert result.final_code == BUGGY.replace("return x", "return abs(x)")
    assert [a.outcome for a in result.attempts] == ["passed", "repeat", "passed", "repeat"]
