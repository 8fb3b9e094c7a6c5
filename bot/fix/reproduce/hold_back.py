"""Dependencies newer than the project, as its tests show them: a failing test whose exception was raised inside
an installed distribution that the project declares with a lower bound (`requests>=2.3.0`, installed 2.32.5,
raising `InvalidHeader` on a header value the project has always sent) may be failing because of that release,
not because of the project's code. The environment is then built again with the lowest declared version, and the
suite reproduced there; the older release is kept only when fewer tests fail with it and every test that passed
still passes. The bug-exposing tests fail either way: they fail in the project's code.

The import check (bot/environment/drift.py) catches the same kind of drift where it breaks an import; this is the
behaviour change that only a test run shows."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.environment.drift import Floor
from bot.failures import Failure
from bot.fix.context import FixRun
from bot.fix.reproduce.runs import Reproduced, SuiteCrashed, SuiteTimeout

SITE_DIRS = ("/site-packages/", "/dist-packages/")


@dataclass(frozen=True, kw_only=True)
class HoldBack:
    """What to go back on and why: the distributions failing tests raised inside."""

    floors: tuple[Floor, ...]
    tests: tuple[str, ...]

    @property
    def pins(self) -> tuple[str, ...]:
        return tuple(floor.pin for floor in self.floors)

    def describe(self) -> str:
        where = ", ".join(f"{floor.dist} {floor.version}" for floor in self.floors)
        return f"{len(self.tests)} failing test(s) fail inside {where}"


def raised_inside(failure: Failure, floors: Sequence[Floor]) -> Floor | None:
    """The floored distribution whose code raised the failure: among the traceback's innermost frames outside the
    checkout (installed packages and the standard library), the first that belongs to one of `floors`."""
    for frame in reversed(failure.traceback):
        if not frame.path.startswith("/"):  # the checkout's own code (paths are relative to it): not a dependency
            return None
        site = next((s for s in SITE_DIRS if s in frame.path), None)
        if site is None:
            continue  # the standard library, called by the dependency
        first = frame.path.split(site, 1)[1].split("/")[0]
        top = first[:-3] if first.endswith(".py") else first
        floor = next((f for f in floors if top in f.modules), None)
        if floor is not None:
            return floor
    return None


def to_hold_back(failures: Sequence[Failure], failing: frozenset[str], floors: Sequence[Floor]) -> HoldBack | None:
    """The distributions that the still-failing tests raised inside, if any."""
    hits = {f.test_id: raised_inside(f, floors) for f in failures if f.test_id in failing}
    chosen = {floor.dist: floor for floor in hits.values() if floor is not None}
    if not chosen:
        return None
    return HoldBack(floors=tuple(chosen[name] for name in sorted(chosen)),
                    tests=tuple(sorted(t for t, floor in hits.items() if floor is not None)))


def better(before: Reproduced, after: Reproduced) -> bool:
    """Fewer tests fail, and every test that passed still passes."""
    return after.before.failed < before.before.failed and not before.before.passed - after.before.passed


def with_held_back(ctx: FixRun, found: Reproduced, reproduce_in: Callable[[FixRun], Reproduced]
                   ) -> tuple[Reproduced, tuple[str, ...]]:
    """`found`, or the reproduction in an environment with the failing tests' dependencies held back at the lowest
    versions the project declares, when that is better (see `better`); with the pins it used."""
    wanted = to_hold_back(found.before.failures, found.failing, ctx.floors)
    if wanted is None or ctx.rebuild is None:
        return found, ()
    ctx.say(f"  {wanted.describe()}, newer than the project declares: building the environment again with "
            f"{', '.join(wanted.pins)}")
    sandbox = ctx.rebuild(wanted.pins)
    if sandbox is None:
        return found, ()
    newest = ctx.sandbox
    ctx.sandbox = sandbox
    try:
        again: Reproduced | None = reproduce_in(ctx)
    except (SuiteCrashed, SuiteTimeout) as exc:  # the older release breaks the suite: not better, not an error
        ctx.say(f"  with {', '.join(wanted.pins)}, the suite does not run ({exc})")
        again = None
    if again is not None and better(found, again):
        ctx.say(f"  with {', '.join(wanted.pins)}, {len(found.before.failed) - len(again.before.failed)} fewer "
                "test(s) fail and all that passed still pass: using it")
        newest.close()
        return again, wanted.pins
    if again is not None:
        ctx.say(f"  with {', '.join(wanted.pins)}, not fewer tests fail: keeping the newest versions")
    else:
        ctx.say("  keeping the newest versions")
    ctx.sandbox = newest
    sandbox.close()
    return found, ()
