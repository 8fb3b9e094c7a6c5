"""What one `fix` run has found and done so far (`Work`), and what follows from it alone: the tests still to fix,
where the tests are, and the best attempt a report shows when not everything was fixed."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from bot.checkout.paths import is_test_path
from bot.checkout.repository import Checkout
from bot.failures import Failure
from bot.fix.repair.harness import with_code
from bot.fix.repair.missing import MissingName, without_stubs
from bot.fix.repair.pairs import PairKey
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.runs import CRASH, same_test
from bot.fix.result import BestAttempt, TargetRepair
from bot.fix.types import CodeTarget, EnvCause, TestRun
from bot.fix.verify.patch import make_patch


@dataclass(frozen=True)
class Deferred:
    """A repair that fixed its tests with a change breaking an anti-pattern rule (bot/fix/loop/deferred.py), and the
    files of its spans as it was found on them: kept only if nothing else fixes its tests, and only while no other
    kept fix has changed those files."""

    repair: TargetRepair
    files: dict[str, bytes]


@dataclass
class Work:
    """What the run has found and done so far: all a report needs, also when the run is stopped mid-way."""

    checkout: Checkout
    files: dict[str, bytes]  # the checkout with the verified fixes so far
    before: TestRun | None = None
    stubs: tuple[MissingName, ...] = ()  # functions the tests use and the project lacks, stubbed (repair/missing.py)
    stubbed: TestRun | None = None  # the suite's run with those stubs: what passes there must keep passing
    failing: frozenset[str] = frozenset()
    flaky: tuple[str, ...] = ()
    offline: tuple[str, ...] = ()  # failing tests that need the network (the sandbox has none): never to fix
    lacking: tuple[str, ...] = ()  # failing tests that run a program the sandbox does not have: never to fix
    environment: tuple[EnvCause, ...] = ()  # failing tests the environment fails (reproduce/classify.py): never to fix
    held_back: tuple[str, ...] = ()  # `name==version` the environment was rebuilt with (bot/fix/reproduce/hold_back.py)
    env_changes: tuple[str, ...] = ()  # how the environment was rebuilt for its failures (reproduce/env_retry.py)
    test_timeout_s: float = 10.0
    run: TestRun | None = None  # the last whole-suite run of `files`
    remaining: frozenset[str] = frozenset()
    tried: set[tuple[str, str]] = field(default_factory=set)
    pairs: set[PairKey] = field(default_factory=set)  # two-span repairs tried: each counts as a target
    ranked: list[CodeTarget] = field(default_factory=list)
    repairs: list[TargetRepair] = field(default_factory=list)
    swept: list[TargetRepair] = field(default_factory=list)  # the sweep's searches that found nothing
    deferred: list[Deferred] = field(default_factory=list)  # fixes that look wrong, while a better one is sought
    passes: int = 1  # passes over the targets (bot/fix/loop/targets.py, another_pass)

    @property
    def failures(self) -> tuple[Failure, ...]:
        return self.before.failures if self.before else ()

    @property
    def set_aside(self) -> tuple[str, ...]:
        """Failing tests no fix is judged by: flaky ones, those that need the network or a missing program, and
        those the environment fails."""
        return self.flaky + self.offline + self.lacking + tuple(t for c in self.environment for t in c.tests)

    @property
    def baseline(self) -> TestRun | None:
        """The run that says which tests pass before any fix: with the stubs, when there are any."""
        return self.stubbed or self.before


def still_failing(run: TestRun, failing: frozenset[str], set_aside: tuple[str, ...],
                  only_logged: bool) -> frozenset[str]:
    """What is left to fix after a run. With --from-log only the logged tests count (and the tests of a logged
    module that failed to collect before)."""
    left = run.failed - {CRASH} - set(set_aside)
    if only_logged:
        left = frozenset(t for t in left if any(same_test(t, f) or t.startswith(f + "::") for f in failing))
    return left


def _command_roots(command: TestCommand, files: Mapping[str, bytes]) -> tuple[str, ...]:
    """The files and folders the test command names: what they hold is test code, never a target."""
    words = [w.partition("::")[0].rstrip("/") for w in command.pytest_args(files) if not w.startswith("-")]
    return tuple(w for w in words if w in files or any(p.startswith(w + "/") for p in files))


def test_roots(work: Work, command: TestCommand) -> tuple[str, ...]:
    """Where the tests are: the test command's paths and the failing tests' files (never a target), except a
    module whose docstrings' examples are the failing tests (its functions are the code they test)."""
    failing_files = tuple(sorted({t.partition("::")[0] for t in work.remaining if not is_doctest(t)}))
    return _command_roots(command, work.files) + failing_files


def is_doctest(test_id: str) -> bool:
    """`calc.py::calc.mean`, `src/pkg/calc.py::pkg.calc.Stats.mean`: pytest's id for a doctest of a project
    module names the docstring's owner by its dotted path, through the module's own name; a test's id does not
    (`t.py::TestX::test_y`, and `tests/test_walk.py::test_walk` is in a test file)."""
    path, _, name = test_id.partition("::")
    name = name.split("[", 1)[0]
    return (path.endswith(".py") and not is_test_path(path) and "::" not in name and "." in name
            and PurePosixPath(path).stem in name.split(".")[:-1])



def best_attempt(work: Work) -> BestAttempt | None:
    """The closest change of a run that did not fix everything: the verified partial fixes, else the last fix that
    broke other tests. Shown in the report, never as the patch."""
    files = without_stubs(work.files, work.checkout.files, work.stubs)
    if files != dict(work.checkout.files) and work.run is not None:
        return BestAttempt(diff=make_patch(work.checkout.files, files),
                           passes=tuple(sorted(work.failing - work.run.failed)),
                           still_failing=tuple(sorted(work.remaining)), broken=())
    regressed = [r for r in work.repairs if r.status == "regressed" and r.fixed is not None]
    if not regressed:
        return None
    last = regressed[-1]
    return BestAttempt(diff=make_patch(work.checkout.files, with_code(work.files, last.spans, last.fixed or "")),
                       passes=last.tests, still_failing=(),
                       broken=last.broken)
