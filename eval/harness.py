"""HumanEvalFix's tests as pytest tests, so the model reads pytest's rewritten assertion
(`assert True == False` and where True came from): the agent's `Harness` for one function of one module, the
candidate spliced into it and pytest run in the sandbox; and the search's screen of the same tests."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.agent.types import TestOutcome
from bot.feedback import pytest_feedback
from bot.fix.locate.spans import splice
from sandbox import Job, RunResult, Sandbox

from .screen import ScriptScreen

TIMEOUT_S = 10.0
WRAPPER_FRAMES = ("in test_check",)  # test_module's wrapper around the dataset's check(): never useful to the model
CHECK_CALL = re.compile(r"^check\(\s*\w+\s*\)\s*$", re.M)
PYTEST = ["python3", "-m", "pytest", "-x", "-q", "--tb=short", "-p", "no:cacheprovider"]
NO_TESTS = "There are no tests to run."


@dataclass(frozen=True)
class PytestHarness:
    """The agent's `Harness` for one function of one module, with pytest test files beside it."""

    sandbox: Sandbox
    module_path: str  # e.g. "solution.py"
    module: str  # the module's source, holding the function to replace
    function: str
    tests: Mapping[str, str] = field(default_factory=dict)  # test file name -> source; empty: nothing to run
    timeout_s: float = 10.0

    def job(self, function_source: str) -> Job:
        files = {self.module_path: splice(self.module, self.function, function_source), **self.tests}
        return Job(files, [*PYTEST, *self.tests], self.timeout_s)

    def outcome(self, result: RunResult) -> TestOutcome:
        passed = result.exit_code == 0 and not result.timed_out
        feedback = "" if passed else pytest_feedback(result.stdout + "\n" + result.stderr,
                                                     timed_out=result.timed_out, timeout_s=self.timeout_s,
                                                     wrapper_frames=WRAPPER_FRAMES)
        return TestOutcome(passed, feedback, result.timed_out, result.duration_s)

    def check(self, function_source: str) -> TestOutcome:
        return self.check_many([function_source])[0]

    def check_many(self, sources: Sequence[str]) -> list[TestOutcome]:
        if not self.tests:
            return [TestOutcome(True, NO_TESTS) for _ in sources]
        return [self.outcome(r) for r in self.sandbox.run_batch([self.job(s) for s in sources])]


def test_module(test_code: str, entry_point: str) -> str:
    """The dataset's `check(candidate)` plus its trailing call, as a pytest test."""
    body = CHECK_CALL.sub("", test_code).strip()
    return (f"from solution import *  # noqa: F401,F403\nfrom solution import {entry_point}\n\n{body}\n\n\n"
            f"def test_check():\n    check({entry_point})\n")


def humaneval_harness(sandbox: Sandbox, module: str, entry_point: str, tests: str,
                      timeout_s: float = TIMEOUT_S) -> PytestHarness:
    """`tests` empty (some tasks have no example tests): nothing to run."""
    files = {"test_solution.py": test_module(tests, entry_point)} if tests.strip() else {}
    return PytestHarness(sandbox, "solution.py", module, entry_point, files, timeout_s)


def humaneval_screen(sandbox: Sandbox, module: str, entry_point: str, tests: str) -> ScriptScreen:
    """The search's fast first pass: the dataset's recipe (module, then the test code with its `check(...)` call)
    as one plain program per candidate."""
    return ScriptScreen(sandbox, module, entry_point, tests)
