"""The mutation search: in the graph (scripted model, in-process tests), alone, and its screen in the sandbox."""
from __future__ import annotations

import json
import time

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, TestOutcome, repair
from bot.agent.options import SearchOptions
from bot.agent.search import rounds
from bot.agent.search.evidence import hot_lines
from bot.agent.search.rounds import search
from bot.llm import ScriptedLLM

from .in_process import InProcessHarness

BUGGY = '''def add(a, b):
    """Return twice a, plus b."""
    return a - b
'''


class CaseHarness(InProcessHarness):
    """add(a, b) must equal `want(a, b)` on a few cases; runs in-process, counts what it was asked."""

    def __init__(self, want, cases=((2, 3), (1, 1), (5, 0))) -> None:  # type: ignore[no-untyped-def]
        self.want, self.cases = want, cases
        self.checked: list[str] = []

    def check(self, function_source: str) -> TestOutcome:
        self.checked.append(function_source)
        scope: dict = {}
        exec(function_source, scope)
        for args in self.cases:
            want = self.want(*args)
            try:
                got = scope["add"](*args)
            except Exception as exc:  # a mutant may well crash
                return TestOutcome(False, f"E   {exc!r}")
            if got != want:
                return TestOutcome(False, f"    assert add{args} == {want}\nE   assert {got} == {want}")
        return TestOutcome(True, "")


class CountingScreen:
    """The screen with the same verdicts as the harness, counting calls (the sandbox one is tested below)."""

    def __init__(self, harness: CaseHarness) -> None:
        self.harness, self.batches = harness, []  # type: ignore[var-annotated]

    def screen(self, sources, timeout_s=None):  # type: ignore[no-untyped-def]
        self.batches.append(len(sources))
        return [CaseHarness(self.harness.want, self.harness.cases).check(s) for s in sources]


def run(want, answers, screen=True, cases=((2, 3), (1, 1), (5, 0)), **options):  # type: ignore[no-untyped-def]
    llm, harness = ScriptedLLM(answers), CaseHarness(want, cases)
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY), briefing=Briefing("assert add(2, 3)"),
                       options=RepairOptions(search=SearchOptions(**options)),
                       screen=CountingScreen(harness) if screen else None)
    return repair(ctx), llm, harness, ctx.screen


def test_a_one_edit_bug_is_fixed_before_any_model_call():
    result, llm, harness, screen = run(lambda a, b: a + b, [])
    assert result.status == "fixed" and result.fixed_by == "search" and llm.calls == []
    assert result.final_code == BUGGY.replace("a - b", "a + b") and result.changed_lines == 1
    [round_] = result.searches
    assert round_.base == "the original (buggy) function" and round_.fixed and "`-` -> `+`" in round_.edit
    assert screen.batches == [round_.candidates] and 1 <= round_.confirmed <= SearchOptions.confirm


def test_the_models_failing_candidate_is_searched_after_its_test():
    # 2a + b is two edits from `a - b` but one from the model's `a * 2 - b`
    result, llm, _, _ = run(lambda a, b: 2 * a + b, ["```python\ndef add(a, b):\n    return a * 2 - b\n```"])
    assert result.status == "fixed" and result.fixed_by == "search-on-model" and len(llm.calls) == 1
    assert [(s.base, s.fixed) for s in result.searches] == [("the original (buggy) function", False),
                                                             ("attempt 1", True)]
    assert "return a * 2 + b" in result.final_code and '"""Return twice a, plus b."""' in result.final_code


def test_a_failed_search_hands_over_to_the_model_and_the_model_still_fixes():
    fixed = "```python\ndef add(a, b):\n    return a * 2 + b\n```"
    result, llm, _, _ = run(lambda a, b: 2 * a + b, [fixed])
    assert result.fixed_by == "model" and [a.outcome for a in result.attempts] == ["passed"]
    assert [s.fixed for s in result.searches] == [False]


def test_weak_tests_that_several_mutants_pass_hand_them_to_the_model_as_hints():
    # add(2, 0) == 2 is all the tests say: `a + b`, `a` and `abs(a - b)` all pass it
    answer = "```python\ndef add(a, b):\n    return a + b\n```"
    result, llm, _, _ = run(lambda a, b: a + b, [answer], cases=((2, 0),), ambiguous="ask")
    assert result.fixed_by == "model" and len(llm.calls) == 1
    [round_] = result.searches
    assert not round_.fixed and round_.hinted >= 2 and round_.survivors >= 2
    prompt = llm.calls[0][-1].content
    assert "the tests cannot tell which is right" in prompt
    assert "- `return a - b` -> `return a + b`\n- `return a - b` -> `return a`\n" in prompt


def test_weak_tests_with_accept_take_the_first_and_a_zero_budget_always_accepts():
    result, llm, _, _ = run(lambda a, b: a + b, [], cases=((2, 0),), ambiguous="accept")
    assert result.fixed_by == "search" and llm.calls == []
    llm, harness = ScriptedLLM([]), CaseHarness(lambda a, b: a + b, ((2, 0),))
    ctx = AgentContext(llm=llm, harness=harness, target=Target("add", BUGGY), briefing=Briefing("x"),
                       options=RepairOptions(budgets=Budgets(iterations=0), search=SearchOptions(ambiguous="ask")),
                       screen=CountingScreen(harness))
    assert repair(ctx).fixed_by == "search"  # nobody to ask: the search alone decides


def test_without_a_screen_only_the_first_slow_mutants_run_through_the_harness():
    base = "def add(a, b):\n    x = a * 2 - b\n    y = x - 1 if x > 3 else x + 4\n    return max(x, y) - b * 2\n"
    harness = CaseHarness(lambda a, b: 7 * a * b)
    found, record = search(base, base, "add", "", harness, None, SearchOptions(), "original")
    assert found == [] and record.candidates == SearchOptions.slow_mutants
    assert len(harness.checked) == SearchOptions.slow_mutants


def test_the_fix_with_fewest_changed_lines_wins():
    base = "def add(a, b):\n    x = a - b\n    return x\n"
    harness = CaseHarness(lambda a, b: a + b)
    found, record = search(base, base, "add", "", harness, CountingScreen(harness), SearchOptions(), "original")
    assert found[0] == "def add(a, b):\n    x = a + b\n    return x\n" and record.fixed


def test_a_passing_change_that_looks_like_a_wrong_fix_comes_after_every_other(monkeypatch):
    base = "def add(a, b):\n    if b == 3:\n        raise ValueError(b)\n    return a + b\n"
    harness = CaseHarness(lambda a, b: a + b)
    first, *others = search(base, base, "add", "", harness, CountingScreen(harness), SearchOptions(), "original")[0]
    assert others, "the case needs several passing changes"
    monkeypatch.setattr(rounds, "anti_patterns", lambda before, after, tests="": ("early-exit",) if after == first
                        else ())
    found, record = search(base, base, "add", "", harness, CountingScreen(harness), SearchOptions(), "original")
    assert found == [*others, first] and record.fixed


def test_hot_lines_are_the_function_lines_the_traceback_shows():
    feedback = "solution.py:3: in add\n    return a - b\nE   TypeError: unsupported operand"
    assert hot_lines(BUGGY, feedback) == {3}
    assert hot_lines(BUGGY, "") == set()


def test_the_sandbox_screen_agrees_with_the_dataset_on_every_task(docker_sandbox, shared_data):
    """Every canonical solution passes the screen and every buggy one fails it: the fast path is a faithful
    filter (at the search's second-chance timeout: the slowest canonical solution takes ~0.2 s, past the
    first pass's 0.1 s)."""
    from bot.fix.locate.spans import function_source
    from eval.harness import humaneval_screen

    tasks = [json.loads(line) for line in (shared_data / "humanevalpack-python.jsonl").read_text().splitlines()]
    wrong = []
    for t in tasks:
        module = t["prompt"] + t["buggy_solution"]
        screen = humaneval_screen(docker_sandbox, module, t["entry_point"], t["test"])
        good = function_source(t["prompt"] + t["canonical_solution"], t["entry_point"])
        bad = function_source(module, t["entry_point"])
        ok, fails = screen.screen([good, bad], SearchOptions.slow_timeout_s)
        if not ok.passed or fails.passed:
            wrong.append((t["task_id"], ok.feedback, fails.passed))
    assert wrong == []


def test_the_screen_survives_loops_crashes_and_output(docker_sandbox):
    from eval.screen import ScriptScreen

    module = "def f(x):\n    return x\n"
    screen = ScriptScreen(docker_sandbox, module, "f", "assert f(1) == 1\n", timeout_s=0.3)
    cases = ["def f(x):\n    while True:\n        pass\n",
             "def f(x):\n    import os\n    os._exit(0)\n",
             "def f(x):\n    print('x' * 10**6)\n    return x\n",
             "def f(x):\n    return [0] * 10**10\n",
             "def f(x):\n    return x + 1\n",
             "def f(x):\n    return x\n"]
    start = time.monotonic()
    outcomes = screen.screen(cases)
    assert [o.passed for o in outcomes] == [False, False, True, False, False, True]
    assert outcomes[0].timed_out and "MemoryError" in outcomes[3].feedback
    assert "AssertionError" in outcomes[4].feedback
    assert time.monotonic() - start < 10
