"""Choosing among candidates that all pass the visible tests, by what they do beyond them.

Weak tests (a docstring's two examples) are passed by several different functions, and the first to pass is often
not the one the docstring describes. When the run has a `Judge`, the candidates that passed (the fix, the other
passing answers and samples, the search's passing mutants, and a few more answers drawn for the purpose) are run
on more inputs, grouped by what they return, and scored by two kinds of agreement (CodeT's dual execution
agreement, AlphaCode's clustering): the asserts the model writes from the docstring that the group passes
(bot/agent/expectations.py) first, then the group's votes (an answer the model gives again and again counts each
time); between equal groups, and within the winner, the fewest changed lines. A choice that fails most of the
asserts is doubted, also when it was the only candidate: the mutants of the original that pass the visible tests
join the pool, the model is shown the asserts the choice fails and answers again, and the pool is judged once
more (the doubted fix stays in it, so nothing is lost when no better one comes). The tests that judge the result
afterwards are never used. On by default under `fixbot eval --protocol examples` (`--no-vote` turns it off).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..llm.types import Message
from . import prompts
from .code import changed_lines, code_hash, extract_function
from .context import AgentContext
from .expectations import Expectation, agrees, parse_asserts
from .nodes import answered, ask_many, attempt, checked, spent, unusable
from .search import search as search_around
from .state import ORIGINAL_SEEN, AgentState
from .types import Attempt, Judge, Node, Selection

EXTRA_ANSWERS = 3  # answers drawn for the vote when a fix is found: one prompt, cached, written together
FIRST_EXTRA = 100  # their sample numbers (seeds), apart from the samples a call draws itself
FIRST_RECHECK = 200  # those of the answers asked again when the choice fails most of the model's asserts
MIN_ASSERTS = 3  # fewer asserts are too little to doubt a fix by
RECHECK_MUTANTS = 16  # mutants of the original that pass the visible tests, judged on the asserts when in doubt
SHOWN_WRONG = 3  # failed asserts shown to the model
ASSERT_TOKENS = 300  # eight one-line asserts; a longer answer is the model rambling


def choose(original: str, codes: Sequence[str], votes: Sequence[int], signatures: Sequence[str],
           agreed: Sequence[int] = ()) -> tuple[int, int]:
    """The index of the chosen code and its group's votes: the group that passes the most of the model's asserts
    (`agreed`, per code; equal within a group, which behaves alike), then the most votes, then the one whose best
    member changes the fewest lines; within it, the fewest changed lines (the earliest on a tie)."""
    groups: dict[str, list[int]] = {}
    for i, signature in enumerate(signatures):
        groups.setdefault(signature, []).append(i)
    changed = [changed_lines(original, c) for c in codes]

    def best(members: list[int]) -> int:
        return min(members, key=lambda i: (changed[i], i))

    passes = list(agreed) or [0] * len(codes)
    chosen = min(groups.values(),
                 key=lambda m: (-passes[best(m)], -sum(votes[i] for i in m), changed[best(m)], best(m)))
    return best(chosen), sum(votes[i] for i in chosen)


@dataclass
class Pool:
    """The distinct candidates that passed the visible tests, with their votes."""

    codes: dict[str, str] = field(default_factory=dict)  # code hash -> code, in the order they came
    votes: Counter[str] = field(default_factory=Counter)

    def vote(self, code: str) -> None:
        self.codes.setdefault(code_hash(code), code)
        self.votes[code_hash(code)] += 1

    def __contains__(self, code: str) -> bool:
        return code_hash(code) in self.codes


def _pool(final: str, state: AgentState) -> Pool:
    """Every answer that passed counts once per time it was given; the search's passing mutants (and a fix the
    search found) once each."""
    pool = Pool()
    for a in state["attempts"]:
        if a.outcome == "passed" and a.code:
            pool.vote(a.code)
    for code in [final, *state.get("hints", [])]:
        if code not in pool:
            pool.vote(code)
    return pool


def _draw(messages: list[Message], node: Node, first: int, state: AgentState, ctx: AgentContext, pool: Pool
          ) -> list[Attempt]:
    """EXTRA_ANSWERS more answers to `messages` (sample numbers from `first`); a new one joins the pool if it passes
    the visible tests, a known one adds its vote. Each is recorded as an attempt of the last iteration."""
    original = {code_hash(ctx.target.source): ORIGINAL_SEEN}
    answers = []
    for done, temp in ask_many(messages, state, ctx, range(first, first + EXTRA_ANSWERS)):
        got = extract_function(done.text, ctx.target.name, ctx.target.source)
        # faithful to the original's text; an answer given before is a vote, the original unchanged never is
        code, problem, detail = checked(got.code, got.problem, got.detail, original, ctx)
        pending = answered(node, done, temp, code if problem is None else None, problem, detail,
                           answer="" if problem is None else done.text)
        # an answer to test gets its outcome below
        answers.append((pending.code, attempt(state["iteration"], pending, unusable(problem) if problem else "failed",
                                              detail)))
    new = list(dict.fromkeys(code for code, _ in answers if code and code not in pool))
    verdicts = dict(zip(new, ctx.harness.check_many(new))) if new else {}
    attempts = []
    for code, record in answers:
        if code is not None:
            passed = code in pool or verdicts[code].passed
            if passed:
                pool.vote(code)
            record = replace(record, outcome="passed" if passed else "failed",
                             feedback="" if passed else verdicts[code].feedback,
                             changed_lines=changed_lines(ctx.target.source, code))
        attempts.append(record)
    return attempts


def _asserts(state: AgentState, ctx: AgentContext) -> tuple[list[Expectation], Attempt]:
    """The model's asserts from the docstring (one greedy answer), and the attempt that records their cost."""
    done = ctx.llm.complete(prompts.asserts(ctx.target, ctx.briefing), temperature=0.0, max_tokens=ASSERT_TOKENS,
                            seed=ctx.seed)
    found = parse_asserts(done.text, ctx.target.name)
    return found, Attempt(iteration=state["iteration"], node="asserts", code=None, outcome="written",
                          feedback=f"{len(found)} assert(s) with literal arguments and result",
                          prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens,
                          latency_s=done.latency_s, temperature=0.0, answer=done.text,
                          prompt_eval_s=done.prompt_eval_s)


@dataclass(frozen=True)
class Scored:
    """The pool judged: per candidate, its votes, its behaviour, its outputs on the asserts' inputs and how many of
    the asserts it passes; the chosen one and its group's votes."""

    codes: list[str]
    votes: list[int]
    signatures: list[str]
    on_asserts: list[list[str]]
    agreed: list[int]
    index: int
    group_votes: int

    def doubted(self, asserts: int) -> bool:
        """Whether the choice fails most of the model's asserts (and there are enough of them to go by)."""
        return asserts >= MIN_ASSERTS and 2 * self.agreed[self.index] < asserts


def _score(pool: Pool, judge: Judge, expectations: Sequence[Expectation], original: str) -> Scored:
    codes, votes = list(pool.codes.values()), [pool.votes[h] for h in pool.codes]
    outputs = judge.outputs(codes) if len(codes) > 1 else [[] for _ in codes]
    on_asserts = judge.outputs(codes, [e.args for e in expectations]) if expectations else [[] for _ in codes]
    agreed = [sum(agrees(o, e.expected) for o, e in zip(out, expectations)) for out in on_asserts]
    signatures = [json.dumps(out + extra) for out, extra in zip(outputs, on_asserts)]
    index, group_votes = choose(original, codes, votes, signatures, agreed)
    return Scored(codes, votes, signatures, on_asserts, agreed, index, group_votes)


def _wrong(name: str, expectations: Sequence[Expectation], outputs: Sequence[str]) -> list[str]:
    """The asserts a candidate fails, in words for the model: `f(1, 2) returned 4; expected 3`."""
    def said(output: str) -> str:
        return "did not return in time" if output == "timeout" else \
            f"raised {output[1:]}" if output.startswith("!") else f"returned {output}"

    return [f"{name}({', '.join(map(repr, e.args))}) {said(out)}; expected {e.expected!r}"
            for e, out in zip(expectations, outputs) if not agrees(out, e.expected)][:SHOWN_WRONG]


def _passing_mutants(ctx: AgentContext) -> list[str]:
    """Up to RECHECK_MUTANTS one-edit mutants of the original that pass the visible tests (the graph's search kept
    only the few with the fewest changed lines), for the asserts to judge."""
    if ctx.options.search is None:
        return []
    source = ctx.target.source
    options = replace(ctx.options.search, confirm=RECHECK_MUTANTS, second_order=0, skip=0)
    passing, _ = search_around(source, source, ctx.target.name, ctx.briefing.summary, ctx.harness, ctx.screen,
                               options, prompts.ORIGINAL, exclude=frozenset({code_hash(source)}))
    return passing


def _recheck(scored: Scored, expectations: Sequence[Expectation], state: AgentState, ctx: AgentContext,
             pool: Pool) -> list[Attempt]:
    """A doubted choice: the mutants that pass the visible tests join the pool, and the model, shown the asserts
    the choice fails, answers again; the attempts that cost."""
    for code in _passing_mutants(ctx):
        if code not in pool:
            pool.vote(code)
    chosen = scored.codes[scored.index]
    wrong = _wrong(ctx.target.name, expectations, scored.on_asserts[scored.index])
    return _draw(prompts.doubted(ctx.target, ctx.briefing, chosen, wrong), "recheck", FIRST_RECHECK, state, ctx, pool)


def select(final: str, state: AgentState, ctx: AgentContext, judge: Judge) -> tuple[str, list[Attempt], Selection]:
    """The fix to keep among those that passed, the attempts the vote cost, and how it was chosen."""
    pool = _pool(final, state)
    # no model (the search alone) or no time left: the vote is among the candidates there are, on the judge's inputs
    asking = ctx.options.iterations > 0 and spent(state, ctx) != "time"
    costs = _draw(prompts.draft(ctx.target, ctx.briefing, state.get("hints", [])), "select", FIRST_EXTRA, state,
                  ctx, pool) if asking else []
    drawn = len(costs)
    expectations: list[Expectation] = []
    if asking:  # also for one candidate, or several that behave alike: the asserts are how a wrong fix is doubted
        expectations, written = _asserts(state, ctx)
        costs.append(written)
    scored = _score(pool, judge, expectations, ctx.target.source)
    doubted = asking and scored.doubted(len(expectations)) and spent(state, ctx) != "time"
    if doubted:
        before = len(pool.codes)
        costs += _recheck(scored, expectations, state, ctx, pool)
        if len(pool.codes) > before:
            scored = _score(pool, judge, expectations, ctx.target.source)
    code = scored.codes[scored.index]
    return code, costs, Selection(
        candidates=len(scored.codes), groups=len(set(scored.signatures)), votes=scored.group_votes,
        changed=code_hash(code) != code_hash(final), drawn=drawn, asserts=len(expectations),
        agreed=scored.agreed[scored.index], doubted=doubted)
