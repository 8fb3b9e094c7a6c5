"""End to end with the real bundled model in the real Docker sandbox: the agent repairs HumanEvalFix tasks,
and the fix is the one-line change the bug needs (its docstring and untouched lines byte-identical)."""
from __future__ import annotations

import json

import pytest

from bot.agent import Budgets, RepairOptions
from eval.replay import ReplayConfig, run_task
from eval.tasks import load_tasks

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def bundled_llm():
    from bot.llm import open_llm

    return open_llm("llamacpp:bundled")


@pytest.fixture(scope="module")
def tasks(shared_data):
    return load_tasks(shared_data / "humanevalpack-python.jsonl")


def test_bundled_model_repairs_a_real_buggy_function(bundled_llm, tasks, docker_sandbox):
    task = tasks[2]  # truncate_number: `return number % 1.0 + 1.0` must lose its `+ 1.0`
    config = ReplayConfig(repair=RepairOptions(budgets=Budgets(iterations=3)))
    result = run_task(task, bundled_llm, docker_sandbox, config)
    assert result.passed, result.attempts
    assert result.changed_lines == 1
    removed = [line for line in result.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-    return number % 1.0 + 1.0"] and len(added) == 1
    assert result.attempts[0]["prompt_tokens"] > 100 and result.attempts[0]["completion_tokens"] > 5


class Recording:
    """The bundled model, keeping every completion (with how many prompt tokens its cache covered)."""

    def __init__(self, llm) -> None:  # type: ignore[no-untyped-def]
        self.llm, self.name, self.done = llm, llm.name, []

    def complete(self, messages, **options):  # type: ignore[no-untyped-def]
        self.done.append(self.llm.complete(messages, **options))
        return self.done[-1]

    def complete_with_tools(self, messages, tools, **options):  # type: ignore[no-untyped-def]
        self.done.append(self.llm.complete_with_tools(messages, tools, **options))
        return self.done[-1]

    def complete_json(self, messages, schema, **options):  # type: ignore[no-untyped-def]
        self.done.append(self.llm.complete_json(messages, schema, **options))
        return self.done[-1]


@pytest.mark.parametrize("agent, node", [("thought-patch", "patch"), ("tool-call", "tool")])
def test_the_other_two_designs_repair_it_too(agent, node, bundled_llm, tasks, docker_sandbox):
    """thought-patch: a plan, then JSON line edits; tool-call: the model calls run_tests through llama-cpp-python's
    function-calling format. No mutation search here, so the model's own candidate must pass."""
    llm = Recording(bundled_llm)
    config = ReplayConfig(repair=RepairOptions(budgets=Budgets(iterations=3), agent=agent))
    result = run_task(tasks[2], llm, docker_sandbox, config)
    assert result.passed, result.attempts
    if agent == "thought-patch":  # patch continues the thought's conversation: llama.cpp evaluates only its new turn
        thought, patch = llm.done[:2]
        assert patch.cached_tokens >= thought.prompt_tokens, (thought, patch)
        assert patch.prompt_tokens - patch.cached_tokens < thought.completion_tokens + 250, (thought, patch)
    assert result.fixed_by == "model" and result.attempts[-1]["node"] == node
    removed = [line for line in result.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == ["-    return number % 1.0 + 1.0"] and result.changed_lines == 1


class RecordingMany(Recording):
    """Recording, and the bundled model's answers decoded together (a thought's plans)."""

    def __init__(self, llm) -> None:  # type: ignore[no-untyped-def]
        super().__init__(llm)
        self.together: list[int] = []  # answers per complete_many request

    def complete_many(self, messages, **options):  # type: ignore[no-untyped-def]
        self.together.append(len(options["temperatures"]))
        self.done += self.llm.complete_many(messages, **options)
        return self.done[-len(options["temperatures"]):]


def test_thought_patch_with_three_plans_tests_their_patches_in_one_iteration(bundled_llm, tasks, docker_sandbox):
    """--samples 3 with thought-patch: three plans decoded together, each turned into its edit under the schema."""
    llm = RecordingMany(bundled_llm)
    config = ReplayConfig(repair=RepairOptions(budgets=Budgets(iterations=1), agent="thought-patch", samples=3))
    result = run_task(tasks[2], llm, docker_sandbox, config)
    assert llm.together == [3]  # one thought: its three plans in one request
    plans, edits = [d.text for d in llm.done[:3]], [d.text for d in llm.done[3:]]
    assert len(set(plans)) > 1, plans  # the two hotter plans are not the greedy one again
    assert edits and all(e.lstrip().startswith("{") for e in edits), edits  # each edit JSON, under the schema
    assert result.passed and {a["iteration"] for a in result.attempts} == {1}, result.attempts
    assert result.changed_lines == 1


def test_eval_with_two_workers_runs_the_bundled_model_in_two_processes(shared_data, tmp_path, sandbox_image):
    """`fixbot eval --workers 2` with a llamacpp: model: one model process per worker, 1 thread each (2 cores),
    two tasks at once; both one-line bugs are repaired and recorded."""
    from .conftest import run_fixbot

    out = tmp_path / "run"
    result = run_fixbot("eval", "--data", str(shared_data / "humanevalpack-python.jsonl"), "--tasks", "2,4",
                        "--iterations", "3", "--workers", "2", "--out", str(out), timeout=800)
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["n_tasks"], summary["passed"], summary["errors"]) == (2, 2, 0), summary
    assert summary["model_calls"] >= 2
