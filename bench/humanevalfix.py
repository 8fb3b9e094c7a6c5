"""HumanEvalFix as rows: `fixbot eval` over the 164 tasks (or the K-th of N slices, --part K/N) at the current
commit, then one row per task in bench/results/humanevalfix-PROTOCOL-COMMIT.jsonl (bench/rows.py) with who made
the fix and whether it passes the tests that judge it.

The two protocols show different things (docs/eval.md):
  tests     the task's tests and its docstring are shown to the agent, and the same tests judge the fix (closer to
            OctoPack's HumanEvalFixDocs than to HumanEvalFix, which shows no docstring);
  examples  only the docstring and its examples are shown; the task's hidden tests judge. A fix that passes the
            examples and not the hidden tests is `overfit`.

    .venv/bin/python bench/humanevalfix.py --protocol tests [--part K/N] [--workers 2] [--out DIR]
        [-- MORE FIXBOT EVAL ARGUMENTS]

The eval's own results (resumable) go to OUT/PROTOCOL-COMMIT; the rows are written from them when the run ends, so
a stopped run loses nothing: the same command resumes it. Defaults: the headline configuration, the mutation
search and 3 answers per model call (`--search --samples 3`; the examples protocol adds its vote by default)."""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

from common import part_slice, speed_line
from rows import REPO, append_row, code_commit, read_rows, rows_path, stamp

DEFAULT_DATA = REPO.parent / "shared" / "data" / "humanevalpack-python.jsonl"
HEADLINE = ("--search", "--samples", "3")
TASKS = 164


def parse_args(argv: list[str] | None) -> Namespace:
    parser = argparse.ArgumentParser(prog="humanevalfix.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", choices=("tests", "examples"), required=True)
    parser.add_argument("--part", metavar="K/N", help="only the K-th of N consecutive slices of the 164 tasks")
    parser.add_argument("--workers", type=int, default=2, help="tasks at once (default 2, one per core)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the HumanEvalFix JSONL")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-humanevalfix",
                        help="the eval's own results (default ~/.cache/fixbot/bench-humanevalfix)")
    parser.add_argument("--no-speed", action="store_true", help="skip measuring the model's speed first")
    parser.add_argument("more", nargs="*", metavar="ARG", help="more `fixbot eval` arguments, after --")
    args = parser.parse_args(argv)
    try:
        args.tasks = part_slice(list(range(TASKS)), args.part) if args.part else list(range(TASKS))
    except ValueError as exc:
        parser.error(str(exc))
    args.eval_args = [*HEADLINE, *args.more]
    return args


def parser_error(message: str) -> None:
    print(f"humanevalfix.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def row_of(result: dict, head: dict, protocol: str, eval_args: list[str]) -> dict:
    overfit = result["visible_passed"] and not result["passed"]
    return {**head, "task_id": result["task_id"], "bug_type": result["bug_type"], "protocol": protocol,
            "eval_args": eval_args, "verdict": "passed" if result["passed"] else "overfit" if overfit else "failed",
            "passed": result["passed"], "visible_passed": result["visible_passed"], "made_by": result["fixed_by"],
            "seconds": result["wall_s"], "iterations": result["iterations"], "error": result["error"]}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    commit = code_commit()
    bench = f"humanevalfix-{args.protocol}"
    out = (args.out / f"{args.protocol}-{commit}").expanduser()
    rows = rows_path(bench, commit, out)
    done = read_rows(rows, "task_id")
    others = {tuple(r["eval_args"]) for r in done.values()} - {tuple(args.eval_args)}
    if others:
        parser_error(f"{rows} holds rows of `fixbot eval {' '.join(sorted(others)[0])}`, not "
                     f"`{' '.join(args.eval_args)}`: one rows file, one configuration")
    if "--model" in args.more and not args.no_speed:
        parser_error("--model in the eval's arguments: give --no-speed (the speed line measures the bundled model)")
    speed = None
    if not args.no_speed:
        from agents import model_speed
        speed = model_speed(Namespace(no_speed=False, model="llamacpp:bundled", workers=args.workers))
    line = speed_line(speed, args.workers) if speed else None
    if line:
        print(line, flush=True)
    cmd = [sys.executable, "-m", "bot.cli.main", "eval", "--data", str(args.data), "--protocol", args.protocol,
           "--workers", str(args.workers), "--tasks", ",".join(map(str, args.tasks)), "--out", str(out),
           *args.eval_args]
    print(f"$ {shlex.join(cmd)}", flush=True)
    code = subprocess.run(cmd, cwd=REPO).returncode
    results = out / "results.jsonl"
    wanted = {f"Python/{i}" for i in args.tasks}
    head = stamp(bench, commit, line)
    written = 0
    for text in (results.read_text().splitlines() if results.exists() else []):
        result = json.loads(text)
        if result["task_id"] in wanted and result["task_id"] not in done:
            append_row(rows, row_of(result, head, args.protocol, args.eval_args))
            done[result["task_id"]] = result
            written += 1
    print(f"{written} row(s) added to {rows} ({len(done)} in all)", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
