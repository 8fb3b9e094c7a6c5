"""bench/agents.py's plumbing on a scripted model in the Docker sandbox (the real numbers are in docs/): slices
of the subset with --part, one leg's row, and a stop."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "bench/agents.py", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600)


def test_the_slices_of_a_leg_cover_its_subset_once_in_order(shared_data, sandbox_image, tmp_path):
    data = str(shared_data / "humanevalpack-python.jsonl")
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["```python\ndef f():\n    return 0\n```"] * 20))  # wrong: every task fails
    reports = []
    for part in ("1/2", "2/2"):
        r = bench("--agents", "reflect", "--subset", "stratified:0.02", "--part", part, "--iterations", "1",
                  "--model", f"scripted:{script}", "--workers", "1", "--data", data, "--out", str(tmp_path), "--json")
        assert r.returncode == 0, r.stderr[-2000:]
        reports.append(json.loads(r.stdout))
    first, second = (rep["tasks"] for rep in reports)
    from eval.tasks import load_tasks, select
    subset = [t.number for t in select(load_tasks(shared_data / "humanevalpack-python.jsonl"),
                                       subset="stratified:0.02", seed=0)]
    assert first and second and first + second == subset  # 6 tasks, one per bug type: 3 and 3
    for rep in reports:
        (leg,) = rep["legs"]
        assert leg["leg"] == "reflect" and leg["n_tasks"] == len(rep["tasks"]) and leg["passed"] == 0
        # the iterations, not the clock, end the tasks; a scripted model has no speed to measure
        assert rep["task_seconds"] == 1800 and leg["stopped_by_time"] == 0 and rep["model_speed"] is None
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == [
        "tests-stratified0.02-s0-k1-t1800-reflect-part1of2", "tests-stratified0.02-s0-k1-t1800-reflect-part2of2"]


def test_a_bad_part_is_one_line(shared_data) -> None:
    r = bench("--part", "3/2", "--data", str(shared_data / "humanevalpack-python.jsonl"))
    assert r.returncode != 0 and r.stderr.strip() == "agents.py: --part '3/2': use K/N with 1 <= K <= N, e.g. 1/2"


def test_a_stopped_bench_stops_its_fixbot_eval_and_says_how_to_resume(shared_data, sandbox_image, tmp_path):
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["```python\ndef f():\n    return 0\n```"] * 200))
    proc = subprocess.Popen([sys.executable, "bench/agents.py", "--agents", "reflect", "--iterations", "1",
                             "--model", f"scripted:{script}", "--workers", "1", "--out", str(tmp_path),
                             "--data", str(shared_data / "humanevalpack-python.jsonl")],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    while not (line := proc.stderr.readline()).startswith("== reflect: eval "):  # its fixbot eval is starting
        assert line, "the bench ended before its leg"
    deadline = time.monotonic() + 60
    children: list[int] = []
    while not children and time.monotonic() < deadline:
        children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(p) == proc.pid]
        time.sleep(0.2)
    assert children, "the bench started no fixbot eval"
    time.sleep(3)  # into its tasks
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip().endswith("agents.py: interrupted; the same command resumes where it stopped")
    assert not any(Path(f"/proc/{pid}").exists() for pid in children)  # the eval was stopped and reaped


def _parent(proc_dir: Path) -> int | None:
    try:
        return int((proc_dir / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None
