"""The reflection agent as a LangGraph graph.

    [search] ──► draft ──► test ──► [search] ──► reflect ──► test ──► ...   (until the tests pass or a budget is spent)
                   │         ▲
                   └─► syntax / repeat ─┘   (unusable answer, or code already tried: ask again, differently)

Nodes that call the model return a `Pending` candidate; routers send it to `test`, or to `syntax` / `repeat`.
With search on, one-edit mutants of the buggy function are tried before the first model call, and mutants of
each failing candidate after its test (bot/agent/search.py): no model call, only sandbox time.
Budgets (iterations, tokens, wall time) are checked by the routers.
"""
from __future__ import annotations

import functools
import time
from dataclasses import replace
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from ..llm.errors import LLMError
from . import prompts
from .code import changed_lines, code_hash, extract_function, faithful, signature_problem
from .minimize import minimize
from .search import search as search_around
from .context import REPEAT_BOOST, AgentContext, temperature
from .state import AgentState, Pending
from .types import AgentResult, Attempt, RepairInterrupted, StopReason

MAX_HINTS = 4


def _ask(node: str, messages: list, state: AgentState, ctx: AgentContext, boost: float = 0.0) -> dict:
    temp = temperature(ctx.schedule, state["iteration"], boost)
    done = ctx.llm.complete(messages, temperature=temp, max_tokens=ctx.budgets.max_tokens_per_call,
                            seed=ctx.seed + state["iteration"])
    got = extract_function(done.text, ctx.target.name, ctx.target.source)
    code, problem, detail = got.code, got.problem, got.detail
    if code is not None:
        detail = signature_problem(code, ctx.target.source, ctx.target.name) or ""
        problem = "signature" if detail else None
    if code is not None and problem is None:
        code = faithful(code, ctx.target.source)
        same = state["seen"].get(code_hash(code))
        problem, detail = ("repeat", same) if same else (None, "")
    pending = Pending(code, problem, detail, done.prompt_tokens, done.completion_tokens, done.latency_s, temp, node)
    update: dict = {"iteration": state["iteration"] + 1, "pending": pending,
                    "tokens": state["tokens"] + done.prompt_tokens + done.completion_tokens}
    if problem is not None:  # an untestable answer is an attempt too: it cost a model call
        outcome = "syntax" if problem in ("syntax", "missing") else problem
        update["attempts"] = [_attempt(state["iteration"] + 1, pending, outcome, detail)]
    return update


def _attempt(iteration: int, p: Pending, outcome: str, feedback: str, changed: int | None = None) -> Attempt:
    return Attempt(iteration, p.node, p.code, outcome, feedback, p.prompt_tokens, p.completion_tokens,  # type: ignore[arg-type]
                   p.latency_s, p.temperature, changed)


def draft(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    return _ask("draft", prompts.draft(ctx.target, ctx.failure, state.get("hints", [])), state, ctx)


def reflect(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    messages = prompts.reflect(ctx.target, ctx.failure, state["current"], state["feedback"], state["attempts"],
                               state.get("hints", []))
    return _ask("reflect", messages, state, ctx)


def repeat(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    same_as = state["pending"].detail if state.get("pending") else "an earlier attempt"
    feedback = state.get("feedback") or ctx.failure.summary
    messages = prompts.repeat(ctx.target, ctx.failure, same_as, feedback, state["attempts"])
    return _ask("repeat", messages, state, ctx, boost=REPEAT_BOOST)


def syntax(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    pending = state["pending"]
    return _ask("syntax", prompts.syntax(ctx.target, ctx.failure, pending.detail if pending else ""), state, ctx)


def test(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    pending = state["pending"]
    assert pending is not None and pending.code is not None
    outcome = ctx.harness.check(pending.code)
    changed = changed_lines(ctx.target.source, pending.code)
    label = "passed" if outcome.passed else "timeout" if outcome.timed_out else "failed"
    update: dict = {
        "attempts": [_attempt(state["iteration"], pending, label, outcome.feedback, changed)],
        "seen": {**state["seen"], code_hash(pending.code): f"attempt {state['iteration']}"},
        "pending": None,
    }
    if outcome.passed:
        update.update(final=pending.code, stop="passed")
    else:
        update.update(current=pending.code, feedback=outcome.feedback)
    return update


def search(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    assert ctx.search is not None
    base = state["current"]
    label = state["seen"].get(code_hash(base), "a candidate")
    passing, record = search_around(ctx.target.source, base, ctx.target.name, state["feedback"], ctx.harness,
                                    ctx.screen, ctx.search, label, exclude=frozenset(state["seen"]))
    ambiguous = record.survivors > 1 and ctx.search.ambiguous == "ask" and not _spent(state, ctx)
    if passing and ambiguous:  # weak tests cannot choose: the model, reading the docstring, gets them as hints
        hints = passing[:MAX_HINTS]
        return {"searches": [replace(record, fixed=False, hinted=len(hints))], "hints": hints}
    update: dict = {"searches": [record]}
    if passing:
        update.update(final=passing[0], stop="passed")
    return update


def _spent(state: AgentState, ctx: AgentContext) -> StopReason | None:
    b = ctx.budgets
    if state["iteration"] >= b.iterations:
        return "iterations"
    if state["tokens"] >= b.tokens:
        return "tokens"
    if time.monotonic() - state["started"] >= b.wall_s:
        return "time"
    return None


def route_candidate(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["test", "syntax", "repeat", "__end__"]:
    pending = state["pending"]
    if pending is not None and pending.problem is None:
        return "test"  # already paid for: always test it
    if _spent(state, runtime.context):
        return END
    return "repeat" if pending is not None and pending.problem == "repeat" else "syntax"


def route_start(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["search", "draft", "__end__"]:
    if runtime.context.search is not None:
        return "search"
    return END if _spent(state, runtime.context) else "draft"  # a zero budget: the search alone, or nothing


def route_tested(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["search", "reflect", "__end__"]:
    if state.get("final") is not None or _spent(state, runtime.context):
        return END
    return "search" if runtime.context.search is not None else "reflect"


def route_searched(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["draft", "reflect", "__end__"]:
    if state.get("final") is not None or _spent(state, runtime.context):
        return END
    return "reflect" if state["attempts"] else "draft"


@functools.cache
def build_graph():  # type: ignore[no-untyped-def]
    g = StateGraph(AgentState, context_schema=AgentContext)
    for name, node in (("search", search), ("draft", draft), ("reflect", reflect), ("repeat", repeat),
                       ("syntax", syntax), ("test", test)):
        g.add_node(name, node)
    g.add_conditional_edges(START, route_start)
    g.add_conditional_edges("search", route_searched)
    for name in ("draft", "reflect", "repeat", "syntax"):
        g.add_conditional_edges(name, route_candidate)
    g.add_conditional_edges("test", route_tested)
    return g.compile()


def repair(ctx: AgentContext) -> AgentResult:
    """Run the graph once for one target; every attempt is recorded in the result."""
    started = time.monotonic()
    state: AgentState = {"iteration": 0, "tokens": 0, "started": started, "pending": None, "attempts": [],
                         "seen": {code_hash(ctx.target.source): "the original (buggy) function"}, "final": None,
                         "current": ctx.target.source, "feedback": ctx.failure.summary, "stop": None, "searches": []}
    out = state
    try:  # streamed so that a model failure mid-way still hands back the attempts made so far
        for out in build_graph().stream(state, context=ctx, stream_mode="values",
                                        config={"recursion_limit": 5 * ctx.budgets.iterations + 10}):
            pass
    except LLMError as exc:
        raise RepairInterrupted(str(exc), tuple(out["attempts"])) from exc
    final = out.get("final")
    if final:
        final = minimize(ctx.target.source, final, ctx.harness)
    stop: StopReason = out.get("stop") or _spent(out, ctx) or "iterations"
    return AgentResult(status="fixed" if final else "not_fixed", stop_reason=stop, final_code=final,
                       attempts=tuple(out["attempts"]), wall_s=time.monotonic() - started,
                       changed_lines=changed_lines(ctx.target.source, final) if final else None,
                       searches=tuple(out["searches"]))


def mermaid() -> str:
    return build_graph().get_graph().draw_mermaid()
