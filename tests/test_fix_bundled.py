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
    # the applied tree is green on the host too (the examples need nothing beyond pytest)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root,
                           capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-2000:]
