"""The mutation search, measured side by side in one run.

1. Screen throughput: every one-edit mutant (capped as the search caps them) of all selected buggy functions
   through the batch sandbox's fast screen, against the same candidates run as one pytest job each (a sample).
   Prints candidates per second for both and the ratio. Target: >= 200 candidates/s through the screen.
2. Replays: `fixbot eval` per leg, each in its own results directory under --out (an interrupted bench resumes
   where it stopped). Legs are PROTOCOL/MODE with MODE one of plain (the agent alone), search (the agent with
   the search), search+samples (the search, and --samples N answers per model call tested in one batch),
   search-only (no model at all: --iterations 0); examples legs run with eval's defaults, so they vote among
   the fixes that pass the examples (bot/agent/choose/select.py). Prints per leg pass@1, single-shot pass@1,
   fixed by the search, overfitting (visible tests passed, hidden failed), model calls, wall time and search
   candidates per second.

    .venv/bin/python bench/search.py [--legs tests/plain,tests/search,examples/plain,examples/search]
        [--data FILE] [--iterations 10] [--samples 3] [--limit N] [--workers 2] [--out DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from common import run_child, until_stopped

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "humanevalpack-python.jsonl"
ALL_LEGS = ("tests/search-only", "examples/search-only", "tests/plain", "tests/search", "tests/search+samples",
            "examples/plain", "examples/search", "examples/search+samples")
PYTEST_SAMPLE = 40


def screen_throughput(data: Path, limit: int | None) -> dict:
    from bot.agent.options import SearchOptions
    from bot.agent.search.mutate import mutants, ranked_mutants
    from bot.fix.locate.spans import function_source
    from eval.harness import humaneval_harness, humaneval_screen
    from eval.tasks import load_tasks
    from sandbox.docker_sandbox import DockerSandbox

    tasks = load_tasks(data)[:limit]
    per_task = []
    with DockerSandbox(pool_size=2) as sb:
        sb.run_batch([])  # nothing: the pool starts lazily, inside the first measurement for both ways alike
        screened = screen_s = 0.0
        for t in tasks:
            buggy = function_source(t.buggy_module, t.entry_point)
            sources = [m.source for m in ranked_mutants(buggy, t.entry_point, cap=SearchOptions.mutants)]
            screen = humaneval_screen(sb, t.buggy_module, t.entry_point, t.test)
            start = time.perf_counter()
            screen.screen(sources)
            took = time.perf_counter() - start
            screened += len(sources)
            screen_s += took
            per_task.append(len(sources) / took if took else 0.0)
        sample_task = tasks[0]
        buggy = function_source(sample_task.buggy_module, sample_task.entry_point)
        sample = [m.source for m in mutants(buggy, sample_task.entry_point)][:PYTEST_SAMPLE]
        harness = humaneval_harness(sb, sample_task.buggy_module, sample_task.entry_point, sample_task.test)
        start = time.perf_counter()
        harness.check_many(sample)
        pytest_s = time.perf_counter() - start
    screen_rate = screened / screen_s
    pytest_rate = len(sample) / pytest_s
    return {"tasks": len(tasks), "candidates": int(screened), "screen_s": round(screen_s, 2),
            "screen_candidates_per_s": round(screen_rate, 1),
            "median_task_candidates_per_s": round(statistics.median(per_task), 1),
            "pytest_candidates_per_s": round(pytest_rate, 1), "screen_over_pytest": round(screen_rate / pytest_rate, 1)}


def run_leg(leg: str, data: Path, iterations: int, limit: int | None, out: Path, model: str, workers: int,
            samples: int) -> dict:
    protocol, mode = leg.split("/")
    leg_out = out / (leg.replace("/", "-") + (str(samples) if mode == "search+samples" else ""))
    cmd = [sys.executable, "-m", "bot.cli.main", "eval", "--data", str(data), "--protocol", protocol,
           "--iterations", "0" if mode == "search-only" else str(iterations), "--model", model,
           "--workers", str(workers), "--out", str(leg_out)]
    if mode != "plain":
        cmd.append("--search")
    if mode == "search+samples":
        cmd += ["--samples", str(samples)]
    if limit:
        cmd += ["--limit", str(limit)]
    print(f"\n== {leg}: {' '.join(cmd[2:])}", file=sys.stderr, flush=True)
    code = run_child(cmd, cwd=REPO)
    if code != 0:
        return {"leg": leg, "error": f"fixbot eval exited {code}"}
    s = json.loads((leg_out / "summary.json").read_text())
    return {"leg": leg, "pass_at_1": s["pass_at_1"], "passed": s["passed"], "n_tasks": s["n_tasks"],
            "single_shot": s["single_shot_pass_at_1"] if mode != "search-only" else None,
            "fixed_by_search": s.get("fixed_by_search", 0),
            "overfit": s["visible_passed_hidden_failed"], "model_calls": s["model_calls"], "wall_s": s["wall_s"],
            "candidates_per_s": s.get("search_candidates_per_s"), "median_changed_lines": s["median_changed_lines"],
            "by_bug_type": {k: v["passed"] for k, v in s["by_bug_type"].items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--legs", default=",".join(ALL_LEGS), help=f"comma-separated (default {','.join(ALL_LEGS)})")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", default="llamacpp:bundled")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--samples", type=int, default=3, help="answers per model call in the search+samples legs")
    parser.add_argument("--limit", type=int, help="only the first N tasks")
    parser.add_argument("--workers", type=int, default=2,
                        help="tasks at once, each with a model process of its own (default 2: on 2 cores, two "
                             "1-thread llama.cpp processes generate 1.2x the tokens of one 2-thread process)")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-search")
    parser.add_argument("--no-throughput", action="store_true", help="skip the screen throughput part")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = parser.parse_args()
    legs = args.legs.split(",")
    unknown = sorted(set(legs) - set(ALL_LEGS))
    if unknown:
        parser.error(f"unknown leg(s) {', '.join(unknown)}; choose from {', '.join(ALL_LEGS)}")
    if not args.data.is_file():
        parser.error(f"--data {args.data}: no such file")
    report: dict = {"date": time.strftime("%Y-%m-%d"), "model": args.model, "iterations": args.iterations}
    if not args.no_throughput:
        print("screen throughput...", file=sys.stderr, flush=True)
        report["throughput"] = screen_throughput(args.data, args.limit)
    report["legs"] = [run_leg(leg, args.data, args.iterations, args.limit, args.out, args.model, args.workers,
                              args.samples) for leg in legs]
    if args.json:
        print(json.dumps(report))
        return 0
    if "throughput" in report:
        t = report["throughput"]
        print(f"screen: {t['candidates']} mutants of {t['tasks']} tasks in {t['screen_s']} s = "
              f"{t['screen_candidates_per_s']} candidates/s (median per task {t['median_task_candidates_per_s']}; "
              f"target >= 200) · one pytest job each: {t['pytest_candidates_per_s']}/s · ratio "
              f"{t['screen_over_pytest']}x")
    print(f"{'leg':<26}{'pass@1':>8}{'passed':>8}{'1-shot':>8}{'search':>8}{'overfit':>8}{'calls':>7}"
          f"{'wall s':>9}{'cand/s':>8}{'lines':>6}")
    for r in report["legs"]:
        if "error" in r:
            print(f"{r['leg']:<26}{r['error']}")
            continue
        shot = f"{r['single_shot']:.3f}" if r["single_shot"] is not None else "-"
        print(f"{r['leg']:<26}{r['pass_at_1']:>8.3f}{r['passed']:>8}{shot:>8}{r['fixed_by_search']:>8}"
              f"{r['overfit']:>8}{r['model_calls']:>7}{r['wall_s']:>9.0f}{r['candidates_per_s'] or '-':>8}"
              f"{r['median_changed_lines'] or '-':>6}")
    return 0


if __name__ == "__main__":
    sys.exit(until_stopped(main, "search.py"))
