"""Records that cross the borders of `bot.fix`: the checkout, one test run, a ranked target, the outcome."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from bot.failures import Failure

# environment: every failing test fails because of the environment (bot/fix/reproduce/classify.py), not the code
FixStatus = Literal["fixed", "not_fixed", "nothing_to_fix", "flaky", "needs_network", "environment", "interrupted"]


@dataclass(frozen=True)
class TestRun:
    """One pytest run of (part of) the suite in the sandbox, read from its JUnit XML and output."""

    __test__ = False

    command: tuple[str, ...]
    exit_code: int
    passed: frozenset[str]  # pytest node ids, e.g. "tests/test_cart.py::test_total"
    failed: frozenset[str]  # failed or errored (collection errors included)
    failures: tuple[Failure, ...]
    duration_s: float
    output: str  # pytest's output (capped), for the report and the model's feedback
    timed_out: bool = False
    oom_killed: bool = False  # the kernel killed the run's process for memory: what it had not reported is lost
    # path -> line -> ids of the tests that executed it; None when the run did not measure coverage
    coverage: Mapping[str, Mapping[int, frozenset[str]]] | None = None
    durations: Mapping[str, float] = field(default_factory=dict)  # node id -> seconds its call took
    timeouts: frozenset[str] = frozenset()  # the tests (or modules) stopped by the per-test time limit
    # node id -> the other machines' hosts a test (or a module, while collected) tried to reach; the sandbox has
    # no network, so such a test cannot pass there (bot/inside/probe_network.py)
    network: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    programs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # node id -> programs the sandbox lacks
    # node id -> "localhost:PORT" a test tried that nothing listened on: a service the sandbox does not run
    services: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def green(self) -> bool:
        return self.exit_code == 0 and not self.failed and not self.timed_out


@dataclass(frozen=True)
class CodeTarget:
    """A function, or an assignment statement (a constant, a table, a class attribute), that may hold the bug,
    ranked by `locate`."""

    path: str  # relative to the repository root
    qualname: str  # "mean", "Cart.total" for a method; an assignment's name(s): "_TABLE", "Cart.rate", "a, b"
    start: int  # first line (decorators included), 1-based
    end: int  # last line, inclusive
    score: float
    reasons: tuple[str, ...] = field(default_factory=tuple)  # e.g. ("traceback frame", "ochiai 1.00")
    broken: bool = False  # the module does not parse (a syntax error is the bug)
    kind: Literal["function", "assignment"] = "function"


# why a failing test fails because of the environment, not the code (bot/fix/reproduce/classify.py)
CauseKind = Literal["removed-stdlib", "python-version", "python-syntax", "missing-module", "dependency-api",
                    "dependency-error", "system-library", "tool", "missing-test-file"]


@dataclass(frozen=True)
class EnvCause:
    """One reason of the environment's, with the failing tests it explains."""

    kind: CauseKind
    what: str  # one line: "the standard library of Python 3.11 has no collections.Mapping (removed in 3.10)"
    remedy: str  # what the user can do: "--python 3.9"
    tests: tuple[str, ...]

    def line(self) -> str:
        return f"{self.what} ({len(self.tests)} test(s)): {self.remedy}"
