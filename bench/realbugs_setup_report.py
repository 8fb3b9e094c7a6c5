"""The numbers of the real-bug bench's --reproduce-only mode: the summary of its per-bug records, the console
table and its section of bench/RESULTS.md (its own marker, beside the fixing runs' sections)."""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from common import aligned
from realbugs_report import md_table, read_results, setup_notes, update_results_md, user_setups
from realbugs_setup import RESULTS, SUMMARY, why_line

COLUMNS = (("bugs", "total"), ("set up", "set_up"), ("reproduced", "reproduced"), ("Python", "pythons"),
           ("first set-up built", "built"), ("median set-up s", "median_setup_s"),
           ("median reuse s", "median_reuse_s"), ("max reuse s", "max_reuse_s"))
KEY_PREFIX = "reproduce-only "  # the RESULTS.md marker: never the fixing runs' section of the same OUT


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _pythons(records: list[dict]) -> str:
    counts: dict[str, int] = {}
    for r in records:
        if r["python"]:
            counts[r["python"]] = counts.get(r["python"], 0) + 1
    return ", ".join(f"{v} ({n})" for v, n in sorted(counts.items(), key=lambda kv: tuple(map(int, kv[0].split(".")))))


def _row(records: list[dict]) -> dict:
    ready = [r for r in records if r["set_up"]]
    return {"total": len(records), "set_up": len(ready), "reproduced": sum(bool(r["reproduced"]) for r in records),
            "pythons": _pythons(records) or "-", "built": sum(bool(r["first_built"]) for r in ready),
            "median_setup_s": _median([r["first_s"] for r in ready]),
            "median_reuse_s": _median([r["reuse_s"] for r in ready]),
            "max_reuse_s": max((r["reuse_s"] for r in ready), default=None)}


def summarize(records: list[dict]) -> dict:
    """Per project and in all: set up / reproduced / total, the Pythons chosen, the set-up times; and per bug what
    went wrong: the set-up error, what did not reproduce, a second call that built again."""
    projects = sorted({r["project"] for r in records})
    return {"bugs": len(records), "projects": {p: _row([r for r in records if r["project"] == p]) for p in projects},
            "total": _row(records),
            "setup_errors": {r["id"]: r["setup_error"] for r in records if not r["set_up"]},
            "not_reproduced": {r["id"]: why_line(r["why"]) if r["why"] else "" for r in records
                               if r["set_up"] and not r["reproduced"]},
            "not_reused": [r["id"] for r in records if r["set_up"] and not r["reused"]],
            "user_setup": user_setups(records),
            "also_exposing": {r["id"]: r["also_exposing"] for r in records if r.get("also_exposing")},
            "modules_failed_at_bug": {r["id"]: r["modules_failed_at_bug"] for r in records
                                      if r["reproduced"] and r.get("modules_failed_at_bug")}}


def _cell(value: object) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def table_rows(summary: dict) -> list[list[str]]:
    rows = [[p] + [_cell(row[k]) for _, k in COLUMNS] for p, row in summary["projects"].items()]
    return rows + [["all"] + [_cell(summary["total"][k]) for _, k in COLUMNS]]


def _notes(summary: dict) -> list[str]:
    notes = [f"set-up failed · {b}: {why}" for b, why in summary["setup_errors"].items()]
    notes += [f"not reproduced · {b}: {why}" for b, why in summary["not_reproduced"].items()]
    notes += [f"second set-up built again · {b}" for b in summary["not_reused"]]
    notes += setup_notes(summary)
    notes += [f"besides the exposing tests, fail at bug-N and pass at fix-N (the same bug, unnamed by the manifest) · "
              f"{b}: {', '.join(ids)}" for b, ids in summary.get("also_exposing", {}).items()]
    notes += [f"reproduced by a test module that does not import at bug-N (it uses what the fix adds) · {b}: "
              + "; ".join(f"{m}: {e}" for m, e in modules.items())
              for b, modules in summary.get("modules_failed_at_bug", {}).items()]
    return notes


def console_table(summary: dict) -> str:
    head = ["project"] + [name for name, _ in COLUMNS]
    lines = aligned([head] + table_rows(summary))
    return "\n".join(lines + _notes(summary))


def _bug_row(r: dict) -> list[str]:
    def flag(v: object) -> str:
        return "-" if v is None else "yes" if v else "no"
    tests = r["tests"] or {}
    counts = [f"{tests[v]['passed']}/{tests[v]['failed']}" if v in tests else "-" for v in ("bug", "fix")]
    note = r["setup_error"] or (why_line(r["why"]) if r["why"] else "")
    if not note and r.get("modules_failed_at_bug"):
        note = "; ".join(f"{m} does not import at bug-N: {e}" for m, e in r["modules_failed_at_bug"].items())
    if not note and r.get("also_exposing"):
        note = f"also failing at bug-N only: {', '.join(r['also_exposing'])}"
    return [r["id"], r["python"] or "-", r["python_source"] or "-", flag(r["set_up"]), flag(r["reproduced"]),
            _cell(r["first_s"]), flag(r["first_built"]), _cell(r["reuse_s"]), flag(r["reused"]), *counts,
            note[:160]]


def markdown_section(key: str, *, date: str, commits: list[str], command: str, summary: dict,
                     records: list[dict]) -> str:
    marker = KEY_PREFIX + key
    lines = [f"<!-- realbugs: {marker} -->",
             f"### Real bugs, set-up and reproduction only: {summary['bugs']} bug(s), {date}", "",
             f"- commit(s): {', '.join(f'`{c}`' for c in commits)}", f"- command: `{command}`",
             "- no `fixbot fix`, no model: per bug, fixbot's prepare_environment on `bug-N` twice (a first build "
             "with the cached environment untagged, then a call that must reuse it), and the bug's test files in "
             "the sandbox at `bug-N` and `fix-N`", f"- results: `{key}`", ""]
    lines += md_table(["project"] + [name for name, _ in COLUMNS], table_rows(summary)) + [""]
    extra = [f"- {n}" for n in _notes(summary)]
    lines += extra + ([""] if extra else []) + ["<details><summary>per bug</summary>", ""]
    lines += md_table(["bug", "Python", "why that Python", "set up", "reproduced", "set-up s", "built", "reuse s",
                        "reused", "bug-N passed/failed", "fix-N passed/failed", "set-up error / what differs"],
                       [_bug_row(r) for r in records])
    return "\n".join(lines + ["", "</details>", f"<!-- /realbugs: {marker} -->"]) + "\n"


def write_summary(out: Path, config: dict, bugs: list, results_md: Path | None) -> dict:
    """OUT/reproduce-summary.json over every bug recorded in OUT (in manifest order), and the RESULTS.md section
    when `results_md` is given."""
    recorded = read_results(out / RESULTS)
    records = [recorded[b.id] for b in bugs if b.id in recorded]
    summary = {"date": time.strftime("%Y-%m-%d"), "out": str(out), "commits": sorted({r["commit"] for r in records}),
               "commands": config.get("commands", []), **summarize(records)}
    (out / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
    if results_md:
        section = markdown_section(str(out), date=summary["date"], commits=summary["commits"],
                                   command=" ; ".join(summary["commands"]), summary=summary, records=records)
        update_results_md(results_md, KEY_PREFIX + str(out), section)
    return summary
