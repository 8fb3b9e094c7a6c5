"""The `FixResult` artifact, what `fixbot fix` found and did, and the records it is made of (one per target's
repair, per test run, the timings). Rendered by bot/fix/verify/report.py (report.json, report.md); read by
bot/github/ to publish."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.agent.types import Attempt, FixedBy, SearchRound, StopReason
from bot.failures import Failure
from bot.fix.types import CodeTarget, EnvCause, FixStatus, TestRun

EXIT_CODES: dict[FixStatus, int] = {"fixed": 0, "not_fixed": 1, "nothing_to_fix": 3, "flaky": 3, "needs_network": 3,
                                 "environment": 3, "interrupted": 130}
# fixed: verified by the whole suite; regressed: passed its blamed tests, broke others in the whole suite (undone)
RepairStatus = Literal["fixed", "not_fixed", "regressed"]
# the agent's own, or why the pipeline ended a repair without it: the blamed tests passed as the code was, a stop
# (time budget, signal), the model failed, its prompt did not fit the model's context, a bug of fixbot's, the search
# alone fixed it before the model was asked, a method renamed to the name the tests call (bot/fix/repair/renames.py),
# a fix that looked wrong and was not kept since another fixed its tests (bot/fix/loop/deferred.py)
RepairStop = StopReason | Literal["passed_without_change", "stopped", "error", "prompt_too_long", "internal_error",
                                  "search_only", "renamed", "deferred"]
# who wrote a repair's code: the agent's makers (bot/agent/types.py), or the rename step (bot/fix/repair/renames.py)
MadeBy = FixedBy | Literal["rename"]


@dataclass(frozen=True)
class RunSummary:
    """One sandbox test run as the report shows it."""

    purpose: str  # "reproduce", "re-run failing", "with stubs" (bot/fix/repair/missing.py), "verify"
    command: str
    passed: int
    failed: tuple[str, ...]
    duration_s: float
    exit_code: int
    timed_out: bool

    @classmethod
    def of(cls, purpose: str, run: TestRun) -> RunSummary:
        return cls(purpose, " ".join(run.command), len(run.passed), tuple(sorted(run.failed)), round(run.duration_s, 2),
                   run.exit_code, run.timed_out)


@dataclass(frozen=True, kw_only=True)
class TargetRepair:
    """The agent's work on one target: one span, or two (`helper`) when the bug is split between a function and
    the helper it calls and the two are repaired together."""

    target: CodeTarget
    tests: tuple[str, ...]  # the failing tests that blamed it, which had to pass
    status: RepairStatus
    stop_reason: RepairStop
    attempts: tuple[Attempt, ...]
    changed_lines: int | None
    wall_s: float
    original: str = ""  # the function before (dedented); a two-span repair: both, the target first
    fixed: str | None = None  # the function after, when fixed (or regressed: then it is not kept)
    searches: tuple[SearchRound, ...] = ()  # mutation searches around the function and the model's candidates
    guards: int = 0  # tests that passed before and ran the target, which every candidate had to keep passing
    broken: tuple[str, ...] = ()  # regressed: the tests that passed before and failed in the whole suite with it
    helper: CodeTarget | None = None  # a two-span repair: the helper `target` calls, changed together with it
    made_by: MadeBy | None = None  # fixed or regressed: who wrote the code
    stub: bool = False  # the target was a stub for a function the tests use and the project lacked (missing.py)
    anti_patterns: tuple[str, ...] = ()  # fixed: the rules of a wrong fix it breaks (bot/agent/antipatterns.py)

    @property
    def spans(self) -> tuple[CodeTarget, ...]:
        """What the repair changes: the target, and the helper of a two-span repair."""
        return (self.target,) if self.helper is None else (self.target, self.helper)

    @property
    def where(self) -> str:
        """The spans for people: `path::qualname`, two joined by " + "."""
        return " + ".join(f"`{t.path}::{t.qualname}`" for t in self.spans)


@dataclass(frozen=True, kw_only=True)
class BestAttempt:
    """A not-fixed run's closest change, shown apart from any patch: never applied, never published."""

    diff: str
    passes: tuple[str, ...]  # failing tests it makes pass
    still_failing: tuple[str, ...]
    broken: tuple[str, ...]  # tests that passed before and fail with it


@dataclass(frozen=True)
class Timings:
    setup_s: float = 0.0  # environment (dependencies) and sandbox start
    tests_s: float = 0.0  # every sandbox test run (reproduce, candidates, searches, verify), summed: runs overlap
    model_s: float = 0.0  # model calls
    total_s: float = 0.0
    prompt_eval_s: float = 0.0  # of model_s: evaluating prompts (the rest is mostly generating)


@dataclass(frozen=True)
class FixResult:
    status: FixStatus
    repository: str
    test_command: str
    model: str
    message: str  # one line for the console
    failures: tuple[Failure, ...] = ()  # every test that failed in the sandbox before any change
    # the failing tests the repair was for: the ones the CI log names (all without a log), less those set aside
    failing: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()
    offline: tuple[str, ...] = ()  # failing tests that tried to reach another machine: set aside, never fixed
    lacking: tuple[str, ...] = ()  # failing tests that ran a program the sandbox does not have: set aside too
    environment: tuple[EnvCause, ...] = ()  # failing tests the environment fails, not the code (classify.py)
    held_back: tuple[str, ...] = ()  # `name==version` the tests ran with: tests failed inside newer releases
    env_changes: tuple[str, ...] = ()  # "Python 3.9", "nothing uploaded after DATE": the environment rebuilt
    targets: tuple[CodeTarget, ...] = ()
    repairs: tuple[TargetRepair, ...] = ()
    diff: str = ""
    changed_lines: int = 0
    explanation: str = ""
    runs: tuple[RunSummary, ...] = ()
    timings: Timings = Timings()
    error: str = ""  # the model or the sandbox failed mid-run: a configuration problem, exit 2
    best: BestAttempt | None = None  # not fixed: the closest change, with what it still fails and broke

    @property
    def exit_code(self) -> int:
        return 2 if self.error else EXIT_CODES[self.status]

    @property
    def tests_fixed_for(self) -> tuple[str, ...]:
        """The failing tests the change is for: `failing`, or every failure when nothing was repaired."""
        return tuple(sorted(self.failing or {f.test_id for f in self.failures}))

    @property
    def set_aside(self) -> frozenset[str]:
        return set_aside(self.flaky, self.offline, self.lacking, self.environment)

    @property
    def left_alone(self) -> tuple[str, ...]:
        return left_alone(self.failures, self.failing, self.set_aside)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, default=_plain)


def set_aside(flaky: Collection[str], offline: Collection[str], lacking: Collection[str],
              environment: Sequence[EnvCause]) -> frozenset[str]:
    """The failing tests never to repair: flaky, needing the network or a program, failed by the environment."""
    return frozenset((*flaky, *offline, *lacking, *(t for c in environment for t in c.tests)))


def left_alone(failures: Sequence[Failure], failing: Collection[str], set_aside: Collection[str]) -> tuple[str, ...]:
    """The tests that failed in the sandbox that the repair was not for and that were not set aside (network,
    programs, environment, flaky): with a CI log, the ones it does not name. None when nothing was repaired."""
    if not failing:
        return ()
    apart = {*failing, *set_aside}
    return tuple(f.test_id for f in failures if f.test_id not in apart)


def _plain(value: Any) -> Any:
    if isinstance(value, (frozenset, set)):
        return sorted(value)
    return str(value)
