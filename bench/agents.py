"""The three agent designs side by side: the same tasks, sandbox, model, budget and protocol.

Each leg is one `fixbot eval --agent A [--few-shot]` run in its own results directory under --out (an
interrupted bench resumes where it stopped; a finished leg is only read back). The mutation search is off,
so that the table measures the designs and not the search. Prints, per leg: pass@1, single-shot pass@1
(the same run's first iteration), median iterations per task, median completion tokens per call, wall time
and median changed lines.

    .venv/bin/python bench/agents.py [--agents reflect,thought-patch,tool-call] [--few-shot off|on|both]
        [--subset stratified:0.35] [--seed 0] [--protocol tests] [--iterations 10] [--model llamacpp:bundled]
        [--data FILE] [--workers 2] [--out DIR] [--part K/N] [--json]

--part K/N runs the K-th of N consecutive slices of the subset's tasks only (each slice its own results
directory): a leg longer than one sitting is run as slices, and their counts add up to the leg's.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "humanevalpack-python.jsonl"
AGENTS = ("reflect", "thought-patch", "tool-call")


def legs(agents: list[str], few_shot: str) -> list[tuple[str, bool]]:
    shots = {"off": [False], "on": [True], "both": [False, True]}[few_shot]
    return [(agent, shot) for agent in agents for shot in shots]


def part_tasks(args: argparse.Namespace) -> list[int]:
    """The task numbers of slice K of N (--part) of the subset, in the order eval runs them."""
    from eval.tasks import load_tasks, select

    part = args.part
    k, _, n = part.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise SystemExit(f"agents.py: --part {part!r}: use K/N with 1 <= K <= N, e.g. 1/2")
    numbers = [t.number for t in select(load_tasks(args.data), subset=args.subset, seed=args.seed)]
    size = len(numbers)
    return numbers[round(size * (int(k) - 1) / int(n)):round(size * int(k) / int(n))]


def run_leg(agent: str, few_shot: bool, args: argparse.Namespace) -> dict:
    name = agent + ("+few-shot" if few_shot else "")
    part = f"-part{args.part.replace('/', 'of')}" if args.part else ""
    out = args.out / f"{args.protocol}-{args.subset.replace(':', '')}-s{args.seed}-k{args.iterations}-{name}{part}"
    tasks = ["--tasks", ",".join(map(str, args.tasks))] if args.part else ["--subset", args.subset]
    cmd = [sys.executable, "-m", "bot.cli.main", "eval", "--data", str(args.data), "--protocol", args.protocol,
           "--iterations", str(args.iterations), "--model", args.model, "--agent", agent, *tasks,
           "--seed", str(args.seed), "--workers", str(args.workers), "--out", str(out)] + (["--few-shot"] if few_shot else [])
    print(f"\n== {name}: {' '.join(cmd[3:])}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL)
    if proc.returncode != 0:
        return {"leg": name, "error": f"fixbot eval exited {proc.returncode}"}
    s = json.loads((out / "summary.json").read_text())
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {"leg": name, "pass_at_1": s["pass_at_1"], "passed": s["passed"], "n_tasks": s["n_tasks"],
            "single_shot": s["single_shot_pass_at_1"],
            "median_iterations": statistics.median(r["iterations"] for r in records) if records else None,
            "median_completion_tokens": s["median_completion_tokens"], "wall_s": s["wall_s"],
            "median_changed_lines": s["median_changed_lines"], "model_calls": s["model_calls"],
            "by_bug_type": {k: v["passed"] for k, v in s["by_bug_type"].items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default=",".join(AGENTS), help=f"comma-separated (default {','.join(AGENTS)})")
    parser.add_argument("--few-shot", choices=("off", "on", "both"), default="off",
                        help="the few-shot bug patterns in the system prompt: off, on, or a leg of each (default off)")
    parser.add_argument("--subset", default="stratified:0.35", help="the tasks (default stratified:0.35)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--protocol", choices=("tests", "examples"), default="tests")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--model", default="llamacpp:bundled")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--workers", type=int, default=2,
                        help="tasks at once, each with a model process of its own (default 2: on 2 cores, two "
                             "1-thread llama.cpp processes generate 1.2x the tokens of one 2-thread process)")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-agents")
    parser.add_argument("--part", metavar="K/N", help="only the K-th of N consecutive slices of the subset's tasks")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    agents = args.agents.split(",")
    unknown = sorted(set(agents) - set(AGENTS))
    if unknown:
        parser.error(f"unknown agent(s) {', '.join(unknown)}; choose from {', '.join(AGENTS)}")
    if not args.data.is_file():
        parser.error(f"--data {args.data}: no such file")
    args.tasks = part_tasks(args) if args.part else None
    report = {"date": time.strftime("%Y-%m-%d"), "model": args.model, "protocol": args.protocol,
              "subset": args.subset, "part": args.part, "tasks": args.tasks, "seed": args.seed, "iterations": args.iterations,
              "legs": [run_leg(agent, shot, args) for agent, shot in legs(agents, args.few_shot)]}
    if args.json:
        print(json.dumps(report))
        return 0
    part = f" part {args.part} (tasks {','.join(map(str, args.tasks))})" if args.part else ""
    print(f"{report['date']} · {args.model} · {args.protocol} protocol · {args.subset} seed {args.seed}{part} · "
          f"{args.iterations} iterations")
    print(f"{'agent':<24}{'pass@1':>8}{'passed':>8}{'1-shot':>8}{'iters':>7}{'tokens':>8}{'wall s':>9}{'lines':>7}")
    for r in report["legs"]:
        if "error" in r:
            print(f"{r['leg']:<24}{r['error']}")
            continue
        print(f"{r['leg']:<24}{r['pass_at_1']:>8.3f}{r['passed']:>5}/{r['n_tasks']:<2}{r['single_shot']:>8.3f}"
              f"{r['median_iterations']:>7}{r['median_completion_tokens']:>8}{r['wall_s']:>9.0f}"
              f"{r['median_changed_lines'] or '-':>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
