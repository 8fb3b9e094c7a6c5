"""A target of two functions (a caller and the helper it calls, repaired together): extraction of each by name
from the model's answer, the signature check and the faithful merge per function, the prompt, the mutants, and
the graph end to end with a scripted model and an in-process harness."""
from __future__ import annotations

import json

import pytest

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, TestOutcome, repair
from bot.agent.options import SearchOptions
from bot.agent.search.mutate import mutants
from bot.agent.source.code import (
    changed_lines,
    code_hash,
    extract_function,
    signature_problem,
    split_docstring,
    target_kind,
)
from bot.agent.source.faithful import faithful
from bot.agent.source.parts import function_names, function_parts, join_parts
from bot.agent.state import ORIGINAL_SEEN
from bot.agent.steps import prompts
from bot.llm import ScriptedLLM

from .in_process import InProcessHarness

CALLER = '''\
def percent(part, whole, digits=1):
    """part as a percentage of whole, rounded to `digits` decimals; 0.0 when whole is 0."""
    return round(ratio(whole, part) * 100, digits)
'''
HELPER = '''\
def ratio(a, b):
    """a divided by b; 0.0 when b is 0."""
    if b == 0:
        return 0.0
    # plain division
    return a // b
'''
PAIR = join_parts([CALLER, HELPER])
FIXED = PAIR.replace("ratio(whole, part)", "ratio(part, whole)").replace("a // b", "a / b")
CALLER_ANSWER = ("```python\ndef percent(part, whole, digits=1):\n"
                 "    return round(ratio(part, whole) * 100, digits)\n```")
HELPER_ANSWER = "```python\ndef ratio(a, b):\n    if b == 0:\n        return 0.0\n    return a / b\n```"
NAME = "percent, ratio"


def test_the_pair_is_both_functions_caller_first():
    assert PAIR == CALLER + "\n\n" + HELPER
    assert function_parts(PAIR) == [("percent", CALLER), ("ratio", HELPER)]
    assert function_names(PAIR) == ("percent", "ratio") and target_kind(PAIR) == "functions"
    assert function_parts(CALLER) == [] and target_kind(CALLER) == "function"
    assert function_parts(PAIR + "X = 1\n") == []  # anything but functions: not a pair


@pytest.mark.parametrize("answer", [
    f"Two fixes:\n{CALLER_ANSWER}\nand the helper:\n{HELPER_ANSWER}",
    f"{HELPER_ANSWER}\n{CALLER_ANSWER}",  # in the other order
    "```python\n" + CALLER_ANSWER.split("\n", 1)[1].rsplit("```", 1)[0] + "\n\n"
    + HELPER_ANSWER.split("\n", 1)[1].rsplit("```", 1)[0] + "```",  # both in one block
    "```python\nimport math\n\nclass Stats:\n    def ratio(self, a, b):\n        return 1\n```\n" + CALLER_ANSWER,
])
def test_each_function_is_extracted_by_its_name_and_made_faithful(answer):
    got = extract_function(answer, NAME, PAIR)
    assert got.problem is None and got.code is not None
    if "class Stats" in answer:  # a method of that name is the model's ratio: its signature is wrong
        assert signature_problem(got.code, PAIR, NAME) == "keep the parameters exactly as they are: ratio(a, b)"
        return
    assert signature_problem(got.code, PAIR, NAME) is None
    merged = faithful(got.code, PAIR)
    assert merged == FIXED  # docstrings and the helper's comment back, byte for byte
    assert changed_lines(PAIR, merged) == 2


def test_a_function_the_answer_leaves_out_stays_as_it_was():
    got = extract_function(CALLER_ANSWER, NAME, PAIR)
    assert got.problem is None
    assert faithful(got.code, PAIR) == PAIR.replace("ratio(whole, part)", "ratio(part, whole)")


def test_unusable_answers_say_why():
    broken = "```python\ndef ratio(a, b)\n    return a / b\n```\n" + CALLER_ANSWER
    got = extract_function(broken, NAME, PAIR)
    assert got.problem == "syntax" and "line 1" in got.detail  # never silently the original helper
    got = extract_function("```python\ndef mean(xs):\n    return 1\n```", NAME, PAIR)
    assert got.problem == "missing" and "`percent` and `ratio`" in got.detail
    wrong = extract_function(CALLER_ANSWER.replace("digits=1", "digits"), NAME, PAIR)
    assert "percent(part, whole, digits=1)" in signature_problem(wrong.code, PAIR, NAME)


def test_docstrings_are_shown_apart_for_each_function():
    code, doc = split_docstring(PAIR)
    assert '"""' not in code and function_names(code) == ("percent", "ratio")
    assert doc == "part as a percentage of whole, rounded to `digits` decimals; 0.0 when whole is 0.\n\n" \
                  "a divided by b; 0.0 when b is 0."


def test_the_prompt_names_both_functions_and_asks_for_two_blocks():
    target = Target(NAME, PAIR)
    system, user = prompts.draft(target, Briefing("E   assert 400.0 == 25.0", tests="assert percent(1, 4) == 25.0"))
    assert "split between two Python functions" in system.content
    text = user.content
    assert "The function `percent` and the helper `ratio` it calls each have a bug" in text
    assert "What `ratio` should do:\n    a divided by b; 0.0 when b is 0." in text
    assert "The code of `percent`:\n```python\ndef percent(part, whole, digits=1):\n    return round(" in text
    assert text.rstrip().endswith("Reply with the corrected functions `percent` and `ratio`, each whole in its "
                                  "own ```python block.")
    again = prompts.repeat(target, Briefing("x"), ORIGINAL_SEEN, "E   assert 400.0 == 25.0", [])
    assert "follow it through `percent` into `ratio`" in again[-1].content


def test_mutants_edit_one_function_at_a_time():
    found = mutants(PAIR, NAME)
    assert found and all(function_names(m.source) == ("percent", "ratio") for m in found)
    edited = {name for m in found for (name, text), (_, old) in zip(function_parts(m.source), function_parts(PAIR))
              if text != old}
    assert edited == {"percent", "ratio"}
    assert all(sum(a != b for (_, a), (_, b) in zip(function_parts(m.source), function_parts(PAIR))) == 1
               for m in found)
    assert len({code_hash(m.source) for m in found}) == len(found)


class PercentHarness(InProcessHarness):
    """percent(1, 4) == 25.0 and ratio's own cases, run in-process on the pair's code."""

    def __init__(self) -> None:
        self.checked: list[str] = []

    def check(self, source: str) -> TestOutcome:
        self.checked.append(source)
        scope: dict = {}
        exec(source, scope)
        for call, want in (("percent(1, 4)", 25.0), ("percent(3, 0)", 0.0), ("ratio(6, 3)", 2), ("ratio(1, 0)", 0)):
            try:
                got = eval(call, scope)
            except Exception as exc:  # a mutant may crash
                return TestOutcome(False, f"E   {exc!r}")
            if got != want:
                return TestOutcome(False, f"    assert {call} == {want}\nE   assert {got} == {want}")
        return TestOutcome(True, "")


def _repair(answers, search=None):  # type: ignore[no-untyped-def]
    llm, harness = ScriptedLLM(answers), PercentHarness()
    ctx = AgentContext(llm=llm, harness=harness, target=Target(NAME, PAIR),
                       briefing=Briefing("    assert percent(1, 4) == 25.0\nE   assert 400.0 == 25.0"),
                       options=RepairOptions(budgets=Budgets(iterations=3), search=search))
    return repair(ctx), llm, harness


def test_the_graph_repairs_both_functions_from_one_answer():
    result, llm, harness = _repair([f"{CALLER_ANSWER}\n{HELPER_ANSWER}"])
    assert result.status == "fixed" and result.final_code == FIXED and result.changed_lines == 2
    assert len(llm.calls) == 1 and harness.checked[0] == FIXED


def test_one_function_fixed_then_both():
    result, llm, _ = _repair([CALLER_ANSWER, f"{CALLER_ANSWER}\n{HELPER_ANSWER}"])
    assert result.status == "fixed" and result.final_code == FIXED
    assert [a.outcome for a in result.attempts] == ["failed", "passed"]
    assert "ratio(part, whole)" in llm.calls[1][-1].content and "one in each function" in llm.calls[1][-1].content


def test_the_search_completes_an_answer_that_fixed_one_function():
    """The model fixes the caller only; one edit of that candidate (in the helper) is the fix: no second call."""
    result, llm, _ = _repair([CALLER_ANSWER], search=SearchOptions())
    assert result.status == "fixed" and result.final_code == FIXED and len(llm.calls) == 1
    assert [(s.base, s.fixed) for s in result.searches] == [(prompts.ORIGINAL, False), ("attempt 1", True)]


def test_the_other_designs_repair_a_pair_too():
    """thought-patch edits the numbered lines of both functions (without their docstrings); tool-call sends both."""
    edits = json.dumps({"edits": [{"op": "replace", "start": 2, "end": 2,
                                   "code": "    return round(ratio(part, whole) * 100, digits)"},
                                  {"op": "replace", "start": 9, "end": 9, "code": "    return a / b"}]})
    call = {"tool_call": {"name": "run_tests", "arguments": {
        "explanation": "swapped arguments, floor division",
        "code": (CALLER_ANSWER.strip("`").removeprefix("python\n") + "\n"
                 + HELPER_ANSWER.strip("`").removeprefix("python\n"))}}}
    for agent, answers in (("thought-patch", ["Line 2 swaps the arguments and line 9 floors.", edits]),
                           ("tool-call", [call])):
        llm, harness = ScriptedLLM(answers), PercentHarness()
        ctx = AgentContext(llm=llm, harness=harness, target=Target(NAME, PAIR),
                           briefing=Briefing("E   assert 400.0 == 25.0"),
                           options=RepairOptions(agent=agent, budgets=Budgets(iterations=2)))
        result = repair(ctx)
        assert result.status == "fixed" and result.final_code == FIXED, agent
