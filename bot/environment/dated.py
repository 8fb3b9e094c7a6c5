"""Installing as of a date (pip's `--uploaded-prior-to`): the dependencies as the project's CI resolved them on the
failing commit's day, when today's releases no longer install or no longer work with the project.

One class of requirement has no release at that date for the Python the tests run on: a compiled package whose
wheels for a newer Python came later (the sandbox's oldest Python is 3.9; a project of 2018 was tested on 3.6).
Such a requirement is installed first at the earliest later cut that has a release for this Python, half a year at
a time, and the step then runs again with the date: pip keeps what is installed when it satisfies the step. One
that no release on the index satisfies even today is not searched for (bot/environment/install/relax.py loosens
it where the step names it).

In: a step's pip argv and the date. Out: the command's result, and the requirements installed past the date.
Never: a cut past today, or more than MAX_LATER requirements past the date in one step."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

NO_MATCH = re.compile(r"No matching distribution found for (\S+)")
# what pip says when the index, not the requirements, failed (pip then also finds "no matching distribution"):
# a build that fails so may work next time
TRANSIENT = re.compile(r"ConnectionError|Read timed out|Max retries exceeded|Temporary failure in name resolution|"
                       r"Could not fetch URL|HTTP error 5\d\d|ProxyError|Connection reset")
STEP = timedelta(days=182)
MAX_LATER = 6


def parse_date(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def later_cuts(as_of: str, now: datetime | None = None) -> list[str | None]:
    """The cuts after `as_of`, half a year apart, up to today; None (no cut) last."""
    now = now or datetime.now(UTC)
    cuts: list[str | None] = []
    moment = parse_date(as_of) + STEP
    while moment < now:
        cuts.append(moment.strftime("%Y-%m-%dT%H:%M:%SZ"))
        moment += STEP
    return [*cuts, None]


def unmatched(output: str) -> str | None:
    """The requirement pip found no release of (under the cut), from its output."""
    found = NO_MATCH.findall(output)
    return found[-1] if found else None


class Result(Protocol):
    """What a command gave (sandbox.builder.CommandResult is one)."""

    @property
    def ok(self) -> bool: ...

    @property
    def output(self) -> str: ...


R = TypeVar("R", bound=Result)


def install_dated(run: Callable[[Sequence[str]], R], argv: Sequence[str], as_of: str,
                  say: Callable[[str], None]) -> tuple[R, tuple[str, ...]]:
    """Run pip `argv` with nothing uploaded after `as_of`; each requirement with no release for this Python by
    then is installed first at the earliest later cut that has one. Returns the last result and those
    requirements, each as `requirement (uploaded before CUT)`."""
    later: list[str] = []
    result = run([*argv, "--uploaded-prior-to", as_of])
    while not result.ok and len(later) < MAX_LATER:
        requirement = unmatched(result.output)
        if requirement is None or any(r.startswith(requirement + " ") for r in later):
            return result, tuple(later)
        placed = _earliest(run, requirement, as_of, say)
        if placed is None:
            return result, tuple(later)
        later.append(placed)
        result = run([*argv, "--uploaded-prior-to", as_of])
    return result, tuple(later)


def _earliest(run: Callable[[Sequence[str]], R], requirement: str, as_of: str,
              say: Callable[[str], None]) -> str | None:
    # every cut sees a part of today's releases: when none of today's satisfies it, no cut can (one dry run, not
    # one failing install per half year)
    today = run(["python3", "-m", "pip", "install", "--dry-run", "--no-deps", requirement]).output
    if unmatched(today) == requirement and not TRANSIENT.search(today):
        return None
    for cut in later_cuts(as_of):
        cut_args = ["--uploaded-prior-to", cut] if cut else []
        if run(["python3", "-m", "pip", "install", requirement, *cut_args]).ok:
            when = f"uploaded before {cut}" if cut else "today's"
            say(f"environment: {requirement} has no release for this Python by {as_of}; installed the earliest "
                f"that has one ({when})")
            return f"{requirement} ({when})"
    return None
