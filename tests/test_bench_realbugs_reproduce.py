"""bench/realbugs.py --reproduce-only: the environment as fixbot builds it, the failure at bug-N and fix-N, no
model; and the rule that says a bug is reproduced."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import realbugs
from realbugs_corpus import Bug

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def base_39(docker_client):
    from sandbox.image import default_image, image_exists

    if not image_exists(docker_client, default_image("3.9")):
        pytest.fail(f"sandbox base {default_image('3.9')} is missing: run "
                    "`.venv/bin/fixbot sandbox build --offline --python 3.9`")


def test_reproduce_only_sets_up_reproduces_explains_resumes_and_writes_its_own_section(
        shared_data, tmp_path, docker_client, base_39):
    from packaging.utils import canonicalize_name

    from bot.fix.environment import image_lock

    out, md = tmp_path / "out", tmp_path / "RESULTS.md"
    md.write_text("# Benchmark results\n\nkept\n")
    args = ["--reproduce-only", "--bugs", "youtube-dl-1,PySnooper-1", "--data", str(shared_data / "realbugs"),
            "--out", str(out), "--results-md", str(md)]
    first = subprocess.run([sys.executable, "bench/realbugs.py", *args, "--json"], cwd=REPO, capture_output=True,
                           text=True, timeout=1200)
    assert first.returncode == 0, first.stderr[-3000:]
    records = {r["id"]: r for r in map(json.loads, (out / "reproduce.jsonl").read_text().splitlines())}
    yt, ps = records["youtube-dl-1"], records["PySnooper-1"]
    # youtube-dl: tox's envlist (py26 ... py35) picks 3.9; the exposing test fails at bug-1 only
    assert yt["set_up"] and yt["reproduced"] and yt["python"] == "3.9" and "tox.ini envlist" in yt["python_source"]
    assert yt["first_built"] and yt["reused"] and yt["reuse_s"] < 10 and yt["setup_error"] == "" and yt["why"] is None
    assert yt["tests"]["bug"]["failed"] == 1 and yt["tests"]["fix"]["failed"] == 0 and yt["tests"]["fix"]["passed"] > 50
    assert yt["also_exposing"] == [] and yt["modules_failed_at_bug"] == {} and yt["forgotten"]
    # PySnooper: 3.9 from its envlist (its code imports Mapping from collections), python_toolbox from tox's deps
    assert ps["set_up"] and ps["python"] == "3.9" and ps["reused"] and ps["reuse_s"] < 10
    lock = image_lock(docker_client, ps["image"])
    assert "python-toolbox" in {canonicalize_name(line.partition("==")[0]) for line in lock}, lock
    # Its bug is a write in the locale's encoding (the fix adds encoding='utf-8'): in the sandbox's UTF-8 locale
    # the exposing test passes at bug-1, and the record says exactly that.
    assert not ps["reproduced"] and ps["why"]["exposing_at_bug"] == {"tests/test_chinese.py::test_chinese": "passed"}
    assert ps["why"]["exposing_at_fix"] == {} and (out / "bugs" / "PySnooper-1" / "bug.out").is_file()
    assert "[1/2] PySnooper-1: NOT REPRODUCED" in first.stderr and "at bug-N tests/test_chinese.py::test_chinese " \
        "passed" in first.stderr
    assert not (out / "bugs" / "youtube-dl-1" / "bug").exists()  # the worktrees are gone
    summary = json.loads(first.stdout)
    assert summary == json.loads((out / "reproduce-summary.json").read_text())
    assert summary["total"]["set_up"] == 2 and summary["total"]["reproduced"] == 1 and summary["bugs"] == 2
    assert summary["projects"]["youtube-dl"]["pythons"] == "3.9 (1)" and list(summary["not_reproduced"]) == \
        ["PySnooper-1"]
    text = md.read_text()
    assert text.startswith("# Benchmark results\n\nkept\n") and f"<!-- realbugs: reproduce-only {out} -->" in text
    assert "| youtube-dl | 1 | 1 | 1 | 3.9 (1) | 1 |" in text and "not reproduced · PySnooper-1" in text

    again = subprocess.run([sys.executable, "bench/realbugs.py", *args], cwd=REPO, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0 and "2 bug(s) selected, 0 to run, 2 already recorded" in again.stdout
    assert md.read_text().count("<!-- realbugs: reproduce-only") == 1  # its section replaced, not added
    assert not (out / "results.jsonl").exists() and not (out / "run.json").exists()  # the fixing mode's files
    # the fixing mode's report of the same OUT is a section of its own
    assert realbugs.main(["--report-only", "--out", str(out), "--results-md", str(md)]) == 0
    assert md.read_text().count(f"<!-- realbugs: {out} -->") == 1


def test_httpie_1_reproduces_with_its_users_setup_and_not_without(shared_data, tmp_path, docker_client, base_39):
    """The user's setup in bench/realbugs_settings.yml is what makes httpie-1 reproduce: without it, pytest refuses
    the project's conftest."""
    from realbugs_corpus import Bundles, load_manifest, select
    from realbugs_setup import reproduce_bug

    from bot.fix.environment import EnvRequest

    bug = select(load_manifest(shared_data / "realbugs"), ids="httpie-1")[0]
    bundles = Bundles(shared_data / "realbugs", tmp_path / "clones")
    mine = reproduce_bug(bug, bundles, tmp_path / "mine", client=docker_client, request=EnvRequest(setup=bug.setup))
    assert mine["set_up"] and mine["reproduced"], mine
    assert mine["tests"]["bug"]["failed"] > 0 and mine["tests"]["fix"]["failed"] == 0
    inferred = reproduce_bug(bug, bundles, tmp_path / "inferred", client=docker_client)
    assert inferred["set_up"] and not inferred["reproduced"]
    assert "being applied more than once" in (tmp_path / "inferred" / "bug.out").read_text()


def _run(passed: set[str], failed: set[str]):
    from bot.fix.types import TestRun

    return TestRun(command=("pytest",), exit_code=1 if failed else 0, passed=frozenset(passed),
                   failed=frozenset(failed), failures=(), duration_s=1.0, output="")


def test_reproduced_counts_a_module_that_does_not_import_and_tolerates_more_tests_the_fix_repairs():
    from realbugs_score import judge

    bug = Bug("p-1", "p", 1, ("t/test_a.py",), ("t/test_a.py::test_x",), ("a.py",))
    fixed = _run({"t/test_a.py::test_x", "t/test_a.py::test_y", "t/test_a.py::test_z"}, set())

    def reproduced(at_bug, at_fix=fixed) -> bool:
        return judge(bug, 1, at_bug, at_fix, None, None).reproduced

    assert reproduced(_run({"t/test_a.py::test_y", "t/test_a.py::test_z"}, {"t/test_a.py::test_x"}))
    assert reproduced(_run(set(), {"t/test_a.py"}))  # the fixed commit's test file imports what the fix adds
    assert reproduced(_run({"t/test_a.py::test_z"}, {"t/test_a.py::test_x", "t/test_a.py::test_y"}))  # the same bug
    assert not reproduced(_run({"t/test_a.py::test_x", "t/test_a.py::test_y", "t/test_a.py::test_z"}, set()))
    assert not reproduced(_run(set(), {"<pytest>"}))  # pytest did not start: nothing is known
    broken_at_fix = _run({"t/test_a.py::test_x"}, {"t/test_a.py::test_y"})
    assert not reproduced(_run({"t/test_a.py::test_y"}, {"t/test_a.py::test_x"}), broken_at_fix)
