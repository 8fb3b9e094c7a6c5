"""The three agent designs side by side: the same tasks, sandbox, model, budget and protocol.

Each leg is one `fixbot eval --agent A [--few-shot]` run in its own results directory under --out (an
interrupted bench resumes where it stopped; a finished leg is only read back). The mutation search is off,
so that the table measures the designs and not the search. Prints, per leg: pass@1, single-shot pass@1
(the same run's first iteration), median iterations per task, median completion tokens per call, wall time,
median changed lines, and the tasks the wall-time budget stopped before their iterations ran out ("cut").

Machines of one kind differ (the bundled model evaluated prompts at 17 tok/s on 2 threads of one VM and 63-76
on another), so the header gives the model's speed here, measured before the legs with the threads each worker
gets; wall times of runs on different machines compare only through it. The per-task wall-time budget defaults
to 1800 s rather than eval's 600, so that the iteration budget, not the machine, ends a task: the designs are
compared at equal iterations.

    .venv/bin/python bench/agents.py [--agents reflect,thought-patch,tool-call] [--few-shot off|on|both]
        [--samples 1] [--subset stratified:0.35] [--seed 0] [--protocol tests] [--iterations 10]
        [--model llamacpp:bundled]
        [--data FILE] [--workers 2] [--task-seconds 1800] [--out DIR] [--part K/N] [--no-speed] [--json]

--part K/N runs the K-th of N consecutive slices of the subset's tasks only (each slice its own results
directory): a leg longer than one sitting is run as slices, and their counts add up to the leg's.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from common import part_slice, run_child, speed_line, until_stopped

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "humanevalpack-python.jsonl"
AGENTS = ("reflect", "thought-patch", "tool-call")
TASK_SECONDS = 1800.0


def legs(agents: list[str], few_shot: str) -> list[tuple[str, bool]]:
    shots = {"off": [False], "on": [True], "both": [False, True]}[few_shot]
    return [(agent, shot) for agent in agents for shot in shots]


def part_tasks(args: argparse.Namespace) -> list[int]:
    """The task numbers of slice K of N (--part) of the subset, in the order eval runs them."""
    from eval.tasks import load_tasks, select

    numbers = [t.number for t in select(load_tasks(args.data), subset=args.subset, seed=args.seed)]
    try:
        return part_slice(numbers, args.part)
    except ValueError as exc:
        raise SystemExit(f"agents.py: {exc}") from None


def run_leg(agent: str, few_shot: bool, args: argparse.Namespace) -> dict:
    samples = args.samples
    name = agent + ("+few-shot" if few_shot else "") + (f"+samples{samples}" if samples > 1 else "")
    part = f"-part{args.part.replace('/', 'of')}" if args.part else ""
    budget = "" if args.task_seconds == 600 else f"-t{args.task_seconds:g}"  # 600: the directories of earlier runs
    subset = args.subset.replace(":", "")
    out = args.out / f"{args.protocol}-{subset}-s{args.seed}-k{args.iterations}{budget}-{name}{part}"
    tasks = ["--tasks", ",".join(map(str, args.tasks))] if args.part else ["--subset", args.subset]
    cmd = [sys.executable, "-m", "bot.cli.main", "eval", "--data", str(args.data), "--protocol", args.protocol,
           "--iterations", str(args.iterations), "--model", args.model, "--agent", agent, *tasks,
           "--seed", str(args.seed), "--workers", str(args.workers), "--task-seconds", str(args.task_seconds),
           "--samples", str(samples), "--out", str(out)] + (["--few-shot"] if few_shot else [])
    print(f"\n== {name}: {' '.join(cmd[3:])}", file=sys.stderr, flush=True)
    code = run_child(cmd, cwd=REPO)
    if code != 0:
        return {"leg": name, "error": f"fixbot eval exited {code}"}
    s = json.loads((out / "summary.json").read_text())
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {"leg": name, "pass_at_1": s["pass_at_1"], "passed": s["passed"], "n_tasks": s["n_tasks"],
            "single_shot": s["single_shot_pass_at_1"],
            "median_iterations": statistics.median(r["iterations"] for r in records) if records else None,
            "median_completion_tokens": s["median_completion_tokens"], "wall_s": s["wall_s"],
            "median_changed_lines": s["median_changed_lines"], "model_calls": s["model_calls"],
            "stopped_by_time": s.get("stop_reasons", {}).get("time", 0),
            "by_bug_type": {k: v["passed"] for k, v in s["by_bug_type"].items()}}


def model_speed(args: argparse.Namespace) -> dict | None:
    """The in-process model's prompt and generated tokens/s here, with the threads each worker's process gets
    (a cold prompt; llm_latency.py's fixed repair prompt and method), or None for a model that is not llamacpp:."""
    from llm_latency import measure

    from bot.llm import open_llm, parse_model_spec
    from bot.llm.llamacpp_backend import available_cores

    if args.no_speed or parse_model_spec(args.model).kind != "llamacpp":
        return None
    threads = max(1, available_cores() // args.workers)
    print(f"== model speed here ({threads} thread(s), as each of {args.workers} worker(s) has)", file=sys.stderr,
          flush=True)
    llm = open_llm(args.model, n_threads=threads)
    try:
        m = measure(llm, runs=1, max_tokens=64)
    finally:
        llm.close()
    return {"threads": threads, "prompt_tok_s": m["prompt_tok_s"], "gen_tok_s": m["gen_tok_s"]}


def parse_args() -> argparse.Namespace:
    """The command line, checked: a mistake is one line from argparse, not a traceback."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default=",".join(AGENTS), help=f"comma-separated (default {','.join(AGENTS)})")
    parser.add_argument("--few-shot", choices=("off", "on", "both"), default="off",
                        help="the few-shot bug patterns in the system prompt: off, on, or a leg of each (default off)")
    parser.add_argument("--samples", type=int, default=1, metavar="N",
                        help="answers per model call (reflect: N answers, thought-patch: N plans, tool-call: N calls), "
                             "each leg named +samplesN (default 1)")
    parser.add_argument("--subset", default="stratified:0.35", help="the tasks (default stratified:0.35)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--protocol", choices=("tests", "examples"), default="tests")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--model", default="llamacpp:bundled")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--workers", type=int, default=2,
                        help="tasks at once, each with a model process of its own (default 2: on 2 cores, two "
                             "1-thread llama.cpp processes generate 1.2x the tokens of one 2-thread process)")
    parser.add_argument("--task-seconds", type=float, default=TASK_SECONDS, metavar="S",
                        help=f"wall-time budget per task (default {TASK_SECONDS:.0f}, so that the iterations end a "
                             "task, not the machine's speed; eval's own default is 600)")
    parser.add_argument("--no-speed", action="store_true", help="skip measuring the model's speed before the legs")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-agents")
    parser.add_argument("--part", metavar="K/N", help="only the K-th of N consecutive slices of the subset's tasks")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    args.agent_list = agents = args.agents.split(",")
    unknown = sorted(set(agents) - set(AGENTS))
    if unknown:
        parser.error(f"unknown agent(s) {', '.join(unknown)}; choose from {', '.join(AGENTS)}")
    if not args.data.is_file():
        parser.error(f"--data {args.data}: no such file")
    from bot.agent.options import MAX_SAMPLES

    if not 1 <= args.samples <= MAX_SAMPLES:
        parser.error(f"--samples must be between 1 and {MAX_SAMPLES}")
    if args.task_seconds <= 0:
        parser.error("--task-seconds must be more than 0")
    return args


def main() -> int:
    args = parse_args()
    agents = args.agent_list
    args.tasks = part_tasks(args) if args.part else None
    speed = model_speed(args)
    report = {"date": time.strftime("%Y-%m-%d"), "model": args.model, "model_speed": speed,
              "task_seconds": args.task_seconds, "protocol": args.protocol,
              "subset": args.subset, "part": args.part, "tasks": args.tasks, "seed": args.seed,
              "iterations": args.iterations,
              "legs": [run_leg(agent, shot, args) for agent, shot in legs(agents, args.few_shot)]}
    if args.json:
        print(json.dumps(report))
        return 0
    part = f" part {args.part} (tasks {','.join(map(str, args.tasks))})" if args.part else ""
    print(f"{report['date']} · {args.model} · {args.protocol} protocol · {args.subset} seed {args.seed}{part} · "
          f"{args.iterations} iterations · {args.task_seconds:.0f} s per task at most")
    if speed:
        print(speed_line(speed, args.workers))
    print(f"{'agent':<24}{'pass@1':>8}{'passed':>8}{'1-shot':>8}{'iters':>7}{'tokens':>8}{'wall s':>9}{'lines':>7}"
          f"{'cut':>5}")
    for r in report["legs"]:
        if "error" in r:
            print(f"{r['leg']:<24}{r['error']}")
            continue
        print(f"{r['leg']:<24}{r['pass_at_1']:>8.3f}{r['passed']:>5}/{r['n_tasks']:<2}{r['single_shot']:>8.3f}"
              f"{r['median_iterations']:>7}{r['median_completion_tokens']:>8}{r['wall_s']:>9.0f}"
              f"{r['median_changed_lines'] or '-':>7}{r['stopped_by_time']:>5}")
    return 0


if __name__ == "__main__":
    sys.exit(until_stopped(main, "agents.py"))
