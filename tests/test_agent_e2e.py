"""End to end with the real bundled model in the real Docker sandbox: the agent repairs HumanEvalFix tasks,
and the fix is the one-line change the bug needs (its docstring and untouched lines byte-identical)."""
from __future__ import annotations

import pytest

from bot.agent import Budgets
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
    result = run_task(task, bundled_llm, docker_sandbox, ReplayConfig(budgets=Budgets(iterations=3)))
    assert result.passed, result.attempts
    assert result.changed_lines == 1
    removed = [line for line in result.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-    return number % 1.0 + 1.0"] and len(added) == 1
    assert result.attempts[0]["prompt_tokens"] > 100 and result.attempts[0]["completion_tokens"] > 5


@pytest.mark.parametrize("agent, node", [("thought-patch", "patch"), ("tool-call", "tool")])
def test_the_other_two_designs_repair_it_too(agent, node, bundled_llm, tasks, docker_sandbox):
    """thought-patch: a plan, then JSON line edits; tool-call: the model calls run_tests through llama-cpp-python's
    function-calling format. No mutation search here, so the model's own candidate must pass."""
    result = run_task(tasks[2], bundled_llm, docker_sandbox, ReplayConfig(budgets=Budgets(iterations=3), agent=agent))
    assert result.passed, result.attempts
    assert result.fixed_by == "model" and result.attempts[-1]["node"] == node
    removed = [line for line in result.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == ["-    return number % 1.0 + 1.0"] and result.changed_lines == 1
