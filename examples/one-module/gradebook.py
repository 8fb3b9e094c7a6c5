"""Summaries of a class's exam scores (0 to 100): the mean, letter grades and the pass rate."""
from __future__ import annotations

from typing import Sequence

PASS_MARK = 50


def mean(scores: Sequence[float]) -> float:
    """The arithmetic mean of the scores; 0.0 for an empty class."""
    if not scores:
        return 0.0
    return sum(scores) / len(scores)


def letter_grade(score: float) -> str:
    """The letter for a score: A from 90, B from 80, C from 70, D from 60, F below 60."""
    if score > 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    if score >= 60:
        return "D"
    return "F"


def pass_rate(scores: Sequence[float], mark: float = PASS_MARK) -> float:
    """The fraction of scores at or above the pass mark; 0.0 for an empty class."""
    if not scores:
        return 0.0
    return sum(1 for score in scores if score >= mark) / len(scores)
