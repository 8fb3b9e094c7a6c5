"""run_many's forked variants (bot/inside/probe_variants.py, probe_swap.py) in the real Docker sandbox: versions of a
repository that differ in function bodies run in one pytest process, which collects once and forks for each; each
must come back exactly as its own process gives it (the old path, run here side by side), whatever it does: pass,
fail with the variant's line in the traceback, hang, crash the interpreter, run out of memory. A variant the swap
cannot give exactly (a module constant, a function that ran at collection) runs in a process of its own."""
from __future__ import annotations

import re
import time

import pytest

from bot.feedback import NOT_COLLECTED, TIMEOUT_ERROR, pytest_feedback
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import pytest_job, read_run, run_many
from bot.fix.types import TestRun
from sandbox.image import PYTHONS, build_command, default_image, image_exists

pytestmark = pytest.mark.timeout(600)

M = '''import ctypes
import os
import time

LIMIT = 10


def add(a, b):
    return a - b


def scale(xs, k):
    total = []
    for x in xs:
        total.append(check(x) * k)
    return total


def check(x):
    if x < 0:
        raise ValueError("negative: %r" % (x,))
    return x


def cases():
    return [1, 2, 3]


class Box:
    def __init__(self, items):
        self.items = items

    def size(self):
        return len(self.items)

    @staticmethod
    def unit():
        return 1

    @classmethod
    def empty(cls):
        return cls([])

    @property
    def first(self):
        return self.items[0]
'''
N = '''from m import add


def add_all(xs):
    total = 0
    for x in xs:
        total = add(total, x)
    return total
'''
TESTS = '''import pytest

from m import LIMIT, Box, add, cases, scale
from n import add_all


def test_add():
    assert add(2, 3) == 5


def test_add_all():
    assert add_all([1, 2, 3]) == 6


def test_scale():
    assert scale([1, 2], 3) == [3, 6]


def test_box():
    assert Box([4, 5]).size() == 2 and Box.unit() == 1


def test_box_more():
    assert Box.empty().size() == 0 and Box([7, 8]).first == 7


@pytest.mark.parametrize("x", cases())
def test_cases(x):
    assert 0 < x < LIMIT
'''
IDS = [f"tests/test_m.py::test_{name}" for name in ("add", "add_all", "scale", "box", "box_more")]
CASE_IDS = [f"tests/test_m.py::test_cases[{x}]" for x in (1, 2, 3)]


@pytest.fixture(scope="module")
def one_sandbox(docker_client, sandbox_image):
    """One container: every variant of a batch forks from the first (with two, the second half forks from its own
    first)."""
    from sandbox.docker_sandbox import DockerSandbox

    with DockerSandbox(image=sandbox_image, pool_size=1, client=docker_client) as sb:
        yield sb


def repo(m: str = M) -> dict[str, bytes]:
    return {"m.py": m.encode(), "n.py": N.encode(), "tests/test_m.py": TESTS.encode()}


def mutant(old: str, new: str) -> dict[str, bytes]:
    assert M.count(old) == 1, old
    return repo(M.replace(old, new))


def old_path(sandbox, variants, **options) -> list[TestRun]:
    """Each variant in a process of its own, as run_many ran every candidate before."""
    jobs = [pytest_job(files, TestCommand(), **options) for files in variants]
    return [read_run(job, result, strict=False) for job, result in zip(jobs, sandbox.run_batch(jobs))]


def clean(text: str | None) -> str:
    """What differs between any two runs: the run's directory, object addresses, timings."""
    text = re.sub(r"/work/run-[^/\s]+/\d+", "<root>", text or "")
    return re.sub(r"0x[0-9a-f]+", "0x?", re.sub(r" in \d+\.\d+s", " in ?s", text))


def essence(run: TestRun) -> dict:
    """Everything the harness and the briefing read from a run (bot/fix/repair/harness.py, briefing.py)."""
    failures = sorted((f.test_id, f.file, f.line, clean(f.assertion), f.expected, f.actual, f.error_type,
                       clean(f.message), tuple((fr.path, fr.line, fr.function, fr.code) for fr in f.traceback))
                      for f in run.failures)
    return {"exit_code": run.exit_code, "passed": run.passed, "failed": run.failed, "timeouts": run.timeouts,
            "timed_out": run.timed_out, "failures": failures, "durations": set(run.durations),
            "command": run.command, "coverage": run.coverage,
            "feedback": clean(pytest_feedback(run.output, timed_out=run.timed_out, timeout_s=2.0,
                                              failures=run.failures))}


def rootdir(run: TestRun) -> str:
    found = re.search(r"^rootdir: ([^,\s]+)", run.output, re.M)
    assert found, run.output
    return found[1]


def forks(runs: list[TestRun]) -> list[bool]:
    """Which runs forked from an earlier one: a process of their own has a work dir of its own."""
    return [rootdir(run) in {rootdir(r) for r in runs[:i]} for i, run in enumerate(runs)]


def assert_same(fast: list[TestRun], slow: list[TestRun], *, forked: list[bool]) -> None:
    assert forks(fast) == forked, [run.output[-600:] for run in fast]
    for i, (a, b) in enumerate(zip(fast, slow)):
        assert essence(a) == essence(b), f"variant {i}:\n{a.output}\n---- its own process:\n{b.output}"


def test_forked_variants_run_as_their_own_processes(one_sandbox):
    variants = [
        repo(),  # the bug: add subtracts
        mutant("return a - b", "return a + b"),  # the fix: n.py's `from m import add` copy must see it too
        # a line more in add moves scale: the traceback shows scale's new line and its code
        repo(M.replace("    return a - b\n", "    result = a - b\n    return result\n")
             .replace("check(x) * k)", "check(x) * k[0])")),
        mutant("return len(self.items)", "return len(self.items) + 1"),  # a method
        mutant("        return 1\n", "        return 2\n"),  # a staticmethod
        mutant("return self.items[0]", "return self.items[-1]"),  # a property
        mutant("return cls([])", "return cls([0])"),  # a classmethod
        mutant("    if x < 0:\n", "    while x >= 0:\n        pass\n    if x < 0:\n"),  # hangs in test_scale
    ]
    options = {"select": IDS, "test_timeout": 2, "timeout": 120}
    started = time.monotonic()
    fast = run_many(one_sandbox, variants, TestCommand(), **options)
    print(f"forked: {time.monotonic() - started:.1f} s")
    slow = old_path(one_sandbox, variants, **options)
    assert_same(fast, slow, forked=[False] + [True] * 7)
    base, fixed, moved, method, static, prop, classmethod, hanging = fast
    assert base.failed == {IDS[0], IDS[1]} and fixed.passed == set(IDS) and not fixed.failed
    failure = next(f for f in moved.failures if f.test_id == IDS[2])
    assert failure.error_type == "TypeError" and failure.traceback[-1].path == "m.py"
    assert (failure.traceback[-1].line, failure.traceback[-1].code) == (16, "total.append(check(x) * k[0])")
    assert "m.py:16: TypeError" in moved.output
    bug = {IDS[0], IDS[1]}  # add still subtracts in these
    assert method.failed == bug | {IDS[3], IDS[4]} and static.failed == bug | {IDS[3]}
    assert prop.failed == bug | {IDS[4]} and classmethod.failed == bug | {IDS[4]}
    assert hanging.timeouts == {IDS[2]} and hanging.failed == bug | {IDS[2]}
    assert next(f for f in hanging.failures if f.test_id == IDS[2]).error_type == TIMEOUT_ERROR
    feedback = pytest_feedback(hanging.output, failures=hanging.failures)
    assert re.search(r"m\.py:2[01] in check: (while x >= 0:|pass)$", feedback, re.M), feedback


def test_a_variant_that_kills_its_process_fails_alone(one_sandbox):
    """os._exit, a segfault, a test that swallows the time limit (the watchdog ends the child), the kernel's OOM
    killer: that variant's selected tests failed, as in a process of its own; the next variant runs as usual."""
    variants = [
        repo(),
        mutant("    return a - b\n", "    os._exit(3)\n"),
        mutant("    return a - b\n", "    return ctypes.string_at(0)\n"),
        mutant("    return a - b\n", "    while True:\n        try:\n            time.sleep(0.5)\n"
                                     "        except BaseException:\n            pass\n"),
        # doubling in one C call, past the memory guard's reach: the OOM killer ends the child
        mutant("    return a - b\n", "    xs = [a, b]\n    while True:\n        xs = xs + xs\n"),
        mutant("return a - b", "return a + b"),
    ]
    options = {"select": IDS[:2], "test_timeout": 2, "timeout": 120}
    fast = run_many(one_sandbox, variants, TestCommand(), **options)
    slow = old_path(one_sandbox, variants, **options)
    # The kernel's OOM killer chooses its victim: mostly the child that doubles its list, at times the lead it
    # forked from (seen once in a full CI run); the lead then runs again alone (reproduce/testrun.py, run_many), so
    # the variants forked before the OOM keep the old lead's work dir and those after it run alone.
    lead_killed = [False, False, True, True, False, False]
    assert_same(fast, slow, forked=lead_killed if forks(fast) == lead_killed else [False] + [True] * 5)
    _, exited, segfault, stubborn, oom, fixed = fast
    assert exited.exit_code == 3 and exited.failed == set(IDS[:2])
    assert segfault.exit_code != 0 and "Segmentation fault" in segfault.output and not segfault.passed
    assert stubborn.timeouts == {IDS[0]} and "did not stop" in stubborn.output and stubborn.exit_code == 1
    assert "ran out of memory" in pytest_feedback(oom.output, failures=oom.failures) and not oom.passed
    assert fixed.passed == set(IDS[:2]) and not fixed.failed


def test_a_variant_past_its_time_limit_is_killed(one_sandbox):
    """Without per-test limits, a hanging variant runs until its own limit (the job's): the parent kills it, it
    timed out, and the variant after it runs as usual."""
    variants = [repo(), mutant("    return a - b\n", "    while True:\n        pass\n"),
                mutant("return a - b", "return a + b")]
    options = {"select": IDS[:2], "timeout": 8}
    started = time.monotonic()
    fast = run_many(one_sandbox, variants, TestCommand(), **options)
    assert time.monotonic() - started < 40
    slow = old_path(one_sandbox, variants, **options)
    assert_same(fast, slow, forked=[False, True, True])
    assert fast[1].timed_out and fast[1].failed == set(IDS[:2]) and fast[2].passed == set(IDS[:2])


def test_what_the_swap_cannot_give_runs_in_a_process_of_its_own(one_sandbox):
    """A module constant, a function that ran while the tests were collected (parametrize's arguments), a new
    module-level name, a syntax error, a changed test file: each runs the old way, with the same result."""
    variants = [
        repo(),
        mutant("LIMIT = 10", "LIMIT = 3"),
        mutant("return [1, 2, 3]", "return [1, 2, 30]"),
        repo(M + "\n\ndef extra():\n    return 0\n"),
        mutant("return a - b", "return a -"),
        {**repo(), "tests/test_m.py": TESTS.replace("(2, 3) == 5", "(2, 3) == -1").encode()},
        mutant("return a - b", "return a + b"),  # swappable: forked
    ]
    options = {"select": IDS + CASE_IDS, "test_timeout": 2, "timeout": 120}
    fast = run_many(one_sandbox, variants, TestCommand(), **options)
    slow = old_path(one_sandbox, variants, **options)
    assert_same(fast, slow, forked=[False] * 6 + [True])
    assert fast[1].failed == {CASE_IDS[2], IDS[0], IDS[1]}
    assert [(f.test_id, f.error_type) for f in fast[2].failures if f.test_id in CASE_IDS] == [
        (CASE_IDS[2], NOT_COLLECTED)]  # parametrize's arguments are now 1, 2, 30
    assert "SyntaxError" in pytest_feedback(fast[4].output, failures=fast[4].failures)


def test_forking_is_faster_than_a_process_per_variant(docker_sandbox):
    """A project whose import takes a second: ten mutants in forked children against ten processes."""
    slow_import = M.replace("LIMIT = 10\n", "LIMIT = 10\ntime.sleep(1)\n")
    variants = [repo(slow_import)] + [repo(slow_import.replace("return a - b", f"return a - b + {k}"))
                                       for k in range(10)]
    options = {"select": IDS[:2], "test_timeout": 2, "timeout": 120}
    run_many(docker_sandbox, variants[:2], TestCommand(), **options)  # both containers warm
    started = time.monotonic()
    slow = old_path(docker_sandbox, variants, **options)
    slow_s = time.monotonic() - started
    started = time.monotonic()
    fast = run_many(docker_sandbox, variants, TestCommand(), **options)
    fast_s = time.monotonic() - started
    print(f"11 variants: {slow_s:.1f} s a process each, {fast_s:.1f} s forked (ratio {fast_s / slow_s:.2f})")
    assert sum(forks(fast)) == 9  # two groups (one per container), each one process and its forks
    assert_same(fast, slow, forked=forks(fast))
    assert fast_s / slow_s < 0.5


@pytest.fixture(scope="module", params=list(PYTHONS))
def python_sandbox(request, docker_client):
    from sandbox.docker_sandbox import DockerSandbox

    image = default_image(request.param)
    if not image_exists(docker_client, image):
        pytest.fail(f"sandbox image {image} (Python {request.param}) is missing: run `{build_command(image)}`")
    with DockerSandbox(image=image, pool_size=1, client=docker_client) as sb:
        yield sb


def test_forked_variants_on_each_python(python_sandbox):
    """pytest 6.0 (3.9), 7.2 (3.11), 8.3 (3.13): the same variants, forked and in processes of their own."""
    variants = [repo(), mutant("return a - b", "return a + b"),
                repo(M.replace("    return a - b\n", "    result = a - b\n    return result\n")
                     .replace("check(x) * k)", "check(x) * k[0])")),
                mutant("return len(self.items)", "return len(self.items) + 1"),
                mutant("        return 1\n", "        return 2\n"), mutant("return cls([])", "return cls([0])"),
                mutant("    return a - b\n", "    return ctypes.string_at(0)\n"),
                mutant("LIMIT = 10", "LIMIT = 3")]
    options = {"select": IDS + CASE_IDS, "test_timeout": 2, "timeout": 120}
    fast = run_many(python_sandbox, variants, TestCommand(), **options)
    slow = old_path(python_sandbox, variants, **options)
    assert_same(fast, slow, forked=[False] + [True] * 6 + [False])
    assert fast[1].passed == set(IDS + CASE_IDS)
    assert next(f for f in fast[2].failures if f.test_id == IDS[2]).traceback[-1].line == 16


def test_which_variants_fork_and_which_run_alone():
    """Forked: a variant that changes the project's modules only (from the batch's first); alone: one that changes
    a test module, conftest.py, or adds a file. Two containers: two groups, each with its own first."""
    from bot.fix.reproduce.testrun import _groups

    base = repo()
    conftest = {**base, "tests/conftest.py": b""}
    variants = [base, mutant("a - b", "a + b"), {**base, "tests/test_m.py": b"def test_x():\n    pass\n"},
                mutant("a - b", "a * b"), {**conftest, "tests/conftest.py": b"X = 1\n"}, repo(M + "\n"),
                {**base, "sub/test_it.py": b""}]
    assert _groups(variants, 1) == [[0, 1, 3, 5], [2], [4], [6]]
    assert _groups(variants, 2) == [[0, 1], [3, 5], [2], [4], [6]]
    assert _groups([conftest, {**conftest, "tests/conftest.py": b"X = 1\n"}], 2) == [[0], [1]]
