"""The agent's `Harness` for one target of a repository: splice a candidate in, run the tests that judge it. The
target is one span, or two (a caller and the helper it calls, repaired together): then each function of the
candidate goes into its own span.

A candidate is judged by two sets of tests in one sandbox batch: the failing tests that blame the target must
pass, and the guards (tests that passed before and ran the target) must still pass. A candidate that fixes the
failing test and breaks a neighbour is a failed attempt whose feedback names what it broke. When the guards are
many (a function every test of a large suite runs), the failing tests run first and the guards only for the
candidates that pass them: most candidates fail, and each would otherwise run the whole suite."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from bot.agent.source.parts import function_parts
from bot.agent.types import TestOutcome
from bot.feedback import pytest_feedback
from bot.fix.locate.spans import Span, replace_span
from bot.fix.repair.briefing import without_shown
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_many
from bot.fix.types import CodeTarget, TestRun
from sandbox import Sandbox

BATCH_OVERHEAD_S = 60.0  # interpreter start, collection and imports of one batch, beyond the tests' own limits
MAX_BROKEN_SHOWN = 3
GUARDS_APART = 20  # more guards than this: they run only for the candidates that pass the failing tests


def target_span(target: CodeTarget) -> Span:
    return Span(target.qualname, target.start, target.end)


def with_code(files: Mapping[str, bytes], targets: Sequence[CodeTarget], source: str) -> dict[str, bytes]:
    """The repository's files with the targets' spans replaced: one span by all of `source`, two by the functions
    of `source` in the same order (bot/agent/source/parts.py); every other byte as it was."""
    parts = [source] if len(targets) == 1 else [text for _, text in function_parts(source)]
    if len(parts) != len(targets):
        raise ValueError(f"{len(targets)} spans to replace, but the code holds {len(parts)} function(s)")
    out = dict(files)
    # the later span of a file first: the earlier one's line numbers still hold
    for target, part in sorted(zip(targets, parts), key=lambda pair: (pair[0].path, -pair[0].start)):
        before = out[target.path].decode("utf-8", "surrogateescape")
        out[target.path] = replace_span(before, target_span(target), part).encode("utf-8", "surrogateescape")
    return out


def tests_pass(run: TestRun, test_ids: frozenset[str]) -> bool:
    """The blamed tests pass. An id without `::` is a module that failed to collect: it must collect now (its
    tests may still fail for another reason, which a later target answers)."""
    if run.timed_out:
        return False
    tests = {t for t in test_ids if "::" in t}
    modules = test_ids - tests
    return tests <= run.passed and not (modules & run.failed)


def broken_guards(run: TestRun, guards: frozenset[str]) -> tuple[str, ...]:
    """The guards that did not pass: they failed, timed out, or were not run at all (a broken import)."""
    return tuple(sorted(guards - run.passed))


@dataclass(frozen=True)
class RepoHarness:
    sandbox: Sandbox
    files: Mapping[str, bytes]
    targets: tuple[CodeTarget, ...]  # one span, or a caller and the helper it calls
    test_ids: frozenset[str]  # the failing tests that blame the target: they must pass
    command: TestCommand = TestCommand()
    pythonpath: Sequence[str] = ()
    test_timeout_s: float = 10.0  # per test
    guards: frozenset[str] = frozenset()  # passed before and ran a target span: they must still pass
    deadline: float | None = None  # time.monotonic() by which every batch must have ended
    shown: str = ""  # the tests' code as the prompt shows it: the feedback leaves those lines out
    runs: list[TestRun] = field(default_factory=list, compare=False)  # every run, for the report's timings
    expand: Callable[[str], str] | None = None  # a long function's excerpt, put back (bot/fix/locate/excerpt.py)

    def check(self, function_source: str) -> TestOutcome:
        return self.check_many([function_source])[0]

    def check_many(self, sources: Sequence[str]) -> list[TestOutcome]:
        variants = [with_code(self.files, self.targets, self.expand(s) if self.expand else s) for s in sources]
        if len(self.guards) <= GUARDS_APART:
            return [self._outcome(run) for run in self._run(variants, self.test_ids | self.guards)]
        runs = self._run(variants, self.test_ids)
        passing = [i for i, run in enumerate(runs) if tests_pass(run, self.test_ids)]
        guarded = self._run([variants[i] for i in passing], self.test_ids | self.guards) if passing else []
        for i, run in zip(passing, guarded):
            runs[i] = run
        return [self._outcome(run) for run in runs]

    def _run(self, variants: Sequence[Mapping[str, bytes]], selected: frozenset[str]) -> list[TestRun]:
        runs = run_many(self.sandbox, variants, self.command, pythonpath=self.pythonpath, select=selected,
                        timeout=self._batch_timeout(len(selected)), test_timeout=self.test_timeout_s, strict=False)
        self.runs.extend(runs)
        return runs

    def _batch_timeout(self, tests: int) -> float:
        """Every test may use its own limit; the batch never runs past the run's deadline."""
        timeout = BATCH_OVERHEAD_S + tests * self.test_timeout_s
        if self.deadline is not None:
            timeout = min(timeout, max(1.0, self.deadline - time.monotonic()))
        return timeout

    def _outcome(self, run: TestRun) -> TestOutcome:
        timed_out = run.timed_out or bool(run.timeouts & (self.test_ids | self.guards))
        feedback = without_shown(pytest_feedback(run.output, timed_out=run.timed_out,
                                                 timeout_s=self.test_timeout_s, failures=run.failures), self.shown)
        if not tests_pass(run, self.test_ids):
            return TestOutcome(False, feedback, timed_out, run.duration_s)
        broken = broken_guards(run, self.guards)
        if not broken:
            return TestOutcome(True, "", duration_s=run.duration_s)
        names = ", ".join(broken[:MAX_BROKEN_SHOWN]) + (f" and {len(broken) - MAX_BROKEN_SHOWN} more"
                                                        if len(broken) > MAX_BROKEN_SHOWN else "")
        return TestOutcome(False, f"The failing test now passes, but this change breaks {len(broken)} test(s) "
                                  f"that passed before: {names}.\n{feedback}", timed_out, run.duration_s)
