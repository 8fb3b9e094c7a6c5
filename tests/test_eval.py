"""HumanEvalFix replay: data loading, subsets, the pytest harness in the real sandbox, the CLI with a
scripted model, resuming, and the summary."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bot.errors import UserError
from bot.fix.locate.spans import function_source
from eval.harness import humaneval_harness
from eval.replay import target_of
from eval.report import summarize, table
from eval.results import ResultsFile, TaskResult
from eval.tasks import load_tasks, parsable_tail, select, stratified

from .conftest import run_fixbot

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def data(shared_data) -> Path:
    return shared_data / "humanevalpack-python.jsonl"


@pytest.fixture(scope="module")
def tasks(data):
    return load_tasks(data)


def test_all_164_tasks_load_through_datasets(tasks):
    assert len(tasks) == 164 and tasks[0].task_id == "Python/0" and tasks[163].number == 163
    assert Counter(t.bug_type for t in tasks)["missing logic"] == 33
    assert sum(1 for t in tasks if not t.example_test.strip()) == 6


def test_stratified_subset_is_per_bug_type_and_seeded(tasks):
    subset = stratified(tasks, 0.35, seed=0)
    counts, everything = Counter(t.bug_type for t in subset), Counter(t.bug_type for t in tasks)
    assert all(counts[bug] == max(1, round(n * 0.35)) for bug, n in everything.items())
    assert [t.task_id for t in subset] == [t.task_id for t in stratified(tasks, 0.35, seed=0)]
    assert [t.task_id for t in subset] != [t.task_id for t in stratified(tasks, 0.35, seed=1)]


def test_every_tasks_tests_parse_and_python_119s_stray_solution_is_cut_from_its_example_tests(tasks, data):
    for task in tasks:
        compile(task.test, task.task_id, "exec")
        compile(task.example_test, task.task_id, "exec")
    raw = next(json.loads(line) for line in data.read_text().splitlines() if '"Python/119"' in line)
    shown = tasks[119].example_test
    assert shown.startswith("def check(match_parens):") and raw["example_test"].endswith(shown)
    assert "S1 = lst[0] + lst[1]" in raw["example_test"] and "S1 = lst[0] + lst[1]" not in shown
    assert tasks[0].example_test == json.loads(data.read_text().splitlines()[0])["example_test"]  # the rest as given


def test_parsable_tail_keeps_code_that_parses_or_has_no_parsable_tail():
    assert parsable_tail("x = 1\n") == "x = 1\n"
    assert parsable_tail("    y = 2\n  return y\nassert True\n") == "assert True\n"
    assert parsable_tail("def f(:\n") == "def f(:\n"


@pytest.mark.parametrize("kwargs,message", [({"numbers": [999]}, "no task number"),
                                            ({"subset": "random:0.3"}, "stratified:FRACTION"),
                                            ({"limit": 0}, "at least 1")])
def test_bad_selections_are_clear(tasks, kwargs, message):
    with pytest.raises(UserError, match=message):
        select(tasks, **kwargs)


def test_missing_or_bad_data_file_is_clear(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_tasks(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x"}\n')
    with pytest.raises(UserError, match="lack the field"):
        load_tasks(bad)


def test_hub_unreachable_is_clear(tmp_path):
    # in a fresh process: `datasets` reads the offline switches when it is imported, and another test may have
    # imported it already (then it tried the network and took 20 s to give up)
    offline = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": "/nonexistent-fixbot-hf-home"}
    result = run_fixbot("eval", "--tasks", "0", "--out", str(tmp_path / "run"), env=offline)
    assert result.returncode == 2 and "pass --data FILE" in result.stderr and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("loading bigcode/humanevalpack") and len(set(lines)) == len(lines)


def test_an_unresolvable_hub_is_said_at_once(tmp_path):
    """No half minute of the hub client's retries when its address does not resolve (.invalid never does)."""
    env = {"HF_ENDPOINT": "https://fixbot-no-hub.invalid", "HF_HOME": str(tmp_path / "hf"),
           "HTTPS_PROXY": "", "https_proxy": ""}
    result = run_fixbot("eval", "--tasks", "0", "--out", str(tmp_path / "run"), env=env)
    assert result.returncode == 2 and "does not resolve" in result.stderr and "pass --data FILE" in result.stderr
    assert "Retry" not in result.stderr and "Traceback" not in result.stderr


def test_harness_feedback_shows_the_value(tasks, docker_sandbox):
    task = tasks[0]
    harness = humaneval_harness(docker_sandbox, task.buggy_module, task.entry_point, task.test)
    bad = harness.check(target_of(task).source)
    assert not bad.passed
    assert "assert True == False" in bad.feedback and "where True = has_close_elements([" in bad.feedback
    good = harness.check(function_source(task.canonical_module, task.entry_point))
    assert good.passed


def test_harness_reports_a_timeout(tasks, docker_sandbox):
    task = tasks[10]  # the buggy make_palindrome loops forever
    harness = humaneval_harness(docker_sandbox, task.buggy_module, task.entry_point, task.test, timeout_s=3)
    outcome = harness.check(target_of(task).source)
    assert outcome.timed_out and "loops forever" in outcome.feedback


def write_script(tmp_path: Path, answers: list[str]) -> Path:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    return path


def test_cli_eval_with_scripted_model_writes_results_and_resumes(tasks, data, tmp_path, sandbox_image):
    chosen = [tasks[0], tasks[2]]
    answers = [f"```python\n{function_source(t.canonical_module, t.entry_point)}```" for t in chosen]
    script, out = write_script(tmp_path, answers), tmp_path / "run"
    args = ["eval", "--model", f"scripted:{script}", "--data", str(data), "--tasks", "0,2", "--out", str(out)]
    first = run_fixbot(*args)
    assert first.returncode == 0, first.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pass_at_1"] == 1.0 and summary["n_tasks"] == 2 and summary["pass_at_1_by_iteration"][0] == 1.0
    assert summary["median_changed_lines"] == 1 and (out / "curve.png").stat().st_size > 1000
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in records] == ["Python/0", "Python/2"]
    assert records[0]["diff"].startswith("diff --git a/solution.py b/solution.py\n--- a/solution.py")  # git's form
    assert records[0]["attempts"][0]["node"] == "draft"
    # Re-running resumes: no model call is needed (the script has no answers left) and nothing is repeated.
    again = run_fixbot(*args)
    assert again.returncode == 0, again.stderr
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    other = run_fixbot(*args[:-2], "--iterations", "3", "--out", str(out))
    assert other.returncode == 2 and "another configuration (iterations differ)" in other.stderr


def test_examples_protocol_judges_with_the_hidden_tests(tasks, data, tmp_path, sandbox_image):
    # Passes the two visible examples but not the full tests: visible pass, hidden fail (overfitting). Without
    # the vote (on by default under examples) the first fix found is the one judged.
    overfit = "```python\ndef has_close_elements(numbers, threshold):\n    return threshold == 0.3\n```"
    out = tmp_path / "ex"
    result = run_fixbot("eval", "--model", f"scripted:{write_script(tmp_path, [overfit])}", "--data", str(data),
                        "--tasks", "0", "--protocol", "examples", "--no-vote", "--out", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pass_at_1"] == 0.0 and summary["visible_passed_hidden_failed"] == 1
    assert json.loads((out / "run.json").read_text())["vote"] is False


def test_crashed_and_errored_tasks_are_run_again(tmp_path):
    run = {"model": "m", "protocol": "tests", "iterations": 2, "schedule": "rising", "data": "d"}
    store = ResultsFile(tmp_path, run)
    ok = TaskResult(task_id="Python/1", bug_type="x", passed=True, visible_passed=True, iterations=1,
                    stop_reason="passed", prompt_tokens=1, completion_tokens=1, wall_s=1.0, changed_lines=1,
                    final_code="code", diff="")
    failed = TaskResult(task_id="Python/2", bug_type="x", passed=False, visible_passed=False, iterations=0,
                        stop_reason="error", prompt_tokens=0, completion_tokens=0, wall_s=0.1, changed_lines=None,
                        final_code=None, diff="", error="boom")
    store.append(ok)
    store.append(failed)
    with store.path.open("a") as f:
        f.write('{"task_id": "Python/3", "bug_ty')  # cut by a crash
    assert list(store.load()) == ["Python/1"]


def test_summary_curve_is_cumulative():
    def result(i: int, passed: bool, iterations: int) -> TaskResult:
        attempts = [{"completion_tokens": 10 * (k + 1), "latency_s": 0.5, "prompt_eval_s": 0.2}
                    for k in range(iterations)]
        return TaskResult(task_id=f"Python/{i}", bug_type="a" if i % 2 else "b", passed=passed,
                          visible_passed=passed, iterations=iterations, stop_reason="iterations", prompt_tokens=1,
                          completion_tokens=1, wall_s=2.0, changed_lines=1, final_code=None, diff="",
                          attempts=attempts)

    rows = [result(0, True, 1), result(1, True, 3), result(2, False, 3), result(3, True, 2)]
    s = summarize(rows, {"model": "m", "protocol": "tests", "iterations": 3, "schedule": "rising", "data": "d"})
    assert s["pass_at_1_by_iteration"] == [0.25, 0.5, 0.75] and s["pass_at_1"] == 0.75
    assert s["by_bug_type"] == {"a": {"n": 2, "passed": 2, "pass_at_1": 1.0},
                                "b": {"n": 2, "passed": 1, "pass_at_1": 0.5}}
    assert s["median_completion_tokens"] == 20 and s["model_calls"] == 9
    # 9 calls of 0.5 s, 0.2 s of each evaluating its prompt; no search; the rest of the 8 s is tests and fixbot's own
    assert s["time"] == {"tasks_s": 8.0, "model_s": 4.5, "prompt_eval_s": 1.8, "search_s": 0.0, "rest_s": 3.5}
    assert "time: model 4 s (evaluating prompts 2 s, generating and the rest 3 s)" in table(s)


def test_cli_selfcheck_on_a_few_tasks(data, sandbox_image):
    result = run_fixbot("eval", "--data", str(data), "--tasks", "0,1,2,119", "--selfcheck")
    assert result.returncode == 0 and "selfcheck: 4 tasks, 0 mismatch(es)" in result.stdout


def test_cli_selfcheck_finds_example_tests_the_canonical_solution_fails(data, tmp_path, sandbox_image):
    rows = [json.loads(line) for line in data.read_text().splitlines()[:2]]
    rows[1]["example_test"] = rows[1]["example_test"].replace("assert ", "assert not ", 1)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = run_fixbot("eval", "--data", str(broken), "--selfcheck")
    assert result.returncode == 1 and "selfcheck: 2 tasks, 1 mismatch(es)" in result.stdout
    assert "Python/1: canonical solution fails its example tests" in result.stdout


def test_cli_search_alone_fixes_one_edit_bugs_without_loading_a_model(data, tmp_path, sandbox_image):
    out = tmp_path / "search"
    missing = tmp_path / "no-such-script.json"  # never opened: --iterations 0 makes no model call
    result = run_fixbot("eval", "--model", f"scripted:{missing}", "--data", str(data), "--tasks", "0,2,4",
                        "--iterations", "0", "--search", "--out", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model"] == "none" and summary["model_calls"] == 0
    assert summary["passed"] == summary["fixed_by_search"] == 2  # Python/0 and /2 are one edit away; /4 is not
    assert summary["search_candidates"] > 50 and summary["search_candidates_per_s"] > 0
    records = {r["task_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert records["Python/0"]["fixed_by"] == "search" and records["Python/0"]["attempts"] == []
    assert records["Python/0"]["searches"][0]["fixed"] and records["Python/0"]["changed_lines"] == 1
    assert records["Python/4"]["passed"] is False and records["Python/4"]["searches"][0]["fixed"] is False
    assert "search:" in result.stdout


def test_cli_under_the_vote_every_mutant_that_passes_the_examples_is_a_candidate(data, tmp_path, sandbox_image):
    """Python/124's examples pass 12 one-edit mutants, the right ones last by changed lines and rank: the vote
    confirms them all, where the first fix found (--no-vote) confirms the first six."""
    runs = {}
    for vote in ("--vote", "--no-vote"):
        out = tmp_path / vote
        result = run_fixbot("eval", "--data", str(data), "--tasks", "124", "--protocol", "examples", "--search",
                            "--iterations", "0", vote, "--out", str(out))
        assert result.returncode == 0, result.stderr
        runs[vote] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()][0]
    voted, first = runs["--vote"], runs["--no-vote"]
    assert (voted["searches"][0]["survivors"], voted["searches"][0]["confirmed"]) == (12, 12)
    assert voted["selection"]["candidates"] == 12
    assert (first["searches"][0]["survivors"], first["searches"][0]["confirmed"]) == (12, 6)


def test_cli_a_task_the_wall_budget_stops_is_counted_and_the_budget_must_match_to_resume(data, tmp_path,
                                                                                        sandbox_image):
    """On a slow machine the wall-time budget, not the iterations, can end a task: the summary says how many."""
    wrong = "```python\ndef has_close_elements(numbers, threshold):\n    return 0\n```"
    script, out = write_script(tmp_path, [wrong] * 3), tmp_path / "run"
    args = ["eval", "--model", f"scripted:{script}", "--data", str(data), "--tasks", "0", "--iterations", "3",
            "--out", str(out)]
    result = run_fixbot(*args, "--task-seconds", "0.001")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reasons"] == {"time": 1} and summary["task_seconds"] == 0.001 and summary["passed"] == 0
    assert "1 task(s) stopped on the wall-time budget (0.001 s) before their iterations ran out" in result.stdout
    other = run_fixbot(*args)  # eval's default budget, 600 s: not the run that is in --out
    assert other.returncode == 2 and "another configuration (task_seconds differ)" in other.stderr
    bad = run_fixbot(*args[:-2], "--task-seconds", "0", "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and "--task-seconds must be more than 0" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_cli_zero_iterations_needs_the_search(data, tmp_path):
    result = run_fixbot("eval", "--data", str(data), "--tasks", "0", "--iterations", "0", "--out", str(tmp_path))
    assert result.returncode == 2 and "0 only with --search" in result.stderr


def test_cli_eval_with_the_tool_call_design_records_it(tasks, data, tmp_path, sandbox_image):
    fixed = function_source(tasks[2].canonical_module, tasks[2].entry_point)
    answers = [{"tool_call": {"name": "run_tests", "arguments": {"explanation": "wrong", "code": "def x(:"}}},
               {"tool_call": {"name": "run_tests", "arguments": {"explanation": "drop the + 1.0", "code": fixed}}}]
    script, out = tmp_path / "answers.json", tmp_path / "tc"
    script.write_text(json.dumps(answers))
    result = run_fixbot("eval", "--model", f"scripted:{script}", "--data", str(data), "--tasks", "2",
                        "--agent", "tool-call", "--few-shot", "--out", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["agent"], summary["few_shot"], summary["pass_at_1"]) == ("tool-call", True, 1.0)
    [record] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(a["node"], a["outcome"]) for a in record["attempts"]] == [("tool", "syntax"), ("tool", "passed")]
    other = run_fixbot("eval", "--model", f"scripted:{script}", "--data", str(data), "--tasks", "2", "--out", str(out))
    assert other.returncode == 2 and "agent" in other.stderr and "few_shot" in other.stderr


def test_a_run_json_from_before_the_agent_option_resumes_as_reflect(tmp_path):
    old = {"model": "m", "protocol": "tests", "iterations": 2, "schedule": "rising", "data": "d", "search": None}
    ResultsFile(tmp_path, old)
    ResultsFile(tmp_path, {**old, "agent": "reflect", "few_shot": False})  # the same run: no error
    with pytest.raises(UserError, match="agent"):
        ResultsFile(tmp_path, {**old, "agent": "thought-patch", "few_shot": False})


def test_cli_tool_call_design_needs_a_model_with_tools(data, tmp_path):
    result = run_fixbot("eval", "--data", str(data), "--tasks", "0", "--agent", "tool-call", "--model",
                        "transformers:some/model", "--out", str(tmp_path))
    assert result.returncode == 2 and "cannot call tools" in result.stderr and "Traceback" not in result.stderr


def test_cli_eval_with_samples_tests_them_in_one_batch_and_records_it(tasks, data, tmp_path, sandbox_image):
    fixed = function_source(tasks[2].canonical_module, tasks[2].entry_point)
    wrong = "```python\ndef truncate_number(number: float) -> float:\n    return number // 1.0\n```"
    script = write_script(tmp_path, [wrong, f"```python\n{fixed}```"])
    out = tmp_path / "samples"
    result = run_fixbot("eval", "--model", f"scripted:{script}", "--data", str(data), "--tasks", "2",
                        "--samples", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["samples"], summary["pass_at_1"], summary["median_iterations"]) == (2, 1.0, 1)
    [record] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(a["iteration"], a["node"], a["outcome"]) for a in record["attempts"]] == [
        (1, "sample", "passed"), (1, "draft", "failed")]


@pytest.mark.parametrize("extra, message", [(["--samples", "0"], "between 1 and 8"),
                                            (["--samples", "9", "--agent", "tool-call"], "between 1 and 8")])
def test_cli_bad_samples_are_clear(data, tmp_path, extra, message):
    result = run_fixbot("eval", "--data", str(data), "--tasks", "0", "--out", str(tmp_path), *extra)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_signal_during_a_task_stops_the_replay_and_that_task_runs_again(tasks, docker_sandbox, tmp_path):
    from bot.errors import Stopped
    from bot.llm import ScriptedLLM
    from eval.replay import ReplayConfig, replay

    class Terminated(ScriptedLLM):  # SIGTERM arrives while the model answers (bot/cli/main.py raises Stopped)
        def complete(self, messages, **options):  # type: ignore[no-untyped-def]
            raise Stopped("SIGTERM", signal_number=15)

    store = ResultsFile(tmp_path, {"model": "m", "protocol": "tests", "iterations": 1, "schedule": "rising",
                                   "data": "d"})
    with pytest.raises(Stopped):
        replay(tasks[:2], Terminated([]), docker_sandbox, ReplayConfig(), store)
    assert store.load() == {}  # neither recorded: the first is not an error to keep, the second never started
