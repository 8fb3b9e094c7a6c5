"""Replay HumanEvalFix: each task is a target with its tests; the same agent and sandbox as `fixbot fix`."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from bot.agent import AgentContext, Briefing, RepairOptions, Target, repair
from bot.agent.types import RepairInterrupted
from bot.fix.locate.spans import function_source, splice
from bot.fix.verify.patch import file_diff
from bot.llm.types import LLM
from sandbox import Sandbox

from .behaviour import behaviour_judge
from .harness import humaneval_harness, humaneval_screen
from .results import ResultsFile, TaskResult
from .tasks import Task

EvalProtocol = Literal["tests", "examples"]  # what the agent sees: all the tests, or the docstring's examples
PASSING_START = ("The visible tests pass (or there are none), but the function does not do what its docstring "
                 "says. Find the bug from the docstring.")


@dataclass(frozen=True)
class ReplayConfig:
    protocol: EvalProtocol = "tests"
    repair: RepairOptions = RepairOptions()  # the agent's plain form unless asked
    seed: int = 0
    vote: bool = False  # choose among fixes that pass the visible tests by vote on more inputs (choose/select.py)


def visible_tests(task: Task, protocol: EvalProtocol) -> str:
    return task.test if protocol == "tests" else task.example_test


def target_of(task: Task) -> Target:
    module = task.buggy_module
    source = function_source(module, task.entry_point)
    context = splice(module, task.entry_point, "").strip()
    return Target(name=task.entry_point, source=source, context=context)


def run_task(task: Task, llm: LLM, sandbox: Sandbox, config: ReplayConfig) -> TaskResult:
    start = time.monotonic()
    target = target_of(task)
    shown = visible_tests(task, config.protocol)
    visible = humaneval_harness(sandbox, task.buggy_module, task.entry_point, shown)
    before = visible.check(target.source)
    briefing = Briefing(summary=PASSING_START if before.passed else before.feedback, tests=shown)
    searching = config.repair.search is not None and not before.passed  # a search needs a failing test to drive it
    options = config.repair if searching else replace(config.repair, search=None)
    judge = behaviour_judge(sandbox, task.buggy_module, task.entry_point, shown) if config.vote else None
    ctx = AgentContext(llm=llm, harness=visible, target=target, briefing=briefing, options=options, seed=config.seed,
                       screen=humaneval_screen(sandbox, task.buggy_module, task.entry_point, shown), judge=judge,
                       original_passes=before.passed)
    result = repair(ctx)
    passed = result.status == "fixed"
    if result.final_code is not None and config.protocol != "tests":
        hidden = humaneval_harness(sandbox, task.buggy_module, task.entry_point, task.test)
        passed = hidden.check(result.final_code).passed
    fixed_module = splice(task.buggy_module, task.entry_point, result.final_code) if result.final_code else None
    diff = file_diff(task.buggy_module, fixed_module, "solution.py") if fixed_module else ""
    return TaskResult(task_id=task.task_id, bug_type=task.bug_type, passed=passed,
                      visible_passed=result.status == "fixed", iterations=result.iterations,
                      stop_reason=result.stop_reason, prompt_tokens=result.prompt_tokens,
                      completion_tokens=result.completion_tokens, wall_s=round(time.monotonic() - start, 3),
                      changed_lines=result.changed_lines, final_code=result.final_code, diff=diff,
                      attempts=[asdict(a) for a in result.attempts],
                      searches=[asdict(s) for s in result.searches], fixed_by=result.fixed_by,
                      selection=asdict(result.selection) if result.selection else None)


def _errored(task: Task, exc: BaseException, start: float) -> TaskResult:
    return TaskResult(task_id=task.task_id, bug_type=task.bug_type, passed=False, visible_passed=False,
                      iterations=0, stop_reason="error", prompt_tokens=0, completion_tokens=0,
                      wall_s=round(time.monotonic() - start, 3), changed_lines=None, final_code=None, diff="",
                      error=f"{exc.__class__.__name__}: {exc}")


def replay(tasks: Sequence[Task], llm: LLM, sandbox: Sandbox, config: ReplayConfig, store: ResultsFile,
           workers: int = 1, on_done: Callable[[TaskResult], None] = lambda r: None) -> list[TaskResult]:
    """Run the tasks not yet in the results file; return every result of the selection, old and new."""
    done = store.load()
    todo = [t for t in tasks if t.task_id not in done]
    lock = threading.Lock()

    def one(task: Task) -> None:
        start = time.monotonic()
        try:
            result = run_task(task, llm, sandbox, config)
        except RepairInterrupted as exc:
            if exc.stop is not None:  # a signal (SIGTERM, Ctrl-C) stops the replay: this task runs again on resume
                raise exc.stop from None
            result = _errored(task, exc, start)
        except Exception as exc:  # recorded and retried on the next run; the others go on
            result = _errored(task, exc, start)
        with lock:
            store.append(result)
            done[task.task_id] = result
            on_done(result)

    if workers <= 1:
        for task in todo:
            one(task)
    else:
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            list(pool.map(one, todo))
        finally:  # on Ctrl-C: start no other task; the caller closes the model, which ends the running ones
            pool.shutdown(wait=False, cancel_futures=True)
    return [done[t.task_id] for t in tasks if t.task_id in done]


def selfcheck(tasks: Sequence[Task], sandbox: Sandbox) -> list[str]:
    """Harness check, never a score: every canonical solution must pass the full tests and the example tests (the
    `examples` protocol's visible ones), and every buggy one fail the full tests. All programs go to the sandbox as
    one batch."""
    checks = []  # (task, which tests, harness, source, must pass)
    for task in tasks:
        canonical, buggy = function_source(task.canonical_module, task.entry_point), target_of(task).source
        full = humaneval_harness(sandbox, task.buggy_module, task.entry_point, task.test)
        examples = humaneval_harness(sandbox, task.buggy_module, task.entry_point, task.example_test)
        checks += [(task, "tests", full, canonical, True), (task, "tests", full, buggy, False)]
        if examples.tests:
            checks.append((task, "example tests", examples, canonical, True))
    results = sandbox.run_batch([harness.job(source) for _, _, harness, source, _ in checks])
    problems = []
    for (task, which, harness, _, must_pass), result in zip(checks, results):
        outcome = harness.outcome(result)
        if must_pass and not outcome.passed:
            last = outcome.feedback.splitlines()[-1]
            problems.append(f"{task.task_id}: canonical solution fails its {which}: {last}")
        elif not must_pass and outcome.passed:
            problems.append(f"{task.task_id}: buggy solution passes its {which}")
    return problems


def out_dir_default(model: str, protocol: str, iterations: int) -> Path:
    slug = "".join(c if c.isalnum() or c in "-." else "-" for c in model).strip("-")
    return Path("runs") / "eval" / f"{protocol}-{slug}-k{iterations}"
