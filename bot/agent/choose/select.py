"""Choosing among candidates that all pass the visible tests, by what they do beyond them.

Weak tests (a docstring's two examples) are passed by several different functions, and the first to pass is often
not the one the docstring describes. When the run has a `Judge`, the candidates that passed (the fix, the other
passing answers and samples, every passing mutant of the searches, and a few more answers drawn for the purpose)
are run on more inputs and grouped by what they return. Functions the model writes from the docstring alone
(bot/agent/choose/references.py), where they agree on an input, say what it should return: the candidates that meet the
most of those expectations stay in the choice, or the references themselves where no candidate meets as many
(bot/agent/choose/shortlist.py, which also sets aside what behaves like an original the visible tests pass on). A
model that can score texts (llama.cpp) then reads each candidate, and the likeliest body after the docstring wins
(bot/agent/choose/likelihood.py). A model that cannot writes
asserts from the docstring instead, and the groups are scored by two kinds of agreement (CodeT's dual execution
agreement, AlphaCode's clustering): the asserts the group passes (bot/agent/choose/expectations.py) first, then the
group's votes (an answer the model gives again and again counts each time); between equal groups, and within the
winner, the fewest changed lines. The tests that judge the result afterwards are never used. On by default under
`fixbot eval --protocol examples` (`--no-vote` turns it off). Without a judge (`fixbot fix --choose likeliest`),
`likeliest` only scores the candidates that passed and keeps the likeliest; no answers are drawn.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from bot.agent.choose.expectations import Expectation, agrees, parse_asserts
from bot.agent.choose.likelihood import coder_scores
from bot.agent.choose.neighbours import likely_neighbours
from bot.agent.choose.references import References, met, write_references
from bot.agent.choose.shortlist import Outputs, shortlist
from bot.agent.context import AgentContext
from bot.agent.source.code import changed_lines, code_hash, extract_function
from bot.agent.state import ORIGINAL_SEEN, AgentState
from bot.agent.steps import prompts
from bot.agent.steps.nodes import answered, ask_many, attempt, checked, spent, unusable
from bot.agent.types import Attempt, Judge, Selection

EXTRA_ANSWERS = 3  # answers drawn for the vote when a fix is found: one prompt, cached, written together
FIRST_EXTRA = 100  # their sample numbers (seeds), apart from the samples a call draws itself
ASSERT_TOKENS = 300  # eight one-line asserts; a longer answer is the model rambling


def choose(original: str, codes: Sequence[str], votes: Sequence[int], signatures: Sequence[str],
           agreed: Sequence[int] = (), likelihood: Sequence[float] = ()) -> tuple[int, int]:
    """The index of the chosen code and its group's votes. With `likelihood` (per code, the model's score), the
    likeliest code, whatever its group (the fewest changed lines, then the earliest, on a tie). Without it, the
    group that passes the most of the model's asserts (`agreed`, per code; equal within a group, which behaves
    alike), then the most votes, then the one whose best member changes the fewest lines; within it, the fewest
    changed lines (the earliest on a tie)."""
    groups: dict[str, list[int]] = {}
    for i, signature in enumerate(signatures):
        groups.setdefault(signature, []).append(i)
    changed = [changed_lines(original, c) for c in codes]

    def best(members: list[int]) -> int:
        return min(members, key=lambda i: (changed[i], i))

    if likelihood:
        index = min(range(len(codes)), key=lambda i: (-likelihood[i], changed[i], i))
        return index, sum(votes[i] for i in groups[signatures[index]])
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
    """Every answer that passed counts once per time it was given; the searches' passing mutants (and a fix the
    search found) once each."""
    pool = Pool()
    for a in state["attempts"]:
        if a.outcome == "passed" and a.code:
            pool.vote(a.code)
    for code in [final, *state.get("hints", []), *state.get("passing", [])]:
        if code not in pool:
            pool.vote(code)
    return pool


def _draw(state: AgentState, ctx: AgentContext, pool: Pool) -> list[Attempt]:
    """EXTRA_ANSWERS more answers to the first prompt (with the search's hints); a new one joins the pool if it
    passes the visible tests, a known one adds its vote. Each is recorded as an attempt of the last iteration."""
    messages = prompts.draft(ctx.target, ctx.briefing, state.get("hints", []))
    original = {code_hash(ctx.target.source): ORIGINAL_SEEN}
    answers = []
    for done, temp in ask_many(messages, state, ctx, range(FIRST_EXTRA, FIRST_EXTRA + EXTRA_ANSWERS)):
        got = extract_function(done.text, ctx.target.name, ctx.target.source)
        # faithful to the original's text; an answer given before is a vote, the original unchanged never is
        code, problem, detail = checked(got.code, got.problem, got.detail, original, ctx)
        pending = answered("select", done, temp, code if problem is None else None, problem, detail,
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


def _scores(state: AgentState, ctx: AgentContext, codes: list[str]) -> tuple[list[float] | None, Attempt | None]:
    """The model's coder score of each code (None when it cannot score), and the attempt that records its time
    (the backend gives scores, not token counts)."""
    started = time.monotonic()
    scores = coder_scores(ctx.llm, ctx.target.source, codes)
    if scores is None:
        return None, None
    return scores, _scored(state, f"{len(codes)} candidate(s) scored by likelihood", time.monotonic() - started)


def _scored(state: AgentState, feedback: str, seconds: float) -> Attempt:
    """The attempt that records the model's time reading candidates (the backend gives scores, not token counts)."""
    return Attempt(iteration=state["iteration"], node="score", code=None, outcome="scored", feedback=feedback,
                   prompt_tokens=0, completion_tokens=0, latency_s=seconds, temperature=0.0, prompt_eval_s=seconds)


def _neighbours(state: AgentState, ctx: AgentContext) -> tuple[list[str], Attempt | None]:
    """Where the visible tests pass on the original: its likely one-edit neighbours (choose/neighbours.py), and
    the attempt that records the time the model spent scoring them."""
    found = likely_neighbours(ctx.target.source, ctx.target.name, ctx.llm, ctx.harness, ctx.screen)
    if found is None:
        return [], None
    said = f"{found.scored} of {found.tried} neighbour(s) of the original pass the visible tests; " \
           f"{len(found.codes)} far likelier than it"
    return found.codes, _scored(state, said, found.scoring_s)


def _outputs(codes: list[str], state: AgentState, ctx: AgentContext, judge: Judge, asking: bool
             ) -> tuple[list[list[str]], list[Expectation], Attempt | None]:
    """What each code returns on the judge's inputs; where the judge has none (no visible test with literal
    calls), on the inputs of the model's asserts, asked for then: they are the only inputs there are."""
    outputs = judge.outputs(codes)
    if any(outputs) or not asking:
        return outputs, [], None
    expectations, written = _asserts(state, ctx)
    return judge.outputs(codes, [e.args for e in expectations]), expectations, written


def select(final: str, state: AgentState, ctx: AgentContext, judge: Judge) -> tuple[str, list[Attempt], Selection]:
    """The fix to keep among those that passed, the attempts the vote cost, and how it was chosen."""
    pool = _pool(final, state)
    # no model (the search alone) or no time left: the vote is among the candidates there are
    asking = ctx.options.iterations > 0 and spent(state, ctx) != "time"
    drawn = _draw(state, ctx, pool) if asking else []
    near, near_cost = _neighbours(state, ctx) if asking and ctx.original_passes else ([], None)
    for code in near:
        if code not in pool:
            pool.vote(code)
    refs = write_references(state, ctx) if asking else References(codes=[], attempts=[])
    fixes, votes = list(pool.codes.values()), [pool.votes[h] for h in pool.codes]
    spent_on = drawn + ([near_cost] if near_cost else []) + refs.attempts
    if len(fixes) == 1 and not refs.codes:
        return fixes[0], spent_on, Selection(
            candidates=1, groups=1, votes=votes[0], changed=code_hash(fixes[0]) != code_hash(final), drawn=len(drawn),
            neighbours=len(near))
    every, expectations, written = _outputs([*fixes, *refs.codes, ctx.target.source], state, ctx, judge, asking)
    original, every = every[-1], every[:-1]
    short = shortlist(Outputs(fixes=every[:len(fixes)], references=every[len(fixes):], original=original,
                              original_passes=ctx.original_passes, asserts=expectations),
                      [code_hash(c) for c in refs.codes])
    chosen = short.fixes or [len(fixes) + i for i in short.references]
    codes, outputs = [(fixes + refs.codes)[i] for i in chosen], [every[i] for i in chosen]
    votes = [(votes + [1] * len(refs.codes))[i] for i in chosen]
    scores, scored = _scores(state, ctx, codes) if asking and len(codes) > 1 else (None, None)
    # without scores, the model's asserts only where the candidates behave differently (one group has nothing to
    # choose between); where the judge had no inputs of its own, the outputs above are already on theirs
    if asking and scores is None and not expectations and len({json.dumps(out) for out in outputs}) > 1:
        expectations, written = _asserts(state, ctx)
        outputs = [out + extra for out, extra in zip(outputs, judge.outputs(codes, [e.args for e in expectations]))]
    on_asserts = [out[-len(expectations):] if expectations else [] for out in outputs]
    agreed = [sum(agrees(o, e.expected) for o, e in zip(out, expectations)) for out in on_asserts]
    signatures = [json.dumps(out) for out in outputs]
    index, group_votes = choose(ctx.target.source, codes, votes, signatures, agreed, scores or ())
    return codes[index], spent_on + [a for a in (written, scored) if a is not None], Selection(
        candidates=len(fixes) + len(refs.codes), groups=len(set(signatures)), votes=group_votes,
        changed=code_hash(codes[index]) != code_hash(final), drawn=len(drawn), asserts=len(expectations),
        agreed=agreed[index], scored=len(scores or ()), neighbours=len(near), references=len(refs.codes),
        expected=sum(e is not None for e in short.expected), met=met(every[chosen[index]], short.expected),
        rewritten=not short.fixes, set_aside=short.set_aside)


def likeliest(final: str, state: AgentState, ctx: AgentContext) -> tuple[str, list[Attempt], Selection | None]:
    """Without a judge: the likeliest of the candidates that passed the tests (the fix, passing answers and
    samples, the searches' passing mutants), the scoring's attempt, and how it was chosen; the fix as it is when it
    is the only candidate or the model cannot score texts."""
    pool = _pool(final, state)
    codes, votes = list(pool.codes.values()), [pool.votes[h] for h in pool.codes]
    if len(codes) == 1 or spent(state, ctx) == "time":
        return final, [], None
    scores, scored = _scores(state, ctx, codes)
    if scores is None or scored is None:
        return final, [], None
    index, group_votes = choose(ctx.target.source, codes, votes, list(pool.codes), likelihood=scores)
    changed = code_hash(codes[index]) != code_hash(final)
    said = "the likeliest replaces the first found" if changed else "the first found is the likeliest"
    return codes[index], [replace(scored, feedback=f"{scored.feedback}: {said}")], Selection(
        candidates=len(codes), groups=len(codes), votes=group_votes, changed=changed, drawn=0, scored=len(scores))
