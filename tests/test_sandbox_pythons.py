"""fixbot's test runs (reproduce.testrun and its pytest plugin, probe.py + probe_memory.py) in each sandbox base:
Python 3.9 (Debian bullseye: pytest 6.0, coverage 5.1), 3.11 (bookworm: pytest 7.2, coverage 6.5) and 3.13
(trixie: pytest 8.3, coverage 7.6). One small repository, made here, runs in each: a failing and a passing test
with per-test coverage, a hanging test stopped by the per-test limit, a test stopped by the memory guard."""
from __future__ import annotations

import re

import pytest

from bot.feedback import MEMORY_ERROR, TIMEOUT_ERROR, pytest_feedback
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from sandbox.image import PYTHONS, build_command, default_image, image_exists

pytestmark = pytest.mark.timeout(300)

CALC = """def mean(xs):
    if not xs:
        return 0.0
    return sum(xs) / (len(xs) + 1)


def countdown(n):
    while n != 0:
        n -= 2
    return n


def steps(n):
    seen = []
    while n != 0:
        seen.append(n)
        n -= 2
    return seen
"""
EMPTY_LINE, BUG_LINE, BOTH_LINE = 3, 4, 2  # `return 0.0`, the bug, `if not xs:`
LOOP_LINES = (8, 9)  # countdown's `while n != 0:` and `n -= 2`
CALC_TESTS = """import sys

from calc import mean


def test_empty():
    assert mean([]) == 0.0


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_python():
    assert "%d.%d" % sys.version_info[:2] == {python!r}
"""
STOP_TESTS = """from calc import countdown, steps


def test_countdown_hangs():
    assert countdown(5) == -1


def test_steps_grow():
    assert steps(5) == [5, 3, 1]


def test_steps():
    assert steps(4) == [4, 2]
"""
CALC_IDS = {name: f"tests/test_calc.py::test_{name}" for name in ("empty", "mean", "python")}
STOP_IDS = {name: f"tests/test_stops.py::test_{name}" for name in ("countdown_hangs", "steps_grow", "steps")}


@pytest.fixture(scope="module", params=list(PYTHONS))
def python_sandbox(request, docker_client):
    """(version, a one-container sandbox on that version's image); a missing image fails with its build command."""
    from sandbox.docker_sandbox import DockerSandbox

    python = request.param
    image = default_image(python)
    if not image_exists(docker_client, image):
        pytest.fail(f"sandbox image {image} (Python {python}) is missing: run `{build_command(image)}` "
                    "(or `make setup`, which builds every base)")
    with DockerSandbox(image=image, pool_size=1, client=docker_client) as sb:
        yield python, sb


def repo(python: str) -> dict[str, bytes]:
    files = {"calc.py": CALC, "tests/test_calc.py": CALC_TESTS.format(python=python),
             "tests/test_stops.py": STOP_TESTS}
    return {path: text.encode() for path, text in files.items()}


def test_the_interpreter_is_the_one_named(python_sandbox):
    python, sb = python_sandbox
    result = sb.run({}, ["python3", "-c", "import sys, pytest, coverage; print('%d.%d' % sys.version_info[:2])"])
    assert result.ok and result.stdout.strip() == python, result.stderr
    assert PYTHONS[python] in sb.run({}, ["cat", "/etc/os-release"]).stdout


def test_failing_and_passing_tests_with_per_test_coverage(python_sandbox):
    python, sb = python_sandbox
    run = run_tests(sb, repo(python), TestCommand(("tests/test_calc.py",)), coverage=True, timeout=120)
    assert run.passed == {CALC_IDS["empty"], CALC_IDS["python"]} and run.failed == {CALC_IDS["mean"]}, run.output
    assert run.exit_code == 1 and not run.timed_out and not run.timeouts
    failure, = run.failures
    assert (failure.test_id, failure.file, failure.line) == (CALC_IDS["mean"], "tests/test_calc.py", 11)
    assert failure.error_type == "AssertionError" and (failure.expected, failure.actual) == ("2", "1.5")
    assert run.coverage is not None and set(run.coverage) == {"calc.py"}, run.coverage  # tests/ is left out
    lines = run.coverage["calc.py"]
    assert lines[BOTH_LINE] == {CALC_IDS["empty"], CALC_IDS["mean"]}
    assert lines[EMPTY_LINE] == {CALC_IDS["empty"]} and lines[BUG_LINE] == {CALC_IDS["mean"]}
    assert set(lines) == {BOTH_LINE, EMPTY_LINE, BUG_LINE}  # module-level lines ran at import: no test's
    assert "assert 1.5 == 2" in pytest_feedback(run.output, failures=run.failures)


def test_a_hanging_test_is_stopped_by_its_own_limit(python_sandbox):
    python, sb = python_sandbox
    select = [STOP_IDS["countdown_hangs"], STOP_IDS["steps"]]
    run = run_tests(sb, repo(python), TestCommand(), select=select, test_timeout=2, timeout=120)
    assert run.failed == run.timeouts == {STOP_IDS["countdown_hangs"]}, run.output
    assert run.passed == {STOP_IDS["steps"]} and not run.timed_out and run.duration_s < 30
    assert 1.9 < run.durations[STOP_IDS["countdown_hangs"]] < 10
    hung, = run.failures
    assert hung.error_type == TIMEOUT_ERROR and (hung.file, hung.line) == ("tests/test_stops.py", 5)
    innermost = hung.traceback[-1]
    assert (innermost.path, innermost.function) == ("calc.py", "countdown") and innermost.line in LOOP_LINES
    feedback = pytest_feedback(run.output, failures=run.failures)
    assert "timed out after 2 s" in feedback and re.search(r"calc\.py:[89] in countdown", feedback), feedback


def test_a_test_that_keeps_growing_a_list_is_stopped_by_the_memory_guard(python_sandbox):
    python, sb = python_sandbox
    select = [STOP_IDS["steps_grow"], STOP_IDS["steps"]]
    run = run_tests(sb, repo(python), TestCommand(), select=select, test_timeout=20, timeout=120)
    assert run.failed == {STOP_IDS["steps_grow"]} and run.passed == {STOP_IDS["steps"]}, run.output
    assert not run.timeouts and "ran out of memory" not in run.output and run.duration_s < 30
    grew, = run.failures
    assert grew.error_type == MEMORY_ERROR and (grew.file, grew.line) == ("tests/test_stops.py", 9)
    assert (grew.traceback[-1].path, grew.traceback[-1].function) == ("calc.py", "steps")
