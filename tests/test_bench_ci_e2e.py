"""bench/ci_e2e.py's reading of a run: the parts from stamped log lines and a report.json written by fixbot's own
FixResult, and the RESULTS.md section. No Docker and no model: the bench itself runs them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from ci_e2e_parts import (
    FIX_GROUP,
    LOG_READ_GROUP,
    PUBLISH_GROUP,
    REPRODUCE_RUNS,
    VERIFY_RUNS,
    environment_note,
    group_spans,
    markdown_section,
    parse_parts,
    update_results_md,
)

from bot.fix.result import FixResult, RunSummary, TargetRepair, Timings
from bot.fix.types import CodeTarget

REPO = Path(__file__).resolve().parents[1]

TARGET = CodeTarget("gradebook.py", "letter_grade", 10, 20, 1.0)


def report(**more) -> dict:
    """report.json as fixbot writes it (FixResult.to_json), so a renamed field fails here."""
    runs = (RunSummary("reproduce", "pytest", 4, ("t::a",), 6.5, 1, False),
            RunSummary("re-run failing", "pytest", 0, ("t::a",), 2.0, 1, False),
            RunSummary("verify", "pytest", 5, (), 7.25, 0, False))
    repairs = (TargetRepair(target=TARGET, tests=("t::a",), status="fixed", stop_reason="passed", attempts=(),
                            changed_lines=1, wall_s=80.0),)
    result = FixResult(status="fixed", repository="/github/workspace", test_command="pytest",
                       model="llamacpp:bundled", message="fixed", runs=runs, repairs=repairs,
                       timings=Timings(setup_s=21.5, tests_s=15.75, model_s=50.0, total_s=120.0), **more)
    return json.loads(result.to_json())


LINES = [(3.5, "fixbot ci: workflow_run: the run failed"), (3.6, "design: reflect, 3 answer(s) per model call"),
         (3.7, f"::group::{LOG_READ_GROUP}"), (4.1, "  job 'test': 1 failing test(s)"), (4.5, "::endgroup::"),
         (4.6, "::group::fixing"), (5.0, "  environment: Python 3.11 (requires-python >=3.9 (pyproject.toml))"),
         (25.0, "  environment: fixbot-env:py3.11-in-0123456789ab ready in 20.4 s (3 packages)"),
         (126.0, "::endgroup::"), (126.1, f"::group::{PUBLISH_GROUP}"), (127.3, "pull request opened: http://x/1"),
         (127.6, "::endgroup::"), (127.7, "::notice file=gradebook.py,line=10,title=fixbot::fixed")]


def test_the_names_the_parts_read_are_fixbots_own():
    # the group titles `fixbot ci` prints and the purposes of the pipeline's suite runs: a rename fails here
    ci = (REPO / "bot" / "cli" / "ci_cmd.py").read_text()
    assert all(f'io.group("{title}")' in ci for title in (LOG_READ_GROUP, FIX_GROUP, PUBLISH_GROUP))
    fix = REPO / "bot" / "fix"
    runs = (fix / "reproduce" / "runs.py").read_text() + (fix / "loop" / "targets.py").read_text()
    assert all(f'"{purpose}"' in runs for purpose in REPRODUCE_RUNS + VERIFY_RUNS)


def test_group_spans_pair_each_group_with_its_end():
    assert group_spans(LINES) == pytest.approx({LOG_READ_GROUP: 0.8, "fixing": 121.4, PUBLISH_GROUP: 1.5})
    assert group_spans([(1.0, "::group::x"), (2.0, "no end")]) == {}  # a group that never ended has no span
    assert group_spans([(1.0, "::endgroup::")]) == {}


def test_parts_from_the_lines_and_report_json_add_up_to_the_wall():
    parts = parse_parts(LINES, report(), wall=130.0)
    assert (parts.container_start, parts.environment, parts.reproduce, parts.repair, parts.model,
            parts.verification) == (3.5, 21.5, 8.5, 80.0, 50.0, 7.25)
    assert parts.log_read == pytest.approx(0.8) and parts.publish == pytest.approx(1.5)
    known = (parts.container_start, parts.log_read, parts.environment, parts.reproduce, parts.repair,
             parts.verification, parts.publish, parts.other)
    assert sum(known) == pytest.approx(130.0)  # the model's time is inside repair, not beside it
    assert parts.other == pytest.approx(130.0 - 3.5 - 0.8 - 21.5 - 8.5 - 80.0 - 7.25 - 1.5)
    assert set(parts.as_dict()) == {"container_start", "log_read", "environment", "reproduce", "repair", "model",
                                    "verification", "publish", "other", "wall"}


def test_a_run_without_report_or_publish_leaves_those_parts_empty():
    parts = parse_parts(LINES[:5], None, wall=10.0)  # fixbot stopped before writing report.json
    assert (parts.environment, parts.repair, parts.publish) == (0.0, 0, None)
    assert parts.other == pytest.approx(10.0 - 3.5 - 0.8)
    assert parse_parts([], None, wall=2.0).container_start is None  # the container printed nothing


def test_environment_note_reads_fixbots_own_line():
    assert environment_note(LINES) == "built"
    assert environment_note([(1.0, "  environment: reusing fixbot-env:py3.11-in-0123456789ab")]).startswith("reused")
    assert environment_note([(1.0, "  environment: nothing to install; using the sandbox image as it is")]) == \
        "the sandbox base as it is"
    assert environment_note([]) == "unknown"


def result(parts: dict, key: str = "abc1234 examples/one-module") -> dict:
    return {"key": key, "example": "examples/one-module", "date": "2026-11-25", "commit": "abc1234",
            "image": "fixbot-action:0123456789ab", "image_gb": 1.37, "command": ".venv/bin/python bench/ci_e2e.py",
            "speed_line": "model speed here: 70 prompt / 24.0 generated tok/s per process (2 thread(s) each, 1 "
                          "worker(s))", "status": "fixed", "pull": 1, "target_s": 300.0, "environment": "built",
            "model_calls": 2, "parts": parts}


def test_results_md_section_is_replaced_on_a_rerun_and_appended_otherwise(tmp_path):
    parts = parse_parts(LINES, report(), wall=130.0).as_dict()
    section = markdown_section(result(parts))
    assert "| repair | 80.0 (model calls 50.0) |" in section and "| publish | 1.5 |" in section
    assert "wall **130 s** (target <= 300 s)" in section and "pull request #1 opened (2 model call(s))" in section
    assert "model speed here: 70 prompt" in section
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmark results\n\nsomething measured before\n")
    update_results_md(path, "abc1234 examples/one-module", section)
    update_results_md(path, "abc1234 examples/one-module", section.replace("130 s", "131 s"))
    update_results_md(path, "def5678 examples/one-module",
                      markdown_section(result(parts, "def5678 examples/one-module")))
    text = path.read_text()
    assert text.startswith("# Benchmark results\n\nsomething measured before\n")
    assert text.count("<!-- ci_e2e: abc1234 examples/one-module -->") == 1 and "131 s" in text and "130 s" in text
    assert text.index("abc1234") < text.index("def5678")
