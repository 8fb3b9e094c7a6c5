"""The tool-call design: the model drives the loop through function calling with one tool,
`run_tests(explanation, code)`, and reads each result as the tool's answer.

    call ──► test ──► call ──► test ──► ...   (until the tests pass or a budget is spent)
     │ ▲
     └─┘  (no call, arguments that are not JSON, a changed signature: answered without running)

Each call is asked in a conversation of two turns: the task, then the result of the model's latest call (the
code it ran and FAILED with the failing assertion, the feedback reflect reads; or NOT RUN with the reason),
earlier calls summed up in a line each. The model's calls are not replayed as its own turns: shown its last
call that way, the bundled model sent it again, hot or not, and never recovered from a first failure; shown the
call's code inside the result, it writes other fixes.

Code already tried is never run: the call is asked again at once, hotter and with another seed, up to
REPEAT_RETRIES times, all within the one iteration; only when every retry repeats is the answer recorded, and
the next call reads that it was NOT RUN. The explanation is not held to a length by the schema: cut short
mid-sentence by a grammar, a small model writes garbage for `code` (`", "`).
"""
from __future__ import annotations

import json
import re
from typing import Literal

from langgraph.runtime import Runtime

from bot.agent.context import AgentContext
from bot.agent.designs import tool_call_prompts
from bot.agent.source.code import code_hash, extract_function, split_docstring
from bot.agent.state import END, AgentState, Cost, Problem, Seen
from bot.agent.steps import prompts
from bot.agent.steps.nodes import Graph, add_samples, ask, candidate, checked, repeat_boost, spent
from bot.agent.types import Attempt
from bot.llm.types import Completion, Tool

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


def _result(state: AgentState, ctx: AgentContext) -> str:
    """What the model reads of its calls so far: the latest run's code and failure in full, then, when the latest
    call was not run, why."""
    attempts, current, feedback = state["attempts"], state["current"], state["feedback"].strip()
    if current != ctx.target.source:  # the test node keeps the latest run that failed, and its failure
        code = prompts.fence(split_docstring(current)[0])
        text = f"Your last run_tests call ran this code:\n{code}\nResult: FAILED\n{feedback}"
    else:
        text = f"The tests fail:\n{feedback}"
    last = attempts[-1] if attempts else None
    if last is None or last.outcome in ("failed", "timeout"):
        return text
    if last.outcome == "repeat":  # with that code's failure: "find a different fix" alone got the same code back
        same = state["seen"].get(code_hash(last.code)) if last.code else None
        why = (f"the same code as {last.feedback}, which fails:\n{_failure_of(same, attempts, ctx).strip()}\n"
               "Change the line that causes this failure.")
    elif last.outcome == "signature":
        why = f"{last.feedback}."
    elif last.outcome == "refused":
        why = last.feedback
    else:  # the reason's first line only: a one-line function quoted back was copied, one line again
        why = (f"{last.feedback.splitlines()[0] if last.feedback else last.outcome}. Send the whole function "
               f"`{ctx.target.name}` as `code`, laid out as Python: each line break written as \\n, each line's "
               "indentation kept.")
    return f"{text}\n\nYour latest call was NOT RUN: {why}"


def _readings(code: str) -> list[str]:
    """`code` as sent, then what it reads as without two slips seen in JSON strings written under the grammar:
    the line breaks left out (`def f(x):    if x:        return 1`: each run of spaces was a newline and the
    next line's indentation), and a stray closing brace after the last line (`return len(s)}`)."""
    readings = [code]
    if re.search(r"\S {2,}\S", code):  # also when only some breaks are missing (the def line's, most often)
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
    messages = tool_call_prompts.tool_task(ctx.target, ctx.briefing, _result(state, ctx), state["attempts"],
                                 state.get("hints", []))
    repeated = Cost()
    for retry in range(REPEAT_RETRIES + 1):
        done, temp = ask(messages, state, ctx, repeat_boost(state), tools=[RUN_TESTS], sample=retry)
        code, problem, detail = _read(done, ctx)
        if retry == REPEAT_RETRIES or checked(code, problem, detail, state["seen"], ctx)[1] != "repeat":
            break
        repeated = repeated.plus(done)
    update = candidate("tool", done, temp, code, problem, detail, state, ctx, before=repeated)
    update["tokens"] += repeated.processed_tokens
    if ctx.options.samples == 1:
        return update
    # --samples: more calls to the same conversation, hot and each with its own seed (numbered after the retries'),
    # tested with this one in one batch; a repeat among them is dropped, not asked again
    extra = [ask(messages, state, ctx, repeat_boost(state), tools=[RUN_TESTS], sample=REPEAT_RETRIES + k)
             for k in range(1, ctx.options.samples)]
    return add_samples(update, extra, state, ctx, lambda answer: _read(answer, ctx))


def _read(done: Completion, ctx: AgentContext) -> tuple[str | None, Problem | None, str]:
    runs = [c for c in done.tool_calls if c.name == RUN_TESTS.name]
    if not runs:
        return None, "no_call", "no run_tests call"
    return _arguments(runs[0].arguments, ctx.target.name, ctx.target.source)


def route_call(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["test", "call", "__end__"]:
    pending = state["pending"]
    if pending is not None and pending.problem is None:
        return "test"
    return END if spent(state, runtime.context) else "call"


def wire(g: Graph) -> tuple[str, str]:
    g.add_node("call", call)
    g.add_conditional_edges("call", route_call)
    return "call", "call"
