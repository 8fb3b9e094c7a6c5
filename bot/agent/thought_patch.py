"""The thought-patch design: a Thought node states the root cause and a fix plan, a Patch node turns the
plan into JSON line edits, which fixbot applies to the original function before the sandbox runs it.

    thought ──► patch ──► test ──► thought ──► ...
                 │  ▲
                 └──┘  (an edit that does not apply goes back to patch, with the reason)
    patch ──► thought  (the edit gives code already tried: think again, hotter)

Edits always refer to the original function's line numbers, so the history of earlier patches that the
Thought node reads keeps its meaning. One iteration is one patch (the candidate); the thought before it is
counted in that attempt's tokens and latency, and in the token and time budgets.
"""
from __future__ import annotations

import ast
from typing import Literal

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime

from . import prompts
from .code import docstring_lines, split_docstring
from .context import REPEAT_BOOST, AgentContext
from .edits import EditError, Numbered, apply_edits, numbered, parse_edits
from .nodes import ask, candidate, spent
from .state import AgentState, Cost, Problem


def _numbered(source: str) -> Numbered:
    span = docstring_lines(source)
    return numbered(source, range(span[0], span[1] + 1) if span else range(0))


def _situation(state: AgentState, ctx: AgentContext) -> str:
    last = state["attempts"][-1] if state["attempts"] else None
    if last is None:
        return f"The tests fail:\n{ctx.failure.summary.strip()}"
    if last.outcome == "repeat":
        return (f"The last plan led to code already tried ({last.feedback}). That is not the bug: find a different "
                "root cause.")
    code = split_docstring(state["current"])[0].rstrip()
    return f"The last patch gave this code, which still fails:\n```python\n{code}\n```\n{state['feedback'].strip()}"


def _tried(state: AgentState, ctx: AgentContext) -> list[str]:
    failed = [a for a in state["attempts"] if a.code and a.outcome in ("failed", "timeout")]
    return [f"- {prompts.change(ctx.target.source, a.code or '')}  => "
            f"{a.feedback.splitlines()[0] if a.feedback else a.outcome}" for a in failed]


def thought(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    last = state["attempts"][-1] if state["attempts"] else None
    messages = prompts.thought(ctx.target, ctx.failure, _numbered(ctx.target.source).text, _tried(state, ctx),
                               _situation(state, ctx), state.get("hints", []))
    done, _ = ask(messages, state, ctx, boost=REPEAT_BOOST if last and last.outcome == "repeat" else 0.0)
    return {"plan": done.text.strip(), "plan_cost": Cost(done.prompt_tokens, done.completion_tokens, done.latency_s),
            "tokens": state["tokens"] + done.prompt_tokens + done.completion_tokens}


def patch(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    view = _numbered(ctx.target.source)
    pending = state.get("pending")
    error = pending.detail if pending is not None and pending.problem in ("patch", "syntax", "signature") else ""
    last = state["attempts"][-1] if state["attempts"] else None
    boost = REPEAT_BOOST if last and last.outcome == "repeat" else 0.0  # the same code again: vary both calls
    done, temp = ask(prompts.patch(ctx.target, view.text, state.get("plan", ""), error), state, ctx, boost)
    code: str | None = None
    problem: Problem | None = None
    detail = ""
    try:
        code = apply_edits(ctx.target.source, parse_edits(done.text), view.protected)
        ast.parse(code)
    except EditError as exc:
        code, problem, detail = None, "patch", str(exc)
    except SyntaxError as exc:
        problem, detail = "syntax", f"the edited function does not parse: line {exc.lineno}: {exc.msg}"
        code = None
    update = candidate("patch", done, temp, code, problem, detail, state, ctx, before=state.get("plan_cost", Cost()))
    update["plan_cost"] = Cost()  # counted once, in this attempt
    return update


def route_thought(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["patch", "__end__"]:
    return END if spent(state, runtime.context) in ("tokens", "time") else "patch"


def route_patch(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["test", "patch", "thought", "__end__"]:
    pending = state["pending"]
    if pending is not None and pending.problem is None:
        return "test"
    if spent(state, runtime.context):
        return END
    return "thought" if pending is not None and pending.problem == "repeat" else "patch"


def wire(g: StateGraph) -> tuple[str, str]:
    g.add_node("thought", thought)
    g.add_node("patch", patch)
    g.add_conditional_edges("thought", route_thought)
    g.add_conditional_edges("patch", route_patch)
    return "thought", "thought"
