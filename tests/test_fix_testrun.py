"""reproduce.testrun and its pytest plugin (bot/inside/probe.py) in the real Docker sandbox: per-test time limits,
selection by the plugin, and candidate runs that come back as failed runs whatever they do."""
from __future__ import annotations

import json
import re

import pytest

from bot.feedback import MEMORY_ERROR, NOT_COLLECTED, TIMEOUT_ERROR, pytest_feedback
from bot.fix.reproduce.command import BadTestCommand, TestCommand
from bot.fix.reproduce.testrun import run_many, run_tests
from sandbox import Job

pytestmark = pytest.mark.timeout(300)

SEARCH = '''import time


def find(xs, x):
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < x:
            lo = mid
        else:
            hi = mid
    return lo


def guarded(xs, x):
    try:
        return find(xs, x)
    except Exception:  # must not swallow the time limit
        return -1


def stubborn():
    while True:
        try:
            time.sleep(0.5)
        except BaseException:
            pass
'''
LOOP_LINE = 6  # `while lo < hi:` above
SLEEP_LINE = 25  # `time.sleep(0.5)` above
SEARCH_TESTS = '''from search import find, guarded


def test_empty():
    assert find([], 1) == 0


def test_hangs():
    assert find([1, 2, 3], 3) == 2


def test_hangs_behind_except_exception():
    assert guarded([1, 2, 3], 3) == 2


def test_first():
    assert find([1, 2, 3], 1) == 0
'''
STUBBORN_TESTS = '''from search import stubborn


def test_a_before():
    pass


def test_b_stubborn():
    stubborn()


def test_c_after():
    pass
'''
KTH = '''def kth(arr, k):
    return sorted(arr)[k]
'''
KTH_TESTS = '''import json
import os

import pytest

from kth import kth

with open(os.path.join(os.path.dirname(__file__), "kth.json"), encoding="utf-8") as f:
    CASES = [json.loads(line) for line in f]


@pytest.mark.parametrize("input_data,expected", CASES)
def test_kth(input_data, expected):
    assert kth(*input_data) == expected


@pytest.mark.parametrize("word", ["a::b", "x/y", "\u00e9t\u00e9", "with space"])
def test_odd_ids(word):
    assert word
'''
KTH_DATA = "[[[3, 1, 2], 0], 1]\n[[[5, 4, 9], 1], 5]\n[[[7], 0], 7]\n"


def encode(files: dict[str, str]) -> dict[str, bytes]:
    return {path: text.encode("utf-8") for path, text in files.items()}


def kth_repo(**more: str) -> dict[str, bytes]:
    return encode({"kth.py": KTH, "tests/test_kth.py": KTH_TESTS, "tests/kth.json": KTH_DATA, **more})


def test_a_hanging_test_fails_alone_within_its_limit(docker_sandbox):
    files = encode({"search.py": SEARCH, "tests/test_search.py": SEARCH_TESTS})
    run = run_tests(docker_sandbox, files, TestCommand(), test_timeout=3, timeout=120)
    hangs = {"tests/test_search.py::test_hangs", "tests/test_search.py::test_hangs_behind_except_exception"}
    assert run.failed == hangs and run.timeouts == hangs, run.output
    assert run.passed == {"tests/test_search.py::test_empty", "tests/test_search.py::test_first"}
    assert run.duration_s < 30 and not run.timed_out
    assert f"search.py:{LOOP_LINE}: TestTimeout" in run.output and "timed out after 3 s" in run.output
    assert all(2.9 < run.durations[t] < 10 for t in hangs) and run.durations["tests/test_search.py::test_empty"] < 1
    hung = next(f for f in run.failures if f.test_id == "tests/test_search.py::test_hangs")
    assert hung.error_type == TIMEOUT_ERROR and (hung.file, hung.line) == ("tests/test_search.py", 9)
    assert [(f.path, f.line, f.function) for f in hung.traceback][-1] == ("search.py", LOOP_LINE, "find")
    feedback = pytest_feedback(run.output, failures=run.failures)
    assert f"search.py:{LOOP_LINE} in find: while lo < hi:" in feedback and "timed out after 3 s" in feedback
    assert len(feedback.splitlines()) <= 8, feedback


def test_the_watchdog_ends_a_test_that_swallows_the_timeout(docker_sandbox):
    """`except BaseException` in a loop takes the timer's exception every time: past twice the limit and 5 s,
    the plugin's watchdog records the test as timed out, writes what it has and ends pytest."""
    files = encode({"search.py": SEARCH, "tests/test_stubborn.py": STUBBORN_TESTS})
    ids = [f"tests/test_stubborn.py::{name}" for name in ("test_a_before", "test_b_stubborn", "test_c_after")]
    run = run_many(docker_sandbox, [files], TestCommand(), select=ids, test_timeout=1, timeout=120)[0]
    assert run.duration_s < 30 and not run.timed_out and run.exit_code == 1
    assert run.passed == {ids[0]} and run.timeouts == {ids[1]}
    assert run.failed == {ids[1], ids[2]}  # the last one never ran: the process ended in the stubborn test
    assert "did not stop" in run.output and f'search.py", line {SLEEP_LINE} in stubborn' in run.output
    feedback = pytest_feedback(run.output, failures=run.failures)
    assert f"search.py:{SLEEP_LINE} in stubborn: time.sleep(0.5)" in feedback, feedback


def test_parametrized_ids_from_a_data_file_are_selected_by_the_plugin(docker_sandbox):
    """The ids of one run select the tests of the next, odd characters included; the user's options stay,
    the user's paths no longer widen the run; an id that is gone is a failed test, not an error."""
    files = kth_repo(**{"tests/test_other.py": "def test_other():\n    assert False\n"})
    everything = run_tests(docker_sandbox, files, TestCommand(("tests", "-q")))
    kth_ids = sorted(t for t in everything.passed if "::test_kth[" in t)
    assert kth_ids == ["tests/test_kth.py::test_kth[input_data0-1]", "tests/test_kth.py::test_kth[input_data1-5]",
                       "tests/test_kth.py::test_kth[input_data2-7]"]
    odd = sorted(t for t in everything.passed if "::test_odd_ids[" in t)
    assert len(odd) == 4 and "tests/test_other.py::test_other" in everything.failed
    gone = "tests/test_kth.py::test_kth[input_data9-0]"
    run = run_many(docker_sandbox, [files], TestCommand(("tests", "-q")), select=[kth_ids[1], *odd, gone])[0]
    assert run.passed == {kth_ids[1], *odd} and run.failed == {gone}, run.output
    assert [(f.test_id, f.error_type) for f in run.failures] == [(gone, NOT_COLLECTED)]
    # only the selected ids' file is collected (test_other.py is not, although the command names tests/)
    assert re.search(r"\b2 deselected\b", run.output) and "test_other" not in run.output and run.exit_code == 1
    assert f"test {gone} was not collected" in pytest_feedback(run.output, failures=run.failures)


def test_selection_holds_when_the_rootdir_is_not_the_working_dir(docker_sandbox):
    """sub/pytest.ini makes sub/ the rootdir: ids are relative to it, not to the working dir."""
    files = encode({"sub/pytest.ini": "[pytest]\n", "sub/kth.py": KTH, "sub/tests/kth.json": KTH_DATA,
                    "sub/tests/test_kth.py": KTH_TESTS.replace("from kth", "from sub.kth"), "sub/__init__.py": ""})
    command = TestCommand(("sub/tests",))
    everything = run_tests(docker_sandbox, files, command)
    assert "tests/test_kth.py::test_kth[input_data0-1]" in everything.passed, everything.output
    run = run_tests(docker_sandbox, files, command, select=["tests/test_kth.py::test_kth[input_data0-1]"])
    assert run.passed == {"tests/test_kth.py::test_kth[input_data0-1]"} and not run.failed, run.output


def test_why_ids_on_the_command_line_broke_runs(docker_sandbox):
    """What pytest does with node ids on its command line (fixbot passed them there before): a module that fails
    to import makes its ids "not found", a usage error (exit 4); this was the issue's `ERROR: not found:
    .../test_kth.py::test_kth[input_data0-5]`, after a candidate broke the import of the module under test."""
    broken = {**kth_repo(), "kth.py": b"def kth(arr: List[int], k):\n    return sorted(arr)[k]\n"}
    argv = ["python3", "-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors",
            "tests/test_kth.py::test_kth[input_data0-1]"]
    result = docker_sandbox.run_batch([Job(broken, argv, 60)])[0]
    assert result.exit_code == 4 and "ERROR: not found:" in result.stdout + result.stderr


def test_a_candidate_that_breaks_the_import_is_a_failed_run(docker_sandbox):
    ids = ["tests/test_kth.py::test_kth[input_data0-1]", "tests/test_kth.py::test_kth[input_data1-5]"]
    broken = {**kth_repo(), "kth.py": b"def kth(arr: List[int], k):\n    return sorted(arr)[k]\n"}
    syntax = {**kth_repo(), "kth.py": b"def kth(arr, k)\n    return sorted(arr)[k]\n"}
    good, bad, worse = run_many(docker_sandbox, [kth_repo(), broken, syntax], TestCommand(), select=ids)
    assert good.passed == set(ids) and not good.failed
    assert set(ids) <= bad.failed and not bad.passed and set(ids) <= worse.failed and not worse.passed
    feedback = pytest_feedback(bad.output, failures=bad.failures)
    assert "NameError: name 'List' is not defined" in feedback and "kth.py:1" in feedback, feedback
    assert "SyntaxError" in pytest_feedback(worse.output, failures=worse.failures)
    # the user's own run of the same files: a collection error is a failing test there too, never a refusal
    assert "tests/test_kth.py" in run_tests(docker_sandbox, broken, TestCommand()).failed


def test_a_selected_module_that_collects_again_is_not_failed(docker_sandbox):
    """An id without `::` is a module that failed to collect before: when it collects, its tests count."""
    files = {**kth_repo(), "kth.py": b"def kth(arr, k):\n    return sorted(arr)[-k]\n"}
    run = run_many(docker_sandbox, [files], TestCommand(), select=["tests/test_kth.py"])[0]
    assert "tests/test_kth.py" not in run.failed and "tests/test_kth.py::test_kth[input_data2-7]" in run.passed
    assert run.failed == {"tests/test_kth.py::test_kth[input_data1-5]"}  # sorted(arr)[-1] is 9, not 5


def test_usage_errors_raise_only_when_strict(docker_sandbox):
    files = kth_repo()
    with pytest.raises(BadTestCommand, match="pytest refused the test command"):
        run_tests(docker_sandbox, files, TestCommand(("--no-such-flag",)))
    ids = ["tests/test_kth.py::test_kth[input_data0-1]"]
    run = run_tests(docker_sandbox, files, TestCommand(("--no-such-flag",)), select=ids, strict=False)
    assert run.failed == set(ids) and "--no-such-flag" in pytest_feedback(run.output, failures=run.failures)
    unselected = run_tests(docker_sandbox, files, TestCommand(("--no-such-flag",)), strict=False)
    assert unselected.failed == {"<pytest>"} and not unselected.green



def test_a_conftest_that_does_not_load_is_named_with_its_error_and_what_to_do(docker_sandbox):
    """A conftest written for an older pytest (httpie's applies @pytest.fixture to a plugin's fixture, which
    today's pytest refuses): pytest calls it a usage error, but the test command is not what is wrong."""
    conftest = ("import pytest\n\n\n@pytest.fixture\ndef ca_bundle():\n    return 'ca.pem'\n\n\n"
                "pytest.fixture(autouse=True)(ca_bundle)\n")
    with pytest.raises(BadTestCommand) as refused:
        run_tests(docker_sandbox, kth_repo(**{"tests/conftest.py": conftest}), TestCommand())
    message = str(refused.value)
    assert message.startswith("the project's tests/conftest.py does not load, so pytest runs no test: "), message
    assert "ValueError: fixture is being applied more than once to the same function" in message
    assert "/work/run-" not in message and "`setup:` in .github/fixbot.yml" in message

def test_the_environment_written_before_the_command_is_the_tests_environment(docker_sandbox):
    """As the project's CI sets it: a locale whose encoding is not UTF-8 (PySnooper-1's bug shows only there), a
    variable the code reads, and PYTHONPATH for a src layout that is not installed."""
    files = encode({"src/greet.py": "import os\n\n\ndef greeting():\n    return os.environ.get('GREETING', '')\n",
                    "tests/test_greet.py": "import locale\n\nfrom greet import greeting\n\n\n"
                    "def test_greeting():\n    assert greeting() == 'hi there'\n\n\n"
                    "def test_locale():\n    assert locale.getpreferredencoding(False) == 'ANSI_X3.4-1968'\n"})
    command = TestCommand.parse("LANG=C PYTHONUTF8=0 PYTHONCOERCECLOCALE=0 GREETING='hi there' PYTHONPATH=src pytest")
    run = run_tests(docker_sandbox, files, command)
    assert run.passed == {"tests/test_greet.py::test_greeting", "tests/test_greet.py::test_locale"}, run.output
    assert not run.failed
    plain = run_tests(docker_sandbox, files, TestCommand(), strict=False)
    assert plain.failed == {"tests/test_greet.py"} and not plain.passed  # greet is not importable without it


def test_a_project_that_makes_every_warning_an_error_still_runs(docker_sandbox):
    """`filterwarnings = error`: a warning pytest gives about fixbot's own plugins would stop the whole run."""
    files = kth_repo(**{"pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
                        "kth.py": "def kth(arr, k):\n    return sorted(arr)[-k]\n"})
    failing = "tests/test_kth.py::test_kth[input_data1-5]"
    run = run_tests(docker_sandbox, files, TestCommand(), coverage=True, test_timeout=5)
    assert run.failed == {failing} and len(run.passed) == 6 and run.coverage, run.output
    fixed = {**files, "kth.py": KTH.encode()}
    broken, mended = run_many(docker_sandbox, [files, fixed], TestCommand(), select=[failing], test_timeout=5)
    assert broken.failed == {failing} and mended.passed == {failing}, (broken.output, mended.output)


def test_crashes_and_a_job_timeout_are_failed_runs(docker_sandbox):
    """An interpreter that dies (os._exit, a segfault, the memory limit) or a job that outlives its timeout: the
    selected tests failed, the output stays for the feedback."""
    ids = ["tests/test_kth.py::test_kth[input_data0-1]", "tests/test_kth.py::test_kth[input_data1-5]"]
    variants = [{**kth_repo(), "kth.py": body.encode()} for body in (
        "import os\n\n\ndef kth(arr, k):\n    os._exit(3)\n",
        "import ctypes\n\n\ndef kth(arr, k):\n    return ctypes.string_at(0)\n",
        "def kth(arr, k):\n    while True:\n        pass\n",
        # doubling in one C call (past the memory guard's reach, which acts between Python lines): the OOM kill
        "def kth(arr, k):\n    while True:\n        arr = arr + arr\n")]
    exited, segfault, hung, oom = run_many(docker_sandbox, variants, TestCommand(), select=ids, timeout=15)
    for run in (exited, segfault, hung, oom):
        assert run.failed >= set(ids) and not run.passed, run.output
    assert "ran out of memory" in pytest_feedback(oom.output, failures=oom.failures)
    assert exited.exit_code == 3 and segfault.exit_code != 0 and "Segmentation fault" in segfault.output
    assert hung.timed_out and "timed out" in pytest_feedback(hung.output, timed_out=True, failures=hung.failures)


def test_a_lead_killed_for_memory_runs_again_alone(docker_sandbox, monkeypatch):
    """The OOM killer may pick the process the other versions were forked from, whichever of them grew: when the
    first version's process was killed for memory, that version runs again alone; the forked ones keep their runs."""
    ids = ["tests/test_kth.py::test_kth[input_data0-1]", "tests/test_kth.py::test_kth[input_data1-5]"]
    grows = "def kth(arr, k):\n    while True:\n        arr = arr + arr\n"
    variants = [{**kth_repo(), "kth.py": body.encode()} for body in (grows, KTH, KTH.replace("[k]", "[k - 1]"))]
    batches: list[int] = []
    run_batch = docker_sandbox.run_batch

    def counted(jobs):
        batches.append(len(jobs))
        return run_batch(jobs)

    monkeypatch.setattr(docker_sandbox, "run_batch", counted)
    oom, right, wrong = run_many(docker_sandbox, variants, TestCommand(), select=ids, timeout=20)
    assert batches == [2, 1]  # two jobs (the first version with the second forked from it, the third), then one
    assert right.passed == set(ids) and not right.failed and wrong.failed == set(ids) and not wrong.passed
    assert oom.failed >= set(ids) and "ran out of memory" in pytest_feedback(oom.output, failures=oom.failures)


def test_the_job_carries_the_limit_and_the_selection_not_the_ids():
    from bot.fix.reproduce.testrun import SELECT, pytest_job

    job = pytest_job(kth_repo(), TestCommand(("tests", "-x")), select=["b::t", "a::t", "b::t"], test_timeout=2.5)
    assert job.env["FIXBOT_TEST_TIMEOUT"] == "2.5" and job.env["FIXBOT_SELECT"] == SELECT
    assert json.loads(job.files[SELECT]) == ["a::t", "b::t"]
    assert list(job.command[3:6]) == ["tests", "-x", "-p"] and not any("::" in word for word in job.command)
    assert "FIXBOT_TEST_TIMEOUT" not in pytest_job(kth_repo(), TestCommand()).env


def test_a_loop_at_import_fails_its_module_only(docker_sandbox):
    """A candidate whose module-level code loops (a table built by a loop that never ends): the module's import
    has its own, longer limit; the module is a failed, timed-out collection, the other modules' tests pass."""
    table = "TABLE = []\ni = 0\nwhile i < 3:\n    TABLE = TABLE[:2] + [i]\n"  # i never grows (nor the memory)
    files = encode({"table.py": "TABLE = [0, 1, 2]\n", "tests/test_table.py": "from table import TABLE\n\n\n"
                    "def test_table():\n    assert TABLE == [0, 1, 2]\n", "tests/test_other.py": "def test_other():\n"
                    "    pass\n"})
    ids = ["tests/test_table.py::test_table", "tests/test_other.py::test_other"]
    good, looping = run_many(docker_sandbox, [files, {**files, "table.py": table.encode()}], TestCommand(),
                             select=ids, test_timeout=1, timeout=120)
    assert good.passed == set(ids) and not good.failed
    assert looping.passed == {ids[1]} and looping.failed == {"tests/test_table.py", ids[0]}, looping.output
    assert looping.timeouts == {"tests/test_table.py"} and looping.duration_s < 60
    feedback = pytest_feedback(looping.output, failures=looping.failures)
    assert "importing the module timed out" in feedback and "table.py:3 in <module>: while i < 3:" in feedback


def test_a_hanging_unittest_testcase_fails_alone(docker_sandbox):
    """unittest's TestCase.run catches everything (a bare except) and records it as the test's error: the time
    limit still fails that test alone, with the loop's line."""
    tests = ("import unittest\n\nfrom search import find\n\n\nclass TestFind(unittest.TestCase):\n"
             "    def test_hangs(self):\n        self.assertEqual(find([1, 2, 3], 3), 2)\n\n"
             "    def test_empty(self):\n        self.assertEqual(find([], 1), 0)\n")
    files = encode({"search.py": SEARCH, "test/test_search.py": tests})
    run = run_tests(docker_sandbox, files, TestCommand(("test/test_search.py",)), test_timeout=2, timeout=120)
    assert run.failed == run.timeouts == {"test/test_search.py::TestFind::test_hangs"}, run.output
    assert run.passed == {"test/test_search.py::TestFind::test_empty"}
    assert f"search.py:{LOOP_LINE} in find: while lo < hi:" in pytest_feedback(run.output, failures=run.failures)


COUNTDOWN = """def countdown(n):
    steps = []
    while n != 0:
        steps.append(n)
        n -= 2
    return steps
"""
COUNTDOWN_TESTS = """from countdown import countdown


def test_a_moderate_allocation():
    assert len(bytearray(100 * 2 ** 20)) == 100 * 2 ** 20


def test_b_odd_start_grows_forever():
    assert countdown(5) == [5, 3, 1]


def test_c_after_the_memory_is_freed():
    blocks = [bytearray(2 ** 20) for _ in range(300)]  # with the grown list still held, past the guard's floor
    assert len(blocks) == 300 and countdown(4) == [4, 2]
"""


def test_a_test_that_keeps_growing_a_list_fails_alone_with_its_line(docker_sandbox):
    """`while n != 0` with n stepping over 0 grows a list by ~500 MB/s: without the memory guard, the kernel's OOM
    killer ended the run in ~2 s (about half the runs at a 3 s limit) with no test and no line. The guard stops
    the test first, every time (5 runs, a time limit it never reaches), the memory is freed, the others pass."""
    files = encode({"countdown.py": COUNTDOWN, "tests/test_countdown.py": COUNTDOWN_TESTS})
    ids = [f"tests/test_countdown.py::{name}" for name in (
        "test_a_moderate_allocation", "test_b_odd_start_grows_forever", "test_c_after_the_memory_is_freed")]
    runs = run_many(docker_sandbox, [files] * 5, TestCommand(), select=ids, test_timeout=20, timeout=120)
    for run in runs:
        assert run.failed == {ids[1]} and run.passed == {ids[0], ids[2]}, run.output
        assert not run.timeouts and not run.timed_out and "ran out of memory" not in run.output, run.output
        assert "TestMemoryLimit: fixbot: the test used more than" in run.output and run.duration_s < 30
        grew = next(f for f in run.failures if f.test_id == ids[1])
        assert grew.error_type == MEMORY_ERROR and (grew.file, grew.line) == ("tests/test_countdown.py", 9)
        assert grew.message and re.fullmatch(r"the test used more than \d+ MB of memory", grew.message)
        innermost = grew.traceback[-1]
        assert (innermost.path, innermost.function) == ("countdown.py", "countdown") and innermost.line in (3, 4)
        feedback = pytest_feedback(run.output, failures=run.failures)
        assert re.search(r"it was growing here .*\n.*\n  countdown\.py:[34] in countdown: (while n != 0:|steps"
                         r"\.append\(n\))$", feedback, re.M), feedback
        assert len(feedback.splitlines()) <= 6, feedback


def test_a_suite_whose_coverage_is_too_large_to_bring_back_keeps_its_outcomes(docker_sandbox, monkeypatch):
    """The sandbox brings back no file over its cap (8 MB; youtube-dl's 1,298 tests gave 15 MB of per-test
    coverage as node ids per line). The outcomes are in a file of their own, so the run still knows what passed
    (which tests to guard) and what needed the network; the ranking then has the tracebacks only."""
    import sandbox.wire

    body = "".join(f"    total += {i}\n" for i in range(300))
    tests = "".join(f"def test_{i}():\n    assert long() == {sum(range(300)) + (i == 0)}\n\n\n" for i in range(20))
    files = encode({"long.py": f"def long():\n    total = 0\n{body}    return total\n",
                    "tests/test_long.py": "from long import long\n\n\n" + tests})
    measured = run_tests(docker_sandbox, files, TestCommand(), coverage=True, strict=False)
    assert measured.coverage and len(measured.coverage["long.py"][5]) == 20, measured.output  # ids, indexed
    assert len(measured.passed) == 19 and measured.failed == {"tests/test_long.py::test_0"}
    monkeypatch.setattr(sandbox.wire, "COLLECT_BYTES", 8 * 1024)  # the probe's outcomes fit; the coverage does not
    capped = run_tests(docker_sandbox, files, TestCommand(), coverage=True, strict=False)
    assert capped.coverage is None
    assert capped.passed == measured.passed and capped.failed == measured.failed, capped.output


PARSE = '''def parse_seconds(text):
    if not text:
        return 0.0
    return float(text.rstrip("s"))
'''
PARSE_TESTS = '''import unittest

from parse import parse_seconds


class TestParse(unittest.TestCase):
    def test_missing(self):
        self.assertEqual(parse_seconds(None), None)

    def test_reversed(self):
        self.assertEqual(None, parse_seconds(""))
'''


def test_a_unittest_comparison_is_said_the_right_way_round(docker_sandbox):
    """unittest prints `0.0 != None` for either order of assertEqual's arguments; the feedback says which side
    the code gave and which the test expects, read from the assertion's line."""
    files = encode({"parse.py": PARSE, "tests/test_parse.py": PARSE_TESTS})
    ids = ["tests/test_parse.py::TestParse::test_missing", "tests/test_parse.py::TestParse::test_reversed"]
    missing, reversed_ = (run_tests(docker_sandbox, files, TestCommand(), select=[i]) for i in ids)
    assert "0.0 != None" in missing.output and "None != 0.0" in reversed_.output, missing.output
    assert [(f.actual, f.expected) for f in [*missing.failures, *reversed_.failures]] == [("0.0", "None")] * 2
    said = "So `parse_seconds(None)` gave `0.0`; the test expects `None`."
    assert said in pytest_feedback(missing.output, failures=missing.failures)
    said = "So `parse_seconds('')` gave `0.0`; the test expects `None`."
    assert said in pytest_feedback(reversed_.output, failures=reversed_.failures)
