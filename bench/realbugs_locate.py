"""Fault localization on the real bugs: does fixbot's ranking (bot/fix/locate/rank.py) put the function the
developers fixed first? No model and no repair, so a ranking change is measured on all 51 bugs in minutes
instead of hours of `fixbot fix`.

For each bug: the test environment as `fixbot fix` builds it (cached), the bug's test files at `bug-N` in the
sandbox with per-test coverage, then `locate` on the failures as the pipeline calls it. A bug's rank is the
position of the first ranked target whose code the developers' fix (`bug-N` → `fix-N`) changes (a comment
they edited does not count): a function by its qualname, a class attribute by its class. `fixbot fix` sweeps
and repairs the top MAX_TARGETS (4) by default.

Records go to OUT/locate.jsonl (one per bug, resumable: a re-run skips recorded bugs unless --force).
--against OTHER prints the bugs whose rank differs from OTHER's records, and both totals: the same bench at
another commit, e.g. with `PYTHONPATH=WORKTREE` so that the worktree's `bot` is the code measured (each record
names the commit of the code it measured).

    .venv/bin/python bench/realbugs_locate.py [--bugs IDS | --project NAME] [--part K/N] [--out DIR] [--force]
        [--against OTHER_OUT]
"""
from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
import tokenize
from collections.abc import Mapping
from pathlib import Path

from common import aligned
from realbugs_changes import spans_between
from realbugs_corpus import DEFAULT_DATA, Bug, Bundles, load_manifest, select
from realbugs_score import SUITE_TIMEOUT_S, TEST_TIMEOUT_S, tree_files
from rows import read_rows

import bot
from bot.checkout.repository import Checkout
from bot.environment.prepare import EnvRequest, prepare_environment
from bot.errors import UserError
from bot.fix.locate.rank import locate
from bot.fix.loop.work import Work, test_roots
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.runs import CRASH
from bot.fix.reproduce.testrun import run_tests
from bot.fix.run import SUITE_LIMITS
from bot.fix.types import CodeTarget
from sandbox import open_sandbox
from sandbox.containers import connect

PROG = "realbugs_locate.py"
RECORDS = "locate.jsonl"
RANKED = 12  # targets recorded per bug
MAX_TARGETS = 4  # `fixbot fix --max-targets`' default


def is_developers(target: CodeTarget, developer: set[str]) -> bool:
    """Whether the developers' fix changed this target: realbugs_score names a class body's change by its class,
    locate a class attribute as `Class.attr`."""
    owner = target.qualname.rpartition(".")[0] if target.kind == "assignment" else ""
    return f"{target.path}::{target.qualname}" in developer or bool(owner and f"{target.path}::{owner}" in developer)


def without_comments(text: str) -> str:
    """The code of a module without its comments and blank lines (a file that does not tokenize, as it is)."""
    lines = text.splitlines()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                row, col = token.start
                lines[row - 1] = lines[row - 1][:col]
    except (tokenize.TokenError, SyntaxError):
        return text
    return "".join(line.rstrip() + "\n" for line in lines if line.strip())


def code_changes(base: Mapping[str, bytes], changed: Mapping[str, bytes]) -> set[str]:
    """realbugs_changes.spans_between, blind to comments and blank lines."""
    paths = [p for p in set(base) | set(changed) if p.endswith(".py") and base.get(p) != changed.get(p)]

    def code(files: Mapping[str, bytes]) -> dict[str, bytes]:
        return {p: without_comments(files[p].decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
                for p in paths if p in files}
    return spans_between(code(base), code(changed))


def locate_bug(bug: Bug, bundles: Bundles, where: Path, *, client) -> dict:
    """One bug's record: its ranked targets, the developers' spans and the rank of the first of those."""
    started = time.monotonic()
    record: dict = {"id": bug.id, "project": bug.project, "failing": 0, "rank": None, "targets": [],
                    "developer": [], "error": ""}
    dirs = {"bug": where / "bug", "fix": where / "fix"}
    try:
        root = bundles.checkout(bug.project, bug.bug_tag, dirs["bug"])
        checkout = Checkout(str(root), tree_files(root))
        fixed = tree_files(bundles.checkout(bug.project, bug.fix_tag, dirs["fix"]))
        developer = code_changes(checkout.files, fixed)
        record["developer"] = sorted(developer)
        env = prepare_environment(checkout, EnvRequest(), client=client, log=lambda line: None)
        command = TestCommand.parse(bug.test_cmd)
        with open_sandbox("docker", image=env.image, pool_size=1, limits=SUITE_LIMITS) as sandbox:
            run = run_tests(sandbox, checkout.files, command, pythonpath=env.pythonpath, coverage=True,
                            timeout=SUITE_TIMEOUT_S, test_timeout=TEST_TIMEOUT_S, strict=False)
        work = Work(checkout, dict(checkout.files))
        work.remaining = run.failed - {CRASH}
        failures = [f for f in run.failures if f.test_id in work.remaining]
        targets = locate(checkout, run, failures, limit=RANKED, test_roots=test_roots(work, command))
        record.update(failing=len(work.remaining), targets=[f"{t.path}::{t.qualname}" for t in targets],
                      rank=next((i for i, t in enumerate(targets, 1) if is_developers(t, developer)), None))
    except UserError as exc:  # an environment that does not build: recorded, the next bug goes on
        record["error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    finally:
        for d in dirs.values():
            bundles.remove(bug.project, d)
    record["seconds"] = round(time.monotonic() - started, 1)
    return record


def totals(records: list[dict]) -> list[str]:
    """The console table: per project and in all, bugs, with failing tests, rank 1, top MAX_TARGETS, top RANKED."""
    def row(name: str, rs: list[dict]) -> list[str]:
        ranks = [r["rank"] for r in rs if r["rank"] is not None]
        return [name, str(len(rs)), str(sum(1 for r in rs if r["failing"])), str(ranks.count(1)),
                str(sum(1 for k in ranks if k <= MAX_TARGETS)), str(len(ranks))]
    projects = sorted({r["project"] for r in records})
    rows = [["project", "bugs", "failing", "rank 1", f"top {MAX_TARGETS}", f"top {RANKED}"]]
    rows += [row(p, [r for r in records if r["project"] == p]) for p in projects] + [row("all", records)]
    return aligned(rows)


def differences(mine: dict[str, dict], other: dict[str, dict]) -> list[str]:
    both = [i for i in mine if i in other]
    lines = [f"{i}: rank {other[i]['rank'] or '-'} -> {mine[i]['rank'] or '-'}" for i in both
             if mine[i]["rank"] != other[i]["rank"]]
    return lines or ["no rank differs"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bugs", metavar="IDS", help="comma-separated bug ids, e.g. youtube-dl-1,youtube-dl-18")
    parser.add_argument("--project", help="only this project's bugs: youtube-dl, httpie or PySnooper")
    parser.add_argument("--part", metavar="K/N", help="only the K-th of N consecutive slices of the selection")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"the corpus (default {DEFAULT_DATA})")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-locate",
                        help="where the records go (default ~/.cache/fixbot/bench-locate)")
    parser.add_argument("--force", action="store_true", help="locate the selected bugs again even when recorded")
    parser.add_argument("--against", type=Path, metavar="OTHER_OUT",
                        help="print the bugs whose rank differs from OTHER_OUT's records, and its totals")
    args = parser.parse_args(argv)
    try:
        chosen = select(load_manifest(args.data), ids=args.bugs, project=args.project, part=args.part)
        out = args.out.expanduser().resolve()
        out.mkdir(parents=True, exist_ok=True)
        done = read_rows(out / RECORDS, "id")
        todo = [b for b in chosen if args.force or b.id not in done]
        client = connect() if todo else None
    except (UserError, OSError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    # the commit of the code measured: another worktree's when PYTHONPATH puts its `bot` first
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(bot.__file__).parents[1],
                            capture_output=True, text=True).stdout.strip()
    print(f"{len(chosen)} bug(s) selected, {len(todo)} to locate, at {commit or 'an unknown commit'}", flush=True)
    bundles = Bundles(args.data, out / "clones")
    try:
        with (out / RECORDS).open("a", encoding="utf-8") as sink:
            for i, bug in enumerate(todo, 1):
                record = {**locate_bug(bug, bundles, out / "work" / bug.id, client=client), "commit": commit}
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                done[bug.id] = record
                print(f"[{i}/{len(todo)}] {bug.id}: rank {record['rank'] or '-'} of {len(record['targets'])} "
                      f"({record['failing']} failing test(s)) · {record['seconds']:.0f} s"
                      + (f" · {record['error']}" if record["error"] else ""), flush=True)
    except KeyboardInterrupt:
        print("interrupted: the bug under way is not recorded; run again to resume", flush=True)
        return 130
    mine = {b.id: done[b.id] for b in chosen if b.id in done}
    print("\n".join(totals(list(mine.values()))))
    if args.against:
        other = read_rows(args.against.expanduser() / RECORDS, "id")
        print(f"\nagainst {args.against}:")
        print("\n".join(totals([other[i] for i in mine if i in other])))
        print("\n".join(differences(mine, other)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
