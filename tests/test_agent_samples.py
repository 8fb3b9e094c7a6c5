"""Several answers per model call (`RepairOptions.samples`): every route of reflect's samples and of thought-patch's
plans, with the scripted model."""
from __future__ import annotations

import json

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, TestOutcome, repair
from bot.agent.options import SAMPLE_TEMPERATURE
from bot.llm import Message, ScriptedLLM

from .test_agent_graph import BUGGY, FIXED, WRONG, AssertHarness

ZERO = "```python\ndef add(a, b):\n    return a - 2 * b\n```"  # another wrong answer
BROKEN = "```python\ndef add(a, b):\n    return (a +\n```"
TWO_LINES = "```python\ndef add(a, b):\n    s = a + b\n    return s\n```"


class BatchHarness(AssertHarness):
    """Counts batches: the samples of one call must reach the sandbox together."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def check_many(self, sources: list[str]) -> list[TestOutcome]:
        self.batches.append(len(sources))
        return [self.check(s) for s in sources]


class SeenOptions(ScriptedLLM):
    def __init__(self, answers: list[str]) -> None:
        super().__init__(answers)
        self.options: list[tuple[float, int | None]] = []

    def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None):  # type: ignore[no-untyped-def]
        self.options.append((temperature, seed))
        return super().complete(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)


def run(answers: list[str], samples: int = 3, **budgets):  # type: ignore[no-untyped-def]
    llm, harness = SeenOptions(answers), BatchHarness()
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5"),
                       options=RepairOptions(budgets=Budgets(**budgets), samples=samples))
    return repair(ctx), llm, harness


def test_a_passing_sample_wins_in_the_first_batch_and_counts_as_one_iteration():
    result, llm, harness = run([WRONG, ZERO, FIXED])
    assert result.status == "fixed" and result.final_code == BUGGY.replace("a - b", "a + b")
    assert harness.batches == [3]  # the three answers, one sandbox batch
    assert [(a.iteration, a.node, a.outcome) for a in result.attempts] == [
        (1, "sample", "failed"), (1, "sample", "passed"), (1, "draft", "failed")]
    assert result.iterations == 1
    assert llm.calls[0] == llm.calls[1] == llm.calls[2]  # the same prompt: llama.cpp reuses its cache
    temps, seeds = zip(*llm.options)
    assert temps == (0.0, SAMPLE_TEMPERATURE, SAMPLE_TEMPERATURE) and len(set(seeds)) == 3


def test_of_several_passing_answers_the_fewest_changed_lines_wins():
    result, _, _ = run([TWO_LINES, FIXED], samples=2)  # the first answer passes too, but changes two lines
    assert result.final_code == BUGGY.replace("a - b", "a + b") and result.changed_lines == 1


def test_of_several_passing_answers_the_one_more_answers_agree_on_wins_before_the_smallest():
    result, _, harness = run([FIXED, TWO_LINES, TWO_LINES])  # two of three answers wrote the same code
    assert harness.batches == [2]  # the agreeing answer is a vote, not a second candidate
    assert "s = a + b" in (result.final_code or "") and result.changed_lines == 2


def test_samples_that_repeat_or_do_not_parse_are_dropped_but_their_tokens_count():
    result, _, harness = run([WRONG, WRONG, BROKEN, FIXED, WRONG, ZERO], iterations=2)
    assert harness.batches == [2]  # the repeats and the broken one never reach the sandbox: call 1 is tested alone
    first = [a for a in result.attempts if a.iteration == 1]
    assert [(a.node, a.outcome) for a in first] == [("draft", "failed")]
    assert first[0].completion_tokens > len(WRONG.split())  # the dropped answers' tokens are on it
    assert result.status == "fixed" and result.iterations == 2


def test_when_the_first_answer_is_unusable_a_sample_is_tested_instead():
    result, _, harness = run([BROKEN, FIXED, ZERO])
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "syntax"), ("sample", "failed"),
                                                              ("draft", "passed")]
    assert result.status == "fixed" and harness.batches == [2] and result.iterations == 1


def test_a_failed_batch_hands_the_first_answer_to_reflect_and_the_samples_to_its_history():
    result, llm, _ = run([WRONG, ZERO, FIXED, WRONG], samples=2)  # reflect's sample repeats: dropped
    assert [(a.iteration, a.node, a.outcome) for a in result.attempts] == [
        (1, "sample", "failed"), (1, "draft", "failed"), (2, "reflect", "passed")]
    prompt = llm.calls[2][-1].content
    assert "return a * b" in prompt  # the first answer, in full, with its failure
    assert "return a - 2 * b" in prompt  # the sample, one line among the earlier attempts


def test_one_sample_is_the_plain_agent():
    result, llm, harness = run([WRONG, FIXED], samples=1)
    assert harness.batches == [] and len(llm.calls) == 2 and result.iterations == 2


class Together(SeenOptions):
    """A model that writes a call's answers at once (bot/llm/llamacpp_parallel.py for llama.cpp)."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answers)
        self.batches: list[int] = []

    def complete_many(self, messages, *, temperatures, seeds, max_tokens=512):  # type: ignore[no-untyped-def]
        self.batches.append(len(temperatures))
        return [self.complete(messages, temperature=t, max_tokens=max_tokens, seed=s)
                for t, s in zip(temperatures, seeds)]


def test_a_model_that_writes_answers_together_gets_a_calls_answers_in_one_request():
    answers = [WRONG, ZERO, BROKEN, TWO_LINES, ZERO, FIXED]
    together = Together(answers)
    ctx = AgentContext(llm=together, harness=BatchHarness(), target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5"), options=RepairOptions(samples=3))
    result = repair(ctx)
    alone, one_by_one, _ = run(answers)
    assert together.batches == [3, 3] and result.status == "fixed"
    # the same temperatures and seeds as one request per answer, so the same attempts
    assert together.options == one_by_one.options
    assert [(a.iteration, a.node, a.outcome, a.code) for a in result.attempts] == [
        (a.iteration, a.node, a.outcome, a.code) for a in alone.attempts]


# -- thought-patch: several plans per thought, each turned into its edit ------------------------------------------

def edit(line: int, code: str) -> str:
    return json.dumps({"edits": [{"op": "replace", "start": line, "end": line, "code": code}]})


def run_plans(answers: list[str], samples: int = 2, **budgets):  # type: ignore[no-untyped-def]
    llm, harness = SeenOptions(answers), BatchHarness()
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5", tests="assert add(2, 3) == 5"),
                       options=RepairOptions(agent="thought-patch", budgets=Budgets(**budgets), samples=samples))
    return repair(ctx), llm, harness


def test_thought_patch_samples_plans_and_tests_each_plan_s_edit_in_one_batch():
    wrong_plan, right_plan = "Line 3 should multiply.", "Line 3 should add."
    answers = [wrong_plan, right_plan, edit(3, "    return a * b"), edit(3, "    return a + b")]
    result, llm, harness = run_plans(answers)
    assert result.status == "fixed" and result.final_code == BUGGY.replace("a - b", "a + b")
    assert harness.batches == [2] and result.iterations == 1
    assert [(a.node, a.outcome) for a in result.attempts] == [("sample", "passed"), ("patch", "failed")]
    first_thought, second_thought, first_patch, second_patch = llm.calls
    assert first_thought == second_thought, "the plans answer one prompt: llama.cpp evaluates it once"
    assert first_patch[2] == Message("assistant", wrong_plan) and second_patch[2] == Message("assistant", right_plan)
    temps, seeds = zip(*llm.options)
    # the second plan is the sample (hotter, its own seed); each plan's edit is written at the schedule's temperature
    assert temps == (0.0, SAMPLE_TEMPERATURE, 0.0, 0.0) and seeds[0] != seeds[1]
    # both plans' thinking is counted, with the first plan's attempt
    assert result.attempts[1].completion_tokens == sum(len(a.split()) for a in (wrong_plan, right_plan, answers[2]))
    # each attempt keeps its own plan and the edit that plan gave
    assert [a.answer for a in result.attempts] == [f"{right_plan}\n---\n{answers[3]}",
                                                    f"{wrong_plan}\n---\n{answers[2]}"]


def test_when_the_first_plan_s_edit_does_not_apply_another_plan_s_edit_is_tested_instead():
    answers = ["Line 9 is wrong.", "Line 3 should add.", edit(9, "    return a + b"), edit(3, "    return a + b")]
    result, _, harness = run_plans(answers)
    assert [(a.node, a.outcome) for a in result.attempts] == [("patch", "syntax"), ("patch", "passed")]
    assert result.status == "fixed" and harness.checked == [result.final_code] and result.iterations == 1
    assert result.attempts[1].answer == f"Line 3 should add.\n---\n{answers[3]}"  # the sample's, not the first's


def test_a_patch_retry_of_the_first_plan_asks_for_no_more_samples():
    answers = ["Line 3 should add.", "Line 3 should add too.", edit(9, "    return a + b"), edit(9, "    return a +"),
               edit(3, "    return a + b")]
    result, llm, _ = run_plans(answers)
    assert [a.outcome for a in result.attempts] == ["syntax", "passed"] and len(llm.calls) == 5
    assert llm.calls[4][2] == Message("assistant", "Line 3 should add."), "the retry continues the first plan"


# -- tool-call: several calls to one conversation -------------------------------------------------------------------

def tool(code: str) -> dict:
    return {"tool_call": {"name": "run_tests", "arguments": {"explanation": "the sign", "code": code}}}


def test_tool_call_samples_more_calls_of_one_conversation_and_tests_them_in_one_batch():
    answers = [tool("def add(a, b):\n    return a * b"), tool(BUGGY), tool("def add(a, b):\n    return a + b")]
    llm, harness = SeenOptions(answers), BatchHarness()
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5"),
                       options=RepairOptions(agent="tool-call", samples=3))
    result = repair(ctx)
    assert result.status == "fixed" and result.iterations == 1
    assert harness.batches == [2], "the call that repeats the original is dropped, not run and not asked again"
    assert [(a.node, a.outcome) for a in result.attempts] == [("sample", "passed"), ("tool", "failed")]
    assert llm.calls[0] == llm.calls[1] == llm.calls[2]
    temps, seeds = zip(*llm.options)
    assert temps == (0.0, SAMPLE_TEMPERATURE, SAMPLE_TEMPERATURE) and len(set(seeds)) == 3
