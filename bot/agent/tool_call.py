"""The tool-call design: the model drives the loop through function calling with one tool,
`run_tests(explanation, code)`, and reads each result as the tool's answer.

    call ──► test ──► call ──► test ──► ...   (until the tests pass or a budget is spent)
     │ ▲
     └─┘  (no call, arguments that are not JSON, code already tried: answered without running, hotter on a repeat)

The conversation is the task, then (assistant call, tool result) pairs; only the latest MAX_TURNS pairs are
sent, the older ones summed up in a line each, so ten tries fit the bundled model's 4096-token context.
"""
from __future__ import annotations

import json
from typing import Literal

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime

from ..llm.types import Message, Tool
from . import prompts
from .code import extract_function
from .context import REPEAT_BOOST, AgentContext
from .nodes import ask, candidate, spent
from .state import AgentState, Problem
from .types import Attempt

MAX_TURNS = 3
RUN_TESTS = Tool(
    name="run_tests",
    description="Run the function's tests on your corrected version of it. Answers PASSED, or FAILED with the "
                "failing assertion and the actual value.",
    parameters={"type": "object",
                "properties": {"explanation": {"type": "string", "description": "one sentence: the bug and the fix"},
                               "code": {"type": "string",
                                        "description": "the whole corrected function, from its def line"}},
                "required": ["explanation", "code"]})


def _result(call: Message, last: Attempt, name: str) -> Message:
    """What the model reads after its turn: the test result, or why nothing was run."""
    if last.outcome in ("failed", "timeout"):
        text = f"FAILED\n{last.feedback.strip()}"
    elif last.outcome == "repeat":
        text = f"NOT RUN: the same code as {last.feedback}, which fails. Find a different fix."
    elif last.outcome == "signature":
        text = f"NOT RUN: {last.feedback}."
    else:
        text = f"NOT RUN: {last.feedback}. Send the whole function `{name}` as `code`."
    if call.tool_calls:
        return Message("tool", text, tool_call_id=call.tool_calls[0].id)
    return Message("user", f"{text} Call run_tests.")


def _arguments(raw: str, name: str, original: str) -> tuple[str | None, Problem | None, str]:
    try:
        args = json.loads(raw or "{}")
    except ValueError as exc:
        return None, "no_call", f"the run_tests arguments are not JSON ({exc})"
    code = args.get("code") if isinstance(args, dict) else None
    if not isinstance(code, str) or not code.strip():
        return None, "no_call", "run_tests needs the function's source in `code`"
    got = extract_function(code, name, original)
    return got.code, got.problem, got.detail


def call(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    turns = list(state.get("turns") or [])
    if state.get("open_call") is not None:
        turns.append((state["open_call"], _result(state["open_call"], state["attempts"][-1], ctx.target.name)))
    dropped = len(turns) - MAX_TURNS
    tried = prompts.history(ctx.target, list(state["attempts"][:dropped]), skip_last=False) if dropped > 0 else ""
    messages = prompts.tool_task(ctx.target, ctx.failure, state.get("hints", []), tried)
    for assistant, result in turns[-MAX_TURNS:]:
        messages += [assistant, result]
    last = state["attempts"][-1] if state["attempts"] else None
    done, temp = ask(messages, state, ctx, REPEAT_BOOST if last and last.outcome == "repeat" else 0.0,
                     tools=[RUN_TESTS])
    runs = [c for c in done.tool_calls if c.name == RUN_TESTS.name]
    if runs:
        code, problem, detail = _arguments(runs[0].arguments, ctx.target.name, ctx.target.source)
    else:
        code, problem, detail = None, "no_call", "no run_tests call"
    update = candidate("tool", done, temp, code, problem, detail, state, ctx)
    update.update(turns=turns, open_call=Message("assistant", done.text, tool_calls=tuple(runs[:1])))
    return update


def route_call(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["test", "call", "__end__"]:
    pending = state["pending"]
    if pending is not None and pending.problem is None:
        return "test"
    return END if spent(state, runtime.context) else "call"


def wire(g: StateGraph) -> tuple[str, str]:
    g.add_node("call", call)
    g.add_conditional_edges("call", route_call)
    return "call", "call"
