"""Benchmark results as data: one JSON row per task or bug, in `bench/results/BENCH-COMMIT.jsonl`, written as each
one ends (so an interrupted run resumes where it stopped) and committed with the code.

Every row carries `bench`, `commit` (the code it measured), `date` and `speed` (the model's speed line on the
machine that ran it: machines of one kind differ up to 4x). A run whose code (fixbot's bot/, sandbox/, eval/, and
the benches that judge it, bench/) differs from its commit is no headline: its rows go to the run's own output
directory instead, named `+dirty`."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
CODE = ("bot", "sandbox", "eval", "bench")  # what a row measures: fixbot and the judge; docs may change beside it


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()


def code_commit() -> str:
    """The commit the bench's fixbot runs, with +dirty when its code differs from it."""
    dirty = _git("status", "--porcelain", "--", *CODE, ":!bench/results")  # rows are what a run writes, not code
    return _git("rev-parse", "--short=7", "HEAD") + ("+dirty" if dirty else "")


def rows_path(bench: str, commit: str, out: Path) -> Path:
    """Where a run's rows go: bench/results/ at a clean commit, else the run's output directory."""
    return (out if commit.endswith("+dirty") else RESULTS) / f"{bench}-{commit}.jsonl"


def stamp(bench: str, commit: str, speed: str | None) -> dict:
    return {"bench": bench, "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M"),
            "speed": speed or "model speed: not measured"}


SPEED = re.compile(r"model speed here: (\d+) prompt / ([\d.]+) generated tok/s (.*)")


def speed_summary(lines: set[str] | list[str]) -> str:
    """The speed lines of a run's rows as one line: a run in slices over several sessions measured the speed once per
    session, told here as the range of the distinct readings, per setting (threads and workers)."""
    ranges: dict[str, list[tuple[int, float]]] = {}
    other = []
    for line in sorted(set(lines)):
        match = SPEED.fullmatch(line)
        if match:
            ranges.setdefault(match[3], []).append((int(match[1]), float(match[2])))
        else:
            other.append(line)
    for setting, speeds in ranges.items():
        if len(speeds) == 1:
            other.append(f"model speed here: {speeds[0][0]} prompt / {speeds[0][1]:.1f} generated tok/s {setting}")
            continue
        prompt, generated = [p for p, _ in speeds], [g for _, g in speeds]
        other.append(f"model speed here, {len(speeds)} readings: {min(prompt)}-{max(prompt)} prompt / "
                     f"{min(generated):.1f}-{max(generated):.1f} generated tok/s {setting}")
    return "; ".join(sorted(other))


def read_rows(path: Path, key: str) -> dict[str, dict]:
    """The rows of `path` by `key` ("id", "task_id"); a key recorded twice (a forced re-run) counts by its last."""
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r[key]: r for r in rows}


def append_row(path: Path, row: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as sink:
        sink.write(json.dumps(row, sort_keys=True) + "\n")
        sink.flush()
        os.fsync(sink.fileno())
