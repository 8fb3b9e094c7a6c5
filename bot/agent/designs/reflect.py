"""The reflect design (the default): draft a fix, test it, and on failure reflect on the failed assertion and try
again; an answer that is no code or code already tried is asked for again, differently (syntax, repeat).

    [search] ──► draft ──► test ──► [search] ──► reflect ──► test ──► ...   (until the tests pass or a budget is spent)
                   │         ▲
                   └─► syntax / repeat ─┘

In: the agent's context (target, briefing, model) and state. Out: the nodes and routers `wire` adds to the graph
(bot/agent/graph.py). Never: a candidate tested twice, or a model call past a budget."""
from __future__ import annotations

from dataclasses import replace
from typing import Literal

from langgraph.runtime import Runtime

from bot.agent.context import REPEAT_BOOST, AgentContext
from bot.agent.designs import suspect
from bot.agent.options import BLOCKS_FROM
from bot.agent.source.code import code_hash, extract_function, split_docstring, target_kind, unwritten
from bot.agent.source.edit_blocks import apply_blocks
from bot.agent.state import END, ORIGINAL_SEEN, AgentState, Cost, Problem
from bot.agent.steps import prompts
from bot.agent.steps.nodes import Graph, add_samples, ask, ask_many, candidate, spent
from bot.agent.types import Node
from bot.llm.types import Completion, Message


def asks_blocks(ctx: AgentContext, state: AgentState) -> bool:
    """Whether the prompts ask for SEARCH/REPLACE blocks rather than the whole corrected code (RepairOptions.edits).
    After an answer whose blocks did not apply, the next call asks for the whole code: a model that cannot quote
    the code is asked for it in the other form, not the same way again."""
    attempts = state["attempts"]
    if attempts and attempts[-1].outcome == "unapplied":
        return False
    if ctx.options.edits != "auto":
        return ctx.options.edits == "blocks"
    return len(split_docstring(ctx.target.source)[0].strip("\n").splitlines()) > BLOCKS_FROM


def _ask(node: Node, messages: list[Message], state: AgentState, ctx: AgentContext, boost: float = 0.0,
         before: Cost = Cost()) -> AgentState:
    # blocks are written against the attempt the prompt shows, else against the original; either form is read
    bases = tuple(dict.fromkeys((state.get("current") or ctx.target.source, ctx.target.source)))

    def parse(done: Completion) -> tuple[str | None, Problem | None, str]:
        got = apply_blocks(done.text, bases) or extract_function(done.text, ctx.target.name, ctx.target.source)
        return got.code, got.problem, got.detail

    (done, temp), *extra = ask_many(messages, state, ctx, range(ctx.options.samples), boost)
    update = candidate(node, done, temp, *parse(done), state, ctx, before=before)
    update = add_samples(update, extra, state, ctx, parse) if extra else update
    pending = update["pending"]
    if pending is not None and pending.problem == "repeat":  # no new candidate: the budget buys distinct ones
        update["repeats"] = state.get("repeats", 0) + 1
    return update


def draft(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    ctx = runtime.context
    messages = prompts.draft(ctx.target, ctx.briefing, state.get("hints", []), asks_blocks(ctx, state))
    return _ask("draft", messages, state, ctx)


def reflect(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    ctx = runtime.context
    messages = prompts.reflect(ctx.target, ctx.briefing, state["current"], state["feedback"], state["attempts"],
                               state.get("hints", []), asks_blocks(ctx, state))
    return _ask("reflect", messages, state, ctx)


def repeat(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """Ask again, hotter; after an answer that left the code unchanged, first ask which line is wrong and point
    the request at it (bot/agent/designs/suspect.py)."""
    ctx = runtime.context
    pending = state.get("pending")
    same_as = state["seen"].get(code_hash(pending.code)) if pending and pending.code else None
    feedback = state.get("feedback") or ctx.briefing.summary
    line, cost, named = None, Cost(), state.get("suspects", [])
    if same_as == ORIGINAL_SEEN and target_kind(ctx.target.source) != "functions" and not unwritten(ctx.target.source):
        done, _ = ask(suspect.question(ctx.target, ctx.briefing, feedback, named), state, ctx, boost=REPEAT_BOOST,
                      max_tokens=suspect.SUSPECT_TOKENS)
        line, cost = suspect.suspect(done.text, ctx.target, named), Cost().plus(done)
    messages = prompts.repeat(ctx.target, ctx.briefing, same_as, feedback, state["attempts"], asks_blocks(ctx, state),
                              suspect=line)
    update = _ask("repeat", messages, state, ctx, boost=REPEAT_BOOST, before=cost)
    update["tokens"] += cost.processed_tokens
    return _pointed_at(update, line, named) if line else update


def _pointed_at(update: AgentState, line: str, named: list[str]) -> AgentState:
    """`update` with the line its prompt pointed at, on its candidate and on the attempts it recorded (the
    report says where each answer was sent), and the line among those named."""
    pending = update["pending"]
    return {**update, "suspects": [*named, line],
            "pending": replace(pending, pointed=line) if pending is not None else None,
            "attempts": [replace(a, pointed=line) for a in update.get("attempts", [])]}


def syntax(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    ctx = runtime.context
    pending = state["pending"]
    detail = pending.detail if pending else ""
    return _ask("syntax", prompts.syntax(ctx.target, ctx.briefing, detail, asks_blocks(ctx, state)), state, ctx)


def route_candidate(state: AgentState,
                    runtime: Runtime[AgentContext]) -> Literal["test", "syntax", "repeat", "__end__"]:
    pending = state["pending"]
    if pending is not None and pending.problem is None:
        return "test"  # already paid for: always test it
    if spent(state, runtime.context):
        return END
    return "repeat" if pending is not None and pending.problem == "repeat" else "syntax"


def wire(g: Graph) -> tuple[str, str]:
    for name, node in (("draft", draft), ("reflect", reflect), ("repeat", repeat), ("syntax", syntax)):
        g.add_node(name, node)
        g.add_conditional_edges(name, route_candidate)
    return "draft", "reflect"
