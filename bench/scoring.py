"""The coder score's cost: how long the bundled model takes to score pools of candidate fixes.

    .venv/bin/python bench/scoring.py [--data FILE] [--tasks LIST] [--mutants 8] [--threads 1] [--json]

A task's pool is its buggy function and the first --mutants one-edit mutants of it, ranked as the mutation search
ranks them (bot/agent/search/mutate.py): candidates that differ by an edit, as the vote's pools mostly do. Each pool is
scored as the vote scores it (bot/agent/choose/likelihood.py, coder_scores) by one model process with --threads threads
(an eval worker's one by default); per task the candidates, their tokens and the seconds are printed as it ends,
then the total seconds and the model's speed line. The scores are printed too, so two commits' runs can be
compared number by number. Two commits: run it in a worktree of each, at once, one core each (`taskset -c N`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bot.agent.choose.likelihood import coder_scores, coder_text  # noqa: E402
from bot.agent.search.mutate import ranked_mutants  # noqa: E402
from bot.agent.source.code import split_docstring  # noqa: E402
from bot.errors import UserError  # noqa: E402
from bot.llm import open_llm  # noqa: E402
from bot.llm.llamacpp_backend import available_cores  # noqa: E402
from eval.replay import target_of  # noqa: E402
from eval.tasks import load_tasks, parse_task_list, select  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "humanevalpack-python.jsonl"
DEFAULT_TASKS = "4,26,39,64,99,124"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, metavar="FILE",
                        help="HumanEvalFix as JSONL (default ../shared/data/humanevalpack-python.jsonl)")
    parser.add_argument("--tasks", default=DEFAULT_TASKS, metavar="LIST",
                        help=f"task numbers (default {DEFAULT_TASKS})")
    parser.add_argument("--mutants", type=int, default=8, metavar="N", help="mutants per pool (default 8)")
    parser.add_argument("--threads", type=int, default=1, metavar="N", help="the model's threads (default 1)")
    parser.add_argument("--json", action="store_true", help="the per-task records and the total as JSON on stdout")
    args = parser.parse_args()
    if args.mutants < 1 or args.threads < 1:
        parser.error("--mutants and --threads must be at least 1")
    if not args.data.is_file():
        parser.error(f"no such file: {args.data}")
    return args


def main() -> int:
    args = parse_args()
    from agents import model_speed
    from common import speed_line

    try:
        tasks = select(load_tasks(args.data), parse_task_list(args.tasks))
    except UserError as exc:
        print(f"scoring.py: {exc}", file=sys.stderr)
        return 2
    llm = open_llm("llamacpp:bundled", n_threads=args.threads)
    records = []
    try:
        for task in tasks:
            target = target_of(task)
            pool = [target.source] + [m.source for m in ranked_mutants(target.source, target.name,
                                                                        cap=args.mutants)]
            doc = split_docstring(target.source)[1]
            tokens = sum(llm.count_tokens(coder_text(code, doc)[1]) for code in pool)
            started = time.monotonic()
            scores = coder_scores(llm, target.source, pool)
            took = time.monotonic() - started
            records.append({"task": task.task_id, "candidates": len(pool), "tokens": tokens, "seconds": round(took, 2),
                            "scores": [round(s, 3) for s in scores or ()]})
            print(f"{task.task_id}: {len(pool)} candidates, {tokens} tokens, {took:.1f} s", file=sys.stderr, flush=True)
    finally:
        llm.close()
    workers = max(1, available_cores() // args.threads)  # model_speed gives each of them cores // workers threads
    speed = model_speed(argparse.Namespace(no_speed=False, model="llamacpp:bundled", workers=workers))
    total = sum(r["seconds"] for r in records)
    print(f"total: {total:.1f} s for {sum(r['candidates'] for r in records)} candidates "
          f"({sum(r['tokens'] for r in records)} tokens)", file=sys.stderr)
    if speed:
        print(speed_line(speed, 1), file=sys.stderr)
    if args.json:
        print(json.dumps({"tasks": records, "total_s": round(total, 2), "model_speed": speed}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
