"""The thought-patch design: a Thought node states the root cause and a fix plan, a Patch node turns the
plan into JSON line edits, which fixbot applies to the original function before the sandbox runs it.

    thought ──► patch ──► test ──► thought ──► ...
                 │  ▲
                 └──┘  (an edit that does not apply, or changes nothing, goes back to patch, with the reason)
    patch ──► thought  (the edit gives code already tried: think again, hotter; or a second edit of the same
                        plan does not apply either: a plan the model cannot write down is replaced)

Patch continues Thought's conversation (the plan is the model's own turn, the edit is asked for next, an edit
that did not apply is shown with its reason), so llama.cpp evaluates only the new turns. Both nodes see the
original function without its docstring (the docstring is shown apart, as the spec), its lines numbered one
after another; an edit names the line it changes by its text (`edits.anchors`), which a small model gets right
far more often than its number. The faithful merge puts the docstring back. One iteration is one tested patch, or
FREE_UNTESTABLE + 1 untestable ones; the thought before a patch is counted in that attempt's tokens and latency,
and in the token and time budgets. Every attempt keeps its plan and edit as `answer`.
"""
from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from bot.agent.context import AgentContext
from bot.agent.designs import thought_patch_prompts as tp_prompts
from bot.agent.designs.edit_layout import apply_edits
from bot.agent.designs.edits import EditError, edit_schema, numbered, parse_edits, quoted
from bot.agent.source.code import code_hash, normalized_dump, split_docstring
from bot.agent.state import END, AgentState, Cost, Problem
from bot.agent.steps import prompts
from bot.agent.steps.nodes import Graph, add_samples, ask, ask_many, candidate, repeat_boost, spent
from bot.llm.types import Message

# Edits of one plan before it is replaced: the first retry with the reason often applies; after that the model
# mostly sent the same edit again (8 times in a row on one task), spending the budget on one unwritable plan.
PATCH_TRIES = 2
# Untestable answers (an edit that does not apply or parse, code already tried) an iteration absorbs before one
# counts: each is recorded and asked again at once (with its reason, or as a new plan, hotter), so the iteration
# budget buys tested patches; without this, over half of a quarter's iterations went to answers never run.
FREE_UNTESTABLE = 2


def _view(ctx: AgentContext) -> str:
    """What the line numbers refer to: the original function without its docstring."""
    return split_docstring(ctx.target.source)[0]


def _situation(state: AgentState, ctx: AgentContext) -> str:
    last = state["attempts"][-1] if state["attempts"] else None
    if last is None:
        return f"The tests fail:\n{ctx.briefing.summary.strip()}"
    if last.outcome == "syntax" and last.code is not None and code_hash(last.code) == code_hash(_view(ctx)):
        return ("The last plan's fix leaves the function as it was: the line it names already reads the way the plan "
                "says it should. So that line is not the bug, or the plan did not say what it must become: find the "
                "root cause again, and give the wrong line's corrected text exactly.")
    if last.outcome in ("syntax", "signature"):
        reason = last.feedback.splitlines()[0] if last.feedback else "it did not apply"
        return (f"The last plan could not be turned into an edit that applies ({reason}). Find a fix that is "
                "simpler to write: as few lines as possible, each given exactly as it should read.")
    if last.outcome == "refused":
        return f"The last plan's edit was not run. {last.feedback}"
    if last.outcome == "repeat":
        return (f"The last plan led to code already tried ({last.feedback}). That is not the bug: find a different "
                "root cause.")
    code = split_docstring(state["current"])[0].rstrip()
    return f"The last patch gave this code, which still fails:\n```python\n{code}\n```\n{state['feedback'].strip()}"


def thought(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    ctx = runtime.context
    tried = prompts.tried_lines(ctx.target, state["attempts"])
    messages = tp_prompts.thought(ctx.target, ctx.briefing, numbered(_view(ctx)), tried, _situation(state, ctx),
                               state.get("hints", []))
    plans = ask_many(messages, state, ctx, range(ctx.options.samples), repeat_boost(state), retry=_absorbed(state))
    cost = Cost()
    for done, _ in plans:  # the other plans' thinking is counted with this one's attempt
        cost = cost.plus(done)
    # each plan as it came (not stripped), so the patch conversation re-renders the tokens llama.cpp has cached
    conversations = [[*messages, Message("assistant", done.text)] for done, _ in plans]
    return {"plan": conversations[0], "plan_samples": conversations[1:], "patch_turns": [], "plan_cost": cost,
            "tokens": state["tokens"] + cost.processed_tokens}


def _applied(view: str, text: str) -> tuple[str | None, Problem | None, str]:
    """The function the answer's edits give, or why there is none (for the model: it reads the reason). An edit
    that changes nothing keeps its code (the function as it was), so the next thought can say so."""
    try:
        code = apply_edits(view, parse_edits(text, view))
        unchanged = normalized_dump(code) == normalized_dump(view)  # the plan may be right: its edit copied the line
    except EditError as exc:
        return None, "patch", str(exc)
    except SyntaxError as exc:
        bad = (exc.text or "").rstrip()  # the line itself: the error alone got the same edit back, again and again
        return None, "syntax", (f"the edited function does not parse: line {exc.lineno}: {exc.msg}"
                                + (f"\n    {bad}" if bad else ""))
    if unchanged:
        return code, "patch", "that edit leaves the function as it was; write the line as the fix says it should read"
    return code, None, ""


def _absorbed(state: AgentState) -> int:
    """Untestable answers the current iteration has absorbed: recorded under its number, which is not yet counted."""
    return sum(a.iteration == state["iteration"] + 1 for a in state["attempts"])


def patch(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    ctx = runtime.context
    view = _view(ctx)
    turns = state.get("patch_turns", [])
    plan = state.get("plan", [])
    # after a repeat both calls are hotter: a new plan alone came back as the same code
    done, temp = ask(tp_prompts.patch(plan, turns), state, ctx, repeat_boost(state), schema=_schema(view, plan),
                     retry=_absorbed(state))
    update = candidate("patch", done, temp, *_applied(view, done.text), state, ctx,
                       before=state.get("plan_cost", Cost()), answer=_said(plan, done.text))
    update["plan_cost"] = Cost()  # counted once, in this attempt
    if state.get("plan_samples") and not turns:
        update = _sampled(update, state, ctx, view)
    pending = update["pending"]
    assert pending is not None
    if pending.problem is not None and _absorbed(state) < FREE_UNTESTABLE:  # recorded, not counted: asked again
        update["iteration"] = state["iteration"]
    if pending.problem in ("patch", "syntax", "signature"):  # the next try of this plan sees this edit and why
        update["patch_turns"] = [*turns, (done.text, pending.detail)]
    return update


def _schema(view: str, plan: list[Message]) -> dict[str, Any]:
    """The edits the plan's patch may be: of the lines the plan names, when it names any (`edits.quoted`)."""
    return edit_schema(view, quoted(view, plan[-1].content) if plan else ())


def _sampled(update: AgentState, state: AgentState, ctx: AgentContext, view: str) -> AgentState:
    """The other plans of the thought (--samples), each turned into its edit as the first plan was (the plan is
    the sample; its edit is written at the schedule's temperature), tested with the first in one batch."""
    plans = state["plan_samples"]
    edits = [ask(tp_prompts.patch(plan), state, ctx, repeat_boost(state), schema=_schema(view, plan),
                 retry=_absorbed(state)) for plan in plans]
    said = [_said(plan, done.text) for plan, (done, _) in zip(plans, edits)]
    return {**add_samples(update, edits, state, ctx, lambda done: _applied(view, done.text), said),
            "plan_samples": []}


def _said(plan: list[Message], edit: str) -> str:
    """What an attempt keeps as its answer: the plan, then the edit."""
    return f"{plan[-1].content.strip()}\n---\n{edit.strip()}" if plan else edit


def route_thought(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["patch", "__end__"]:
    return END if spent(state, runtime.context) in ("tokens", "time") else "patch"


def route_patch(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["test", "patch", "thought", "__end__"]:
    pending = state["pending"]
    if pending is not None and pending.problem is None:
        return "test"
    if spent(state, runtime.context):
        return END
    if pending is not None and (pending.problem == "repeat" or len(state.get("patch_turns", [])) >= PATCH_TRIES):
        return "thought"
    return "patch"


def wire(g: Graph) -> tuple[str, str]:
    g.add_node("thought", thought)
    g.add_node("patch", patch)
    g.add_conditional_edges("thought", route_thought)
    g.add_conditional_edges("patch", route_patch)
    return "thought", "thought"
