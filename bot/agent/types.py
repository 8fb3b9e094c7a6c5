"""Records that cross the agent's border: what to repair, how to test it, and what happened."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from bot.errors import Stopped
from bot.llm.errors import LLMError

Node = Literal["draft", "reflect", "repeat", "syntax", "patch", "tool", "sample", "select", "asserts", "score",
               "reference"]
AgentName = Literal["reflect", "thought-patch", "tool-call"]
AGENTS: tuple[AgentName, ...] = ("reflect", "thought-patch", "tool-call")
# "written": an answer that wrote asserts for the choice (node "asserts"), not code to test; "scored": the model read
# the candidates for the choice (node "score")
Outcome = Literal["passed", "failed", "timeout", "syntax", "signature", "repeat", "refused", "unapplied", "written",
                  "scored"]
Status = Literal["fixed", "not_fixed"]
# who wrote a fix: the mutation search from the original alone, the model's candidate as it came, or the search one
# edit away from a model's candidate (both took part)
FixedBy = Literal["search", "model", "search-on-model"]
StopReason = Literal["passed", "iterations", "tokens", "time", "unchanged"]


@dataclass(frozen=True)
class Target:
    """The function to repair."""

    name: str
    source: str  # the function as it is now, docstring included (dedented)
    context: str = ""  # what the model may need around it: imports, helpers, the class (kept short)


@dataclass(frozen=True)
class Briefing:
    """Why the tests are red, as the model will read it (the failures package's `Failure` is the parsed record
    of one failing test; this is what the agent is told)."""

    summary: str  # the failing assertion with its actual value, or the exception and its line
    tests: str = ""  # the test code the model may see (empty: hidden)


@dataclass(frozen=True)
class TestOutcome:
    __test__ = False  # not a pytest test class, despite its name

    passed: bool
    feedback: str  # short, actionable: what failed and with which value
    timed_out: bool = False
    duration_s: float = 0.0


class Harness(Protocol):
    """Runs the tests against candidate functions (each its full source) in the sandbox: the repository's
    (bot/fix/repair/harness.py) or HumanEvalFix's (eval/harness.py)."""

    def check(self, function_source: str) -> TestOutcome: ...

    def check_many(self, sources: Sequence[str]) -> list[TestOutcome]:
        """The same as `check` on each, in one sandbox batch."""
        ...


@dataclass(frozen=True)
class Budgets:
    iterations: int = 10  # model calls
    tokens: int = 40_000  # processed by the model in all calls: prompts' uncached parts and answers
    wall_s: float = 600.0
    max_tokens_per_call: int = 400
    # answers that were the function unchanged, after which the target is given up: the model sees nothing to mend
    # there, and in `fixbot fix` the next ranked target gets the time (None: never; HumanEvalFix has one target)
    unchanged: int | None = None


class Judge(Protocol):
    def outputs(self, sources: Sequence[str], inputs: Sequence[tuple[Any, ...]] | None = None) -> list[list[str]]:
        """Per source, what it returns on each of `inputs` (argument tuples; None: the judge's own), one string
        each: the result's repr, "timeout", or "!" and the exception's type."""
        ...


@dataclass(frozen=True, kw_only=True)
class Selection:
    """How a fix was chosen among the candidates that passed the visible tests."""

    candidates: int  # distinct passing candidates judged
    groups: int  # distinct behaviours among them
    votes: int  # for the chosen group
    changed: bool  # the choice is not the fix the run found first
    drawn: int  # extra answers asked of the model for the vote
    asserts: int = 0  # asserts the model wrote from the docstring (bot/agent/choose/expectations.py)
    agreed: int = 0  # of them, those the chosen group passes
    scored: int = 0  # candidates the model scored by likelihood (choose/likelihood.py): the likeliest is chosen
    neighbours: int = 0  # one-edit mutants of an original the visible tests pass, among them (choose/neighbours.py)
    references: int = 0  # functions written from the docstring that pass the visible tests (choose/references.py)
    expected: int = 0  # inputs where they all return the same value
    met: int = 0  # of those, the ones where the chosen candidate returns it too
    rewritten: bool = False  # the chosen candidate is one of the references: no fix met as many
    set_aside: int = 0  # candidates and references that behave like an original the visible tests pass on


@dataclass(frozen=True, kw_only=True)
class Attempt:
    iteration: int
    node: Node
    code: str | None
    outcome: Outcome
    feedback: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    temperature: float
    changed_lines: int | None = None
    prompt_eval_s: float = 0.0  # of latency_s: the model evaluating the prompt (where the backend says)
    # the model's answer as it came, kept when it could not be tested (no code, or code already tried), and always
    # for thought-patch (its plan, then its edit): what a person studying the failures needs
    answer: str = ""
    pointed: str = ""  # the line of code the prompt pointed the model at (reflect's suspect-line question)


@dataclass(frozen=True, kw_only=True)
class SearchRound:
    """One search around one base."""

    base: str  # "the original function" or "attempt 3"
    candidates: int  # mutants tested (screened or run)
    survivors: int  # that passed the screen (or the tests, without a screen)
    confirmed: int  # survivors run through the real harness
    fixed: bool  # a passing mutant was taken as the fix
    edit: str  # the winning edit, for people: "line 4: `<` -> `<=`"
    seconds: float
    hinted: int = 0  # passing mutants shown to the model instead (ambiguous under weak tests)
    around_model: bool = False  # the base was a model's candidate, not the original function
    family: str = ""  # the winning edit's family (Mutant.operator, "first+second" for two edits): docs/agent.md


@dataclass(frozen=True)
class AgentResult:
    status: Status
    stop_reason: StopReason
    final_code: str | None  # the repaired function, faithful to the original's text
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)
    changed_lines: int | None = None
    wall_s: float = 0.0
    searches: tuple[SearchRound, ...] = field(default_factory=tuple)  # mutation searches, in order
    selection: Selection | None = None  # when a judge chose the fix among several that passed

    @property
    def iterations(self) -> int:
        """Model calls that were asked for; the extra answers of one call (samples) share its number."""
        return len({a.iteration for a in self.attempts})

    @property
    def fixed_by(self) -> FixedBy | None:
        if self.final_code is None:
            return None
        winning = next((s for s in self.searches if s.fixed), None)
        if winning is None:
            return "model"
        return "search-on-model" if winning.around_model else "search"

    @property
    def prompt_tokens(self) -> int:
        return sum(a.prompt_tokens for a in self.attempts)

    @property
    def completion_tokens(self) -> int:
        return sum(a.completion_tokens for a in self.attempts)


class RepairInterrupted(LLMError):
    """The model failed mid-repair (server down, script exhausted), or the run was stopped (`stop`: the time budget
    ran out, a signal came); the attempts made so far are kept."""

    def __init__(self, message: str, attempts: tuple[Attempt, ...], stop: Stopped | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.stop = stop


class Screen(Protocol):
    """A cheap first pass: most candidates fail it, and only survivors pay for the real tests."""

    def screen(self, function_sources: Sequence[str], timeout_s: float | None = None) -> list[TestOutcome]: ...
