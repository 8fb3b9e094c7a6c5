"""bench/pool_scores.py: the choosers' counts, and a real pool rebuilt and judged on the hidden tests in the
sandbox (no model: --no-model)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pool_scores import Scored, picks

REPO = Path(__file__).resolve().parents[1]


def test_each_chooser_is_right_when_its_best_candidate_is():
    wrong = Scored(code_hash="a", source="mutant", right=False, changed=1, coder=-9.0, coder_per_token=-0.3,
                   reviewer=-38.0, reviewer_per_token=-0.7)
    right = Scored(code_hash="b", source="answer", right=True, changed=2, coder=-5.0, coder_per_token=-0.5,
                   reviewer=-40.0, reviewer_per_token=-0.8)
    assert picks([wrong, right]) == {"fewest changed lines": False, "coder": True, "coder per token": False,
                                     "reviewer": False, "coder-reviewer": True, "coder-reviewer per token": False}
    unscored = [Scored(code_hash="a", source="mutant", right=False, changed=1)]
    assert picks(unscored) == {"fewest changed lines": False}


def test_a_pool_of_two_answers_is_judged_on_the_hidden_tests(tmp_path, shared_data, sandbox_image):
    """Python/0's pool: the canonical body (right) and a constant (wrong), both recorded as passing; the buggy
    function fails the examples, so the mutants that pass them join."""
    data = shared_data / "humanevalpack-python.jsonl"
    task = json.loads(data.read_text().splitlines()[0])
    right = task["declaration"] + task["canonical_solution"]
    wrong = task["declaration"] + "    return False\n"
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"task_id": "Python/0", "passed": False, "visible_passed": True, "attempts": [
        {"outcome": "passed", "code": right}, {"outcome": "passed", "code": wrong}]}) + "\n")
    r = subprocess.run([sys.executable, str(REPO / "bench" / "pool_scores.py"), str(results), "--data", str(data),
                        "--no-model", "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    task_line, totals = (json.loads(line) for line in r.stdout.splitlines())
    sources = [c["source"] for c in task_line["candidates"]]
    assert sources[:2] == ["answer", "answer"] and task_line["candidates"][0]["right"]
    assert not task_line["candidates"][1]["right"]
    assert totals["tasks"] == 1 and totals["with a right candidate"] == 1 and totals["with right and wrong ones"] == 1
    assert "right by fewest changed lines" in totals and "right by coder" not in totals
