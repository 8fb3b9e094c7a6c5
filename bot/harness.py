"""Tests a candidate function: splice it into its module, run pytest in the sandbox, read the failure."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sandbox import Job, RunResult, Sandbox

from .agent.code import splice
from .agent.types import TestOutcome
from .feedback import pytest_feedback

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
                                                     timed_out=result.timed_out, timeout_s=self.timeout_s)
        return TestOutcome(passed, feedback, result.timed_out, result.duration_s)

    def check(self, function_source: str) -> TestOutcome:
        return self.check_many([function_source])[0]

    def check_many(self, sources: Sequence[str]) -> list[TestOutcome]:
        if not self.tests:
            return [TestOutcome(True, NO_TESTS) for _ in sources]
        return [self.outcome(r) for r in self.sandbox.run_batch([self.job(s) for s in sources])]
