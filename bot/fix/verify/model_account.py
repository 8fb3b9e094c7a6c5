"""What the model tried on each target, and why each try failed: the report's attempts table, and for a run the
model did not fix, a summary that tells a user what to expect of this model and what a bigger one may change.

In: the run's `TargetRepair`s and the model's name. Out: markdown lines for report.md. Never: an attempt of the
choice among passing candidates (asserts, scores, references) counted as a repair attempt."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.agent.steps.prompts import change, how_failed
from bot.agent.types import Attempt, Outcome
from bot.fix.result import TargetRepair

REPAIR_NODES = frozenset({"draft", "reflect", "repeat", "syntax", "patch", "tool", "sample"})
# each untestable or failing outcome as the summary counts it
SAID: dict[Outcome, str] = {"failed": "failed the tests", "timeout": "timed out", "unapplied": "did not apply",
                            "syntax": "held no usable code", "signature": "changed the signature",
                            "repeat": "repeated code already tried", "refused": "were refused as wrong fixes"}
WIDTH = 110


def _cell(text: str) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= WIDTH else text[:WIDTH - 3] + "..."


def why(attempt: Attempt) -> str:
    """An attempt's result in a line: pytest's first `E` line for a tested one, else the reason it was not tested."""
    if attempt.outcome in ("failed", "timeout"):
        return how_failed(attempt)
    lines = [line for line in attempt.feedback.splitlines() if line.strip()]
    return lines[0] if lines else ""


def attempt_lines(repairs: Sequence[TargetRepair]) -> list[str]:
    """The attempts table: what each answer changed (and the line its prompt pointed at), how it ended and why,
    and what it cost."""
    rows = [(r, a) for r in repairs for a in r.attempts]
    if not rows:
        return []
    lines = ["## Attempts", "", "| target | attempt | node | change | outcome | why | tokens | seconds |",
             "|---|---|---|---|---|---|---|---|"]
    for r, a in rows:
        changed = change(r.original, a.code) if a.code and r.original else "-"
        node = f"{a.node}, pointed at `{a.pointed}`" if a.pointed else a.node
        lines.append(f"| {r.where} | {a.iteration} | {_cell(node)} | {_cell(changed)} | {a.outcome} | "
                     f"{_cell(why(a)) if a.outcome != 'passed' else ''} | {a.prompt_tokens}+{a.completion_tokens} | "
                     f"{a.latency_s:.1f} |")
    return [*lines, ""]


def model_summary(repairs: Sequence[TargetRepair], model: str) -> list[str]:
    """For a run whose model answers fixed nothing: how many answers, how each kind failed, and what to try."""
    tried = [a for r in repairs for a in r.attempts if a.node in REPAIR_NODES]
    if not tried or any(a.outcome == "passed" for a in tried):
        return []
    counts = Counter(a.outcome for a in tried)
    kinds = ", ".join(f"{n} {SAID.get(o, o)}" for o, n in counts.most_common())
    targets = len({r.where for r in repairs if any(a.node in REPAIR_NODES for a in r.attempts)})
    return ["## What the model could not do", "",
            f"The model `{model}` answered {len(tried)} times on {targets} target(s) and no answer passed: {kinds}. "
            "The attempts below show what each answer changed and why it failed. A larger model, through "
            "`--model openai:NAME` against any OpenAI-compatible server, may make the change this one could not.", ""]
