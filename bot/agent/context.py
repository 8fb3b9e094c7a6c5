"""Run-time dependencies of the graph (LangGraph's context): model, tests, repair options. Never globals."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.agent.options import RepairOptions, Schedule
from bot.agent.types import Attempt, Briefing, Harness, Judge, Screen, SearchRound, Target
from bot.llm.types import LLM

REPEAT_BOOST = 0.4


def temperature(schedule: Schedule, iteration: int, boost: float = 0.0) -> float:
    """rising: greedy first, then more varied (0, 0.15, 0.3, ...); falling: varied first, then greedy."""
    base = min(0.15 * iteration, 0.9) if schedule == "rising" else max(0.8 - 0.15 * iteration, 0.0)
    return round(min(base + boost, 1.2), 2)


@dataclass(frozen=True)
class AgentContext:
    llm: LLM
    harness: Harness
    target: Target
    briefing: Briefing
    options: RepairOptions = RepairOptions()
    seed: int = 0
    screen: Screen | None = None  # the search's fast first pass, when the harness has one
    # runs candidates on more inputs than the visible tests: with one, a fix is chosen by vote among those that
    # pass (bot/agent/choose/select.py); for weak tests, where several pass and the first is often wrong
    judge: Judge | None = None
    # the visible tests pass on the original too (weak tests: a docstring's examples), so they cannot say which of a
    # fix's hunks it needs, and the fix is kept whole rather than minimized back to the bug
    original_passes: bool = False
    progress: Callable[[Attempt | SearchRound], None] | None = None  # told of each attempt and search as it ends

