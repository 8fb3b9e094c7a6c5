"""Functions written from the docstring alone, as evidence for the choice among fixes (bot/agent/choose/select.py).

Why: every candidate fix was written looking at the buggy function, and where the visible tests are weak, many
keep the bug's behaviour (a triangle checked only with its hypotenuse last, a vowel list with `y` still in it).
A function the model writes from the description alone, never having seen the bug, does not inherit it. Where
the references that pass the visible tests all return the same on an input of the judge, that return is taken
as the expected one (the consensus), and candidates are ranked by how many such expectations they meet; the
references themselves become candidates only when no fix meets as many. Where a single reference passes, the
buggy original is the second voter: a bug shows on some inputs, and where the original and a function written
without seeing it return the same, that is what the function should return (a fix that drops an empty string's
guard raises where both return `''`). With no reference passing there is no consensus, and the choice is as without
them. Which references count, and what else tempers them: bot/agent/choose/shortlist.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.agent.context import AgentContext
from bot.agent.options import SAMPLE_TEMPERATURE
from bot.agent.source.code import changed_lines, extract_function
from bot.agent.state import AgentState, Pending
from bot.agent.steps import prompts
from bot.agent.steps.nodes import answered, attempt, checked, unusable
from bot.agent.types import Attempt
from bot.llm.types import Completion, ManyLLM

FIRST_SEED = 200  # apart from the seeds of the calls' samples and of the vote's extra answers
MIN_CONSENSUS = 2  # functions that must agree on an input: references, or a lone one and the original


@dataclass(frozen=True)
class References:
    """The references that pass the visible tests, and the attempts that record what writing them cost."""

    codes: list[str]
    attempts: list[Attempt]


def _answers(ctx: AgentContext, temperatures: list[float]) -> list[Completion]:
    messages = prompts.reference(ctx.target, ctx.briefing)
    seeds = [ctx.seed + FIRST_SEED + k for k in range(len(temperatures))]
    max_tokens = ctx.options.budgets.max_tokens_per_call
    if isinstance(ctx.llm, ManyLLM):
        return ctx.llm.complete_many(messages, temperatures=temperatures, seeds=seeds, max_tokens=max_tokens)
    return [ctx.llm.complete(messages, temperature=t, max_tokens=max_tokens, seed=s)
            for t, s in zip(temperatures, seeds)]


def write_references(state: AgentState, ctx: AgentContext) -> References:
    """`ctx.options.references` functions written from the docstring (the first greedy, the others sampled), each
    tested on the visible tests; those that pass. None when fewer than MIN_CONSENSUS are asked for."""
    count = ctx.options.references
    if count < MIN_CONSENSUS:
        return References(codes=[], attempts=[])
    temperatures = [0.0] + [SAMPLE_TEMPERATURE] * (count - 1)
    usable: list[tuple[str, Pending]] = []
    attempts: list[Attempt] = []
    for done, temp in zip(_answers(ctx, temperatures), temperatures):
        got = extract_function(done.text, ctx.target.name, ctx.target.source)
        code, problem, detail = checked(got.code, got.problem, got.detail, {}, ctx)
        pending = answered("reference", done, temp, code if problem is None else None, problem, detail,
                           answer="" if problem is None else done.text)
        if code is None or problem is not None:
            attempts.append(attempt(state["iteration"], pending, unusable(problem or "missing"),
                                    detail or str(problem)))
        else:
            usable.append((code, pending))
    verdicts = ctx.harness.check_many([code for code, _ in usable]) if usable else []
    codes = []
    for (code, pending), verdict in zip(usable, verdicts):
        if verdict.passed:  # the same text twice is two answers that agree
            codes.append(code)
        attempts.append(attempt(state["iteration"], pending, "passed" if verdict.passed else "failed",
                                "" if verdict.passed else verdict.feedback, changed_lines(ctx.target.source, code)))
    return References(codes=codes, attempts=attempts)


def consensus(outputs: Sequence[Sequence[str]]) -> list[str | None]:
    """Per input, the value every reference returns, or None where they differ, where they raise or time out (an
    input the description may not cover, such as an empty string where it speaks of words), or where there are
    fewer than MIN_CONSENSUS of them."""
    if len(outputs) < MIN_CONSENSUS:
        return [None] * (len(outputs[0]) if outputs else 0)
    return [column[0] if len(set(column)) == 1 and not failed(column[0]) else None for column in zip(*outputs)]


def failed(output: str) -> bool:
    return output == "timeout" or output.startswith("!")  # eval/behaviour.py's spelling of a raise


def met(output: Sequence[str], expected: Sequence[str | None]) -> int:
    """How many of the consensus's expectations a candidate's outputs meet."""
    return sum(1 for got, want in zip(output, expected) if want is not None and got == want)


def favoured(fixes: Sequence[int], references: Sequence[int], texts: Sequence[str] = ()) -> tuple[list[int], list[int]]:
    """The indices (into the fixes, into the references) that stay in the choice, given how many expectations
    each meets: the fixes that meet the most, unless a reference meets more (or no fix is left); then the
    references that do, one of each text (`texts`: the references' code hashes)."""
    best_fix, best_reference = max(fixes, default=0), max(references, default=0)
    if fixes and best_reference <= best_fix:
        return [i for i, m in enumerate(fixes) if m == best_fix], []
    seen: set[object] = set()
    kept = []
    for i, m in enumerate(references):
        text = texts[i] if texts else i
        if m == best_reference and text not in seen:
            seen.add(text)
            kept.append(i)
    return [], kept
