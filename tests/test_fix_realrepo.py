"""The pipeline on failures real CI has (issue: real repositories), in the real Docker sandbox with repositories made
here: a mutant that fixes the failing test and breaks a neighbour, a partial fix, a hanging test, a candidate that
breaks the test module's import, a loop that never reads its counter, a bug split between a helper and its caller,
a time budget that holds, SIGTERM mid-run. A scripted model (tests/test_fix.py's ByNameLLM) drives the agent;
tests/test_fix_realrepo_bundled.py does some of these with the bundled model."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from bot.agent.options import SearchOptions
from bot.agent.steps.prompts import ORIGINAL
from bot.fix.verify.report import write_outputs
from bot.llm import Completion

from .conftest import FIXBOT, REPO
from .test_fix import ByNameLLM, fix_example, suite_after_patch

pytestmark = pytest.mark.timeout(900)

BFS = '''\
def reachable(graph, start, goal):
    """True when goal can be reached from start, breadth first."""
    queue = [start]
    seen = {start}
    while True:
        node = queue.pop(0)
        if node == goal:
            return True
        for nxt in graph.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return False
'''
BFS_FIXED = BFS.replace("while True:", "while queue:")
BFS_TESTS = '''\
from search import reachable

GRAPH = {"a": ["b"], "b": ["c"], "c": [], "x": []}


def test_unreachable_is_false():
    assert reachable(GRAPH, "a", "x") is False


def test_self():
    assert reachable(GRAPH, "a", "a") is True


def test_direct():
    assert reachable(GRAPH, "a", "b") is True


def test_far():
    assert reachable(GRAPH, "a", "c") is True
'''


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    return root


def test_a_mutant_that_breaks_a_passing_test_is_never_accepted(tmp_path, docker_client, sandbox_image):
    """`while True:` -> `while False:` makes the failing test pass and breaks the three others: the search must
    reject it (the guards run in the same batch), so the model is asked and its right fix is taken."""
    root = make_repo(tmp_path / "bfs", {"search.py": BFS, "tests/test_search.py": BFS_TESTS})
    llm = ByNameLLM({"reachable": BFS_FIXED})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    assert "while queue:" in result.diff and "while False" not in result.diff
    assert llm.asked == ["reachable"]  # the search found nothing acceptable
    repair = result.repairs[0]
    assert repair.guards == 3
    assert all(r.status != "regressed" for r in result.repairs)


def test_a_candidate_that_breaks_a_neighbour_is_told_what_it_broke(tmp_path, docker_client, sandbox_image):
    """The model's first answer fixes the failing test and breaks the others: a failed attempt whose feedback names
    a broken test; the second answer is right."""
    root = make_repo(tmp_path / "bfs", {"search.py": BFS, "tests/test_search.py": BFS_TESTS})
    answers = iter([BFS.replace("while True:", "while False:"), BFS_FIXED])

    class TwoAnswers(ByNameLLM):
        def complete(self, messages, **kw):
            self.asked.append(messages[-1].content)
            return Completion(text=f"```python\n{next(answers)}```", prompt_tokens=1, completion_tokens=1,
                              latency_s=0.0, model="two")

    llm = TwoAnswers({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed", result.message
    first = result.repairs[0].attempts[0]
    assert first.outcome == "failed"
    assert "breaks 3 test(s) that passed before" in first.feedback
    assert "tests/test_search.py::test_self" in first.feedback
    assert "test_self" in llm.asked[1]  # the reflection prompt carried it


def test_a_partial_fix_is_reported_apart_never_as_the_patch(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "two", {
        "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
        "tests/test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                              "def test_mul():\n    assert mul(2, 3) == 6\n"})
    llm = ByNameLLM({"add": "def add(a, b):\n    return a + b\n"})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, max_targets=2)
    assert result.status == "not_fixed" and result.diff == ""
    assert result.best is not None and "return a + b" in result.best.diff
    assert result.best.passes == ("tests/test_calc.py::test_add",)
    assert result.best.still_failing == ("tests/test_calc.py::test_mul",)
    out = tmp_path / "out"
    write_outputs(result, out)
    report = (out / "report.md").read_text()
    assert "## Best attempt (not a fix" in report and "## Patch" not in report
    assert not (out / "fix.patch").exists()


HANG = '''\
def find(items, target):
    """The index where target is, or would be inserted, in the sorted list items."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] < target:
            lo = mid
        else:
            hi = mid
    return lo
'''
HANG_FIXED = HANG.replace("lo = mid\n", "lo = mid + 1\n")
HANG_TESTS = '''\
from bisection import find


def test_last():
    assert find([1, 2, 3], 3) == 2


def test_first():
    assert find([1, 2, 3], 1) == 0


def test_empty():
    assert find([], 5) == 0
'''


def test_a_hanging_test_is_a_failure_to_repair_not_the_end_of_the_run(tmp_path, docker_client, sandbox_image):
    """find([1, 2, 3], 3) loops forever (a CPU loop: no memory grows): reproduction stops it at the per-test
    limit, the feedback says where it was running, and the repair goes on; the run takes seconds, not the suite
    timeout."""
    root = make_repo(tmp_path / "hang", {"bisection.py": HANG, "tests/test_bisection.py": HANG_TESTS})
    answers = [HANG.replace("lo = mid\n", "lo = mid + 2\n"), HANG_FIXED]

    class Answers(ByNameLLM):
        def complete(self, messages, **kw):
            self.asked.append(messages[-1].content)
            return Completion(text=f"```python\n{answers[min(len(self.asked), 2) - 1]}```", prompt_tokens=1,
                              completion_tokens=1, latency_s=0.0, model="answers")

    started = time.monotonic()
    llm = Answers({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, test_timeout_s=3.0)
    assert result.status == "fixed", result.message
    assert "lo = mid + 1" in result.diff
    assert time.monotonic() - started < 240
    assert result.runs[0].failed == ("tests/test_bisection.py::test_last",)
    assert "timed out after 3 s" in llm.asked[0] and "bisection.py:" in llm.asked[0]  # where it was running
    assert result.repairs[0].attempts[0].outcome == "failed"  # `lo = mid + 2` ends, at the wrong index


STUCK = '''\
def fit(label, width, measure=len):
    """The longest start of label whose measured width is at most width."""
    end = len(label)
    while measure(label) > width:
        end -= 1
    return label[:end]
'''
STUCK_TESTS = '''\
from labels import fit


def test_short_enough():
    assert fit("hi", 5) == "hi"


def test_cut():
    assert fit("hello", 3) == "hel"
'''


def test_a_loop_that_never_reads_its_counter_hangs_and_is_repaired_like_any_failure(tmp_path, docker_client,
                                                                                    sandbox_image):
    """test_cut hangs: a failing test (timed out at the per-test limit), not the end of the run. The search's
    mutants, most of which hang too, are each that mutant's failure; none fixes it (no one-edit family puts the
    counter into the loop's test), and the model's candidate does."""
    root = make_repo(tmp_path / "stuck", {"labels.py": STUCK, "tests/test_labels.py": STUCK_TESTS})
    llm = ByNameLLM({"fit": STUCK.replace("while measure(label) > width", "while measure(label[:end]) > width")})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions(), test_timeout_s=3.0)
    assert result.status == "fixed", result.message
    assert result.runs[0].failed == ("tests/test_labels.py::test_cut",)
    assert "+    while measure(label[:end]) > width:" in result.diff and result.changed_lines == 1
    assert llm.asked == ["fit"]


def test_a_candidate_that_breaks_the_import_is_a_failed_attempt(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "imp", {
        "stats.py": "def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n",
        "tests/test_stats.py": "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"})
    broken = "def mean(xs: List[int]) -> float:\n    return sum(xs) / len(xs)\n"
    answers = iter([broken, "def mean(xs):\n    return sum(xs) / len(xs)\n"])

    class Answers(ByNameLLM):
        def complete(self, messages, **kw):
            self.asked.append(messages[-1].content)
            return Completion(text=f"```python\n{next(answers)}```", prompt_tokens=1, completion_tokens=1,
                              latency_s=0.0, model="answers")

    result, _ = fix_example(docker_client, sandbox_image, root, Answers({}))
    assert result.status == "fixed", result.message
    first = result.repairs[0].attempts[0]
    assert first.outcome == "failed" and "NameError" in first.feedback and "List" in first.feedback


# The caller passes its arguments swapped AND the helper multiplies where it should divide: convert(10, "USD") is
# 12.5 instead of 8.0. No change of one function alone passes the failing test and the three that pass (rate(s, t)
# must be 1.25 for ("EUR", "USD") and 0.8 the other way, while the caller's product is symmetric), so the one-span
# repairs fail, the search with them, and only changing both fixes it.
SPLIT = '''\
RATES = {"EUR": 1.0, "USD": 1.25, "GBP": 0.8}  # what one euro buys of each currency


def convert(amount, currency, to="EUR"):
    """`amount` in `currency`, converted to the currency `to`, rounded to cents."""
    return round(amount * rate(to, currency), 2)


def rate(source, target):
    """How much of `target` one unit of `source` buys."""
    return RATES[target] * RATES[source]
'''
SPLIT_CALLER_FIXED = '''\
def convert(amount, currency, to="EUR"):
    return round(amount * rate(currency, to), 2)
'''
SPLIT_HELPER_FIXED = '''\
def rate(source, target):
    return RATES[target] / RATES[source]
'''
SPLIT_TESTS = '''\
from money import convert, rate


def test_dollars_to_euros():
    assert convert(10, "USD") == 8.0


def test_euros_to_dollars():
    assert convert(10, "EUR", to="USD") == 12.5


def test_euros_stay_euros():
    assert convert(5, "EUR") == 5.0


def test_the_rate_of_the_dollar():
    assert rate("EUR", "USD") == 1.25
'''


class SplitLLM(ByNameLLM):
    """Asked for one function, it fixes that one alone (never enough); asked for both, it answers with both, each
    in its own block."""

    def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None) -> Completion:
        asked = re.findall(r"Reply with the corrected (functions? `[^.]*)\.", messages[-1].content)[-1]
        names = tuple(re.findall(r"`(\w+)`", asked))
        self.asked.append(", ".join(names))
        answers = {"convert": SPLIT_CALLER_FIXED, "rate": SPLIT_HELPER_FIXED}
        text = "\n".join(f"```python\n{answers[n]}```" for n in names)
        return Completion(text=text, prompt_tokens=10, completion_tokens=10, latency_s=0.0, model="split")


def test_a_bug_split_between_a_helper_and_its_caller_is_fixed_by_changing_both(tmp_path, docker_client,
                                                                               sandbox_image):
    """Both functions are ranked (coverage of the failing test); the one-span repairs of each fail, the search finds
    no one-edit fix, and the two are repaired together: one answer with both functions, spliced each into its own
    span, the failing test passes, the guards still pass, and the whole suite verifies."""
    root = make_repo(tmp_path / "split", {"money.py": SPLIT, "tests/test_money.py": SPLIT_TESTS})
    llm = SplitLLM({})
    result, env = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    swept = [r for r in result.repairs if r.stop_reason == "search_only"]  # the search alone, before the model
    assert {r.target.qualname for r in swept} >= {"convert", "rate"} and not any(r.attempts for r in swept)
    assert all(not s.fixed for r in swept for s in r.searches)  # no one-edit fix of either
    repairs = [r for r in result.repairs if r not in swept]
    assert [(r.target.qualname, r.helper and r.helper.qualname, r.status) for r in repairs] == [
        ("convert", None, "not_fixed"), ("rate", None, "not_fixed"), ("convert", "rate", "fixed")]
    assert not any(s.base == ORIGINAL for r in repairs[:2] for s in r.searches)  # not searched twice
    assert llm.asked[0] == "convert" and llm.asked[-1] == "convert, rate" and "rate" in llm.asked
    pair = repairs[-1]
    assert pair.tests == ("tests/test_money.py::test_dollars_to_euros",) and pair.guards == 3
    changed = [line for line in result.diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["-    return round(amount * rate(to, currency), 2)",
                       "+    return round(amount * rate(currency, to), 2)",
                       "-    return RATES[target] * RATES[source]",
                       "+    return RATES[target] / RATES[source]"]  # byte-faithful: docstrings kept, two lines
    assert result.changed_lines == 2
    assert "split between `convert` (money.py, lines 4-6) and `rate` (money.py, lines 9-11)" in result.explanation
    out = tmp_path / "out"
    write_outputs(result, out)
    assert "| `money.py::convert` + `money.py::rate` |" in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["repairs"][-1]["helper"]["qualname"] == "rate"
    assert suite_after_patch(root, result.diff, env.image, env.pythonpath).green


class SlowLLM(ByNameLLM):
    def complete(self, messages, **kw):
        time.sleep(60)
        return super().complete(messages, **kw)


def test_the_time_budget_is_a_hard_limit(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "slow", {"search.py": BFS, "tests/test_search.py": BFS_TESTS})
    started = time.monotonic()
    result, _ = fix_example(docker_client, sandbox_image, root, SlowLLM({}), wall_s=25.0)
    took = time.monotonic() - started
    assert result.status == "not_fixed" and "time budget" in result.message
    assert took < 25.0 + 20.0, took  # the budget, the alarm's grace, and leaving the sandbox
    assert result.repairs and result.repairs[-1].stop_reason == "stopped"


def test_sigterm_writes_the_report_with_what_was_done(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "term", {"search.py": BFS, "tests/test_search.py": BFS_TESTS})
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["no code here"] * 50))
    out = tmp_path / "out"
    proc = subprocess.Popen([*FIXBOT, "fix", str(root), "--model", f"scripted:{script}", "--no-search",
                             "--out", str(out), "--iterations", "50"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:  # lines arrive as they happen, through a pipe
        seen.append(line)
        if "attempt " in line:
            proc.send_signal(signal.SIGTERM)
            break
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, "".join(seen) + rest
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "interrupted"
    assert report["repairs"] and report["repairs"][0]["attempts"], report


def test_bad_timeouts_are_one_line_errors(tmp_path):
    proc = subprocess.run([*FIXBOT, "fix", str(tmp_path), "--test-timeout", "0"], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert proc.returncode == 2 and "must be positive" in proc.stderr and "Traceback" not in proc.stderr
