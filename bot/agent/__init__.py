"""The reflection agent: repairs one function by testing candidates in the sandbox and reflecting on failures."""
from .context import AgentContext, Schedule
from .graph import build_graph, mermaid, repair
from .types import AgentResult, Attempt, Budgets, Failure, Harness, Target, TestOutcome

__all__ = ["AgentContext", "AgentResult", "Attempt", "Budgets", "Failure", "Harness", "Schedule", "Target",
           "TestOutcome", "build_graph", "mermaid", "repair"]
