"""Shrink a passing fix to the hunks the tests need.

A small model often rewrites more than the bug (`if` chains turned into `elif`, a `return` moved under `else`).
Each differing hunk between the original and the passing fix is put back to the original, one at a time; all
such variants run as one sandbox batch, and the first that still passes is kept. Repeated until no single hunk
can go back (or the round limit): the diff then shows only the lines the tests need changed."""
from __future__ import annotations

import ast
import difflib

from bot.agent.types import Harness

MAX_ROUNDS = 4


def _hunks(before: list[str], after: list[str]) -> list[tuple[int, int, int, int]]:
    ops = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    return [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in ops if op != "equal"]


def _reverts(original: str, fixed: str) -> list[str]:
    """`fixed` with each one of its hunks put back to the original text; only variants that still parse."""
    before, after = original.splitlines(True), fixed.splitlines(True)
    variants = []
    for i1, i2, j1, j2 in _hunks(before, after):
        text = "".join(after[:j1] + before[i1:i2] + after[j2:])
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        if text != fixed:
            variants.append(text)
    return variants


def minimize(original: str, fixed: str, harness: Harness, *, rounds: int = MAX_ROUNDS) -> str:
    """The smallest variant of `fixed` found by putting hunks back that still passes (`fixed` itself if none)."""
    best = fixed
    for _ in range(rounds):
        variants = [v for v in _reverts(original, best) if v != original]  # the original is known to fail
        if not variants:
            return best
        passing = [v for v, outcome in zip(variants, harness.check_many(variants)) if outcome.passed]
        if not passing:
            return best
        best = min(passing, key=lambda v: len(_hunks(original.splitlines(True), v.splitlines(True))))
    return best
