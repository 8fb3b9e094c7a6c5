"""Two commits of fixbot on the same HumanEvalFix tasks at the same time: a speed or quality claim as a ratio
measured in one session on one machine.

    .venv/bin/python bench/side_by_side.py --before REV [--after REV] [--subset stratified:0.35] [--seed 0]
        [--part K/N | --tasks LIST] [--model llamacpp:bundled] [--data FILE] [--sequential] [--workers N]
        [--after-args "ARGS"] [--out DIR] [--no-speed] [--json] [-- EVAL-ARGS ...]

Each commit is checked out as a clean git worktree (under --out, removed at the end) and `fixbot eval` runs from it
with this checkout's virtual environment, on the same tasks with the same EVAL-ARGS (for example `-- --search
--samples 3 --protocol examples`); --after-args adds options to the after leg alone, so that one commit with a flag
off and on is a comparison too (`--before HEAD --after-args "--vote"`). With two or more cores the legs run at
once, each pinned to its half of the cores with one worker (a llama.cpp process's threads follow its CPU set), so
that both meet the same machine at the same moment; --sequential runs one after the other on all cores with
--workers. Before the legs, the model's speed is measured in each leg's CPU set (both at once when side by side)
and printed beside the times: machines of one kind differ up to 4x, so times from different machines compare only
through it.

Legs write into results directories named by commit and settings under --out and resume there, so a comparison
longer than a sitting runs again with the same command, or in slices (--part K/N) whose counts add up.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from agents import DEFAULT_DATA, part_tasks
from common import aligned, speed_line

REPO = Path(__file__).resolve().parents[1]
POLL_S = 30.0  # how often the legs' progress is printed


@dataclass(frozen=True, kw_only=True)
class Leg:
    name: str  # "before" or "after"
    commit: str  # the short hash
    cpus: frozenset[int]
    workers: int
    tree: Path  # the worktree the leg runs from
    out: Path  # its eval results directory


def fail(message: str) -> SystemExit:
    return SystemExit(f"side_by_side.py: {message}")


def commit_of(rev: str) -> str:
    proc = subprocess.run(["git", "rev-parse", "--short=12", "--verify", f"{rev}^{{commit}}"], cwd=REPO,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise fail(f"{rev!r} is not a commit of {REPO}")
    return proc.stdout.strip()


def cpu_sets(sequential: bool) -> tuple[frozenset[int], frozenset[int]]:
    """The cores of each leg: halves of this process's CPU set side by side, all of it one after the other."""
    cores = sorted(os.sched_getaffinity(0))
    if sequential or len(cores) < 2:
        return frozenset(cores), frozenset(cores)
    half = len(cores) // 2
    return frozenset(cores[:half]), frozenset(cores[half:])


def settings_key(args: argparse.Namespace) -> str:
    """Names the results directories: the same settings resume the same legs, other settings get their own."""
    what = [args.model, args.data.name, args.subset, str(args.seed), ",".join(map(str, args.tasks or [])),
            " ".join(args.eval_args), "sequential" if args.sequential else "side-by-side", str(args.workers)]
    if args.after_args:  # keeps the keys of earlier comparisons without it
        what.append(" ".join(args.after_args))
    return hashlib.sha256("\n".join(what).encode()).hexdigest()[:10]


def add_worktree(commit: str, where: Path) -> Path:
    tree = where / commit
    if not (tree / ".git").exists():
        subprocess.run(["git", "worktree", "add", "--detach", "--force", str(tree), commit], cwd=REPO, check=True,
                       capture_output=True)
    return tree


def remove_worktree(tree: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True)


def pinned(cpus: frozenset[int]):
    return lambda: os.sched_setaffinity(0, cpus)


def batches(legs: list[Leg]) -> list[list[Leg]]:
    """The legs that run at once: both, on halves of the cores, or each alone on all of them."""
    return [legs] if legs[0].cpus != legs[1].cpus else [[leg] for leg in legs]


def measure_speeds(legs: list[Leg], model: str) -> dict[str, dict | None]:
    """Each leg's model speed in its own CPU set, measured at once when the legs run at once."""
    if not model.startswith("llamacpp:"):
        return {leg.name: None for leg in legs}
    cmd = [sys.executable, str(REPO / "bench" / "llm_latency.py"), "--model", model, "--runs", "1",
           "--max-tokens", "64", "--no-server", "--json"]
    speeds: dict[str, dict | None] = {}
    for group in batches(legs):
        procs = {leg.name: subprocess.Popen(cmd, cwd=REPO, preexec_fn=pinned(leg.cpus), stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, text=True) for leg in group}
        for leg in group:
            out, _ = procs[leg.name].communicate()
            try:
                m = json.loads(out.strip().splitlines()[-1])
                speeds[leg.name] = {"threads": len(leg.cpus), "prompt_tok_s": m["prompt_tok_s"],
                                    "gen_tok_s": m["gen_tok_s"]}
            except (ValueError, IndexError, KeyError):
                speeds[leg.name] = None
    return speeds


def eval_command(leg: Leg, args: argparse.Namespace) -> list[str]:
    tasks = ["--tasks", ",".join(map(str, args.tasks))] if args.tasks else ["--subset", args.subset]
    return [sys.executable, "-m", "bot.cli.main", "eval", "--data", str(args.data), "--model", args.model, *tasks,
            "--seed", str(args.seed), "--workers", str(leg.workers), "--out", str(leg.out), *leg_args(leg, args)]


def leg_args(leg: Leg, args: argparse.Namespace) -> list[str]:
    return [*args.eval_args, *(args.after_args if leg.name == "after" else [])]


def done_count(leg: Leg) -> tuple[int, int]:
    """Tasks finished and passed so far in the leg's results file."""
    path = leg.out / "results.jsonl"
    if not path.exists():
        return 0, 0
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return len(rows), sum(bool(r["passed"]) for r in rows)


def run_legs(legs: list[Leg], args: argparse.Namespace) -> dict[str, int]:
    """Runs the legs (at once, or one after the other), printing their progress; the exit code of each."""
    codes: dict[str, int] = {}
    for batch in batches(legs):
        procs = {}
        for leg in batch:
            leg.out.mkdir(parents=True, exist_ok=True)
            log = (leg.out / "eval.log").open("a")
            env = {**os.environ, "PYTHONPATH": str(leg.tree)}  # the worktree's packages before the installed ones
            print(f"== {leg.name} ({leg.commit}, cores {sorted(leg.cpus)}): {' '.join(eval_command(leg, args)[3:])}",
                  file=sys.stderr, flush=True)
            procs[leg.name] = subprocess.Popen(eval_command(leg, args), cwd=leg.tree, env=env, stdout=log,
                                               stderr=log, preexec_fn=pinned(leg.cpus))
        while any(p.poll() is None for p in procs.values()):
            time.sleep(POLL_S)
            line = " · ".join(f"{leg.name}: {'%d done, %d passed' % done_count(leg)}" for leg in batch)
            print(f"  {time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)
        codes.update({name: p.returncode for name, p in procs.items()})
    return codes


def leg_row(leg: Leg, code: int) -> dict:
    if code != 0 or not (leg.out / "summary.json").exists():
        return {"leg": leg.name, "commit": leg.commit, "error": f"fixbot eval exited {code} (see {leg.out}/eval.log)"}
    s = json.loads((leg.out / "summary.json").read_text())
    rows = [json.loads(line) for line in (leg.out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {"leg": leg.name, "commit": leg.commit, "cpus": sorted(leg.cpus), "passed": s["passed"],
            "n_tasks": s["n_tasks"], "pass_at_1": s["pass_at_1"], "wall_s": s["wall_s"],
            # fixes that passed what the agent saw and failed the hidden tests (the examples protocol's overfitting)
            "overfit_tasks": sorted(r["task_id"] for r in rows if r["visible_passed"] and not r["passed"]),
            "model_calls": s["model_calls"], "passed_tasks": sorted(r["task_id"] for r in rows if r["passed"]),
            "time": s.get("time"), "out": str(leg.out)}  # where the time went, from commits that measure it


def compare(before: dict, after: dict) -> dict:
    """The ratio of the legs' task time (before / after: above 1, the new code is faster) and the tasks only one
    of them passed."""
    if "error" in before or "error" in after:
        return {}
    b, a = set(before["passed_tasks"]), set(after["passed_tasks"])
    return {"speedup": round(before["wall_s"] / after["wall_s"], 3) if after["wall_s"] else None,
            "only_before": sorted(b - a), "only_after": sorted(a - b)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    # argparse takes a value that starts with "--" for an option: "--after-args --vote" is one option and its value
    argv = [f"{a}={argv[i + 1]}" if a == "--after-args" and i + 1 < len(argv) else a
            for i, a in enumerate(argv) if i == 0 or argv[i - 1] != "--after-args"]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, metavar="REV", help="the code before the change (a commit, tag, ...)")
    p.add_argument("--after", default="HEAD", metavar="REV", help="the code after it (default HEAD)")
    p.add_argument("--subset", default="stratified:0.35", help="the tasks (default stratified:0.35)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--part", metavar="K/N", help="only the K-th of N consecutive slices of the subset's tasks")
    p.add_argument("--tasks", metavar="LIST", help="these task numbers instead of the subset, e.g. 0,5,7")
    p.add_argument("--model", default="llamacpp:bundled")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--sequential", action="store_true",
                   help="one leg after the other on all cores, instead of both at once on half each")
    p.add_argument("--workers", type=int, default=1, help="eval workers per leg with --sequential (default 1)")
    p.add_argument("--after-args", default="", metavar="ARGS",
                   help='eval options for the after leg alone, e.g. "--vote" (quoted, one string)')
    p.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "side-by-side")
    p.add_argument("--no-speed", action="store_true", help="skip measuring the model's speed before the legs")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = p.parse_args(argv)
    args.eval_args = extra
    try:
        args.after_args = shlex.split(args.after_args)
    except ValueError as e:
        p.error(f"--after-args {args.after_args!r}: {e}")
    if not args.data.is_file():
        p.error(f"--data {args.data}: no such file")
    if args.part and args.tasks:
        p.error("--part and --tasks choose the tasks two ways: give one")
    if args.workers < 1:
        p.error("--workers must be at least 1")
    if args.tasks:
        try:
            args.tasks = [int(t) for t in args.tasks.split(",") if t.strip()]
        except ValueError:
            p.error(f"--tasks {args.tasks!r}: task numbers, e.g. 0,5,7")
    else:
        args.tasks = part_tasks(args) if args.part else None
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    commits = commit_of(args.before), commit_of(args.after)
    cpus = cpu_sets(args.sequential)
    workers = args.workers if args.sequential else 1
    key = settings_key(args)
    trees = args.out / "worktrees"
    legs = [Leg(name=name, commit=commit, cpus=cpu, workers=workers, tree=trees / commit,
                out=args.out / f"{name}-{commit}-{key}")
            for name, commit, cpu in zip(("before", "after"), commits, cpus)]
    try:
        for commit in set(commits):
            add_worktree(commit, trees)
        speeds = {leg.name: None for leg in legs} if args.no_speed else measure_speeds(legs, args.model)
        codes = run_legs(legs, args)
    finally:
        for commit in set(commits):
            remove_worktree(trees / commit)
    before, after = (leg_row(leg, codes[leg.name]) for leg in legs)
    report = {"date": time.strftime("%Y-%m-%d"), "model": args.model, "subset": args.subset, "seed": args.seed,
              "part": args.part, "tasks": args.tasks, "eval_args": args.eval_args, "after_args": args.after_args,
              "mode": "sequential" if args.sequential else "side by side", "speeds": speeds,
              "legs": [before, after], "compare": compare(before, after)}
    if args.json:
        print(json.dumps(report))
    else:
        print("\n".join(render(report)))
    return 0 if "error" not in before and "error" not in after else 1


def render(report: dict) -> list[str]:
    tasks = f"tasks {','.join(map(str, report['tasks']))}" if report["tasks"] else report["subset"]
    lines = [f"{report['date']} · {report['model']} · {tasks} seed {report['seed']} · {report['mode']} · "
             f"eval {' '.join(report['eval_args']) or '(defaults)'}"
             + (f" · after also {' '.join(report['after_args'])}" if report["after_args"] else "")]
    rows = [["leg", "commit", "passed", "pass@1", "overfit", "task s", "model s", "prompts s", "search s",
             "model calls"]]
    for leg in report["legs"]:
        if "error" in leg:
            lines.append(f"{leg['leg']} ({leg['commit']}): {leg['error']}")
            continue
        t = leg["time"] or {}
        rows.append([leg["leg"], leg["commit"], f"{leg['passed']}/{leg['n_tasks']}", f"{leg['pass_at_1']:.3f}",
                     str(len(leg["overfit_tasks"])),
                     f"{leg['wall_s']:.0f}", *(f"{t[k]:.0f}" if k in t else "-"
                                               for k in ("model_s", "prompt_eval_s", "search_s")),
                     str(leg["model_calls"])])
    lines += aligned(rows) if len(rows) > 1 else []
    for leg in report["legs"]:
        speed = report["speeds"].get(leg["leg"])
        if speed:
            lines.append(f"{leg['leg']}: {speed_line(speed, 1)}")
    c = report["compare"]
    if c:
        lines.append(f"before / after task time: {c['speedup']}x" if c["speedup"] else "no task time after")
        lines.append(f"passed only before: {', '.join(c['only_before']) or '-'} · "
                     f"only after: {', '.join(c['only_after']) or '-'}")
    for leg in report["legs"]:
        if leg.get("overfit_tasks"):
            lines.append(f"{leg['leg']}: overfit (visible tests passed, hidden failed): "
                         f"{', '.join(leg['overfit_tasks'])}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
