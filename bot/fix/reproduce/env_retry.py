"""Failing tests the environment fails that another environment may not: code written for an older Python (a
removed standard name, old syntax) runs again on the newest older Python fixbot has; code whose dependencies have
moved on (a name today's release lacks, an error inside a package the tests call, a module not installed) runs
again with nothing uploaded after the failing commit's date, as the project's CI resolved then.

In: a reproduction and its environment causes (reproduce/classify.py). Out: the reproduction to go on with, and the
changes it was made with. The other environment is kept only when more of the suite passes there: the one that
runs more of the project's tests is the closer to its CI's. Never: a change tried twice, or a rebuild the run's
`rebuild_as` cannot make."""
from __future__ import annotations

from collections.abc import Callable

from bot.fix.context import EnvChange, FixRun
from bot.fix.reproduce.runs import Reproduced, SuiteCrashed, SuiteTimeout

OLDER_PYTHON = frozenset({"removed-stdlib", "python-syntax"})
DATED = frozenset({"dependency-api", "dependency-error", "missing-module"})


def next_change(found: Reproduced, ctx: FixRun, held: tuple[str, ...], tried: set[str]) -> EnvChange | None:
    """What to try for the causes found, on top of the environment in use (its Python, date and pins): an older
    Python, then the failing commit's date; None when nothing is left."""
    kinds = {c.kind for c in found.environment if c.tests}
    if kinds & OLDER_PYTHON and ctx.older and "python" not in tried:
        return EnvChange(python=ctx.older[0], as_of=ctx.as_of, hold_back=held, what=f"Python {ctx.older[0]}")
    if kinds & DATED and ctx.commit_date and not ctx.as_of and "date" not in tried:
        return EnvChange(python=ctx.python, as_of=ctx.commit_date, hold_back=held,
                         what=f"nothing uploaded after {ctx.commit_date}")
    return None


def with_remedied(ctx: FixRun, found: Reproduced, reproduce_in: Callable[[FixRun], Reproduced],
                  held: tuple[str, ...] = ()) -> tuple[Reproduced, tuple[EnvChange, ...]]:
    """`found`, or the reproduction in another environment where more of the suite passes (see the module doc);
    `held`: the pins the environment in use holds back (bot/fix/reproduce/hold_back.py), kept in every rebuild."""
    used: list[EnvChange] = []
    rebuild = ctx.rebuild_as
    if rebuild is None:
        return found, ()
    tried: set[str] = set()
    while (change := next_change(found, ctx, held, tried)) is not None:
        tried.add("python" if change.python != ctx.python else "date")
        ctx.say(f"  {sum(len(c.tests) for c in found.environment)} failing test(s) fail because of the "
                f"environment: building it again with {change.describe()}")
        built = rebuild(change)
        if built is None:
            ctx.say(f"  with {change.describe()}, the environment does not build: keeping this one")
            continue
        sandbox, python = built
        kept = (ctx.sandbox, ctx.python, ctx.older, ctx.as_of, ctx.by_module)
        ctx.sandbox, ctx.python = sandbox, python
        ctx.older = tuple(v for v in ctx.older if _key(v) < _key(python))
        ctx.as_of = change.as_of or ctx.as_of
        try:
            again: Reproduced | None = reproduce_in(ctx)
        except (SuiteCrashed, SuiteTimeout) as exc:
            ctx.say(f"  with {change.describe()}, the suite does not run ({exc})")
            again = None
        if again is not None and len(again.before.passed) > len(found.before.passed):
            ctx.say(f"  with {change.describe()}, {len(again.before.passed) - len(found.before.passed)} more "
                    "test(s) pass: going on there")
            kept[0].close()
            found = again
            used.append(change)
            continue
        if again is not None:
            ctx.say(f"  with {change.describe()}, no more tests pass: keeping the environment as it was")
        ctx.sandbox, ctx.python, ctx.older, ctx.as_of, ctx.by_module = kept
        sandbox.close()
    return found, tuple(used)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))
