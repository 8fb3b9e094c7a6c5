"""The real-bug bench's numbers: the summary of its per-bug records, the console table, and the section of
bench/RESULTS.md (replaced in place when the same results directory is written again)."""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from common import aligned, replace_section

COLUMNS = (("bugs", "total"), ("reproduced", "reproduced"), ("fixed", "fixed"),
           ("same functions", "same_functions"), ("identical", "identical"),
           ("regressions accepted", "regressions"), ("exit 2", "exit2"), ("over --wall", "overran"),
           ("median wall s", "median_wall_s"), ("median model calls", "median_model_calls"))


def read_results(path: Path) -> dict[str, dict]:
    """The recorded bugs by id; a bug recorded twice (--force) counts by its last record."""
    if not path.exists():
        return {}
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["id"]: r for r in records}


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _row(records: list[dict]) -> dict:
    fixed = [r for r in records if r["fixed"]]
    return {"total": len(records), "reproduced": sum(bool(r["reproduced"]) for r in records), "fixed": len(fixed),
            "same_functions": sum(bool(r["same_functions"]) for r in fixed),
            "identical": sum(bool(r["identical"]) for r in fixed),
            "regressions": sum(bool(r["regression"]) for r in records),
            "exit2": sum(r["exit_code"] == 2 for r in records), "overran": sum(bool(r["overran"]) for r in records),
            "median_wall_s": _median([r["wall_s"] for r in records]),
            "median_model_calls": _median([r["model_calls"] for r in records])}


def summarize(records: list[dict]) -> dict:
    """Per project and in all: fixed / reproduced / total, fixed with the developers' functions, identical to
    their fix, regressions accepted, exit-2 runs (and why), runs that overran --wall, median wall and calls."""
    projects = sorted({r["project"] for r in records})
    statuses: dict[str, int] = {}
    for r in records:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {"bugs": len(records), "projects": {p: _row([r for r in records if r["project"] == p]) for p in projects},
            "total": _row(records), "statuses": dict(sorted(statuses.items())),
            "exit2_reasons": {r["id"]: r["reason"] for r in records if r["exit_code"] == 2},
            "no_report": {r["id"]: r["reason"] for r in records
                          if r["exit_code"] != 2 and r["status"] == "no report"},
            "score_errors": {r["id"]: r["score_error"] for r in records if r["score_error"]},
            "user_setup": user_setups(records),
            "regressions": {r["id"]: r["broken"] for r in records if r["regression"]}}


def _cell(value: object) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def table_rows(summary: dict) -> list[list[str]]:
    rows = [[p] + [_cell(row[k]) for _, k in COLUMNS] for p, row in summary["projects"].items()]
    return rows + [["all"] + [_cell(summary["total"][k]) for _, k in COLUMNS]]


def console_table(summary: dict) -> str:
    head = ["project"] + [name for name, _ in COLUMNS]
    lines = aligned([head] + table_rows(summary))
    lines += [f"exit 2 · {bug}: {reason}" for bug, reason in summary["exit2_reasons"].items()]
    lines += [f"no report · {bug}: {reason}" for bug, reason in summary["no_report"].items()]
    lines += [f"not scored · {bug}: {error}" for bug, error in summary["score_errors"].items()]
    lines += [f"REGRESSION ACCEPTED · {bug}: broke {', '.join(broken)}"
              for bug, broken in summary["regressions"].items()]
    lines += setup_notes(summary)
    return "\n".join(lines)


def user_setups(records: list[dict]) -> dict[str, list[str]]:
    """The bugs that ran with a user's setup (bench/realbugs_settings.yml), with its commands."""
    return {r["id"]: r["user_setup"] for r in records if r.get("user_setup")}


def setup_notes(summary: dict) -> list[str]:
    return [f"with a user's setup (bench/realbugs_settings.yml) · {b}: {' && '.join(c)}"
            for b, c in summary.get("user_setup", {}).items()]


def md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    return [line(head), "|" + "---|" * len(head)] + [line(r) for r in rows]


def _bug_row(r: dict) -> list[str]:
    def flag(v: object) -> str:
        return "-" if v is None else "yes" if v else "no"
    return [r["id"], str(r["exit_code"]), r["status"], flag(r["reproduced"]), flag(r["fixed"]),
            flag(r["same_functions"]), flag(r["identical"]), f"{r['wall_s']:.0f}", str(r["model_calls"]),
            (r["reason"] or r["score_error"] or r["message"])[:120]]


def markdown_section(key: str, *, date: str, commits: list[str], command: str, fixbot: str, speed: str | None,
                     summary: dict, records: list[dict]) -> str:
    lines = [f"<!-- realbugs: {key} -->", f"### Real bugs: {summary['bugs']} bug(s), {date}", "",
             f"- commit(s): {', '.join(f'`{c}`' for c in commits)}", f"- command: `{command}`",
             f"- fixbot fix with `{fixbot}`", f"- {speed or 'model speed: not measured'}", f"- results: `{key}`", ""]
    lines += md_table(["project"] + [name for name, _ in COLUMNS], table_rows(summary)) + [""]
    notes = [f"- exit 2 · {b}: {why}" for b, why in summary["exit2_reasons"].items()]
    notes += [f"- no report · {b}: {why}" for b, why in summary["no_report"].items()]
    notes += [f"- not scored · {b}: {why}" for b, why in summary["score_errors"].items()]
    notes += [f"- regression accepted · {b}: broke {', '.join(t)}" for b, t in summary["regressions"].items()]
    notes += [f"- {n}" for n in setup_notes(summary)]
    lines += notes + ([""] if notes else []) + ["<details><summary>per bug</summary>", ""]
    lines += md_table(["bug", "exit", "status", "reproduced", "fixed", "same functions", "identical", "wall s",
                        "model calls", "reason / message"], [_bug_row(r) for r in records])
    return "\n".join(lines + ["", "</details>", f"<!-- /realbugs: {key} -->"]) + "\n"


HEADER = ("# Benchmark results\n\nWritten by the benches themselves (`bench/realbugs.py --results-md`): each "
          "section names the command, the commit and the model's speed on the machine that ran it.\n\n")


def update_results_md(path: Path, key: str, section: str) -> None:
    """Replaces the section of results directory `key` in `path`, or appends it (the file made when missing)."""
    replace_section(path, "realbugs", key, section, HEADER)
