"""The report of a `fixbot fix` run: report.json for programs (the GitHub publisher reads it), report.md for people
(also the Action's step summary), and fix.patch when there is a fix.

In: a `FixResult` (bot/fix/result.py). Out: the files in the output directory, each written whole. Never: a patch
file for a run that did not fix (an older run's is removed), or a change presented as a fix that is not one."""
from __future__ import annotations

from pathlib import Path

from bot.fix.result import BestAttempt, FixResult
from bot.fix.types import EnvCause
from bot.fix.verify.model_account import attempt_lines, model_summary

MAX_OTHERS = 20  # tests failing here that the CI log does not name, listed by id


def _fence(text: str, lang: str = "") -> str:
    ticks = "````" if "```" in text else "```"  # text from the repository cannot close our block
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def to_markdown(result: FixResult) -> str:
    lines = [f"# fixbot: {result.status.replace('_', ' ')}", "", result.message, "",
             f"- repository: `{result.repository}`", f"- tests: `{result.test_command}`", f"- model: `{result.model}`",
             f"- time: {result.timings.total_s:.0f} s (setup {result.timings.setup_s:.0f} s, test runs "
             f"{result.timings.tests_s:.0f} s, model {result.timings.model_s:.0f} s, of which evaluating prompts "
             f"{result.timings.prompt_eval_s:.0f} s)", ""]
    lines += _failure_lines(result)
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
    if result.status != "fixed":
        lines += model_summary(result.repairs, result.model)
    lines += attempt_lines(result.repairs)
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


def _failure_lines(result: FixResult) -> list[str]:
    """The failing tests the repair was for, each with its assertion; then, by id only, the tests that fail in the
    sandbox too but that the CI log does not name (left alone). With nothing to repair, every failure."""
    repaired = set(result.tests_fixed_for)
    shown = [f for f in result.failures if f.test_id in repaired]
    lines = ["## Failing tests", ""] if shown else []
    for f in shown:
        where = f" ({f.file}:{f.line})" if f.file else ""
        lines.append(f"- `{f.test_id}`{where}: {f.error_type or 'failure'}")
        if f.assertion:
            lines.append(f"  - assertion: `{f.assertion}`")
        if f.actual is not None or f.expected is not None:
            lines.append(f"  - actual `{f.actual}`, expected `{f.expected}`")
    if shown:
        lines.append("")
    others = result.left_alone
    if others:
        more = [f"- ... and {len(others) - MAX_OTHERS} more"] if len(others) > MAX_OTHERS else []
        lines += [f"## Failing here too, not named by the CI log (left alone: {len(others)})", "",
                  *(f"- `{t}`" for t in others[:MAX_OTHERS]), *more, ""]
    return lines


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
