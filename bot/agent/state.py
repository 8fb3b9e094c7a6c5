"""The graph's state: what changes from node to node."""
from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from typing import Annotated, Final, Literal, TypedDict

from bot.agent.source.blocks import ExtractProblem
from bot.agent.types import Attempt, Node, SearchRound, StopReason
from bot.llm.types import Completion, Message

# why a candidate cannot be tested: its code (as extracted), code already tried, an edit that does not apply,
# an answer without the tool call
Problem = Literal[ExtractProblem, "repeat", "patch", "no_call", "refused"]  # refused: an anti-pattern
END: Final = "__end__"  # langgraph's END, typed as the literal the routers return (langgraph's is a plain str)


@dataclass(frozen=True)
class Seen:
    """Which code an AST hash in `AgentState.seen` stands for; prompts.seen_label puts it into words."""

    kind: Literal["original", "attempt", "sample"]  # sample: another answer to the prompt of the pending one
    iteration: int = 0  # an attempt's number


ORIGINAL_SEEN = Seen("original")


@dataclass(frozen=True)
class Sample:
    """Another answer to the same prompt (`AgentContext.samples`), checked and new, tested with the pending one."""

    code: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    temperature: float
    prompt_eval_s: float = 0.0
    answer: str = ""  # what the model said, when the design keeps it (thought-patch: the sample's plan and edit)
    votes: int = 1  # answers to the prompt that gave this same code (normalised AST): the agreement among samples


@dataclass(frozen=True, kw_only=True)
class Pending:
    """The newest candidate, checked but not yet tested."""

    code: str | None
    problem: Problem | None
    detail: str  # parser error, signature rule, or which earlier code it repeats
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    temperature: float
    node: Node
    prompt_eval_s: float = 0.0  # of latency_s (Completion.prompt_eval_s)
    alternatives: tuple[Sample, ...] = ()  # more answers to the same prompt, tested in the same batch
    answer: str = ""  # what the model said, when the design keeps it with a tested attempt (thought-patch)
    votes: int = 1  # answers to the same prompt that gave this same code (Sample.votes)
    pointed: str = ""  # Attempt.pointed

    def plus(self, cost: Cost) -> Pending:
        return replace(self, prompt_tokens=self.prompt_tokens + cost.prompt_tokens,
                       completion_tokens=self.completion_tokens + cost.completion_tokens,
                       latency_s=self.latency_s + cost.latency_s, prompt_eval_s=self.prompt_eval_s + cost.prompt_eval_s)


def as_pending(sample: Sample, node: Node) -> Pending:
    return Pending(code=sample.code, problem=None, detail="", prompt_tokens=sample.prompt_tokens,
                   completion_tokens=sample.completion_tokens, latency_s=sample.latency_s,
                   prompt_eval_s=sample.prompt_eval_s, temperature=sample.temperature, node=node,
                   answer=sample.answer, votes=sample.votes)


@dataclass(frozen=True)
class Cost:
    """Model calls that led to a candidate without producing it (the thought before a patch)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    prompt_eval_s: float = 0.0
    processed_tokens: int = 0  # what the token budget counts (Completion.processed_tokens)

    def plus(self, done: Completion) -> Cost:
        return Cost(self.prompt_tokens + done.prompt_tokens, self.completion_tokens + done.completion_tokens,
                    self.latency_s + done.latency_s, self.prompt_eval_s + done.prompt_eval_s,
                    self.processed_tokens + done.processed_tokens)


class AgentState(TypedDict, total=False):
    iteration: int  # model calls so far
    repeats: int  # of those, answers that repeated code already tried: not charged to the iteration budget (reflect)
    tokens: int  # prompt + completion tokens so far
    unchanged: int  # answers that were the original function unchanged (Budgets.unchanged)
    started: float  # time.monotonic() at the start
    current: str  # the latest tested (failing) candidate: what reflect revises
    feedback: str  # its failure
    pending: Pending | None
    seen: dict[str, Seen]  # normalised-AST hash -> which code it was: the original, an attempt
    attempts: Annotated[list[Attempt], operator.add]
    searches: Annotated[list[SearchRound], operator.add]
    hints: list[str]  # the latest search's passing mutants, when the tests could not choose between them
    suspects: list[str]  # lines the model named as wrong after unchanged answers, pointed at since (reflect)
    passing: Annotated[list[str], operator.add]  # every search's passing mutants: candidates for the choice
    final: str | None
    stop: StopReason | None
    # thought-patch: the latest thought's conversation ending in its plan (and those of its other plans, with
    # --samples), what thinking it cost (counted into the patch's attempt), and this plan's edits that could not
    # be applied, each with the reason
    plan: list[Message]
    plan_samples: list[list[Message]]
    plan_cost: Cost
    patch_turns: list[tuple[str, str]]
