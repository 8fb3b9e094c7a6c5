"""The reflection agent: repairs one function by testing candidates in the sandbox and reflecting on failures."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.agent.context import AgentContext
from bot.agent.options import FIX_REPAIR, RepairOptions, Schedule
from bot.agent.types import AgentResult, Attempt, Briefing, Budgets, Harness, Target, TestOutcome

if TYPE_CHECKING:
    from bot.agent.graph import build_graph, mermaid, repair

__all__ = ["FIX_REPAIR", "AgentContext", "AgentResult", "Attempt", "Briefing", "Budgets", "Harness", "RepairOptions",
           "Schedule", "Target", "TestOutcome", "build_graph", "mermaid", "repair"]


def __getattr__(name: str) -> Any:
    # the graph (and langgraph, a second of imports) only when a repair is run: `fixbot --help` and the
    # records above do not need it
    if name in ("build_graph", "mermaid", "repair"):
        from bot.agent import graph

        return getattr(graph, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
