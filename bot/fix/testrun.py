"""Running a repository's tests in the sandbox: the pytest command, the job, and the `TestRun` read back.

Every run carries fixbot's pytest plugin (`probe.py`, loaded with `-p fixbot_probe`) for exact node ids and,
on request, per-test coverage; JUnit XML (read by bot.failures with junitparser) gives the failure details.
"""
from __future__ import annotations

import functools
import json
import shlex
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Mapping, Sequence

from sandbox import Job, RunResult, Sandbox

from bot.errors import UserError
from bot.failures import Failure, ParseError, parse_junit, parse_pytest_output

from .types import TestRun

PROBE_DIR = ".fixbot-probe"
PROBE_OUT = f"{PROBE_DIR}/probe.json"
JUNIT = f"{PROBE_DIR}/junit.xml"
PYTEST_PREFIXES = (("pytest",), ("py.test",), ("python", "-m", "pytest"), ("python3", "-m", "pytest"))
# --continue-on-collection-errors: a module broken by a syntax error must not hide which other tests pass
FIXBOT_FLAGS = ("-p", "fixbot_probe", "-p", "no:cacheprovider", "--continue-on-collection-errors",
                "--junitxml", JUNIT, "-o", "junit_family=xunit1", "-o", "junit_logging=no", "--tb=long", "-rfE",
                "--color=no")
USAGE_ERROR = 4  # pytest's exit code for bad arguments
NO_TESTS = 5  # pytest's exit code when it collected nothing


class BadTestCommand(UserError):
    """--test-cmd is not a pytest command, or pytest refused its arguments."""


class NoTests(UserError):
    """pytest found no tests to run."""


@functools.cache
def probe_source() -> str:
    return resources.files("bot.fix").joinpath("probe.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class TestCommand:
    """The user's pytest arguments (what follows `pytest`); fixbot adds its own flags and node ids."""

    __test__ = False

    args: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> "TestCommand":
        if not text or not text.strip():
            return cls()
        try:
            words = tuple(shlex.split(text))
        except ValueError as exc:
            raise BadTestCommand(f"--test-cmd {text!r}: {exc}") from None
        for prefix in PYTEST_PREFIXES:
            if words[:len(prefix)] == prefix:
                return cls(words[len(prefix):])
        raise BadTestCommand(f"--test-cmd {text!r}: fixbot runs pytest; give a command that starts with `pytest` "
                             "or `python -m pytest`, followed by its arguments")

    def __str__(self) -> str:
        return shlex.join(("pytest", *self.args))


def pytest_job(files: Mapping[str, bytes], command: TestCommand, *, pythonpath: Sequence[str] = (),
               select: Iterable[str] = (), coverage: bool = False, timeout: float = 300.0) -> Job:
    """The job running `command` (only the `select`ed node ids when given) over the repository's `files`."""
    paths = [PROBE_DIR, *(p or "." for p in pythonpath)]
    env = {"PYTHONPATH": ":".join(paths), "FIXBOT_PROBE_OUT": PROBE_OUT, "FIXBOT_COVERAGE": "1" if coverage else "0"}
    argv = ["python3", "-m", "pytest", *command.args, *FIXBOT_FLAGS, *sorted(set(select))]
    all_files = {path: data for path, data in files.items() if not path.startswith(PROBE_DIR + "/")}
    all_files[f"{PROBE_DIR}/fixbot_probe.py"] = probe_source()
    return Job(all_files, argv, timeout, env=env, collect=(PROBE_OUT, JUNIT))


def _failures(result: RunResult, root: str | None, output: str) -> list[Failure]:
    junit = result.files.get(JUNIT)
    for parse, source in ((parse_junit, junit), (parse_pytest_output, output)):
        if source:
            try:
                found = parse(source, root=root)
            except ParseError:
                continue
            if found:
                return found
    return []


def read_run(job: Job, result: RunResult) -> TestRun:
    """The `TestRun` of a finished job; a pytest usage error or an empty suite is the user's to fix."""
    output = (result.stdout + ("\n" + result.stderr if result.stderr.strip() else "")).strip()
    if result.exit_code == USAGE_ERROR:
        raise BadTestCommand("pytest refused the test command: " + _last_lines(output))
    if result.exit_code == NO_TESTS:
        raise NoTests("pytest collected no tests (give the tests' location with --test-cmd \"pytest tests/\")")
    if result.exit_code == 127:
        raise BadTestCommand("the sandbox has no pytest: " + _last_lines(output))
    try:
        probe = json.loads(result.files.get(PROBE_OUT) or "{}")
    except ValueError:
        probe = {}
    root = probe.get("rootdir")
    outcomes: dict[str, str] = probe.get("outcomes", {})
    failures = _failures(result, root, output)
    failed = {i for i, o in outcomes.items() if o in ("failed", "error")} | {f.test_id for f in failures}
    passed = {i for i, o in outcomes.items() if o == "passed"} - failed
    if not outcomes and not failures and result.exit_code != 0:
        failed.add("<pytest>")  # pytest died before reporting anything (a crash, a timeout, a broken conftest)
    coverage = probe.get("coverage")
    return TestRun(command=tuple(job.command), exit_code=result.exit_code, passed=frozenset(passed),
                   failed=frozenset(failed), failures=tuple(f for f in failures if f.test_id in failed),
                   duration_s=result.duration_s, output=output, timed_out=result.timed_out,
                   coverage=None if coverage is None else {
                       path: {int(line): frozenset(ids) for line, ids in lines.items()}
                       for path, lines in coverage.items()})


def _last_lines(text: str, n: int = 8) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-n:]) or "no output"


def run_tests(sandbox: Sandbox, files: Mapping[str, bytes], command: TestCommand, *,
              pythonpath: Sequence[str] = (), select: Iterable[str] = (), coverage: bool = False,
              timeout: float = 300.0) -> TestRun:
    return run_many(sandbox, [files], command, pythonpath=pythonpath, select=select, coverage=coverage,
                    timeout=timeout)[0]


def run_many(sandbox: Sandbox, variants: Sequence[Mapping[str, bytes]], command: TestCommand, *,
             pythonpath: Sequence[str] = (), select: Iterable[str] = (), coverage: bool = False,
             timeout: float = 120.0) -> list[TestRun]:
    """The same tests over several versions of the files, as one sandbox batch (the agent's candidates)."""
    chosen = tuple(select)
    jobs = [pytest_job(files, command, pythonpath=pythonpath, select=chosen, coverage=coverage, timeout=timeout)
            for files in variants]
    return [read_run(job, result) for job, result in zip(jobs, sandbox.run_batch(jobs))]
