"""Every route of the thought-patch and tool-call designs, driven by the scripted model (no sandbox)."""
from __future__ import annotations

import json

import pytest

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, repair
from bot.agent.designs.thought_patch import FREE_UNTESTABLE
from bot.agent.designs.tool_call import REPEAT_RETRIES
from bot.agent.options import SAMPLE_TEMPERATURE
from bot.agent.steps.prompts import FEW_SHOT, tried_lines
from bot.agent.types import Attempt, RepairInterrupted
from bot.llm import Completion, Message, ScriptedLLM

from .test_agent_graph import BUGGY, FIXED, AssertHarness

FIXED_BUGGY = BUGGY.replace("a - b", "a + b")
PLAN = "Line 3 subtracts; it should add: `return a + b`."


def run(agent: str, answers: list, **options) -> tuple:  # type: ignore[no-untyped-def]
    llm, harness = ScriptedLLM(answers), AssertHarness()
    few_shot = options.pop("few_shot", False)
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5", tests="assert add(2, 3) == 5"),
                       options=RepairOptions(agent=agent, few_shot=few_shot, budgets=Budgets(**options)))
    return repair(ctx), llm, harness


def edit(line: int, code: str) -> str:
    return json.dumps({"edits": [{"op": "replace", "start": line, "end": line, "code": code}]})


def tool(code: str, explanation: str = "the sign is wrong") -> dict:
    return {"tool_call": {"name": "run_tests", "arguments": {"explanation": explanation, "code": code}}}


# -- thought-patch ----------------------------------------------------------------------------------------------

def test_thought_then_patch_fixes_and_counts_both_calls_in_one_attempt():
    result, llm, _ = run("thought-patch", [PLAN, edit(3, "    return a + b")])
    assert result.status == "fixed" and result.final_code == FIXED_BUGGY
    [attempt] = result.attempts
    assert (attempt.node, attempt.outcome, attempt.changed_lines) == ("patch", "passed", 1)
    assert attempt.prompt_tokens == sum(len(m.content.split()) for call in llm.calls for m in call)
    thought_prompt = llm.calls[0][-1].content
    assert "3 |     return a - b" in thought_prompt and "Return the sum" not in thought_prompt.split("line numbers")[1]
    thought_call, patch_call = llm.calls
    assert patch_call[:2] == thought_call and patch_call[2] == Message("assistant", PLAN), \
        "patch continues the thought's conversation, so the model's cached prompt prefix covers it"
    assert "JSON edit" in patch_call[3].content and '"line": "the line as it reads now"' in patch_call[3].content


def test_an_edit_that_does_not_apply_goes_back_to_patch_with_the_reason():
    result, llm, _ = run("thought-patch", [PLAN, edit(9, "    return a + b"), edit(3, "    return a + b")])
    assert [(a.node, a.outcome) for a in result.attempts] == [("patch", "syntax"), ("patch", "passed")]
    first, retry = llm.calls[1], llm.calls[2]
    assert retry[:4] == first and retry[4] == Message("assistant", edit(9, "    return a + b")), "its own edit, shown"
    assert "the function's lines 1-3" in retry[5].content and len(retry) == 6
    assert len(llm.calls) == 3, "a retried patch keeps its plan: no new thought"


def test_an_edit_that_breaks_the_syntax_goes_back_to_patch():
    result, llm, _ = run("thought-patch", [PLAN, edit(3, "    return a +"), edit(3, "    return a + b")])
    assert [a.outcome for a in result.attempts] == ["syntax", "passed"]
    assert "does not parse: line 3: invalid syntax\n        return a +\n" in llm.calls[2][-1].content
    plan, said = result.attempts[0].answer.split("\n---\n")
    assert plan == PLAN and json.loads(said)["edits"][0]["code"] == "    return a +", "the raw edit is kept"
    assert result.attempts[1].answer == f"{PLAN}\n---\n{edit(3, '    return a + b')}", "plan and edit, kept"


def test_a_plan_whose_second_edit_does_not_apply_either_goes_back_to_thought():
    answers = [PLAN, edit(3, "    return a +"), edit(3, "    return a +"), "Line 3: `return a + b`.",
               edit(3, "    return a + b")]
    result, llm, harness = run("thought-patch", answers)
    assert [(a.node, a.outcome) for a in result.attempts] == [("patch", "syntax"), ("patch", "syntax"),
                                                              ("patch", "passed")]
    replan = llm.calls[3][-1].content
    assert (llm.calls[3][0].content.startswith("You find and fix the bug")
            and "could not be turned into an edit" in replan)
    assert len(llm.calls[3]) == 2, "a new plan starts a new conversation"
    assert "does not parse" in replan and len(harness.checked) == 1


def test_a_failing_patch_goes_back_to_thought_with_its_history():
    answers = [PLAN, edit(3, "    return a * b"), "Try addition.", edit(3, "    return a + b")]
    result, llm, harness = run("thought-patch", answers)
    assert [(a.node, a.outcome) for a in result.attempts] == [("patch", "failed"), ("patch", "passed")]
    second_thought = llm.calls[2][-1].content
    assert "return a * b" in second_thought and "assert 6 == 5" in second_thought
    assert "Earlier patches that did not work" in second_thought and len(harness.checked) == 2


def test_a_patch_that_gives_code_already_tried_goes_back_to_thought_hotter():
    answers = [PLAN, edit(3, "    return a * b"), "Multiply.", edit(3, "    return a * b"), "Then add.",
               edit(3, "    return a + b")]
    result, llm, harness = run("thought-patch", answers)
    assert [(a.node, a.outcome) for a in result.attempts] == [("patch", "failed"), ("patch", "repeat"),
                                                              ("patch", "passed")]
    assert "already tried (attempt 1)" in llm.calls[4][-1].content
    assert result.attempts[2].temperature >= 0.4 and len(harness.checked) == 2


class SeedRecordingLLM(ScriptedLLM):
    """A scripted model that records the seed of every call."""

    def __init__(self, answers: list) -> None:
        super().__init__(answers)
        self.seeds: list[int | None] = []

    def complete(self, messages, **options):  # type: ignore[no-untyped-def]
        self.seeds.append(options.get("seed"))
        return super().complete(messages, **options)


def test_an_iteration_that_asks_again_asks_with_a_new_seed_each_time():
    """The same prompt at the same seed is the same answer: a retry within one iteration must not spend a call
    on it (a real run wrote one repeated plan three times over, word for word, in each iteration)."""
    wrong = edit(3, "    return a * b")
    answers = [PLAN, wrong, PLAN, wrong, PLAN, wrong, PLAN, edit(3, "    return a + b")]
    llm = SeedRecordingLLM(answers)
    ctx = AgentContext(llm=llm, harness=AssertHarness(), target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5", tests="assert add(2, 3) == 5"),
                       options=RepairOptions(agent="thought-patch"))
    result = repair(ctx)
    assert [(a.iteration, a.outcome) for a in result.attempts] == [(1, "failed"), (2, "repeat"), (2, "repeat"),
                                                                   (2, "passed")]
    second_iteration = llm.seeds[2:]  # its thoughts and patches: the first asks, then two retries
    assert len(set(second_iteration[0::2])) == 3 and len(set(second_iteration[1::2])) == 3, llm.seeds


def test_an_edit_that_changes_nothing_goes_back_to_patch_its_plan_may_be_right():
    answers = [PLAN, edit(3, "    return a - b"), edit(3, "    return a + b")]
    result, llm, harness = run("thought-patch", answers)
    assert [(a.node, a.outcome) for a in result.attempts] == [("patch", "syntax"), ("patch", "passed")]
    assert "leaves the function as it was" in llm.calls[2][-1].content and len(harness.checked) == 1


def test_a_plan_whose_fix_changes_nothing_is_told_so_by_the_next_thought():
    """Python/147: the plan's fix was the buggy line with spaces around `%`; its edits changed nothing twice, and
    the next thought was asked for a fix "simpler to write", which the model read as the same plan."""
    same = "Line 3 is wrong: it should read `return a - b`."
    answers = [same, edit(3, "    return a - b"), edit(3, "return a-b"), PLAN, edit(3, "    return a + b")]
    result, llm, harness = run("thought-patch", answers)
    assert [(a.node, a.outcome) for a in result.attempts] == [("patch", "syntax"), ("patch", "syntax"),
                                                              ("patch", "passed")]
    replan = llm.calls[3][-1].content
    assert "fix leaves the function as it was" in replan and "simpler to write" not in replan
    assert len(harness.checked) == 1, "an edit that changes nothing is never run"


def test_an_edit_names_its_line_by_text():
    said = json.dumps({"edits": [{"op": "replace", "line": "return a - b", "code": "    return a + b"}]})
    result, _, _ = run("thought-patch", [PLAN, said])
    assert result.status == "fixed" and result.final_code == FIXED_BUGGY


def test_the_thought_patch_budget_counts_patches():
    answers = [PLAN, edit(3, "    return a * b"), PLAN, edit(3, "    return b - a"), PLAN, edit(3, "    return a + b")]
    result, llm, _ = run("thought-patch", answers, iterations=2)
    assert result.stop_reason == "iterations" and len(result.attempts) == 2 and len(llm.calls) == 4


def test_untestable_patches_are_asked_again_within_the_iteration_up_to_a_cap():
    bad = edit(3, "    return a +")
    result, llm, harness = run("thought-patch", [PLAN, bad, bad, PLAN, edit(3, "    return a + b")], iterations=1)
    assert result.status == "fixed" and [a.outcome for a in result.attempts] == ["syntax", "syntax", "passed"]
    assert {a.iteration for a in result.attempts} == {1} and result.iterations == 1
    result, llm, harness = run("thought-patch", [PLAN, bad, bad, PLAN, bad, PLAN, edit(3, "    return a + b")],
                               iterations=1)
    assert result.stop_reason == "iterations" and len(result.attempts) == 1 + FREE_UNTESTABLE and not harness.checked


# -- tool-call --------------------------------------------------------------------------------------------------

def test_a_run_tests_call_that_passes_ends_the_loop():
    result, llm, _ = run("tool-call", [tool("def add(a, b):\n    return a + b")])
    assert result.status == "fixed" and result.final_code == FIXED_BUGGY
    assert [(a.node, a.outcome) for a in result.attempts] == [("tool", "passed")]


def test_a_failing_run_is_answered_with_its_code_and_failure_in_a_conversation_of_two_turns():
    result, llm, _ = run("tool-call", [tool("def add(a, b):\n    return a * b"),
                                       tool("def add(a, b):\n    return a + b")])
    assert [a.outcome for a in result.attempts] == ["failed", "passed"]
    second = llm.calls[1]
    assert [m.role for m in second] == ["system", "user"], "the model's call is not replayed as its own turn"
    result_text = second[1].content.split("Its tests:")[1]
    ran = ("Your last run_tests call ran this code:\n```python\ndef add(a, b):\n    # keep this comment\n"
           "    return a * b\n```")
    assert ran in result_text, "the code as run (the faithful merge keeps the comment; the docstring is the spec's)"
    assert "Result: FAILED" in result_text and "assert 6 == 5" in result_text
    assert second[1].content.endswith("Call run_tests with your corrected `add`.")
    assert llm.calls[0][1].content.split("Its tests:")[0] == second[1].content.split("Its tests:")[0], \
        "the task is the same prefix in every call, so the model's prompt cache covers it"


def test_prose_without_a_call_is_nudged_by_a_user_turn():
    result, llm, _ = run("tool-call", ["The bug is the minus sign.", tool("def add(a, b):\n    return a + b")])
    assert [a.outcome for a in result.attempts] == ["syntax", "passed"]
    nudge = llm.calls[1][-1]
    assert nudge.role == "user" and "NOT RUN: no run_tests call" in nudge.content and "Call run_tests" in nudge.content


def test_arguments_that_are_not_json_are_answered_without_running():
    bad = {"tool_call": {"name": "run_tests", "arguments": '{"code": "def add(a, b):'}}
    result, llm, harness = run("tool-call", [bad, tool("def add(a, b):\n    return a + b")])
    assert [a.outcome for a in result.attempts] == ["syntax", "passed"] and len(harness.checked) == 1
    assert "Your latest call was NOT RUN: the run_tests arguments are not JSON" in llm.calls[1][-1].content
    assert result.attempts[0].answer == '{"code": "def add(a, b):', "a call's arguments are its answer"


def test_code_sent_without_its_line_breaks_or_with_a_stray_brace_is_read_as_meant():
    flat = "def add(a, b):    if a:        return a + b    return b"  # each run of spaces was a line break
    result, _, harness = run("tool-call", [tool(flat)])
    assert [a.outcome for a in result.attempts] == ["passed"] and len(harness.checked) == 1
    assert "    if a:\n        return a + b\n    return b" in result.attempts[0].code
    result, _, _ = run("tool-call", [tool("def add(a, b):    if a:\n        return a + b\n    return b")])
    assert [a.outcome for a in result.attempts] == ["passed"], "only the def line's break left out"
    result, _, _ = run("tool-call", [tool("def add(a, b):\n    return a + b}")])
    assert [a.outcome for a in result.attempts] == ["passed"]
    result, llm, _ = run("tool-call", [tool("def add(a, b):    return a +  b  )"),
                                       tool("def add(a, b):\n    return a + b")])
    assert [a.outcome for a in result.attempts] == ["syntax", "passed"]  # no reading parses: the plain error
    said = llm.calls[1][-1].content.split("NOT RUN: ")[1]
    assert said.startswith("line 1") and "each line break written as \\n" in said
    assert "return a +  b" not in said, "the one-line code is not quoted back: the model copied it, one line again"


def test_code_already_tried_is_asked_again_at_once_hotter_within_one_iteration():
    result, llm, harness = run("tool-call", [tool(BUGGY), tool("def add(a, b):\n    return a + b")])
    [passed] = result.attempts
    assert (passed.outcome, passed.iteration) == ("passed", 1) and len(harness.checked) == 1
    assert llm.calls[1] == llm.calls[0]  # the same conversation: the repeat is never shown back
    assert passed.temperature >= SAMPLE_TEMPERATURE
    assert passed.completion_tokens == sum(len(json.dumps(a["tool_call"]["arguments"]).split())
                                           for a in (tool(BUGGY), tool("def add(a, b):\n    return a + b")))


def test_a_repeat_of_every_retry_is_reported_as_not_run_with_the_failure_it_repeats():
    repeats = [tool(BUGGY)] * (REPEAT_RETRIES + 1)  # every retry repeats too: one attempt, reported as NOT RUN
    answers = [tool("def add(a, b):\n    return a * b"), *repeats, tool("def add(a, b):\n    return a + b")]
    result, llm, _ = run("tool-call", answers)
    assert [a.outcome for a in result.attempts] == ["failed", "repeat", "passed"]
    last = llm.calls[-1]
    assert [m.role for m in last] == ["system", "user"]
    assert "return a * b\n```\nResult: FAILED" in last[1].content, "the last run, still"
    assert "NOT RUN: the same code as the original (buggy) function, which fails:\nassert add(2, 3) == 5" \
        in last[1].content


def test_earlier_runs_are_summed_up_in_a_line_each_and_the_latest_shown_in_full():
    wrong = [tool(f"def add(a, b):\n    return a * b + {i}") for i in range(4)]
    result, llm, _ = run("tool-call", wrong + [tool("def add(a, b):\n    return a + b")])
    assert result.status == "fixed" and len(result.attempts) == 5
    task = llm.calls[-1][1].content
    assert "    return a * b + 3\n```\nResult: FAILED" in task
    summed = task.split("Earlier attempts that also failed")[1]
    assert all(f"return a * b + {i}" in summed for i in range(3)) and "+ 3" not in summed


def test_a_model_without_tools_is_a_clear_error():
    class TextOnly:
        name = "text-only"

        def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None):  # type: ignore[no-untyped-def]
            return Completion("no", 1, 1, 0.0)

    ctx = AgentContext(llm=TextOnly(), harness=AssertHarness(), target=Target("add", BUGGY), briefing=Briefing("x"),
                       options=RepairOptions(agent="tool-call"))
    with pytest.raises(RepairInterrupted, match="text-only cannot call tools"):
        repair(ctx)


# -- shared -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("agent, answers", [("reflect", [FIXED]),
                                            ("thought-patch", [PLAN, edit(3, "    return a + b")]),
                                            ("tool-call", [tool("def add(a, b):\n    return a + b")])])
def test_few_shot_examples_join_every_designs_system_prompt_only_when_asked(agent, answers):
    for few_shot in (False, True):
        result, llm, _ = run(agent, list(answers), few_shot=few_shot)
        assert result.status == "fixed"
        assert all((FEW_SHOT in call[0].content) == few_shot and call[0].role == "system" for call in llm.calls)


class SchemaRecordingLLM(ScriptedLLM):
    """A scripted model that says which calls came with a JSON Schema."""

    def __init__(self, answers: list) -> None:
        super().__init__(answers)
        self.schemas: list[dict | None] = []

    def complete(self, messages, **options):  # type: ignore[no-untyped-def]
        self.schemas.append(None)
        return super().complete(messages, **options)

    def complete_json(self, messages, schema, **options):  # type: ignore[no-untyped-def]
        self.schemas.append(schema)
        return ScriptedLLM.complete(self, messages, **options)


def schemas_of(plan: str) -> list[dict | None]:
    """The schemas of a thought-patch run's two calls, the plan's and its patch's (which fixes the function)."""
    llm = SchemaRecordingLLM([plan, edit(3, "    return a + b")])
    ctx = AgentContext(llm=llm, harness=AssertHarness(), target=Target("add", BUGGY),
                       briefing=Briefing("assert add(2, 3) == 5", tests="assert add(2, 3) == 5"),
                       options=RepairOptions(agent="thought-patch"))
    assert repair(ctx).status == "fixed"
    return llm.schemas


def test_the_patch_is_asked_for_under_a_schema_of_this_function_s_lines():
    plan_schema, patch_schema = schemas_of("It subtracts; it should add.")  # naming no line
    # the plan is prose; the patch's lines are those of the view:
    replace, insert, delete = patch_schema["properties"]["edits"]["items"]["anyOf"]  # def, comment, return
    lines = ["# keep this comment", "return a - b"]  # named by their text, without indentation
    assert (plan_schema is None
            and replace["properties"]["line"]["enum"] == lines == delete["properties"]["line"]["enum"])
    assert insert["properties"]["after"]["enum"] == ["def add(a, b):", *lines]  # inserting after the def line is fine


def test_the_patch_may_replace_only_the_lines_its_plan_names():
    """Python/130: the plans were about the odd case's line, the edits replaced the even case's line."""
    patch_schema = schemas_of("`return a - b` subtracts: make it `return a + b`.")[1]
    assert patch_schema is not None
    replace, insert, _ = patch_schema["properties"]["edits"]["items"]["anyOf"]
    assert replace["properties"]["line"]["enum"] == ["return a - b"] and len(insert["properties"]["after"]["enum"]) == 3


def test_an_earlier_attempt_is_summed_up_by_its_failed_assertion_not_its_location():
    feedback = "test_solution.py:5: in check\n    assert add(2, 3) == 5\nE   assert 6 == 5\nE    +  where 6 = add(2, 3)"
    tried = Attempt(iteration=1, node="patch", code="def add(a, b):\n    return a * b\n", outcome="failed",
                    feedback=feedback, prompt_tokens=0, completion_tokens=0, latency_s=0.0, temperature=0.0)
    [line] = tried_lines(Target("add", BUGGY), [tried])
    assert line.endswith("=> assert 6 == 5") and "test_solution.py" not in line


def test_a_call_whose_code_holds_raw_line_breaks_is_read_all_the_same():
    raw = '{"explanation": "add, not subtract", "code": "def add(a, b):\n    return a + b"}'  # not strict JSON
    result, _, _ = run("tool-call", [{"tool_call": {"name": "run_tests", "arguments": raw}}])
    assert [a.outcome for a in result.attempts] == ["passed"]
