"""Where the time of one red-to-pull-request run went (bench/ci_e2e.py): fixbot's log lines, stamped on arrival,
and the timings of its report.json, split into the parts a maintainer waits through; and the RESULTS.md section.
No Docker and no model here: bench/ci_e2e.py runs, this module reads."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from common import replace_section

Line = tuple[float, str]  # seconds since `docker run` started, one line of the container's output
LOG_READ_GROUP = "reading the failed run"  # bot/cli/ci_cmd.py's ::group:: titles
FIX_GROUP = "fixing"
PUBLISH_GROUP = "publishing"
REPRODUCE_RUNS = ("reproduce", "re-run failing")  # report.json runs[].purpose
VERIFY_RUNS = ("verify",)


@dataclass(frozen=True, kw_only=True)
class Parts:
    """Seconds of one run, from `docker run` to the container's exit. The parts are disjoint; `other` is the rest
    (the sandbox pool, ranking, reports, fixbot's exit and the container's removal). None: not in this run."""

    container_start: float | None  # `docker run` to fixbot's first line: the container, Python, fixbot's imports
    log_read: float | None  # the failed run, its jobs and their logs, parsed (::group::reading the failed run)
    environment: float  # the test environment: Python base, dependencies image (report.json timings.setup_s)
    reproduce: float  # the suite in the sandbox before any change, and the failing tests again
    repair: float  # ranking's targets repaired: search, model calls (model load included), candidate tests
    model: float  # of which model calls (report.json timings.model_s)
    verification: float  # the whole suite with the fix
    publish: float | None  # blobs, tree, commit, branch, pull request, labels (::group::publishing)
    other: float
    wall: float

    def as_dict(self) -> dict[str, float | None]:
        return {k: None if v is None else round(v, 2) for k, v in asdict(self).items()}


def group_spans(lines: Sequence[Line]) -> dict[str, float]:
    """Seconds between each `::group::TITLE` line and its `::endgroup::` (summed when a title repeats)."""
    spans: dict[str, float] = {}
    title, start = None, 0.0
    for at, text in lines:
        if text.startswith("::group::"):
            title, start = text[len("::group::"):], at
        elif text == "::endgroup::" and title is not None:
            spans[title] = spans.get(title, 0.0) + at - start
            title = None
    return spans


def _runs_s(report: dict, purposes: tuple[str, ...]) -> float:
    return sum(r["duration_s"] for r in report.get("runs", ()) if r["purpose"] in purposes)


def parse_parts(lines: Sequence[Line], report: dict | None, wall: float) -> Parts:
    """The parts of one run: container start and the groups from the stamped lines, the rest from report.json
    (None when fixbot wrote none: then everything after the log read is `other`)."""
    spans = group_spans(lines)
    report = report or {}
    timings = report.get("timings", {})
    known = dict(container_start=lines[0][0] if lines else None, log_read=spans.get(LOG_READ_GROUP),
                 environment=float(timings.get("setup_s", 0.0)), reproduce=_runs_s(report, REPRODUCE_RUNS),
                 repair=sum(r["wall_s"] for r in report.get("repairs", ())),
                 verification=_runs_s(report, VERIFY_RUNS), publish=spans.get(PUBLISH_GROUP))
    other = wall - sum(v for v in known.values() if v is not None)
    return Parts(**known, model=float(timings.get("model_s", 0.0)), other=other, wall=wall)


def environment_note(lines: Sequence[Line]) -> str:
    """How fixbot got the test environment, from its own log line: built, reused, or nothing to install."""
    for _, text in lines:
        if re.search(r"environment: \S+ ready in", text):
            return "built"
        if "environment: reusing" in text:
            return "reused (cached image)"
        if "environment: nothing to install" in text:
            return "the sandbox base as it is"
    return "unknown"


ROWS = (("container start", "container_start", "`docker run` to fixbot's first line (container, Python, imports)"),
        ("log read", "log_read", "the failed run, its jobs and logs (`::group::reading the failed run`)"),
        ("environment", "environment", "report.json `timings.setup_s`"),
        ("reproduce", "reproduce", "report.json runs `reproduce`, `re-run failing`"),
        ("repair", "repair", "report.json `repairs[].wall_s` (model load, search, model calls, candidate tests)"),
        ("verification", "verification", "report.json runs `verify` (the whole suite with the fix)"),
        ("publish", "publish", "blobs, tree, commit, branch, pull request (`::group::publishing`)"),
        ("other", "other", "the rest: sandbox pool, ranking, reports, exit"))


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def markdown_section(result: dict) -> str:
    """bench/RESULTS.md's section for one run, between markers that name its key (a re-run replaces it)."""
    parts, key = result["parts"], result["key"]
    outcome = f"{result['status']}, " + (f"pull request #{result['pull']} opened" if result.get("pull")
                                         else "no pull request")
    lines = [f"<!-- ci_e2e: {key} -->", f"### Red to pull request, the Action's image: {result['example']}, "
             f"{result['date']}", "",
             f"- commit: `{result['commit']}`; image `{result['image']}` ({result['image_gb']:.2f} GB)",
             f"- command: `{result['command']}`",
             f"- {result['speed_line'] or 'model speed: not measured (--no-speed)'}",
             f"- outcome: {outcome} ({result['model_calls']} model call(s)); wall **{parts['wall']:.0f} s** "
             f"(target <= {result['target_s']:.0f} s); test environment {result['environment']}",
             "- not included: pulling the image (a runner pulls it from ghcr.io; here it is built locally)", "",
             "| part | seconds | measured as |", "|---|---:|---|"]
    for name, field, how in ROWS:
        extra = f" (model calls {parts['model']:.1f})" if field == "repair" else ""
        lines.append(f"| {name} | {_s(parts[field])}{extra} | {how} |")
    lines += [f"| **wall** | **{parts['wall']:.1f}** | `docker run` start to the container's exit |", "",
              f"<!-- /ci_e2e: {key} -->"]
    return "\n".join(lines) + "\n"


def update_results_md(path: Path, key: str, section: str) -> None:
    """Replaces the section of `key` in `path`, or appends it."""
    replace_section(path, "ci_e2e", key, section)
