"""The tool-call design: the model drives the loop through function calling with one tool,
`run_tests(explanation, code)`, and reads each result as the tool's answer.

    call ──► test ──► call ──► test ──► ...   (until the tests pass or a budget is spent)
     │ ▲
     └─┘  (no call, arguments that are not JSON, a changed signature: answered without running)

Code already tried is never run and never shown back: the call is asked again at once, hotter and with another
seed, up to REPEAT_RETRIES times, all within the one iteration (a repeat answered "NOT RUN" cost an iteration,
and the model, reading its own repeated call, sent it again). The explanation is not held to a length by the
schema: cut short mid-sentence by a grammar, the model wrote garbage for `code` (`", "`) on every try.

The conversation is the task, then (assistant call, tool result) pairs: the latest MAX_TURNS tested ones and the
newest pair in full, older failures summed up in a line each, so ten tries fit the bundled model's 4096-token
context. Untested answers (NOT RUN) are not kept: shown again and again, the same code is what the model copies.
"""
from __future__ import annotations

import json
import re
from typing import Literal

from langgraph.runtime import Runtime

from ..llm.types import Completion, Message, Tool, ToolCall
from . import prompts
from .code import code_hash, extract_function
from .context import AgentContext
from .nodes import Graph, ask, candidate, checked, repeat_boost, spent
from .state import END, AgentState, Cost, Problem, Seen, Turn
from .types import Attempt

MAX_TURNS = 3
REPEAT_RETRIES = 2
RUN_TESTS = Tool(
    name="run_tests",
    description="Run the function's tests on your corrected version of it. Answers PASSED, or FAILED with the "
                "failing assertion and the actual value.",
    parameters={"type": "object",
                "properties": {"explanation": {"type": "string", "description": "one sentence: the bug and the fix"},
                               "code": {"type": "string",
                                        "description": "the whole corrected function, from its def line"}},
                "required": ["explanation", "code"]})


def _failure_of(same: Seen | None, attempts: list[Attempt], ctx: AgentContext) -> str:
    """The failure of the code a repeat repeats: the original function's, or that attempt's."""
    if same is not None and same.kind == "attempt":
        return next((a.feedback for a in attempts if a.iteration == same.iteration
                     and a.outcome in ("failed", "timeout")), "")
    return ctx.briefing.summary


def _turn(call: Message, state: AgentState, ctx: AgentContext) -> Turn:
    """The model's turn with what it reads after it: the test result, or why nothing was run."""
    attempts = state["attempts"]
    last = attempts[-1]
    ran = last.outcome in ("failed", "timeout")
    if ran:
        text = f"FAILED\n{last.feedback.strip()}"
    elif last.outcome == "repeat":  # with the failure again: "find a different fix" alone got the same code back
        same = state["seen"].get(code_hash(last.code)) if last.code else None
        text = (f"NOT RUN: the same code as {last.feedback}, which fails:\n"
                f"{_failure_of(same, attempts, ctx).strip()}\nChange the line that causes this failure.")
    elif last.outcome == "signature":
        text = f"NOT RUN: {last.feedback}."
    else:
        text = f"NOT RUN: {last.feedback}. Send the whole function `{ctx.target.name}` as `code`."
    if call.tool_calls:
        return Turn(call, Message("tool", text, tool_call_id=call.tool_calls[0].id), ran)
    return Turn(call, Message("user", f"{text} Call run_tests."), ran)


def _window(turns: list[Turn]) -> list[Turn]:
    """The exchanges sent in full: tested ones, and the latest whatever it was. An untested answer shown again
    and again (the same code three times) is what the model then copies."""
    tested = [t for t in turns[:-1] if t.ran]
    return (tested + turns[-1:])[-MAX_TURNS:]


def _readings(code: str) -> list[str]:
    """`code` as sent, then what it reads as without two slips seen in JSON strings written under the grammar:
    the line breaks left out (`def f(x):    if x:        return 1`: each run of spaces was a newline and the
    next line's indentation), and a stray closing brace after the last line (`return len(s)}`)."""
    readings = [code]
    if "\n" not in code.strip() and re.search(r"\S {2,}\S", code):
        readings.append(re.sub(r"(?<=\S)( {2,})(?=\S)", lambda m: "\n" + m.group(1), code.strip()))
    if code.rstrip().endswith("}"):
        readings += [r.rstrip()[:-1] for r in list(readings)]
    return readings


def _arguments(raw: str, name: str, original: str) -> tuple[str | None, Problem | None, str]:
    try:  # not strict: a grammar lets raw line breaks into JSON strings, and the code is no less readable
        args = json.loads(raw or "{}", strict=False)
    except ValueError as exc:
        return None, "no_call", f"the run_tests arguments are not JSON ({exc})"
    code = args.get("code") if isinstance(args, dict) else None
    if not isinstance(code, str) or not code.strip():
        return None, "no_call", "run_tests needs the function's source in `code`"
    plain, *others = _readings(code)
    got = extract_function(plain, name, original)
    if got.problem == "syntax":  # the other readings only when the code as sent does not parse
        got = next((o for o in (extract_function(text, name, original) for text in others) if o.problem is None), got)
    return got.code, got.problem, got.detail


def call(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    ctx = runtime.context
    turns = list(state.get("turns") or [])
    open_call = state.get("open_call")
    if open_call is not None:
        turns.append(_turn(open_call, state, ctx))
    shown = _window(turns)
    failed = [a for a in state["attempts"] if a.code and a.outcome in ("failed", "timeout")]
    unseen = failed[:len(failed) - sum(t.ran for t in shown)]
    tried = prompts.history(ctx.target, unseen, skip_last=False) if unseen else ""
    messages = prompts.tool_task(ctx.target, ctx.briefing, state.get("hints", []), tried)
    for turn in shown:
        messages += [turn.call, turn.result]
    repeated = Cost()
    for retry in range(REPEAT_RETRIES + 1):
        done, temp = ask(messages, state, ctx, repeat_boost(state), tools=[RUN_TESTS], sample=retry)
        runs, (code, problem, detail) = _read(done, ctx)
        if retry == REPEAT_RETRIES or checked(code, problem, detail, state["seen"], ctx)[1] != "repeat":
            break
        repeated = repeated.plus(done)
    update = candidate("tool", done, temp, code, problem, detail, state, ctx, before=repeated)
    update["tokens"] += repeated.processed_tokens
    update["turns"], update["open_call"] = turns, Message("assistant", done.text, tool_calls=tuple(runs[:1]))
    return update


def _read(done: Completion, ctx: AgentContext) -> tuple[list[ToolCall], tuple[str | None, Problem | None, str]]:
    runs = [c for c in done.tool_calls if c.name == RUN_TESTS.name]
    if not runs:
        return runs, (None, "no_call", "no run_tests call")
    return runs, _arguments(runs[0].arguments, ctx.target.name, ctx.target.source)


def route_call(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["test", "call", "__end__"]:
    pending = state["pending"]
    if pending is not None and pending.problem is None:
        return "test"
    return END if spent(state, runtime.context) else "call"


def wire(g: Graph) -> tuple[str, str]:
    g.add_node("call", call)
    g.add_conditional_edges("call", route_call)
    return "call", "call"
