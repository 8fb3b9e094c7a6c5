"""What the three agent designs share: calling the model, checking a candidate, testing it, the mutation
search, the budgets, and the routers around them.

A strategy (reflect, thought-patch, tool-call) only decides how a candidate is asked for. Whatever it gets
goes through `candidate()`: the signature check, the faithful rewrite (minimal diff) and the AST-hash loop
detection, and it is recorded as an attempt when it cannot be tested. The routers here return abstract
steps ("first", "revise"); each strategy's graph maps them to its own nodes.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Literal, Sequence

from langgraph.graph import END
from langgraph.runtime import Runtime

from ..llm.errors import ToolsUnsupported
from ..llm.types import Completion, Message, Tool, ToolLLM
from . import prompts
from .code import changed_lines, code_hash, faithful, signature_problem
from .context import REPEAT_BOOST, AgentContext, temperature
from .search import search as search_around
from .state import AgentState, Cost, Pending, Problem
from .types import Attempt, Node, StopReason

MAX_HINTS = 4


def ask(messages: list[Message], state: AgentState, ctx: AgentContext, boost: float = 0.0,
        tools: Sequence[Tool] = ()) -> tuple[Completion, float]:
    """One model call at the schedule's temperature; the few-shot bug patterns join the system prompt when on."""
    temp = temperature(ctx.schedule, state["iteration"], boost)
    if ctx.few_shot and messages and messages[0].role == "system":
        messages = [Message("system", f"{messages[0].content}\n\n{prompts.FEW_SHOT}"), *messages[1:]]
    options = dict(temperature=temp, max_tokens=ctx.budgets.max_tokens_per_call, seed=ctx.seed + state["iteration"])
    if not tools:
        return ctx.llm.complete(messages, **options), temp
    if not isinstance(ctx.llm, ToolLLM):
        raise ToolsUnsupported(f"{getattr(ctx.llm, 'name', type(ctx.llm).__name__)} cannot call tools")
    return ctx.llm.complete_with_tools(messages, tools, **options), temp


def repeat_boost(state: AgentState) -> float:
    """The temperature added after an answer that repeated code already tried: ask again, differently."""
    last = state["attempts"][-1] if state["attempts"] else None
    return REPEAT_BOOST if last is not None and last.outcome == "repeat" else 0.0


def candidate(node: Node, done: Completion, temp: float, code: str | None, problem: Problem | None, detail: str,
              state: AgentState, ctx: AgentContext, before: Cost = Cost()) -> dict:
    """The state update for a model answer: a checked `Pending` candidate (an attempt, if it is unusable)."""
    if code is not None and problem is None:
        detail = signature_problem(code, ctx.target.source, ctx.target.name) or ""
        problem = "signature" if detail else None
    if code is not None and problem is None:
        code = faithful(code, ctx.target.source)
        same = state["seen"].get(code_hash(code))
        problem, detail = ("repeat", same) if same else (None, "")
    pending = Pending(code, problem, detail, done.prompt_tokens + before.prompt_tokens,
                      done.completion_tokens + before.completion_tokens, done.latency_s + before.latency_s, temp, node)
    update: dict = {"iteration": state["iteration"] + 1, "pending": pending,
                    "tokens": state["tokens"] + done.prompt_tokens + done.completion_tokens}
    if problem is not None:  # an untestable answer is an attempt too: it cost a model call
        outcome = "repeat" if problem == "repeat" else "signature" if problem == "signature" else "syntax"
        update["attempts"] = [attempt(state["iteration"] + 1, pending, outcome, detail)]
    return update


def attempt(iteration: int, p: Pending, outcome: str, feedback: str, changed: int | None = None) -> Attempt:
    return Attempt(iteration, p.node, p.code, outcome, feedback, p.prompt_tokens, p.completion_tokens,  # type: ignore[arg-type]
                   p.latency_s, p.temperature, changed)


def test(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    pending = state["pending"]
    assert pending is not None and pending.code is not None
    outcome = ctx.harness.check(pending.code)
    changed = changed_lines(ctx.target.source, pending.code)
    label = "passed" if outcome.passed else "timeout" if outcome.timed_out else "failed"
    update: dict = {
        "attempts": [attempt(state["iteration"], pending, label, outcome.feedback, changed)],
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
    ambiguous = record.survivors > 1 and ctx.search.ambiguous == "ask" and not spent(state, ctx)
    if passing and ambiguous:  # weak tests cannot choose: the model, reading the docstring, gets them as hints
        hints = passing[:MAX_HINTS]
        return {"searches": [replace(record, fixed=False, hinted=len(hints))], "hints": hints}
    update: dict = {"searches": [record]}
    if passing:
        update.update(final=passing[0], stop="passed")
    return update


def spent(state: AgentState, ctx: AgentContext) -> StopReason | None:
    b = ctx.budgets
    if state["iteration"] >= b.iterations:
        return "iterations"
    if state["tokens"] >= b.tokens:
        return "tokens"
    if time.monotonic() - state["started"] >= b.wall_s:
        return "time"
    return None


def route_start(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["search", "first", "__end__"]:
    if runtime.context.search is not None:
        return "search"
    return END if spent(state, runtime.context) else "first"  # a zero budget: the search alone, or nothing


def route_tested(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["search", "revise", "__end__"]:
    if state.get("final") is not None or spent(state, runtime.context):
        return END
    return "search" if runtime.context.search is not None else "revise"


def route_searched(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["first", "revise", "__end__"]:
    if state.get("final") is not None or spent(state, runtime.context):
        return END
    return "revise" if state["attempts"] else "first"
