"""The repair agent as a LangGraph graph, in three designs that share the search, test and budget nodes.

reflect (the default):
    [search] ──► draft ──► test ──► [search] ──► reflect ──► test ──► ...   (until the tests pass or a budget is spent)
                   │         ▲
                   └─► syntax / repeat ─┘   (unusable answer, or code already tried: ask again, differently)
thought-patch (bot/agent/designs/thought_patch.py): thought ──► patch (JSON line edits) ──► test ──► thought ...
tool-call (bot/agent/designs/tool_call.py): the model calls run_tests(code) ──► test ──► its result ──► the model ...

Nodes that call the model return a `Pending` candidate, checked in one place (bot/agent/steps/nodes.py); routers send
it to `test` or back for another answer. With search on, one-edit mutants of the buggy function are tried before
the first model call, and mutants of each failing candidate after its test: no model call, only sandbox time.
Budgets (iterations, tokens, wall time) are checked by the routers.
"""
from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import cast

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from bot.agent.choose.minimize import minimize
from bot.agent.choose.select import likeliest, select
from bot.agent.context import AgentContext
from bot.agent.designs import reflect, thought_patch, tool_call
from bot.agent.source.code import changed_lines, code_hash
from bot.agent.state import END, ORIGINAL_SEEN, AgentState
from bot.agent.steps.nodes import (
    Graph,
    route_searched,
    route_start,
    route_tested,
    search,
    spent,
    test,
)
from bot.agent.types import AgentName, AgentResult, Attempt, RepairInterrupted, SearchRound, StopReason
from bot.errors import Stopped
from bot.llm.errors import LLMError

WIRINGS: dict[AgentName, Callable[[Graph], tuple[str, str]]] = {
    "reflect": reflect.wire, "thought-patch": thought_patch.wire, "tool-call": tool_call.wire}


@functools.cache
def build_graph(agent: AgentName = "reflect") -> CompiledStateGraph[AgentState, AgentContext, AgentState, AgentState]:
    """The strategy's own nodes, around the shared search and test nodes and routers (bot/agent/steps/nodes.py)."""
    g = StateGraph(AgentState, context_schema=AgentContext)
    first, revise = WIRINGS[agent](g)
    g.add_node("search", search)
    g.add_node("test", test)
    g.add_conditional_edges(START, route_start, {"search": "search", "first": first, END: END})
    g.add_conditional_edges("search", route_searched, {"first": first, "revise": revise, END: END})
    g.add_conditional_edges("test", route_tested, {"search": "search", "revise": revise, END: END})
    return g.compile()


def repair(ctx: AgentContext) -> AgentResult:
    """Run the graph once for one target; every attempt is recorded in the result."""
    started = time.monotonic()
    state: AgentState = {"iteration": 0, "tokens": 0, "started": started, "pending": None, "attempts": [],
                         "seen": {code_hash(ctx.target.source): ORIGINAL_SEEN}, "final": None,
                         "current": ctx.target.source, "feedback": ctx.briefing.summary, "stop": None, "searches": [],
                         "passing": []}
    out = state
    shown = [0, 0]  # attempts and searches already reported through ctx.progress
    try:  # streamed so that a model failure or a stop mid-way still hands back the attempts made so far
        limit = 12 * ctx.options.iterations + 10  # a few nodes per model call; repeats are not charged
        for values in build_graph(ctx.options.agent).stream(state, context=ctx, stream_mode="values",
                                                            config={"recursion_limit": limit}):
            out = cast(AgentState, values)  # stream_mode="values": each item is the whole state
            _report(ctx, out, shown)
    except (LLMError, Stopped, KeyboardInterrupt) as exc:
        why = exc if isinstance(exc, Stopped) else Stopped("interrupted", signal_number=2) \
            if isinstance(exc, KeyboardInterrupt) else None
        raise RepairInterrupted(str(exc), tuple(out["attempts"]), stop=why) from exc
    final, attempts, selection = out.get("final"), list(out["attempts"]), None
    if final and (ctx.judge is not None or ctx.options.choose == "likeliest"):
        final, drawn, selection = select(final, out, ctx, ctx.judge) if ctx.judge is not None \
            else likeliest(final, out, ctx)
        attempts += drawn
        _report(ctx, {**out, "attempts": attempts}, shown)
    # a rewrite chosen for what it returns beyond the visible tests would shrink back to what they check
    if final and not ctx.original_passes and not (selection and selection.rewritten):
        final = minimize(ctx.target.source, final, ctx.harness)
    stop: StopReason = out.get("stop") or spent(out, ctx) or "iterations"
    return AgentResult(status="fixed" if final else "not_fixed", stop_reason=stop, final_code=final,
                       attempts=tuple(attempts), wall_s=time.monotonic() - started,
                       changed_lines=changed_lines(ctx.target.source, final) if final else None,
                       searches=tuple(out["searches"]), selection=selection)


def _report(ctx: AgentContext, out: AgentState, shown: list[int]) -> None:
    """Hand the attempts and searches that are new in this state to ctx.progress, as they happen."""
    if ctx.progress is None:
        return
    attempts, searches = out["attempts"], out["searches"]
    new: list[Attempt | SearchRound] = [*attempts[shown[0]:], *searches[shown[1]:]]
    for item in new:
        ctx.progress(item)
    shown[:] = [len(attempts), len(searches)]


def mermaid(agent: AgentName = "reflect") -> str:
    return str(build_graph(agent).get_graph().draw_mermaid())
