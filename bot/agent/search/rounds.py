"""Repair search around what the agent has: one-edit mutants of a base (the buggy function, or the model's latest
failing candidate), tested in batches, the passing one with the fewest changed lines kept.

When none passes, a few mutants whose failure moved to a None or an empty string used (a pattern that now
matches, and `''.split(',')` handing on `['']`) get a second edit that skips that item: two-edit fixes where the
first edit gets further and the second mends what it reaches.

With a fast `Screen` (many candidates per sandbox job), up to `mutants` candidates are screened and the survivors
confirmed with the real harness; without one (a repository's pytest run per candidate), only the first
`slow_mutants` are tried.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.agent.antipatterns import anti_patterns
from bot.agent.options import SearchOptions
from bot.agent.search.evidence import Evidence, read_evidence
from bot.agent.search.mutate import Mutant, ranked_mutants, skip_mutants
from bot.agent.source.code import changed_lines, code_hash
from bot.agent.types import Harness, Screen, SearchRound, TestOutcome


def _order(original: str, tests: str) -> Callable[[Mutant], tuple[bool, int]]:
    """Passing mutants' order: a change that looks like a wrong fix (bot/agent/antipatterns.py) last, then fewest
    changed lines; the loop flags one that is kept anyway, when nothing else passed."""
    return lambda m: (bool(anti_patterns(original, m.source, tests)), changed_lines(original, m.source))


def _screened(original: str, ranked: list[Mutant], outcomes: Sequence[TestOutcome], harness: Harness,
              options: SearchOptions, tests: str) -> tuple[list[Mutant], list[Mutant], list[Mutant]]:
    """Survivors of the screen, the few confirmed by the real harness (in `_order`), and those that were run
    through it."""
    survivors = [m for m, o in zip(ranked, outcomes) if o.passed]
    survivors.sort(key=_order(original, tests))  # stable: rank order among equals
    to_confirm = survivors[:options.confirm]
    confirmed = [m for m, o in zip(to_confirm, harness.check_many([m.source for m in to_confirm])) if o.passed]
    return survivors, confirmed, to_confirm


def search(original: str, base: str, name: str, feedback: str, harness: Harness, screen: Screen | None,
           options: SearchOptions, label: str, exclude: frozenset[str] = frozenset(), tests: str = "",
           context: str = "") -> tuple[list[str], SearchRound]:
    """Passing mutants of `base` in `_order` (empty: none passed). `exclude`: hashes of code already tested (the
    original among them); `tests`: the failing tests' source the model sees; `context`: the code around the
    target the model sees (its callees' `def` lines offer keyword flags)."""
    started = time.monotonic()
    cap = options.mutants if screen is not None else options.slow_mutants
    evidence = read_evidence(base, feedback, context)
    ranked = ranked_mutants(base, name, exclude, cap, evidence)[options.skip:]
    sources = [m.source for m in ranked]
    if screen is not None:
        outcomes = screen.screen(sources)
        survivors, confirmed, to_confirm = _screened(original, ranked, outcomes, harness, options, tests)
        if not confirmed:
            slow = [m for m, o in zip(ranked, outcomes) if o.timed_out][:options.slow_retries]
            again = screen.screen([m.source for m in slow], options.slow_timeout_s) if slow else []
            late, confirmed, more = _screened(original, slow, again, harness, options, tests)
            survivors, to_confirm = survivors + late, to_confirm + more
    else:
        outcomes = harness.check_many(sources)
        survivors = [m for m, o in zip(ranked, outcomes) if o.passed]
        to_confirm = confirmed = survivors
    tried = len(ranked)
    if not confirmed and options.second_order:
        bases = _moved(ranked, outcomes, evidence)[:options.second_order]
        seen = exclude | {code_hash(s) for s in sources}
        second = [replace(m, description=f"{first.description}, then {m.description}",
                          operator=f"{first.operator}+{m.operator}")
                  for first, moved in bases for m in skip_mutants(first.source, name, seen, moved)]
        confirmed = [m for m, o in zip(second, harness.check_many([m.source for m in second]) if second else [])
                     if o.passed]
        tried, survivors, to_confirm = tried + len(second), survivors + confirmed, to_confirm + confirmed
    confirmed.sort(key=_order(original, tests))
    record = SearchRound(base=label, candidates=tried, survivors=len(survivors), confirmed=len(to_confirm),
                         fixed=bool(confirmed), edit=confirmed[0].description if confirmed else "",
                         family=confirmed[0].operator if confirmed else "",
                         seconds=round(time.monotonic() - started, 3))
    return [m.source for m in confirmed], record


def _moved(ranked: Sequence[Mutant], outcomes: Sequence[TestOutcome], before: Evidence
           ) -> list[tuple[Mutant, Evidence]]:
    """The failing mutants whose failure shows a None or an empty string used where the base's did not, in rank
    order, with what their failure shows."""
    moved = []
    for mutant, outcome in zip(ranked, outcomes):
        if outcome.passed or outcome.timed_out:
            continue
        after = read_evidence(mutant.source, outcome.feedback)
        if set(after.skip_conditions()) - set(before.skip_conditions()) and after.hot_lines:
            moved.append((mutant, after))
    return moved
