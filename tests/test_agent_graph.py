"""Every route of the reflection graph, driven by the scripted model and an in-process harness."""
from __future__ import annotations

import time
from dataclasses import replace

import pytest

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, TestOutcome, repair
from bot.llm import ScriptedLLM

from .in_process import InProcessHarness

BUGGY = '''def add(a, b):
    """Return the sum of a and b."""
    # keep this comment
    return a - b
'''
FIXED = "```python\ndef add(a, b):\n    return a + b\n```"
WRONG = "```python\ndef add(a, b):\n    return a * b\n```"


class AssertHarness(InProcessHarness):
    """Runs the candidate in-process against two asserts (the graph's unit tests need no sandbox)."""

    def __init__(self) -> None:
        self.checked: list[str] = []

    def check(self, function_source: str) -> TestOutcome:
        self.checked.append(function_source)
        scope: dict = {}
        exec(function_source, scope)
        for args, want in (((2, 3), 5), ((1, 1), 2)):
            got = scope["add"](*args)
            if got != want:
                return TestOutcome(False, f"assert add{args} == {want}\nE  assert {got} == {want}")
        return TestOutcome(True, "")


def run(answers: list[str], **budgets) -> tuple:  # type: ignore[no-untyped-def]
    llm, harness = ScriptedLLM(answers), AssertHarness()
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5", tests="assert add(2, 3) == 5"),
                       options=RepairOptions(budgets=Budgets(**budgets)))
    return repair(ctx), llm, harness


def test_success_on_draft_keeps_the_original_text():
    result, llm, _ = run([FIXED])
    assert result.status == "fixed" and result.stop_reason == "passed"
    assert result.final_code == BUGGY.replace("a - b", "a + b")  # docstring and comment restored
    assert result.changed_lines == 1
    [attempt] = result.attempts
    assert (attempt.node, attempt.outcome, attempt.temperature, attempt.changed_lines) == ("draft", "passed", 0.0, 1)
    assert "assert -1 == 5" in llm.calls[0][-1].content and "def add(a, b):" in llm.calls[0][-1].content


def test_reflect_then_success_shows_the_latest_failure():
    result, llm, _ = run([WRONG, FIXED])
    assert result.status == "fixed"
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "failed"), ("reflect", "passed")]
    prompt = llm.calls[1][-1].content
    assert "return a * b" in prompt and "assert 6 == 5" in prompt
    assert result.attempts[1].temperature > result.attempts[0].temperature  # rising schedule


def test_a_revision_is_shown_the_attempts_change_not_its_code_whole():
    """A failed attempt shown whole is what a small model answered again; the change it made is shown instead,
    as words for one line, as a diff for more."""
    two_lines = "```python\ndef add(a, b):\n    c = a * b\n    return c\n```"
    result, llm, _ = run([two_lines, FIXED])
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "failed"), ("reflect", "passed")]
    prompt = llm.calls[1][-1].content
    assert "The last attempt made this change to the code above and still fails:" in prompt
    assert "```diff\n-    return a - b\n+    c = a * b\n+    return c\n```" in prompt
    assert "assert 6 == 5" in prompt and prompt.count("def add(a, b):") == 1  # the task's code only
    _, llm, _ = run([WRONG, FIXED])
    assert "The last attempt changed `return a - b` -> `return a * b` and still fails" in llm.calls[1][-1].content


def test_repeating_the_buggy_code_goes_to_the_repeat_node():
    """After an unchanged answer the model is asked which line is wrong (a short answer), then for the fix with
    that line pointed at; the question's cost joins the repeat's attempt."""
    result, llm, harness = run([f"```python\n{BUGGY}```", "```python\nreturn a - b\n```", FIXED])
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "repeat"), ("repeat", "passed")]
    assert len(harness.checked) == 1, "a repeat is never sent to the sandbox"
    assert "Which line of the code is wrong?" in llm.calls[1][-1].content
    asked = llm.calls[2][-1].content
    assert "did not change the function: it is still the original (buggy) function" in asked
    assert "The bug is probably in this line:\n    return a - b\n" in asked and "does not fix it" not in asked
    assert result.attempts[1].temperature >= 0.4  # repeat raises the temperature
    assert result.attempts[1].completion_tokens == sum(len(a.split()) for a in llm.answers[1:3])
    assert [a.pointed for a in result.attempts] == ["", "return a - b"]  # the report says where it was sent


def test_a_line_named_before_is_not_named_again():
    """Each unchanged answer asks for a line; the lines already pointed at are said to be wrong guesses and are
    never pointed at twice; a quote that is no line of the code points at nothing."""
    unchanged = f"```python\n{BUGGY}```"
    result, llm, _ = run([unchanged, "return a - b", unchanged, "return a - b", unchanged, "x = 1", FIXED])
    assert [a.outcome for a in result.attempts] == ["repeat", "repeat", "repeat", "passed"]
    assert [a.pointed for a in result.attempts] == ["", "return a - b", "", ""]  # an untested answer keeps it too
    second_question, second_fix = llm.calls[3][-1].content, llm.calls[4][-1].content
    assert "Changing these lines did not fix it, so the bug is elsewhere:\n    return a - b" in second_question
    assert "The bug is probably in this line" not in second_fix and "line by line" in second_fix
    assert "The bug is probably in this line" not in llm.calls[6][-1].content


def test_repeating_an_earlier_attempt_is_caught_by_ast_hash():
    reformatted = "```python\ndef add(a,b):\n    return (a*b)  # same program\n```"
    result, llm, _ = run([WRONG, reformatted, FIXED])
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "failed"), ("reflect", "repeat"),
                                                              ("repeat", "passed")]
    assert "the same code as attempt 1" in llm.calls[2][-1].content


def test_unparsable_answer_goes_to_the_syntax_node():
    result, llm, _ = run(["```python\ndef add(a, b)\n    return a + b\n```", FIXED])
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "syntax"), ("syntax", "passed")]
    assert "expected ':'" in llm.calls[1][-1].content


def test_wrong_signature_goes_to_the_syntax_node():
    result, llm, _ = run(["```python\ndef add(x, y, z=0):\n    return x + y\n```", FIXED])
    assert [a.outcome for a in result.attempts] == ["signature", "passed"]
    assert "keep the parameters exactly as they are: add(a, b)" in llm.calls[1][-1].content


def test_prose_without_code_is_a_syntax_route():
    result, llm, _ = run(["I think the bug is the minus sign.", FIXED])
    assert [a.outcome for a in result.attempts] == ["syntax", "passed"]


def test_a_change_that_looks_like_a_wrong_fix_is_refused_and_the_model_told_why():
    swallowing = "```python\ndef add(a, b):\n    try:\n        return a * b\n    except TypeError:\n        pass\n```"
    special = "```python\ndef add(a, b):\n    if a == 2:\n        return 5\n    return a - b\n```"
    result, llm, harness = run([swallowing, special, FIXED])
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "refused"), ("syntax", "refused"),
                                                              ("syntax", "passed")]
    assert len(harness.checked) == 1, "a refused change is never sent to the sandbox"
    assert "catches an exception and does nothing with it" in llm.calls[1][-1].content
    assert "a value from the failing test" in llm.calls[2][-1].content


def test_iteration_budget_stops_the_loop():
    result, llm, _ = run([WRONG, "```python\ndef add(a, b):\n    return b - a\n```", FIXED], iterations=2)
    assert result.status == "not_fixed" and result.stop_reason == "iterations" and result.final_code is None
    assert len(result.attempts) == 2 and len(llm.calls) == 2


def test_repeats_are_not_charged_to_the_iteration_budget_but_the_calls_stay_bounded():
    result, llm, harness = run([WRONG, WRONG, WRONG, FIXED], iterations=2)
    assert result.status == "fixed" and [a.outcome for a in result.attempts] == ["failed", "repeat", "repeat",
                                                                                 "passed"]
    assert len(harness.checked) == 2  # two distinct candidates: what the budget of 2 buys
    result, llm, _ = run([WRONG] * 6 + [FIXED], iterations=2)
    assert result.status == "not_fixed" and result.stop_reason == "iterations" and len(llm.calls) == 4


def test_answers_that_leave_the_function_unchanged_give_the_target_up():
    unchanged = f"```python\n{BUGGY}```"
    result, llm, harness = run([unchanged, "return a - b", WRONG, unchanged, FIXED], unchanged=2)
    assert result.status == "not_fixed" and result.stop_reason == "unchanged"
    assert [a.outcome for a in result.attempts] == ["repeat", "failed", "repeat"]  # not in a row: counted in all
    assert len(llm.calls) == 4 and len(harness.checked) == 1  # only WRONG: an unchanged answer is never run
    # a repeat of an earlier attempt is not the model finding nothing to mend: it does not count
    result, llm, _ = run([WRONG, WRONG, FIXED], unchanged=1)
    assert result.status == "fixed" and [a.outcome for a in result.attempts] == ["failed", "repeat", "passed"]
    # without the budget (HumanEvalFix's one target) the model is asked again
    result, _, _ = run([unchanged, unchanged, FIXED])
    assert result.status == "fixed"


def test_token_budget_stops_the_loop():
    result, llm, _ = run([WRONG, FIXED], tokens=10)
    assert result.status == "not_fixed" and result.stop_reason == "tokens" and len(llm.calls) == 1


def test_time_budget_stops_the_loop():
    llm, harness = ScriptedLLM([WRONG, FIXED]), AssertHarness()
    slow_check = harness.check
    harness.check = lambda source: (time.sleep(0.3), slow_check(source))[1]  # type: ignore[method-assign]
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY), briefing=Briefing("fails"),
                       options=RepairOptions(budgets=Budgets(wall_s=0.2)))
    result = repair(ctx)
    assert result.stop_reason == "time" and len(llm.calls) == 1


def test_a_zero_budget_makes_no_model_call():
    for budgets in ({"wall_s": 0.0}, {"iterations": 0}):
        result, llm, _ = run([FIXED], **budgets)
        assert result.status == "not_fixed" and llm.calls == [] and result.attempts == ()


def test_syntax_loop_respects_the_budget():
    result, llm, _ = run(["no code"] * 5, iterations=3)
    assert result.stop_reason == "iterations" and [a.outcome for a in result.attempts] == ["syntax"] * 3


def test_every_attempt_is_recorded_with_usage():
    result, _, _ = run([WRONG, FIXED])
    for attempt in result.attempts:
        assert attempt.prompt_tokens > 0 and attempt.completion_tokens > 0 and attempt.latency_s >= 0
    assert result.prompt_tokens == sum(a.prompt_tokens for a in result.attempts)


@pytest.mark.parametrize("schedule,first,second", [("rising", 0.0, 0.15), ("falling", 0.8, 0.65)])
def test_temperature_schedules(schedule, first, second):
    llm, harness = ScriptedLLM([WRONG, FIXED]), AssertHarness()
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY), briefing=Briefing("fails"),
                       options=RepairOptions(schedule=schedule))
    result = repair(ctx)
    assert [a.temperature for a in result.attempts] == [first, second]


def test_mermaid_shows_every_node():
    from bot.agent import mermaid

    text = mermaid()
    for node in ("draft", "test", "reflect", "repeat", "syntax"):
        assert f"{node}({node})" in text


class CachedPrefix(ScriptedLLM):
    """Reports all but the last 5 prompt tokens as cached, as llama.cpp does for a conversation's stable prefix."""

    def complete(self, messages, **options):  # type: ignore[no-untyped-def]
        done = super().complete(messages, **options)
        return replace(done, prompt_tokens=done.prompt_tokens + 1000, cached_tokens=done.prompt_tokens + 995)


def test_the_token_budget_counts_what_the_model_processed_not_its_cached_prefix():
    llm, harness = CachedPrefix([WRONG, WRONG.replace("*", "//"), FIXED]), AssertHarness()
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY), briefing=Briefing("fails"),
                       options=RepairOptions(budgets=Budgets(tokens=1000)))
    result = repair(ctx)  # each call's prompt is over 1000 tokens, but only its last 5 and the answer are new work
    assert result.status == "fixed" and len(llm.calls) == 3
    assert result.prompt_tokens > 3000  # the record keeps the whole prompts


SPAN = '''def span(xs):
    """The largest item minus the smallest."""
    low = max(xs)
    high = max(xs)
    return high - low
'''
SPAN_FIXED = "```python\ndef span(xs):\n    low = min(xs)\n    high = max(xs)\n    return (high - low)\n```"


class WeakHarness(InProcessHarness):
    """One assert that the buggy `span` passes too: it cannot say which of a fix's hunks is needed."""

    def check(self, function_source: str) -> TestOutcome:
        scope: dict = {}
        exec(function_source, scope)
        return TestOutcome(scope["span"]([1, 1]) == 0, "")


@pytest.mark.parametrize("original_passes", [False, True])
def test_a_fix_is_minimized_unless_the_tests_pass_on_the_original(original_passes):
    ctx = AgentContext(llm=ScriptedLLM([SPAN_FIXED]), harness=WeakHarness(), target=Target("span", SPAN),
                       briefing=Briefing("the tests pass", tests="assert span([1, 1]) == 0"),
                       original_passes=original_passes)
    result = repair(ctx)
    assert result.status == "fixed"
    # minimized against tests the original passes, the fix's own change goes back first and the bug stays
    assert ("low = min(xs)" in result.final_code) == original_passes
    assert result.changed_lines == (2 if original_passes else 1)
