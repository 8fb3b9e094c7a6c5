"""The latency benchmark's plumbing, on a scripted model so it costs nothing (the real numbers are in docs/)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_bench_prints_one_json_line(tmp_path: Path) -> None:
    script = tmp_path / "answers.json"
    answer = "```python\ndef merge_intervals(intervals):\n    return intervals\n```"
    script.write_text(json.dumps([answer, answer, "ok"] * 2))  # a run: the answer, the same again (cached), one token
    r = subprocess.run([sys.executable, "bench/llm_latency.py", "--model", f"scripted:{script}", "--runs", "2",
                        "--json"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.strip().splitlines()
    result = json.loads(line)
    assert result["model"] == f"scripted:{script}" and result["runs"] == 2
    assert {"prompt_tok_s", "gen_tok_s", "latency_s", "prompt_tokens", "completion_tokens"} <= set(result)
    assert result["completion_tokens"] == 6 and result["prompt_tokens"] > 100


def test_bench_reports_a_bad_spec_in_one_line() -> None:
    r = subprocess.run([sys.executable, "bench/llm_latency.py", "--model", "nope:x"], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.startswith("error: unknown model spec 'nope:x'") and r.stderr.count("\n") == 1
