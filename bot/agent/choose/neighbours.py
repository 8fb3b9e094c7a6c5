"""Candidates for tests that pass on the buggy original: its one-edit neighbours that the model finds far likelier.

When the visible tests pass on the original (a docstring's examples that miss the bug), no failure drives the
mutation search, and any answer that keeps what they check passes them. A bug is an unlikely edit, though: the
one-edit mutant that undoes it often reads far likelier after the docstring than the original does (the coder
score, bot/agent/choose/likelihood.py). The mutants that pass the visible tests and beat the original's score by MARGIN
join the choice among candidates (bot/agent/choose/select.py). Whole-statement deletions are left out: a sum of
log-probabilities favours shorter texts, so deleting a statement looks likely whatever it does.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from bot.agent.choose.likelihood import coder_scores
from bot.agent.search.mutate import mutants
from bot.agent.types import Harness, Screen

MARGIN = 3.0  # nats: about twenty times likelier than the original
MAX_SCORED = 64  # survivors of the visible tests scored at most, in the mutation order; scoring is most of the cost
LEFT_OUT = frozenset({"delete"})  # mutation families whose edits shorten the text by whole statements


@dataclass(frozen=True, kw_only=True)
class Neighbours:
    codes: list[str]  # the likely neighbours that pass the visible tests, likeliest first
    tried: int  # one-edit mutants run on the visible tests
    scored: int  # survivors scored, the original not counted
    scoring_s: float  # the model's share of the time


def likely_neighbours(original: str, name: str, llm: object, harness: Harness, screen: Screen | None
                      ) -> Neighbours | None:
    """The one-edit mutants of `original` that pass the visible tests and that the model finds likelier than it by
    MARGIN; None when the model cannot score texts. With a screen the survivors are screened first and only the
    likely ones run through the harness."""
    found = [m.source for m in mutants(original, name) if m.operator not in LEFT_OUT]
    outcomes = screen.screen(found) if screen is not None else harness.check_many(found)
    survivors = [code for code, outcome in zip(found, outcomes) if outcome.passed][:MAX_SCORED]
    started = time.monotonic()
    scores = coder_scores(llm, original, [original, *survivors]) if survivors else [0.0]
    if scores is None:
        return None
    took = time.monotonic() - started
    likely = _above(survivors, scores[1:], scores[0] + MARGIN)
    if screen is not None and likely:
        likely = [code for code, outcome in zip(likely, harness.check_many(likely)) if outcome.passed]
    return Neighbours(codes=likely, tried=len(found), scored=len(survivors), scoring_s=took)


def _above(codes: Sequence[str], scores: Sequence[float], bar: float) -> list[str]:
    ranked = sorted(zip(scores, range(len(codes))), key=lambda pair: (-pair[0], pair[1]))
    return [codes[i] for score, i in ranked if score >= bar]
