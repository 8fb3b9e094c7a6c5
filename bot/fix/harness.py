"""The agent's `Harness` for one function of a repository: splice a candidate in, run the tests that blame it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from sandbox import Sandbox

from bot.agent.types import TestOutcome
from bot.feedback import pytest_feedback

from .spans import Span, replace_span
from .testrun import TestCommand, run_many
from .types import CodeTarget, TestRun


def target_span(target: CodeTarget) -> Span:
    return Span(target.qualname, target.start, target.end)


def with_function(files: Mapping[str, bytes], target: CodeTarget, function_source: str) -> dict[str, bytes]:
    """The repository's files with the target function replaced; every other byte as it was."""
    before = files[target.path].decode("utf-8", "surrogateescape")
    after = replace_span(before, target_span(target), function_source)
    return {**files, target.path: after.encode("utf-8", "surrogateescape")}


def tests_pass(run: TestRun, test_ids: frozenset[str]) -> bool:
    """The blamed tests pass. An id without `::` is a module that failed to collect: it must collect now (its
    tests may still fail for another reason, which a later target answers)."""
    if run.timed_out:
        return False
    tests = {t for t in test_ids if "::" in t}
    modules = test_ids - tests
    return tests <= run.passed and not (modules & run.failed)


@dataclass(frozen=True)
class RepoHarness:
    sandbox: Sandbox
    files: Mapping[str, bytes]
    target: CodeTarget
    test_ids: frozenset[str]
    command: TestCommand = TestCommand()
    pythonpath: Sequence[str] = ()
    timeout_s: float = 120.0
    runs: list[TestRun] = field(default_factory=list, compare=False)  # every run, for the report's timings

    def check(self, function_source: str) -> TestOutcome:
        return self.check_many([function_source])[0]

    def check_many(self, sources: Sequence[str]) -> list[TestOutcome]:
        variants = [with_function(self.files, self.target, s) for s in sources]
        runs = run_many(self.sandbox, variants, self.command, pythonpath=self.pythonpath, select=self.test_ids,
                        timeout=self.timeout_s)
        self.runs.extend(runs)
        return [self._outcome(run) for run in runs]

    def _outcome(self, run: TestRun) -> TestOutcome:
        if tests_pass(run, self.test_ids):
            return TestOutcome(True, "", duration_s=run.duration_s)
        feedback = pytest_feedback(run.output, timed_out=run.timed_out, timeout_s=self.timeout_s)
        return TestOutcome(False, feedback, run.timed_out, run.duration_s)
