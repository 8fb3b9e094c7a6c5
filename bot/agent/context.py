"""Run-time dependencies of the graph (LangGraph's context): model, tests, budgets. Never globals."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..llm.types import LLM
from .search import Screen, SearchOptions
from .types import AgentName, Attempt, Briefing, Budgets, Harness, SearchRound, Target

Schedule = Literal["rising", "falling"]
SCHEDULES: tuple[Schedule, ...] = ("rising", "falling")
REPEAT_BOOST = 0.4
SAMPLE_TEMPERATURE = 0.8  # the extra answers of --samples: varied, still mostly sensible code
# fixbot fix / ci ask the reflect design for this many answers per call: on HumanEvalFix with the search, 3
# answers fixed 9 more tasks of 164 (tests protocol) and 4 more (examples) for 1.35-1.6x the time
FIX_SAMPLES = 3
MAX_SAMPLES = 8  # a cap: each answer costs its own generated tokens and one more candidate in the sandbox batch


SAMPLING: tuple[AgentName, ...] = ("reflect",)  # the designs that can use several answers to one prompt


def samples_for(agent: AgentName, default: int) -> int:
    """The design's answers per call when none were asked for: only a sampling design draws several."""
    return default if agent in SAMPLING else 1


def samples_conflict(agent: AgentName, samples: int) -> str | None:
    """Why `samples` answers per call do not fit the design, or None when they do."""
    return f"the {agent} design asks for one answer at a time" if samples > 1 and agent not in SAMPLING else None


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
    budgets: Budgets = Budgets()
    schedule: Schedule = "rising"
    seed: int = 0
    search: SearchOptions | None = None  # mutation search around the original and each failing candidate
    screen: Screen | None = None  # the search's fast first pass, when the harness has one
    agent: AgentName = "reflect"  # the design: reflect, thought-patch or tool-call (bot/agent/graph.py)
    few_shot: bool = False  # common bug patterns, with fixes, in the system prompt
    # reflect: answers per model call, the first at the schedule's temperature and the rest at SAMPLE_TEMPERATURE,
    # all tested in one sandbox batch (the prompt is cached, so each extra answer costs only its own tokens)
    samples: int = 1
    progress: Callable[[Attempt | SearchRound], None] | None = None  # told of each attempt and search as it ends
