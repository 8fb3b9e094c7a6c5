"""`fixbot fix` end to end with the real bundled model and the real Docker sandbox, as a user runs it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from .conftest import run_fixbot
from .fix_examples import EXAMPLES, FIXES

pytestmark = [pytest.mark.model, pytest.mark.timeout(1200)]


@pytest.mark.parametrize("example", ["one-module", "class-method"])
def test_bundled_model_fixes_the_example(example, tmp_path):
    root = tmp_path / example
    shutil.copytree(EXAMPLES / example, root)
    out = tmp_path / "out"
    proc = run_fixbot("fix", str(root), "--out", str(out), "--apply", timeout=1100)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "llamacpp:bundled" and report["status"] == "fixed"
    fixed = {r["target"]["qualname"] for r in report["repairs"] if r["status"] == "fixed"}
    assert fixed == {f.qualname for f in FIXES[example]}
    assert report["changed_lines"] <= 3
    assert {r["made_by"] for r in report["repairs"] if r["status"] == "fixed"} <= {"search", "model",
                                                                                 "search-on-model"}
    # the applied tree is green on the host too (the examples need nothing beyond pytest)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root,
                           capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-2000:]


def test_the_model_writes_a_fix_the_mutation_search_cannot_make(tmp_path):
    """examples/missing-branch needs a new branch: every mutant of the search fails, so only the bundled model's
    own candidate can fix it. The report says so; without the model's part the run ends not fixed."""
    root = tmp_path / "missing-branch"
    shutil.copytree(EXAMPLES / "missing-branch", root)
    out = tmp_path / "out"
    proc = run_fixbot("fix", str(root), "--out", str(out), "--apply", timeout=1100)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    [kept] = [r for r in report["repairs"] if r["status"] == "fixed"]
    assert kept["target"]["qualname"] == "parse_duration" and kept["made_by"] == "model"
    assert kept["attempts"] and kept["attempts"][-1]["outcome"] == "passed"
    searched = [s for r in report["repairs"] for s in r["searches"] if r["target"]["qualname"] == "parse_duration"]
    assert searched and not any(s["fixed"] for s in searched)
    assert "written by the model's candidate" in (out / "report.md").read_text()
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root,
                           capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-2000:]
