"""What the three agent designs share: calling the model, checking a candidate, testing it, the mutation
search, the budgets, and the routers around them.

A strategy (reflect, thought-patch, tool-call) only decides how a candidate is asked for. Whatever it gets
goes through `candidate()`: the signature check, the faithful rewrite (minimal diff) and the AST-hash loop
detection, and it is recorded as an attempt when it cannot be tested. The routers here return abstract
steps ("first", "revise"); each strategy's graph maps them to its own nodes.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from langgraph.graph import StateGraph
from langgraph.runtime import Runtime

from bot.agent.antipatterns import anti_patterns, refusal
from bot.agent.context import REPEAT_BOOST, AgentContext, temperature
from bot.agent.options import SAMPLE_TEMPERATURE
from bot.agent.search.rounds import search as search_around
from bot.agent.source.code import changed_lines, code_hash, signature_problem
from bot.agent.source.faithful import faithful
from bot.agent.state import END, ORIGINAL_SEEN, AgentState, Cost, Pending, Problem, Sample, Seen, as_pending
from bot.agent.steps import prompts
from bot.agent.types import Attempt, Node, Outcome, StopReason, TestOutcome
from bot.llm.errors import ToolsUnsupported
from bot.llm.types import Completion, JsonLLM, ManyLLM, Message, Tool, ToolLLM

MAX_HINTS = 4
REPEAT_CALLS = 2  # model calls per unit of the iteration budget at most, where repeats are not charged
Parse = Callable[[Completion], tuple[str | None, Problem | None, str]]  # an answer -> (code, problem, detail)
Graph = StateGraph[AgentState, AgentContext, AgentState, AgentState]  # what each design's `wire` adds nodes to


def ask(messages: list[Message], state: AgentState, ctx: AgentContext, boost: float = 0.0,
        tools: Sequence[Tool] = (), sample: int = 0, schema: dict[str, Any] | None = None, retry: int = 0,
        max_tokens: int | None = None) -> tuple[Completion, float]:
    """One model call at the schedule's temperature (`sample` k > 0: the call's k-th extra answer, at least
    SAMPLE_TEMPERATURE, its own seed; `retry` r > 0: the r-th time this iteration asks again, its own seed, for
    the same prompt at the same seed gives the same answer); the few-shot bug patterns join the system prompt
    when on. With a `schema`, a model that can generate under one answers with JSON it admits; others answer
    freely. `max_tokens`: a shorter answer than the budget's (never a longer one)."""
    temp, seed = _drawn(state, ctx, boost, sample, retry)
    messages = _with_few_shot(messages, ctx)
    max_tokens = min(max_tokens or ctx.options.budgets.max_tokens_per_call, ctx.options.budgets.max_tokens_per_call)
    if schema is not None and isinstance(ctx.llm, JsonLLM):
        return ctx.llm.complete_json(messages, schema, temperature=temp, max_tokens=max_tokens, seed=seed), temp
    if not tools:
        return ctx.llm.complete(messages, temperature=temp, max_tokens=max_tokens, seed=seed), temp
    if not isinstance(ctx.llm, ToolLLM):
        raise ToolsUnsupported(f"{getattr(ctx.llm, 'name', type(ctx.llm).__name__)} cannot call tools")
    return ctx.llm.complete_with_tools(messages, tools, temperature=temp, max_tokens=max_tokens, seed=seed), temp


def ask_many(messages: list[Message], state: AgentState, ctx: AgentContext, samples: range, boost: float = 0.0,
             retry: int = 0) -> list[tuple[Completion, float]]:
    """The answers numbered `samples` (0: the call's own answer, k > 0: its k-th sample), each at the temperature
    and seed `ask` gives it, written together by a model that can (bot/llm/llamacpp_parallel.py), else one after
    another."""
    if not isinstance(ctx.llm, ManyLLM):
        return [ask(messages, state, ctx, boost, sample=k, retry=retry) for k in samples]
    drawn = [_drawn(state, ctx, boost, k, retry) for k in samples]
    done = ctx.llm.complete_many(_with_few_shot(messages, ctx), temperatures=[t for t, _ in drawn],
                                 seeds=[s for _, s in drawn], max_tokens=ctx.options.budgets.max_tokens_per_call)
    return [(d, t) for d, (t, _) in zip(done, drawn)]


def _drawn(state: AgentState, ctx: AgentContext, boost: float, sample: int, retry: int = 0) -> tuple[float, int]:
    """The temperature and seed of a call's answer (`sample` 0) or of its k-th extra answer, asked for the
    `retry`-th time in this iteration."""
    temp = temperature(ctx.options.schedule, state["iteration"], boost)
    if sample:
        temp = max(temp, SAMPLE_TEMPERATURE)
    return temp, ctx.seed + state["iteration"] + 1000 * sample + 100 * retry


def _with_few_shot(messages: list[Message], ctx: AgentContext) -> list[Message]:
    if ctx.options.few_shot and messages and messages[0].role == "system":
        return [Message("system", f"{messages[0].content}\n\n{prompts.FEW_SHOT}"), *messages[1:]]
    return messages


def repeat_boost(state: AgentState) -> float:
    """The temperature added after an answer that repeated code already tried: ask again, differently."""
    last = state["attempts"][-1] if state["attempts"] else None
    return REPEAT_BOOST if last is not None and last.outcome == "repeat" else 0.0


def checked(code: str | None, problem: Problem | None, detail: str, seen: Mapping[str, Seen], ctx: AgentContext
            ) -> tuple[str | None, Problem | None, str]:
    """A model's function made faithful to the original, or why it is not tested (signature, repeat, refused: a
    change that makes a test pass without fixing the code, bot/agent/antipatterns.py)."""
    if code is not None and problem is None:
        detail = signature_problem(code, ctx.target.source, ctx.target.name) or ""
        problem = "signature" if detail else None
    if code is not None and problem is None:
        code = faithful(code, ctx.target.source)
        same = seen.get(code_hash(code))
        problem, detail = ("repeat", prompts.seen_label(same)) if same else (None, "")
    if code is not None and problem is None:
        rules = anti_patterns(ctx.target.source, code, ctx.briefing.tests)
        problem, detail = ("refused", refusal(rules)) if rules else (None, "")
    return code, problem, detail


def answered(node: Node, done: Completion, temp: float, code: str | None, problem: Problem | None, detail: str,
             before: Cost = Cost(), answer: str = "") -> Pending:
    """A checked model answer as a candidate, with its call's cost and that of the calls that led to it."""
    return Pending(code=code, problem=problem, detail=detail, prompt_tokens=done.prompt_tokens + before.prompt_tokens,
                   completion_tokens=done.completion_tokens + before.completion_tokens,
                   latency_s=done.latency_s + before.latency_s, temperature=temp, node=node, answer=answer,
                   prompt_eval_s=done.prompt_eval_s + before.prompt_eval_s)


_RECORDED_AS: dict[Problem, Outcome] = {"repeat": "repeat", "signature": "signature", "refused": "refused",
                                        "edit": "unapplied"}


def unusable(problem: Problem) -> Outcome:
    """The outcome an answer that cannot be tested is recorded with (every other problem: `syntax`)."""
    return _RECORDED_AS.get(problem, "syntax")


def candidate(node: Node, done: Completion, temp: float, code: str | None, problem: Problem | None, detail: str,
              state: AgentState, ctx: AgentContext, before: Cost = Cost(), answer: str = "") -> AgentState:
    """The state update for a model answer: a checked `Pending` candidate (an attempt, if it is unusable).
    `answer` is kept with the attempt even when it is tested."""
    code, problem, detail = checked(code, problem, detail, state["seen"], ctx)
    pending = answered(node, done, temp, code, problem, detail, before, answer)
    update: AgentState = {"iteration": state["iteration"] + 1, "pending": pending,
                          "tokens": state["tokens"] + done.processed_tokens}
    if problem == "repeat" and code is not None and state["seen"].get(code_hash(code)) == ORIGINAL_SEEN:
        update["unchanged"] = state.get("unchanged", 0) + 1
    if problem is not None:  # an untestable answer is an attempt too: it cost a model call
        outcome = unusable(problem)
        said = done.text or "\n".join(c.arguments for c in done.tool_calls)  # a tool call's answer is its arguments
        update["attempts"] = [replace(attempt(state["iteration"] + 1, pending, outcome, detail),
                                      answer=pending.answer or said)]
    return update


def attempt(iteration: int, p: Pending, outcome: Outcome, feedback: str, changed: int | None = None) -> Attempt:
    return Attempt(iteration=iteration, node=p.node, code=p.code, outcome=outcome, feedback=feedback,
                   prompt_tokens=p.prompt_tokens, completion_tokens=p.completion_tokens, latency_s=p.latency_s,
                   temperature=p.temperature, changed_lines=changed, answer=p.answer, prompt_eval_s=p.prompt_eval_s,
                   pointed=p.pointed)


def test(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    """The pending candidate and its alternatives (samples) in one sandbox batch; of those that pass, the one most
    answers agreed on (the same normalised AST) wins, then the one with the fewest changed lines. Otherwise the
    first answer's failure is what the next revision reads."""
    ctx = runtime.context
    pending = state["pending"]
    assert pending is not None and pending.code is not None
    it = state["iteration"]
    codes = [pending.code, *(s.code for s in pending.alternatives)]
    outcomes = ctx.harness.check_many(codes) if pending.alternatives else [ctx.harness.check(pending.code)]
    changed = [changed_lines(ctx.target.source, c) for c in codes]
    records = [attempt(it, as_pending(s, "sample"), _label(o), o.feedback, n)
               for s, o, n in zip(pending.alternatives, outcomes[1:], changed[1:])]
    records.append(attempt(it, pending, _label(outcomes[0]), outcomes[0].feedback, changed[0]))  # last: the one
    update: AgentState = {"attempts": records, "pending": None,                       # the prompt shows in full
                          "seen": {**state["seen"], **{code_hash(c): Seen("attempt", it) for c in codes}}}
    votes = [pending.votes, *(s.votes for s in pending.alternatives)]
    passing = sorted((-v, n, i) for i, (o, n, v) in enumerate(zip(outcomes, changed, votes)) if o.passed)
    if passing:
        update["final"], update["stop"] = codes[passing[0][2]], "passed"
    else:
        update["current"], update["feedback"] = pending.code, outcomes[0].feedback
    return update


def _label(outcome: TestOutcome) -> Outcome:
    return "passed" if outcome.passed else "timeout" if outcome.timed_out else "failed"


def add_samples(update: AgentState, extra: Sequence[tuple[Completion, float]], state: AgentState, ctx: AgentContext,
                parse: Parse, answers: Sequence[str] = ()) -> AgentState:
    """The `extra` answers to the prompt that gave `update`'s pending candidate (its samples, see `ask_many`);
    the usable new ones join it as alternatives, tested in the same batch. When the first answer was unusable,
    the first usable sample takes its place. Unusable samples still count their tokens. `answers`, when given,
    are kept with the samples' attempts, one per extra answer."""
    pending = update["pending"]
    assert pending is not None
    seen = dict(state["seen"])
    if pending.problem is None and pending.code is not None:
        seen[code_hash(pending.code)] = Seen("sample")
    kept: list[Sample] = []
    waste = Cost()
    votes: Counter[str] = Counter([code_hash(pending.code)] if pending.problem is None and pending.code else [])
    for i, (done, temp) in enumerate(extra):
        update["tokens"] += done.processed_tokens
        code, problem, _ = checked(*parse(done), seen, ctx)
        if code is not None and problem == "repeat" and code_hash(code) in votes:
            votes[code_hash(code)] += 1  # agrees with another answer to this prompt: a vote, not a candidate
        if code is None or problem is not None:
            waste = waste.plus(done)
            continue
        seen[code_hash(code)] = Seen("sample")
        votes[code_hash(code)] += 1
        kept.append(Sample(code, done.prompt_tokens, done.completion_tokens, done.latency_s, temp, done.prompt_eval_s,
                           answers[i] if answers else ""))
    kept = [replace(k, votes=votes[code_hash(k.code)]) for k in kept]
    if pending.problem is None and pending.code:
        pending = replace(pending, votes=votes[code_hash(pending.code)])
    if pending.problem is not None and not kept:  # nothing to test: the unusable answers' cost joins its attempt
        a = update["attempts"][-1]
        return {**update, "attempts": [replace(a, prompt_tokens=a.prompt_tokens + waste.prompt_tokens,
                                               completion_tokens=a.completion_tokens + waste.completion_tokens,
                                               latency_s=a.latency_s + waste.latency_s,
                                               prompt_eval_s=a.prompt_eval_s + waste.prompt_eval_s)]}
    if pending.problem is not None:  # its own attempt is recorded; a usable sample is tested instead
        first, *kept = kept
        pending = as_pending(first, pending.node)
    return {**update, "pending": replace(pending.plus(waste), alternatives=tuple(kept))}


def search(state: AgentState, runtime: Runtime[AgentContext]) -> AgentState:
    ctx = runtime.context
    assert ctx.options.search is not None
    base = state["current"]
    seen = state["seen"].get(code_hash(base))
    label = prompts.seen_label(seen) if seen else "a candidate"
    passing, record = search_around(ctx.target.source, base, ctx.target.name, state["feedback"], ctx.harness,
                                    ctx.screen, ctx.options.search, label, exclude=frozenset(state["seen"]),
                                    tests=ctx.briefing.tests, context=ctx.target.context)
    record = replace(record, around_model=seen is None or seen.kind != "original")
    ambiguous = record.survivors > 1 and ctx.options.search.ambiguous == "ask" and not spent(state, ctx)
    if passing and ambiguous:  # weak tests cannot choose: the model, reading the docstring, gets them as hints
        hints = passing[:MAX_HINTS]
        return {"searches": [replace(record, fixed=False, hinted=len(hints))], "hints": hints, "passing": passing}
    update: AgentState = {"searches": [record], "passing": passing}
    if passing:
        update["final"], update["stop"] = passing[0], "passed"
    return update


def spent(state: AgentState, ctx: AgentContext) -> StopReason | None:
    b = ctx.options.budgets
    calls = state["iteration"]  # a repeat is not a candidate; the calls stay bounded all the same
    if calls - state.get("repeats", 0) >= b.iterations or calls >= REPEAT_CALLS * b.iterations:
        return "iterations"
    if state["tokens"] >= b.tokens:
        return "tokens"
    if b.unchanged is not None and state.get("unchanged", 0) >= b.unchanged:
        return "unchanged"
    if time.monotonic() - state["started"] >= b.wall_s:
        return "time"
    return None


def route_start(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["search", "first", "__end__"]:
    search = runtime.context.options.search
    if search is not None and search.first_round:
        return "search"
    return END if spent(state, runtime.context) else "first"  # a zero budget: the search alone, or nothing


def route_tested(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["search", "revise", "__end__"]:
    if state.get("final") is not None or spent(state, runtime.context):
        return END
    return "search" if runtime.context.options.search is not None else "revise"


def route_searched(state: AgentState, runtime: Runtime[AgentContext]) -> Literal["first", "revise", "__end__"]:
    if state.get("final") is not None or spent(state, runtime.context):
        return END
    return "revise" if state["attempts"] else "first"
