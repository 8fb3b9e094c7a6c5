"""bench/realbugs.py --reproduce-only: the environment as fixbot builds it, the failure at bug-N and fix-N, no
model; and the rule that says a bug is reproduced."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def base_39(docker_client):
    from sandbox.image import default_image, image_exists

    if not image_exists(docker_client, default_image("3.9")):
        pytest.fail(f"sandbox base {default_image('3.9')} is missing: run "
                    "`.venv/bin/fixbot sandbox build --offline --python 3.9`")


@pytest.mark.timeout(2400)
def test_reproduce_only_sets_up_runs_the_whole_suite_explains_and_resumes(shared_data, tmp_path, docker_client,
                                                                         base_39):
    from packaging.utils import canonicalize_name

    from bot.environment.prepare import image_lock

    out, rows = tmp_path / "out", tmp_path / "reproduce.jsonl"
    args = ["--reproduce-only", "--fresh", "--bugs", "youtube-dl-1,PySnooper-1", "--data",
            str(shared_data / "realbugs"), "--out", str(out), "--rows", str(rows)]
    first = subprocess.run([sys.executable, "bench/realbugs.py", *args, "--json"], cwd=REPO, capture_output=True,
                           text=True, timeout=2300)
    assert first.returncode == 0, first.stderr[-3000:]
    records = {r["id"]: r for r in map(json.loads, rows.read_text().splitlines())}
    yt, ps = records["youtube-dl-1"], records["PySnooper-1"]
    # youtube-dl: tox's envlist (py26 ... py35) picks 3.9; the exposing test fails at bug-1 only
    assert yt["set_up"] and yt["reproduced"] and yt["python"] == "3.9" and "tox.ini envlist" in yt["python_source"]
    assert yt["built"] and yt["reused"] and yt["reuse_s"] < 10 and yt["why_not_reproduced"] == ""
    assert yt["suite"]["command"] == "python -m unittest discover -s test"
    assert yt["suite"]["runs"]["bug"]["passed"] > 1000 and yt["set_aside"]["network"] > 100
    assert yt["bench"] == "reproduce" and yt["split"] == "dev" and yt["commit"]
    # PySnooper: 3.9 from its envlist (its code imports Mapping from collections), python_toolbox from tox's deps
    assert ps["set_up"] and ps["python"] == "3.9" and ps["reused"] and ps["reuse_s"] < 10
    lock = image_lock(docker_client, docker_client.images.get(
        json.loads((out / "bugs" / "PySnooper-1" / "suite-runs.json").read_text())["key"]["image"]).id)
    assert "python-toolbox" in {canonicalize_name(line.partition("==")[0]) for line in lock}, lock
    # Its bug is a write in the locale's encoding (the fix adds encoding='utf-8'): in the sandbox's UTF-8 locale
    # the exposing test passes at bug-1, and the row says exactly that.
    assert not ps["reproduced"] and ps["cause"] == "bug-N"
    assert ps["why_not_reproduced"] == "bug-N: the exposing test tests/test_chinese.py::test_chinese passes at bug-N"
    assert "PySnooper-1: NOT REPRODUCED" in first.stderr
    assert not (out / "bugs" / "youtube-dl-1" / "bug").exists()  # the worktrees are gone
    summary = json.loads(first.stdout)
    assert summary["rows"]["dev · all"]["set_up"] == 2 and summary["rows"]["dev · all"]["reproduced"] == 1
    assert list(summary["not_reproduced"]) == ["PySnooper-1"]

    again = subprocess.run([sys.executable, "bench/realbugs.py", *args], cwd=REPO, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0 and "2 bug(s) selected, 0 to run, 2 already recorded" in again.stdout


def test_httpie_1_reproduces_with_its_users_setup_and_not_without(shared_data, tmp_path, docker_client, base_39):
    """The user's setup in bench/realbugs_settings.yml is what makes httpie-1 reproduce: without it, pytest refuses
    the project's conftest."""
    from realbugs_corpus import Bundles, load_manifest, select
    from realbugs_reproduce import reproduce_bug

    from bot.environment.prepare import EnvRequest

    bug = select(load_manifest(shared_data / "realbugs"), ids="httpie-1")[0]
    bundles = Bundles(shared_data / "realbugs", tmp_path / "clones")
    mine = reproduce_bug(bug, bundles, tmp_path / "mine", client=docker_client, request=EnvRequest(setup=bug.setup))
    assert mine["set_up"] and mine["reproduced"], mine
    assert mine["suite"]["runs"]["bug"]["failed"] > 0
    inferred = reproduce_bug(bug, bundles, tmp_path / "inferred", client=docker_client, request=EnvRequest())
    assert inferred["set_up"] and not inferred["reproduced"]
    assert "being applied more than once" in inferred["why_not_reproduced"] or inferred["cause"] == "environment"
