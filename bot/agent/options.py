"""How the agent repairs a target: the one record of repair options that `fixbot fix`, `fixbot ci` (through
.github/fixbot.yml) and `fixbot eval` each embed, with one default per option."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.agent.types import AgentName, Budgets

Schedule = Literal["rising", "falling"]
SCHEDULES: tuple[Schedule, ...] = ("rising", "falling")
Choice = Literal["first", "likeliest"]
CHOICES: tuple[Choice, ...] = ("first", "likeliest")
# How the reflect design asks for a candidate: the whole corrected function, or SEARCH/REPLACE blocks of the lines to
# change (bot/agent/source/edit_blocks.py); "auto": blocks only for a target longer than BLOCKS_FROM lines (docstring
# aside), whose whole rewrite would not fit one answer's tokens: on short functions the bundled model fixes more
# when it writes them whole (docs/agent.md). `fixbot fix` shows a longer function as an excerpt of at most 24 lines
# where the failure points into it (bot/fix/locate/excerpt.py), so blocks are what it asks for on the rest.
# An answer in either form is read either way.
EditFormat = Literal["auto", "whole", "blocks"]
EDIT_FORMATS: tuple[EditFormat, ...] = ("auto", "whole", "blocks")
BLOCKS_FROM = 40
SAMPLE_TEMPERATURE = 0.8  # the extra answers of --samples: varied, still mostly sensible code
# fixbot fix / ci ask for this many answers per call: the prompt is evaluated once and each extra answer costs only
# its own tokens, so several answers per call fix more than one for little more time (bench/RESULTS.md)
FIX_SAMPLES = 3
# functions written from the docstring for the vote (bot/agent/choose/references.py), `fixbot eval`'s default under it:
# one greedy answer and two sampled, written together
REFERENCES = 3
MAX_SAMPLES = 8  # a cap: each answer costs its own generated tokens and one more candidate in the sandbox batch


@dataclass(frozen=True)
class SearchOptions:
    mutants: int = 400  # per base, with a fast screen
    # per base, when each candidate is a test run (forked from one warm process: bot/inside/probe_variants.py)
    slow_mutants: int = 48
    confirm: int = 6  # screened survivors confirmed with the real harness (fewest changed lines first)
    slow_retries: int = 16  # candidates that timed out in the screen, screened again with `slow_timeout_s`
    slow_timeout_s: float = 2.0  # when nothing else passed: slow but right is still right
    # Several different mutants passing weak tests (a docstring's two examples) is a sign that the tests do not
    # pin the bug down: "ask" hands them to the model as hints (it reads the docstring) instead of taking the
    # first; "accept" takes the first (real tests, or the whole suite, verify it afterwards).
    ambiguous: Literal["accept", "ask"] = "accept"
    # Search around the original before the first model call; off when that search already ran (`fixbot fix`
    # searches every ranked target first: bot/fix/pipeline.py, _sweep).
    first_round: bool = True
    skip: int = 0  # the best-ranked mutants already tried by an earlier, shorter round (`fixbot fix`'s sweep)
    second_order: int = 3  # failing mutants whose failure moved to a None or an empty string, given a second edit


@dataclass(frozen=True, kw_only=True)
class RepairOptions:
    """The agent's plain form, as `fixbot eval` measures it unless told otherwise (`FIX_REPAIR` is the product's)."""

    agent: AgentName = "reflect"  # the design: reflect, thought-patch or tool-call (bot/agent/graph.py)
    budgets: Budgets = Budgets()  # model calls (iterations), tokens, wall time, tokens per answer
    # answers per model call (thought-patch: plans, each turned into its edit; tool-call: calls), the first at the
    # schedule's temperature and the rest at SAMPLE_TEMPERATURE, all tested in one sandbox batch (the prompt is
    # cached, so each extra answer costs only its own tokens)
    samples: int = 1
    search: SearchOptions | None = None  # mutation search around the original and each failing candidate
    schedule: Schedule = "rising"  # temperature over the iterations
    edits: EditFormat = "auto"  # the reflect design's answers: whole functions or SEARCH/REPLACE blocks
    few_shot: bool = False  # common bug patterns, with fixes, in the system prompt
    # without a judge (`fixbot fix`), which of several candidates that pass the tests to keep: "first", the one the
    # run found first (the search's fewest changed lines); "likeliest", the one the model finds likeliest after the
    # docstring and the `def` line (bot/agent/choose/likelihood.py), where the model can score texts
    choose: Choice = "first"
    # with a judge (the vote of `fixbot eval --protocol examples`): functions written from the docstring alone, whose
    # agreement on the judge's inputs weighs in the choice (bot/agent/choose/references.py); 0: none
    references: int = 0

    @property
    def iterations(self) -> int:
        return self.budgets.iterations


# what `fixbot fix` and `fixbot ci` use when nothing is asked: the search on, several answers per call
FIX_UNCHANGED = 2  # answers that are the function unchanged before `fixbot fix` moves on to the next target
FIX_REPAIR = RepairOptions(budgets=Budgets(unchanged=FIX_UNCHANGED), samples=FIX_SAMPLES, search=SearchOptions())

