"""The real-bug bench's numbers, from its rows (bench/results/realbugs-COMMIT.jsonl): dev beside holdout, per
project, who made each fix, and the lines a reader checks first (regressions accepted, exit-2 runs, bugs that do
not reproduce and why)."""
from __future__ import annotations

import statistics
from collections import Counter

from common import aligned
from rows import speed_summary

COLUMNS = (("bugs", "total"), ("reproduced", "reproduced"), ("fixed", "fixed"), ("rate", "rate"),
           ("by search", "search"), ("by model", "model"), ("search on model", "search-on-model"),
           ("by rename", "rename"), ("identical", "identical"), ("same functions", "same_functions"),
           ("regressions", "regressions"), ("anti-pattern fixes", "anti_patterns"), ("exit 2", "exit2"),
           ("median s", "median_s"))
SPLITS = ("dev", "holdout")


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def fix_makers(rows: list[dict]) -> Counter:
    """Fixed bugs by who made them: a bug whose kept repairs were all made by one maker counts for it; a bug
    fixed by several makers counts for each of them."""
    makers: Counter = Counter()
    for r in rows:
        if r["verdict"] == "fixed":
            makers.update(set(r["made_by"]))
    return makers


def _row(rows: list[dict]) -> dict:
    fixed = [r for r in rows if r["verdict"] == "fixed"]
    makers = fix_makers(rows)
    return {"total": len(rows), "reproduced": sum(bool(r["reproduced"]) for r in rows), "fixed": len(fixed),
            "rate": f"{len(fixed) / len(rows):.3f}" if rows else "-",
            **{m: makers.get(m, 0) for m in ("search", "model", "search-on-model", "rename")},
            "identical": sum(bool(r["identical"]) for r in fixed),
            "same_functions": sum(bool(r["same_functions"]) for r in fixed),
            "regressions": sum(r["verdict"] == "regression accepted" for r in rows),
            "anti_patterns": sum(bool(r.get("anti_patterns")) for r in fixed),
            "exit2": sum(r["exit_code"] == 2 for r in rows),
            "median_s": _median([r["seconds"] for r in rows])}


def summarize(rows: list[dict]) -> dict:
    """Per split and project, per split, and in all; and per bug what a reader checks first."""
    ordered = sorted(rows, key=lambda r: (r["split"], r["project"], r["id"]))
    dev = [r for r in ordered if r["split"] == "dev"]  # holdout bugs are never listed one by one, only counted
    held = [r for r in ordered if r["split"] != "dev"]
    table = {}
    for split in SPLITS:
        mine = [r for r in ordered if r["split"] == split]
        for project in sorted({r["project"] for r in mine}):
            table[f"{split} · {project}"] = _row([r for r in mine if r["project"] == project])
        table[f"{split} · all"] = _row(mine)
    table["all"] = _row(ordered)
    return {"bugs": len(rows), "commits": sorted({r["commit"] for r in rows}),
            "speeds": sorted({r["speed"] for r in rows}), "rows": table,
            "regressions": {r["id"]: r["regressions"] for r in dev if r["verdict"] == "regression accepted"},
            "exit2": {r["id"]: r["reason"] for r in dev if r["exit_code"] == 2},
            "no_verdict": {r["id"]: r["judge_error"] for r in dev if r["verdict"] == "no verdict"},
            "not_reproduced": {r["id"]: r["why_not_reproduced"] for r in dev if r["verdict"] == "not reproduced"},
            "holdout": dict(Counter(r["verdict"] for r in held)) | {"exit 2": sum(r["exit_code"] == 2 for r in held)},
            "set_aside": dict(sum((Counter(r["set_aside"]) for r in rows), Counter())),
            "families": dict(Counter(f for r in dev if r["verdict"] == "fixed" for f in r.get("families", ()))),
            "outcomes": dict(sum((Counter(r.get("outcomes", {})) for r in rows), Counter())),
            "pointed": dict(sum((Counter(r.get("pointed", {})) for r in rows), Counter())),
            "timings": _timings([r for r in rows if r["reproduced"]])}


TIMINGS = (("wall", "seconds"), ("setup", "setup_s"), ("model", "model_s"), ("search", "search_s"))


def _timings(rows: list[dict]) -> dict:
    """The median seconds per reproduced bug of the whole run and of its parts, over the rows that say (rows of
    an older bench do not)."""
    timed = [r for r in rows if r.get("timings")]
    return {name: _median([r[key] if key == "seconds" else r["timings"][key] for r in timed])
            for name, key in TIMINGS} | {"bugs": len(timed)} if timed else {}


def _cell(value: object) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def table_rows(summary: dict) -> list[list[str]]:
    return [[name] + [_cell(row[k]) for _, k in COLUMNS] for name, row in summary["rows"].items()]


def head() -> list[str]:
    return ["split · project"] + [name for name, _ in COLUMNS]


def notes(summary: dict) -> list[str]:
    """The lines under the table: the dev bugs a reader checks first, one by one; the holdout's only as counts."""
    lines = [f"commit(s) {', '.join(summary['commits'])} · {speed_summary(summary['speeds'])}"]
    if any(summary["holdout"].values()):
        lines.append("holdout, counted only: " + ", ".join(f"{n} {k}" for k, n in sorted(summary["holdout"].items())
                                                           if n))
    lines += [f"REGRESSION ACCEPTED · {b}: broke {', '.join(t)}" for b, t in summary["regressions"].items()]
    lines += [f"exit 2 · {b}: {why}" for b, why in summary["exit2"].items()]
    lines += [f"no verdict · {b}: {why}" for b, why in summary["no_verdict"].items()]
    lines += [f"not reproduced · {b}: {why}" for b, why in summary["not_reproduced"].items()]
    if summary.get("families"):
        lines.append("search families of the dev fixes the search made: " +
                     ", ".join(f"{k} {n}" for k, n in sorted(summary["families"].items(), key=lambda kn: -kn[1])))
    if summary.get("outcomes"):
        lines.append("model answers, over all bugs, by how they ended: " +
                     ", ".join(f"{k} {n}" for k, n in sorted(summary["outcomes"].items(), key=lambda kn: -kn[1])))
    if summary.get("pointed"):
        lines.append("of those, answers pointed at a line the model named as wrong: " +
                     ", ".join(f"{k} {n}" for k, n in sorted(summary["pointed"].items(), key=lambda kn: -kn[1])))
    if summary.get("timings"):
        spent = summary["timings"]
        lines.append(f"median seconds per reproduced bug ({spent['bugs']} timed): " +
                     ", ".join(f"{name} {spent[name]:g}" for name, _ in TIMINGS))
    aside = summary["set_aside"]
    if aside:
        lines.append("tests set aside by the judge, over all bugs: " +
                     ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(aside.items())))
    return lines


def console_table(summary: dict) -> str:
    if not summary["bugs"]:
        return "no rows yet"
    return "\n".join(aligned([head()] + table_rows(summary)) + notes(summary))
