"""bench/side_by_side.py: two commits' legs from their own worktrees on the same tasks (the search alone, no
model, so that the plumbing is what is tested), and its one-line errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "bench/side_by_side.py", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=900)


def worktrees() -> str:
    return subprocess.run(["git", "worktree", "list"], cwd=REPO, capture_output=True, text=True).stdout


def test_the_same_tasks_run_from_each_commit_and_the_worktrees_go(shared_data, sandbox_image, tmp_path):
    before = subprocess.run(["git", "rev-parse", "--short=12", "HEAD~1"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    r = bench("--before", "HEAD~1", "--after", "HEAD", "--tasks", "2,3", "--model", "llamacpp:bundled", "--no-speed",
              "--data", str(shared_data / "humanevalpack-python.jsonl"), "--out", str(tmp_path), "--json",
              "--", "--iterations", "0", "--search")
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout)
    legs = {leg["leg"]: leg for leg in report["legs"]}
    assert legs["before"]["commit"] == before and legs["after"]["commit"] != before
    for leg in legs.values():  # the search alone fixes both one-edit bugs, in each commit's own results directory
        assert (leg["n_tasks"], leg["passed_tasks"]) == (2, ["Python/2", "Python/3"])
        assert Path(leg["out"]).parent == tmp_path and leg["wall_s"] > 0
    assert legs["before"]["out"] != legs["after"]["out"]
    if report["mode"] == "side by side":  # on two or more cores: disjoint halves
        assert not set(legs["before"]["cpus"]) & set(legs["after"]["cpus"])
    assert report["compare"]["only_before"] == report["compare"]["only_after"] == []
    assert str(tmp_path) not in worktrees()  # removed at the end; the results stay
    assert "2 done, 2 passed" in r.stderr or r.stderr.count("==") == 2  # progress, unless the legs ended within a poll


def test_a_bad_commit_is_one_line(shared_data):
    r = bench("--before", "no-such-rev", "--data", str(shared_data / "humanevalpack-python.jsonl"))
    assert r.returncode != 0 and r.stderr.strip().splitlines()[-1] == \
        f"side_by_side.py: 'no-such-rev' is not a commit of {REPO}"


def test_part_and_tasks_are_one_choice(shared_data):
    r = bench("--before", "HEAD", "--part", "1/4", "--tasks", "1,2",
              "--data", str(shared_data / "humanevalpack-python.jsonl"))
    assert r.returncode == 2 and "--part and --tasks choose the tasks two ways" in r.stderr


def test_after_args_compare_one_commit_with_an_option_on(shared_data, sandbox_image, tmp_path):
    """One commit, an option for the after leg alone: the legs differ in what their runs recorded, and the report
    says so."""
    r = bench("--before", "HEAD", "--tasks", "2", "--model", "llamacpp:bundled", "--no-speed",
              "--data", str(shared_data / "humanevalpack-python.jsonl"), "--out", str(tmp_path), "--json",
              "--after-args", "--protocol=examples", "--", "--iterations", "0", "--search")
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout)
    assert report["after_args"] == ["--protocol=examples"]
    legs = {leg["leg"]: leg for leg in report["legs"]}
    protocols = {name: json.loads((Path(leg["out"]) / "summary.json").read_text())["protocol"]
                 for name, leg in legs.items()}
    assert protocols == {"before": "tests", "after": "examples"}
    assert legs["before"]["commit"] == legs["after"]["commit"]
    assert all(leg["overfit_tasks"] == [] for leg in legs.values())  # the search's fix is right under both
    assert str(tmp_path) not in worktrees()
