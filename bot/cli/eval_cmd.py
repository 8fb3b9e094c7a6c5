"""`fixbot eval`: replay HumanEvalFix with the agent and measure pass@1."""
from __future__ import annotations

import argparse
import sys
from contextlib import closing
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from bot.agent.options import REFERENCES, SCHEDULES, RepairOptions, SearchOptions
from bot.agent.types import AGENTS
from bot.cli.options import (
    add_edits_arg,
    add_model_args,
    add_samples_arg,
    add_sandbox_args,
    check_samples,
    open_sandbox_from,
    opened_model,
)
from bot.errors import UserError
from bot.llm.lazy import LazyModel
from bot.llm.spec import require_tools

if TYPE_CHECKING:
    from eval.tasks import Task

EVAL_REPAIR = RepairOptions()  # what eval measures unless asked: the agent's plain form
VOTE_CONFIRM = 16  # the search's survivors confirmed (and so candidates) under the vote; the likeliest chooses


def _tasks(args: argparse.Namespace) -> list[Task]:
    """The tasks to replay: --data's, else the hub's (said first: the hub can take a while to answer)."""
    from eval.tasks import HUB_CONFIG, HUB_DATASET, load_tasks, parse_task_list, select

    if args.data is None:
        print(f"loading {HUB_DATASET} ({HUB_CONFIG}) from the Hugging Face hub; offline, pass --data FILE",
              file=sys.stderr, flush=True)
    return select(load_tasks(args.data), parse_task_list(args.tasks) if args.tasks else None, args.subset,
                  args.seed, args.limit)


def _selfcheck(args: argparse.Namespace, tasks: list, selfcheck) -> int:
    """Every task's canonical solution must pass, and its buggy one fail, the full and the example tests."""
    with open_sandbox_from(args) as sandbox:
        print(f"running {len(tasks)} canonical solutions (full and example tests) and {len(tasks)} buggy ones...",
              file=sys.stderr)
        problems = selfcheck(tasks, sandbox)
    for line in problems:
        print(line)
    print(f"selfcheck: {len(tasks)} tasks, {len(problems)} mismatch(es)")
    return 1 if problems else 0


def cmd_eval(args: argparse.Namespace) -> int:
    from eval.replay import ReplayConfig, out_dir_default, replay, selfcheck
    from eval.report import table, write_outputs
    from eval.results import ResultsFile, TaskResult

    if args.iterations < 0 or (args.iterations == 0 and not args.search):
        raise UserError("--iterations must be at least 1 (0 only with --search: the search alone, no model)")
    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    check_samples(args)
    if args.agent == "tool-call" and args.iterations:
        require_tools(args.model)
    tasks = _tasks(args)
    if args.selfcheck:
        return _selfcheck(args, tasks, selfcheck)
    if args.model.startswith("transformers:") and args.workers > 1:
        print("fixbot: a transformers: model answers one call at a time: --workers set to 1", file=sys.stderr)
        args.workers = 1
    out = args.out or out_dir_default(args.model, args.protocol, args.iterations)
    if args.search_mutants < 1:
        raise UserError("--search-mutants must be at least 1")
    if args.task_seconds <= 0:
        raise UserError("--task-seconds must be more than 0")
    if args.vote and args.protocol != "examples":
        raise UserError("--vote chooses among fixes that pass weak tests: use it with --protocol examples")
    vote = args.protocol == "examples" if args.vote is None else args.vote
    references = _references(args.references, vote)
    # two docstring examples rarely pin a bug down: there, several passing mutants go to the model as hints, and
    # under the vote every mutant that passes them is a candidate, not only the few with the fewest changed lines
    search = SearchOptions(mutants=args.search_mutants, ambiguous="ask" if args.protocol == "examples" else "accept",
                           confirm=VOTE_CONFIRM if vote else SearchOptions.confirm) if args.search else None
    run = {"model": args.model if args.iterations else "none", "protocol": args.protocol, "iterations": args.iterations,
           "schedule": args.schedule, "data": str(args.data.resolve()) if args.data else "hub",
           "search": asdict(search) if search else None, "agent": args.agent, "few_shot": args.few_shot,
           "samples": args.samples, "task_seconds": args.task_seconds, "vote": vote,
           "references": references, "edits": args.edits}
    store = ResultsFile(out, run)
    options = RepairOptions(agent=args.agent, samples=args.samples, search=search, schedule=args.schedule,
                            few_shot=args.few_shot, edits=args.edits, references=references,
                            budgets=replace(EVAL_REPAIR.budgets, iterations=args.iterations, wall_s=args.task_seconds))
    config = ReplayConfig(protocol=args.protocol, repair=options, seed=args.seed, vote=vote)
    already = len(set(store.load()) & {t.task_id for t in tasks})
    # a search-only run (--iterations 0) never calls the model: it is not loaded
    model = opened_model(args, workers=args.workers) if args.iterations else closing(LazyModel(args.model))
    with model as llm, open_sandbox_from(args) as sandbox, tqdm(total=len(tasks), initial=already, unit="task",
                                                   desc=f"eval {args.protocol}", file=sys.stderr) as bar:
        passed = [0]

        def on_done(result: TaskResult) -> None:
            passed[0] += result.passed
            bar.set_postfix_str(f"{result.task_id} {'pass' if result.passed else 'fail'} · {passed[0]} passed")
            bar.update(1)

        results = replay(tasks, llm, sandbox, config, store, workers=args.workers, on_done=on_done)
    summary = write_outputs(results, run, out)
    print(table(summary))
    print(f"results: {out}/results.jsonl · summary: {out}/summary.json · curve: {out}/curve.png")
    return 0


def _references(asked: int | None, vote: bool) -> int:
    """How many functions to write from the docstring for the vote (bot/agent/choose/references.py)."""
    if asked is not None and (asked < 0 or asked == 1):
        raise UserError("--references takes 0 (none) or at least 2: a consensus needs two")
    if asked and not vote:
        raise UserError("--references weighs in the vote: use it with --protocol examples (and without --no-vote)")
    return (REFERENCES if vote else 0) if asked is None else asked


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="replay HumanEvalFix (164 buggy functions) and measure pass@1",
                       description="Replays HumanEvalFix with the same agent and sandbox as `fixbot fix`. Results are "
                                   "written as they come; re-running the same command resumes where it stopped.")
    add_model_args(p)
    add_sandbox_args(p)
    p.add_argument("--data", type=Path, metavar="FILE",
                   help="a local HumanEvalFix JSONL (default: bigcode/humanevalpack, python, test, from the hub)")
    p.add_argument("--protocol", choices=("tests", "examples"), default="tests",
                   help="tests: the model sees the full tests; examples: only the docstring examples, and the "
                        "hidden full tests decide (default tests)")
    p.add_argument("--iterations", type=int, default=EVAL_REPAIR.iterations, metavar="K",
                   help=f"model calls per task (default {EVAL_REPAIR.iterations}; 0 with --search: the search alone)")
    p.add_argument("--agent", choices=AGENTS, default=EVAL_REPAIR.agent,
                   help="the repair design: reflect (draft, test, reflect on the failure; default), thought-patch (a "
                        "root-cause plan, then JSON line edits applied by fixbot) or tool-call (the model calls "
                        "run_tests(code) itself; needs an openai: or llamacpp: model)")
    add_samples_arg(p, EVAL_REPAIR.samples)
    add_edits_arg(p, EVAL_REPAIR.edits)
    p.add_argument("--few-shot", action="store_true",
                   help="put common bug patterns with their fixes in the system prompt (off by default)")
    p.add_argument("--schedule", choices=SCHEDULES, default=EVAL_REPAIR.schedule,
                   help="temperature schedule over the iterations (default rising: greedy first)")
    p.add_argument("--search", action="store_true",
                   help="mutation search: one-edit mutants of the buggy function before the first model call, and of "
                        "each failing candidate after its test, screened in batches (only the visible tests drive it)")
    p.add_argument("--vote", action=argparse.BooleanOptionalAction, default=None,
                   help="examples protocol: once a fix passes the examples, draw 3 more answers and choose among all "
                        "that pass by what they return on the examples' inputs varied and by asserts the model writes "
                        "from the docstring (on by default under examples, where weak tests let wrong fixes pass; "
                        "--no-vote keeps the first fix found; docs/eval.md)")
    p.add_argument("--references", type=int, default=None, metavar="N",
                   help="with the vote: N functions written from the docstring alone (never shown the bug); where "
                        "those that pass the examples agree on an input, candidates that return the same are "
                        "preferred, and a reference is chosen when no fix agrees as well (default "
                        f"{REFERENCES} under the vote; 0: none; docs/eval.md)")
    p.add_argument("--search-mutants", type=int, default=SearchOptions.mutants, metavar="N",
                   help=f"mutants tried per search (default {SearchOptions.mutants})")
    p.add_argument("--task-seconds", type=float, default=EVAL_REPAIR.budgets.wall_s, metavar="S",
                   help=f"wall-time budget per task (default {EVAL_REPAIR.budgets.wall_s:.0f}); a task stops there "
                        "whatever its iterations, so on a slow machine it can decide pass@1: summary.json counts "
                        "the tasks it stopped (stop_reasons)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N selected tasks")
    p.add_argument("--tasks", metavar="LIST", help="task numbers, e.g. 0,5,7")
    p.add_argument("--subset", metavar="stratified:F",
                   help="the same fraction F of every bug type, e.g. stratified:0.35")
    p.add_argument("--seed", type=int, default=0, help="for --subset and the model's sampling (default 0)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="tasks at once (default 1); a llamacpp: model then runs as N processes that share the cores")
    p.add_argument("--out", type=Path, metavar="DIR", help="results directory (default runs/eval/PROTOCOL-MODEL-kK)")
    p.add_argument("--selfcheck", action="store_true",
                   help="run every canonical solution (must pass the full and the example tests) and buggy one "
                        "(must fail the full tests): a harness check, no model")
    p.set_defaults(handler=cmd_eval)
