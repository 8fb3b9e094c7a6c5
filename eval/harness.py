"""Runs a HumanEvalFix test (full or examples only) against a candidate function, through pytest in the
sandbox, so the model reads pytest's rewritten assertion (`assert True == False` and where True came from)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from bot.agent.code import splice
from bot.agent.types import TestOutcome
from bot.feedback import pytest_feedback
from sandbox import Job, RunResult, Sandbox

PYTEST = ["python3", "-m", "pytest", "-x", "-q", "--tb=short", "-p", "no:cacheprovider", "test_solution.py"]
TIMEOUT_S = 10.0
CHECK_CALL = re.compile(r"^check\(\s*\w+\s*\)\s*$", re.M)
NO_TESTS = "There are no tests to run."


def test_module(test_code: str, entry_point: str) -> str:
    """The dataset's `check(candidate)` plus its trailing call, as a pytest test."""
    body = CHECK_CALL.sub("", test_code).strip()
    return (f"from solution import *  # noqa: F401,F403\nfrom solution import {entry_point}\n\n{body}\n\n\n"
            f"def test_check():\n    check({entry_point})\n")


@dataclass(frozen=True)
class HumanEvalHarness:
    sandbox: Sandbox
    module: str  # the task's module, with the function to replace
    entry_point: str
    tests: str  # empty: nothing to run (some tasks have no example tests)
    timeout_s: float = TIMEOUT_S

    def job(self, function_source: str) -> Job:
        files = {"solution.py": splice(self.module, self.entry_point, function_source),
                 "test_solution.py": test_module(self.tests, self.entry_point)}
        return Job(files, PYTEST, self.timeout_s)

    def outcome(self, result: RunResult) -> TestOutcome:
        passed = result.exit_code == 0 and not result.timed_out
        feedback = "" if passed else pytest_feedback(result.stdout + "\n" + result.stderr,
                                                     timed_out=result.timed_out, timeout_s=self.timeout_s)
        return TestOutcome(passed, feedback, result.timed_out, result.duration_s)

    def check(self, function_source: str) -> TestOutcome:
        if not self.tests.strip():
            return TestOutcome(True, NO_TESTS)
        return self.outcome(self.sandbox.run_batch([self.job(function_source)])[0])

    def check_many(self, sources: Sequence[str]) -> list[TestOutcome]:
        if not self.tests.strip():
            return [TestOutcome(True, NO_TESTS) for _ in sources]
        return [self.outcome(r) for r in self.sandbox.run_batch([self.job(s) for s in sources])]
