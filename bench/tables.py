"""The current figures, from the rows in bench/results/: one table per benchmark, each from its newest rows file
(or the commit given), with the command that reproduces it and the commit it was measured at.

    .venv/bin/python bench/tables.py            # print them
    .venv/bin/python bench/tables.py --readme   # and rewrite README.md's results section with them
    .venv/bin/python bench/tables.py --commit abc1234

README's headline rows are this script's output: edit the rows' benches, never the README's figures."""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

import realbugs_report
import realbugs_reproduce
from realbugs_corpus import DEFAULT_DATA, BenchError, load_manifest
from rows import REPO, RESULTS, speed_summary

README = REPO / "README.md"
BEGIN, END = "<!-- bench/tables.py: begin -->", "<!-- bench/tables.py: end -->"
COMMANDS = {
    "realbugs": ".venv/bin/python bench/realbugs.py --part K/N (all 123 bugs, in slices at one commit)",
    "reproduce": ".venv/bin/python bench/realbugs.py --reproduce-only",
    "humanevalfix-tests": ".venv/bin/python bench/humanevalfix.py --protocol tests",
    "humanevalfix-examples": ".venv/bin/python bench/humanevalfix.py --protocol examples",
    "antipatterns": ".venv/bin/python bench/antipatterns.py",
}
TITLES = {
    "realbugs": "Real bugs: `fixbot fix` judged on each project's whole suite (bundled model, `--wall 600`)",
    "reproduce": "Real bugs: test environment rebuilt and failure reproduced (no model)",
    "humanevalfix-tests": "HumanEvalFix, tests protocol (the task's tests and docstring shown; the same tests judge)",
    "humanevalfix-examples": "HumanEvalFix, examples protocol (docstring and examples shown; hidden tests judge)",
    "antipatterns": "Anti-pattern rules on fixes that are right (each firing refuses an answer a developer wrote)",
}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def newest(bench: str, commit: str | None) -> tuple[Path, list[dict]] | None:
    """The rows file of `bench` at `commit`, else the one whose rows are newest."""
    files = sorted(RESULTS.glob(f"{bench}-*.jsonl"))
    files = [f for f in files if re.fullmatch(rf"{re.escape(bench)}-[0-9a-f]{{7,}}\.jsonl", f.name)]
    if commit:
        files = [f for f in files if f.stem.endswith(commit)]
    loaded = [(f, _rows(f)) for f in files]
    loaded = [(f, r) for f, r in loaded if r]
    return max(loaded, key=lambda fr: max(r["date"] for r in fr[1])) if loaded else None


def md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    return [line(head), "|" + "---|" * len(head)] + [line(r) for r in rows]


def _last(rows: list[dict], key: str) -> list[dict]:
    return list({r[key]: r for r in rows}.values())


def humanevalfix_table(rows: list[dict]) -> tuple[list[str], list[list[str]], list[str]]:
    rows = _last(rows, "task_id")
    passed = [r for r in rows if r["passed"]]
    makers = Counter(r["made_by"] for r in passed)
    by_type = Counter(r["bug_type"] for r in rows)
    by_type_passed = Counter(r["bug_type"] for r in passed)
    head = ["tasks", "passed", "pass@1", "by search", "by model", "search on model", "overfit", "median s",
            "task time s"]
    line = [str(len(rows)), str(len(passed)), f"{len(passed) / len(rows):.3f}", str(makers.get("search", 0)),
            str(makers.get("model", 0)), str(makers.get("search-on-model", 0)),
            str(sum(r["verdict"] == "overfit" for r in rows)),
            f"{statistics.median(r['seconds'] for r in rows):.1f}", f"{sum(r['seconds'] for r in rows):.0f}"]
    notes = ["by bug type: " + ", ".join(f"{t} {by_type_passed[t]}/{n}" for t, n in sorted(by_type.items())),
             f"fixbot eval {' '.join(rows[0]['eval_args'])}"]
    return head, [line], notes


def antipatterns_table(rows: list[dict]) -> tuple[list[str], list[list[str]], list[str]]:
    rows = _last(rows, "item")
    table = []
    for source in sorted({r["source"] for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        fired = [r for r in mine if r["rules"]]
        table.append([source, str(len(mine)), str(len(fired)),
                      "; ".join(f"{r['item']}: {', '.join(r['rules'])}" for r in fired) or "-"])
    return ["right fixes", "checked", "break a rule", "which"], table, []


def _so_far(rows: list[dict]) -> list[str]:
    """A run cut into --part slices across sessions says how far it has come."""
    try:
        total = len(load_manifest(DEFAULT_DATA))
    except BenchError:  # no corpus beside the repository: the table alone
        return []
    done = len(_last(rows, "id"))
    return [f"{done} of {total} bugs so far: a run in `--part K/N` slices at one commit, the rest to come"] \
        if done < total else []


def section(bench: str, path: Path, rows: list[dict]) -> tuple[list[str], list[list[str]], list[str]]:
    if bench == "realbugs":
        summary = realbugs_report.summarize(_last(rows, "id"))
        return realbugs_report.head(), realbugs_report.table_rows(summary), \
            _so_far(rows) + realbugs_report.notes(summary)
    if bench == "reproduce":
        summary = realbugs_reproduce.summarize(_last(rows, "id"))
        return realbugs_reproduce.head(), realbugs_reproduce.table_rows(summary), _so_far(rows)
    if bench == "antipatterns":
        return antipatterns_table(rows)
    return humanevalfix_table(rows)


def render(commit: str | None, markdown: bool) -> str:
    out: list[str] = []
    for bench, command in COMMANDS.items():
        found = newest(bench, commit)
        if found is None:
            continue
        path, rows = found
        head, table, notes = section(bench, path, rows)
        commits = sorted({r["commit"] for r in rows})
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        speed = speed_summary([r["speed"] for r in rows])
        where = f"rows `{shown}` · commit {', '.join(commits)} · `{command}` · {speed}"
        if markdown:
            out += [f"**{TITLES[bench]}**", "", *md_table(head, table), "", *(f"- {n}" for n in notes),
                    f"- {where}", ""]
        else:
            from common import aligned
            out += [f"== {TITLES[bench]}", *aligned([head, *table]), *notes, where, ""]
    return "\n".join(out)


def update_readme(text: str) -> None:
    readme = README.read_text(encoding="utf-8")
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"tables.py: README.md has no {BEGIN} ... {END} section to rewrite")
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    README.write_text(readme[:start] + "\n" + text.rstrip() + "\n" + readme[end:], encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tables.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", help="the rows of this commit (default: each benchmark's newest)")
    parser.add_argument("--readme", action="store_true", help="rewrite README.md's results section")
    args = parser.parse_args(argv)
    print(render(args.commit, markdown=False))
    if args.readme:
        update_readme(render(args.commit, markdown=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
