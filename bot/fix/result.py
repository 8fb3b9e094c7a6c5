"""The `FixResult` artifact — what `fixbot fix` found and did — and its two renderings: report.json for
programs (the GitHub publisher reads it) and report.md for people."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bot.agent.types import Attempt, FixedBy, SearchRound, StopReason
from bot.failures import Failure
from bot.fix.types import CodeTarget, EnvCause, FixStatus, TestRun

EXIT_CODES: dict[FixStatus, int] = {"fixed": 0, "not_fixed": 1, "nothing_to_fix": 3, "flaky": 3, "needs_network": 3,
                                 "environment": 3, "interrupted": 130}
# fixed: verified by the whole suite; regressed: passed its blamed tests, broke others in the whole suite (undone)
RepairStatus = Literal["fixed", "not_fixed", "regressed"]
# the agent's own, or why the pipeline ended a repair without it: the blamed tests passed as the code was, a stop
# (time budget, signal), the model failed, a bug of fixbot's, the search alone fixed it before the model was asked,
# a method renamed to the name the tests call (bot/fix/repair/renames.py)
RepairStop = StopReason | Literal["passed_without_change", "stopped", "error", "internal_error", "search_only",
                                  "renamed"]
# who wrote a repair's code: the agent's makers (bot/agent/types.py), or the rename step (bot/fix/repair/renames.py)
MadeBy = FixedBy | Literal["rename"]


@dataclass(frozen=True)
class RunSummary:
    """One sandbox test run as the report shows it."""

    purpose: str  # "reproduce", "re-run failing", "with stubs" (bot/fix/repair/missing.py), "verify"
    command: str
    passed: int
    failed: tuple[str, ...]
    duration_s: float
    exit_code: int
    timed_out: bool

    @classmethod
    def of(cls, purpose: str, run: TestRun) -> RunSummary:
        return cls(purpose, " ".join(run.command), len(run.passed), tuple(sorted(run.failed)), round(run.duration_s, 2),
                   run.exit_code, run.timed_out)


@dataclass(frozen=True, kw_only=True)
class TargetRepair:
    """The agent's work on one target: one span, or two (`helper`) when the bug is split between a function and
    the helper it calls and the two are repaired together."""

    target: CodeTarget
    tests: tuple[str, ...]  # the failing tests that blamed it, which had to pass
    status: RepairStatus
    stop_reason: RepairStop
    attempts: tuple[Attempt, ...]
    changed_lines: int | None
    wall_s: float
    original: str = ""  # the function before (dedented); a two-span repair: both, the target first
    fixed: str | None = None  # the function after, when fixed (or regressed: then it is not kept)
    searches: tuple[SearchRound, ...] = ()  # mutation searches around the function and the model's candidates
    guards: int = 0  # tests that passed before and ran the target, which every candidate had to keep passing
    broken: tuple[str, ...] = ()  # regressed: the tests that passed before and failed in the whole suite with it
    helper: CodeTarget | None = None  # a two-span repair: the helper `target` calls, changed together with it
    made_by: MadeBy | None = None  # fixed or regressed: who wrote the code
    stub: bool = False  # the target was a stub for a function the tests use and the project lacked (missing.py)
    anti_patterns: tuple[str, ...] = ()  # fixed: the rules of a wrong fix it breaks (bot/agent/antipatterns.py)

    @property
    def spans(self) -> tuple[CodeTarget, ...]:
        """What the repair changes: the target, and the helper of a two-span repair."""
        return (self.target,) if self.helper is None else (self.target, self.helper)

    @property
    def where(self) -> str:
        """The spans for people: `path::qualname`, two joined by " + "."""
        return " + ".join(f"`{t.path}::{t.qualname}`" for t in self.spans)


@dataclass(frozen=True, kw_only=True)
class BestAttempt:
    """A not-fixed run's closest change, shown apart from any patch: never applied, never published."""

    diff: str
    passes: tuple[str, ...]  # failing tests it makes pass
    still_failing: tuple[str, ...]
    broken: tuple[str, ...]  # tests that passed before and fail with it


@dataclass(frozen=True)
class Timings:
    setup_s: float = 0.0  # environment (dependencies) and sandbox start
    tests_s: float = 0.0  # sandbox test runs outside the agent (reproduce, re-run, verify)
    model_s: float = 0.0  # model calls
    total_s: float = 0.0
    prompt_eval_s: float = 0.0  # of model_s: evaluating prompts (the rest is mostly generating)


@dataclass(frozen=True)
class FixResult:
    status: FixStatus
    repository: str
    test_command: str
    model: str
    message: str  # one line for the console
    failures: tuple[Failure, ...] = ()
    flaky: tuple[str, ...] = ()
    offline: tuple[str, ...] = ()  # failing tests that tried to reach another machine: set aside, never fixed
    lacking: tuple[str, ...] = ()  # failing tests that ran a program the sandbox does not have: set aside too
    environment: tuple[EnvCause, ...] = ()  # failing tests the environment fails, not the code (classify.py)
    held_back: tuple[str, ...] = ()  # `name==version` the tests ran with: tests failed inside newer releases
    env_changes: tuple[str, ...] = ()  # "Python 3.9", "nothing uploaded after DATE": the environment rebuilt
    targets: tuple[CodeTarget, ...] = ()
    repairs: tuple[TargetRepair, ...] = ()
    diff: str = ""
    changed_lines: int = 0
    explanation: str = ""
    runs: tuple[RunSummary, ...] = ()
    timings: Timings = Timings()
    error: str = ""  # the model or the sandbox failed mid-run: a configuration problem, exit 2
    best: BestAttempt | None = None  # not fixed: the closest change, with what it still fails and broke

    @property
    def exit_code(self) -> int:
        return 2 if self.error else EXIT_CODES[self.status]

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, (frozenset, set)):
        return sorted(value)
    return str(value)


def _fence(text: str, lang: str = "") -> str:
    ticks = "````" if "```" in text else "```"  # text from the repository cannot close our block
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def to_markdown(result: FixResult) -> str:
    lines = [f"# fixbot: {result.status.replace('_', ' ')}", "", result.message, "",
             f"- repository: `{result.repository}`", f"- tests: `{result.test_command}`", f"- model: `{result.model}`",
             f"- time: {result.timings.total_s:.0f} s (setup {result.timings.setup_s:.0f} s, test runs "
             f"{result.timings.tests_s:.0f} s, model {result.timings.model_s:.0f} s, of which evaluating prompts "
             f"{result.timings.prompt_eval_s:.0f} s)", ""]
    if result.failures:
        lines += ["## Failing tests", ""]
        for f in result.failures:
            where = f" ({f.file}:{f.line})" if f.file else ""
            lines.append(f"- `{f.test_id}`{where}: {f.error_type or 'failure'}")
            if f.assertion:
                lines.append(f"  - assertion: `{f.assertion}`")
            if f.actual is not None or f.expected is not None:
                lines.append(f"  - actual `{f.actual}`, expected `{f.expected}`")
        lines.append("")
    if result.flaky:
        flaky = [f"- `{t}`" for t in result.flaky]
        lines += ["## Flaky (failed once, passed on the re-run; not fixed)", "", *flaky, ""]
    if result.offline:
        offline = [f"- `{t}`" for t in result.offline]
        lines += ["## Need the network (the sandbox has none; not fixed)", "", *offline, ""]
    if result.lacking:
        lacking = [f"- `{t}`" for t in result.lacking]
        lines += ["## Run programs the sandbox does not have (not fixed)", "", *lacking, ""]
    lines += environment_lines(result.environment)
    if result.env_changes:
        lines += ["## The environment, rebuilt", "", "Tests failed because of the environment first built; the "
                  f"suite ran with {' and '.join(result.env_changes)}, where more of it passes.", ""]
    if result.held_back:
        lines += ["## Dependencies held back", "",
                  f"With the newest releases the project allows, tests failed inside them; the tests ran with "
                  f"{', '.join(f'`{pin}`' for pin in result.held_back)}, the lowest the project declares, where fewer "
                  "fail. Consider an upper bound, or adapting to the newer releases.", ""]
    if result.explanation:
        lines += ["## Root cause", "", result.explanation, "", *_makers(result)]
    if result.diff:
        lines += ["## Patch", "", _fence(result.diff, "diff"), ""]
    if result.best:
        lines += _best_lines(result.best)
    if result.repairs:
        lines += ["## Attempts", "", "| target | attempt | node | outcome | tokens | seconds |",
                  "|---|---|---|---|---|---|"]
        for repair in result.repairs:
            for a in repair.attempts:
                lines.append(f"| {repair.where} | {a.iteration} | {a.node} | "
                             f"{a.outcome} | {a.prompt_tokens}+{a.completion_tokens} | {a.latency_s:.1f} |")
        lines.append("")
    rounds = [(repair, r) for repair in result.repairs for r in repair.searches]
    if rounds:
        lines += ["## Mutation search", "", "| target | around | mutants | passed the tests | found | seconds |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {repair.where} | {r.base} | {r.candidates} | {r.survivors} | "
                  f"{r.edit or '-'} | {r.seconds:.1f} |" for repair, r in rounds]
        lines.append("")
    if result.runs:
        lines += ["## Test runs", "", "| purpose | passed | failed | seconds |", "|---|---|---|---|"]
        lines += [f"| {r.purpose} | {r.passed} | {len(r.failed)} | {r.duration_s:.1f} |" for r in result.runs]
        lines.append("")
    return "\n".join(lines)


def environment_lines(causes: tuple[EnvCause, ...]) -> list[str]:
    """The report's section of environment causes: each cause, its remedy, its tests."""
    if not causes:
        return []
    lines = ["## The environment, not the code (not repaired)", ""]
    for cause in causes:
        shown = ", ".join(f"`{t}`" for t in cause.tests[:5]) + (f" and {len(cause.tests) - 5} more"
                                                                if len(cause.tests) > 5 else "")
        lines.append(f"- {cause.what}: {cause.remedy}. Tests: {shown}")
    return [*lines, ""]


MAKERS: dict[str, str] = {"search": "the mutation search, one edit from the original",
                          "model": "the model's candidate, as it answered",
                          "search-on-model": "the mutation search, one edit from the model's candidate",
                          "rename": "the rename step (a method renamed to the name its tests call)"}


def _makers(result: FixResult) -> list[str]:
    """Who wrote each kept repair, one line each."""
    kept = [r for r in result.repairs if r.status == "fixed" and r.made_by]
    return [f"- {r.where}: written by {MAKERS[r.made_by or '']}" + (" (a stub for a missing function, written)"
                                                                    if r.stub else "")
            + (f". **Review it closely**: the change looks like a wrong fix ({', '.join(r.anti_patterns)})"
               if r.anti_patterns else "") for r in kept] + ([""] if kept else [])


def _best_lines(best: BestAttempt) -> list[str]:
    lines = ["## Best attempt (not a fix: not applied, not published)", ""]
    lines += [f"- makes pass: `{t}`" for t in best.passes]
    lines += [f"- still fails: `{t}`" for t in best.still_failing]
    lines += [f"- breaks (passed before): `{t}`" for t in best.broken]
    return lines + ["", _fence(best.diff, "diff"), ""]


def write_outputs(result: FixResult, out_dir: Path) -> None:
    """report.json, report.md, and fix.patch when there is a fix; each written whole (temp file, rename)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = {"report.json": result.to_json(), "report.md": to_markdown(result)}
    if result.status == "fixed" and result.diff:
        outputs["fix.patch"] = result.diff
    for name, text in outputs.items():
        tmp = out_dir / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
        tmp.replace(out_dir / name)
    stale = out_dir / "fix.patch"
    if "fix.patch" not in outputs and stale.exists():
        stale.unlink()  # a re-run that did not fix must not leave an older run's patch looking current
