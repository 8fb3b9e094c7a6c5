"""The real-bug benchmark: `fixbot fix` on bugs that real projects' developers fixed (../shared/data/realbugs: 123
bugs of youtube-dl, luigi, black, tornado, httpie and PySnooper, split into `dev` and `holdout`), judged on each
project's whole suite, independently of fixbot's own claims.

For each bug: a fresh checkout of its `bug-N` tag; the command its CI runs for the whole suite, found the way
`fixbot init` finds it; `fixbot fix DIR --test-cmd SUITE --from-log CI_LOG` as a subprocess, given what a red CI
run gives fixbot (the suite's command, and a log naming the exposing tests as the failing ones; other tests that
fail here, for the sandbox's lack of a network or another environment, are not the CI's failure), its output in
OUT/bugs/ID/fixbot.log, one progress line here when the bug is done; then the judge (bench/realbugs_score.py):
the whole suite in fixbot's Docker sandbox at `bug-N`, at the developers' `fix-N` and with fixbot's patch. A
bug's verdict is

  fixed                fixbot exited 0, its patch applies, every exposing test passes and no test of the whole
                       suite that passed at bug-N (and at fix-N) fails with the patch;
  regression accepted  fixbot exited 0 with a patch that breaks such a test (must never happen);
  not reproduced       the exposing tests do not fail at bug-N and pass at fix-N here (the row says why);
  not fixed            anything else; `no verdict` when the judge itself could not run (its error is kept).

Each bug's row (bench/rows.py: commit, date, the model's speed line, split, verdict, seconds, who made each fix,
the files and functions touched beside the developers', identical or not, every regression, the tests set
aside) is appended to bench/results/realbugs-COMMIT.jsonl as the bug ends; a re-run at the same commit skips the
bugs recorded there (--force runs them again), so a run interrupted or cut into --part K/N slices resumes and
completes one file. `bench/tables.py` prints the tables from the rows (dev beside holdout, per project).

The holdout split is measured only as a whole: --bugs may name dev bugs only.

    .venv/bin/python bench/realbugs.py [--bugs ID,ID | --project luigi | --split dev] [--part K/N]
        [--wall 600] [--model llamacpp:bundled] [--fixbot-args "--agent thought-patch"] [--out DIR] [--force]
        [--no-speed] [--report-only] [--reproduce-only]
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from argparse import Namespace
from collections import Counter
from pathlib import Path

import realbugs_report as fixing
import realbugs_reproduce as reproduce
from common import Interrupted, signal_of, sigterm_raises, speed_line, stop_child
from realbugs_corpus import (
    DEFAULT_DATA,
    REPO,
    BenchError,
    Bug,
    Bundles,
    SuiteCommand,
    load_manifest,
    select,
    suite_command,
)
from realbugs_score import Score, tree_files
from rows import append_row, code_commit, read_rows, rows_path, stamp

from bot.errors import UserError
from bot.llm import DEFAULT_MODEL

PROG = "realbugs.py"
BENCH = "realbugs"
WALL_S = 600.0
GRACE_S = 60.0  # past --wall plus this, the bench stops fixbot itself (and records that it overran)
STOP_WAIT_S = 60.0  # for fixbot to write its report after SIGTERM
CONFIG_KEYS = ("model", "wall", "fixbot_args")  # a rows file holds one configuration


def to_run(bugs: list[Bug], recorded: dict[str, dict], force: bool) -> list[Bug]:
    return list(bugs) if force else [b for b in bugs if b.id not in recorded]


def ci_log(bug: Bug) -> str:
    """What the project's red CI run says, as pytest's summary prints it: the exposing tests failed."""
    failed = "".join(f"FAILED {test}\n" for test in bug.pytest_ids)
    return (f"{' test session starts ':=^80}\n{' short test summary info ':=^80}\n{failed}"
            f"{f' {len(bug.pytest_ids)} failed ':=^80}\n")


def fixbot_command(bug: Bug, repo: Path, out: Path, suite: SuiteCommand, log: Path, args: Namespace) -> list[str]:
    """`fixbot fix` as the bench runs it, given what a red CI run gives fixbot: the whole suite's command and the
    log naming the failing tests (`log`, from ci_log); the bench's settings and the bug's user setup."""
    return [sys.executable, "-m", "bot.cli.main", "fix", str(repo), "--test-cmd", suite.command, "--from-log",
            str(log), "--out", str(out), "--wall", f"{args.wall:g}", "--model", args.model, *args.extra,
            *(arg for command in bug.setup for arg in ("--setup", command))]


def run_fixbot(cmd: list[str], out: Path, log: Path, args: Namespace) -> dict:
    """`fixbot fix` as a subprocess, its output streamed to `log`; what it did, read from its report.json."""
    shutil.rmtree(out, ignore_errors=True)  # an older run's report must not be read as this one's
    start = time.monotonic()
    overran = False
    with log.open("wb") as sink:  # a --force re-run starts its log afresh
        sink.write(f"$ {shlex.join(cmd)}\n".encode())
        sink.flush()
        # its own session: a Ctrl-C reaches the bench, which stops fixbot once and waits for its report
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
        try:
            proc.wait(args.wall + GRACE_S)
        except subprocess.TimeoutExpired:
            overran = True
            stop_child(proc, STOP_WAIT_S)
        except BaseException:
            stop_child(proc, STOP_WAIT_S)
            raise
    wall = time.monotonic() - start
    report = _read_json(out / "report.json")
    repairs = (report or {}).get("repairs", ())
    reason = ""  # why a run ended without a verdict: exit 2, or no report at all (a crash, a kill)
    if proc.returncode == 2 or report is None:
        reason = (report or {}).get("error") or _last_line(log)
    patch = out / "fix.patch"
    return {"exit_code": proc.returncode, "status": (report or {}).get("status", "no report"),
            "message": (report or {}).get("message", ""), "reason": reason, "seconds": round(wall, 1),
            "overran": overran, "model_calls": sum(len(r.get("attempts", ())) for r in repairs),
            "made_by": [r.get("made_by") or "?" for r in repairs if r.get("status") == "fixed"],
            "stubs_written": sum(bool(r.get("stub")) for r in repairs if r.get("status") == "fixed"),
            # which search families made the kept fixes, and how every model answer ended (docs/agent.md)
            "families": [s.get("family") or "?" for r in repairs if r.get("status") == "fixed"
                         for s in r.get("searches", ()) if s.get("fixed")],
            "outcomes": dict(Counter(a.get("outcome") for r in repairs for a in r.get("attempts", ()))),
            # of those, the answers whose prompt pointed at a line the model named (the suspect-line question)
            "pointed": dict(Counter(a.get("outcome") for r in repairs for a in r.get("attempts", ())
                                    if a.get("pointed"))),
            "timings": _timings(report or {}),
            "patch": patch.read_text() if patch.exists() else ""}


def _timings(report: dict) -> dict:
    """Where a run's time went, in seconds: building the environment, the model's calls, the mutation search's
    rounds (wall), and every test run's own duration summed (the search's among them; runs in the sandbox's
    containers overlap, so this sum may pass the wall)."""
    spent = report.get("timings") or {}
    search = sum(s.get("seconds", 0.0) for r in report.get("repairs", ()) for s in r.get("searches", ()))
    return {"setup_s": round(spent.get("setup_s", 0.0), 1), "model_s": round(spent.get("model_s", 0.0), 1),
            "search_s": round(search, 1), "tests_s": round(spent.get("tests_s", 0.0), 1)}


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _last_line(path: Path) -> str:
    lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def verdict_of(score: Score) -> str:
    """A bug that does not reproduce here is `not reproduced` whatever the patch did: its fix proves nothing."""
    v = score.verdict
    if v is None:
        return "no verdict"
    if v.regression:
        return "regression accepted"
    if not v.reproduced:
        return "not reproduced"
    return "fixed" if v.fixed else "not fixed"


def make_row(bug: Bug, suite: SuiteCommand, run: dict, score: Score, head: dict, config: dict) -> dict:
    v = score.verdict
    return {**head, **config, "id": bug.id, "project": bug.project, "split": bug.split,
            "verdict": verdict_of(score), "reproduced": v.reproduced if v else None,
            "why_not_reproduced": v.why_not if v else "", "judge_error": score.error,
            "suite": {"command": suite.command, "source": suite.source, "runs": score.counts},
            **{k: run[k] for k in run if k != "patch"}, "patch_lines": len(run["patch"].splitlines()),
            "patch_applies": v.patch_applies if v else None, "exposing_pass": v.exposing_pass if v else None,
            "regressions": list(v.regressions) if v else [], "flaky_with_patch": list(v.flaky) if v else [],
            "set_aside": v.set_aside.__dict__ if v else {},
            "files": list(score.fixbot_files), "developer_files": list(score.developer_files),
            "functions": list(score.fixbot_spans), "developer_functions": list(score.developer_spans),
            "same_functions": score.same_functions, "identical": score.identical,
            "anti_patterns": list(score.anti_patterns),
            "judge_seconds": score.seconds, "user_setup": list(bug.setup)}


def progress_line(i: int, n: int, r: dict) -> str:
    """One line per bug; a holdout bug's is only that it is done (its row holds the rest)."""
    def yes(v: object) -> str:
        return "-" if v is None else "yes" if v else "no"
    if r["split"] != "dev":
        return f"[{i}/{n}] a holdout bug: done ({r['seconds']:.0f} s)"
    line = (f"[{i}/{n}] {r['id']}: {r['verdict'].upper() if r['verdict'] != 'not fixed' else 'not fixed'} · "
            f"fixbot exit {r['exit_code']} ({r['status']}) · {r['seconds']:.0f} s · {r['model_calls']} model call(s)"
            f"{' · made by ' + ', '.join(r['made_by']) if r['made_by'] else ''} · same functions "
            f"{yes(r['same_functions'])} · identical {yes(r['identical'])}")
    extra = r["reason"] or r["judge_error"] or r["why_not_reproduced"] or ("overran --wall" if r["overran"] else "")
    return line + (f" · {extra}" if extra else "")


def bench_bug(bug: Bug, bundles: Bundles, args: Namespace, head: dict, config: dict) -> dict:
    from realbugs_score import score_bug

    from sandbox.containers import connect

    where = args.out / "bugs" / bug.id
    where.mkdir(parents=True, exist_ok=True)
    repo = bundles.checkout(bug.project, bug.bug_tag, where / "repo")
    try:
        bug = bug.resolved(tree_files(repo))
        suite = suite_command(repo)
        (where / "ci.log").write_text(ci_log(bug), encoding="utf-8")
        cmd = fixbot_command(bug, repo, where / "fixbot", suite, where / "ci.log", args)
        run = run_fixbot(cmd, where / "fixbot", where / "fixbot.log", args)
    finally:
        bundles.remove(bug.project, repo)
    score = score_bug(bug, bundles, suite, run["patch"], run["exit_code"] == 0, where / "judge", client=connect(),
                      cache=where / "suite-runs.json")
    return make_row(bug, suite, run, score, head, config)


def check_config(rows: dict[str, dict], config: dict) -> None:
    """A rows file holds one configuration: a resume with another model, wall or fixbot arguments would mix two
    benches in one figure, so it is refused."""
    old = {tuple((k, json.dumps(r.get(k))) for k in CONFIG_KEYS) for r in rows.values()}
    new = tuple((k, json.dumps(config[k])) for k in CONFIG_KEYS)
    if old and old != {new}:
        mine = ", ".join(f"{k}={v}" for k, v in new)
        raise BenchError(f"the rows of this commit were made with another configuration than {mine}; run that "
                         "configuration, or this one at another commit")


def _speed(args: Namespace) -> dict | None:
    from agents import model_speed
    return model_speed(Namespace(no_speed=args.no_speed, model=args.model, workers=1))


def parse_args(argv: list[str] | None) -> Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bugs", metavar="IDS", help="comma-separated dev bug ids, e.g. youtube-dl-1,luigi-3 "
                                                      "(default: all in the manifest)")
    parser.add_argument("--project", help="only this project's bugs (the manifest's `project`, e.g. luigi)")
    parser.add_argument("--split", choices=("dev", "holdout"), help="only this split's bugs")
    parser.add_argument("--part", metavar="K/N", help="only the K-th of N consecutive slices of the selection")
    parser.add_argument("--wall", type=float, default=WALL_S, metavar="S",
                        help=f"fixbot's --wall per bug (default {WALL_S:g}); past it plus {GRACE_S:g} s the bench "
                             "stops fixbot itself and records that it overran")
    parser.add_argument("--model", default=DEFAULT_MODEL, metavar="SPEC",
                        help=f"fixbot's --model (default {DEFAULT_MODEL})")
    parser.add_argument("--fixbot-args", default="", metavar="ARGS",
                        help='more arguments for `fixbot fix`, one string, e.g. "--agent thought-patch --no-search" '
                             '(one flag alone needs the = form: --fixbot-args=--no-search)')
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="the realbugs directory (manifest.jsonl, bundles)")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-realbugs",
                        help="logs, the judge's cached runs and the bundles' clones (default "
                             "~/.cache/fixbot/bench-realbugs); the rows of a run whose code is not committed too")
    parser.add_argument("--rows", type=Path, metavar="FILE",
                        help="the rows file to write or (with --report-only) read (default "
                             "bench/results/realbugs-COMMIT.jsonl)")
    parser.add_argument("--force", action="store_true", help="run the selected bugs again even when recorded")
    parser.add_argument("--fresh", action="store_true",
                        help="--reproduce-only: forget each bug's cached environments first, so that its set-up "
                             "time is a new user's")
    parser.add_argument("--no-speed", action="store_true", help="skip measuring the model's speed before the bugs")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON (progress goes to stderr)")
    parser.add_argument("--report-only", action="store_true", help="run nothing: summarise the rows file")
    parser.add_argument("--reproduce-only", action="store_true",
                        help="no fixbot fix, no model: build each bug's environment as fixbot does (twice: a first "
                             "build, then a reuse) and run the whole suite at bug-N and fix-N; rows in "
                             "bench/results/reproduce-COMMIT.jsonl (bench/realbugs_reproduce.py)")
    args = parser.parse_args(argv)
    if args.wall <= 0:
        raise BenchError("--wall must be a positive number of seconds")
    try:
        args.extra = shlex.split(args.fixbot_args)
    except ValueError as exc:
        raise BenchError(f"--fixbot-args: {exc}") from None
    args.out = args.out.expanduser().resolve()
    return args


def run_bugs(todo: list[Bug], args: Namespace, rows: Path, head: dict, config: dict, say) -> None:
    bundles = Bundles(args.data, args.out / "clones")
    for i, bug in enumerate(todo, 1):
        shown = bug.id if bug.split == "dev" else "a holdout bug"
        say(f"[{i}/{len(todo)}] {shown}: fixbot fix ...")
        stamped = {**head, "date": time.strftime("%Y-%m-%d %H:%M")}
        try:
            row = bench_bug(bug, bundles, args, stamped, config)
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as exc:  # the bench's own failure on this bug (git, Docker): a row says so, the rest run
            row = failed_row(bug, stamped, config, exc)
        append_row(rows, row)
        say(progress_line(i, len(todo), row))


def failed_row(bug: Bug, head: dict, config: dict, exc: Exception) -> dict:
    """The row of a bug the bench could not run at all, with why."""
    error = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
    return {**head, **config, "id": bug.id, "project": bug.project, "split": bug.split, "verdict": "no verdict",
            "reproduced": None, "why_not_reproduced": "", "judge_error": error, "suite": {}, "exit_code": None,
            "status": "bench error", "message": "", "reason": error, "seconds": 0.0, "overran": False,
            "model_calls": 0, "made_by": [], "families": [], "outcomes": {}, "pointed": {}, "stubs_written": 0,
            "timings": {}, "patch_lines": 0, "patch_applies": None,
            "exposing_pass": None, "regressions": [], "flaky_with_patch": [], "set_aside": {}, "files": [],
            "developer_files": [], "functions": [], "developer_functions": [], "same_functions": None,
            "anti_patterns": [],
            "identical": None, "judge_seconds": 0.0, "user_setup": list(bug.setup)}


def main(argv: list[str] | None = None) -> int:
    stream = sys.stdout
    try:
        args = parse_args(argv)
        stream = sys.stderr if args.json else sys.stdout
        all_bugs = load_manifest(args.data)
        chosen = select(all_bugs, ids=args.bugs, project=args.project, split=args.split, part=args.part)
        args.out.mkdir(parents=True, exist_ok=True)
        commit = code_commit()
        bench = reproduce.BENCH if args.reproduce_only else BENCH
        rows = args.rows or rows_path(bench, commit, args.out)
        config = {"model": args.model, "wall": args.wall, "fixbot_args": args.extra}
        recorded = read_rows(rows, "id")
        if not args.reproduce_only and not args.report_only:
            check_config(recorded, config)
        todo = [] if args.report_only else to_run(chosen, recorded, args.force)
    except UserError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    if not args.report_only:
        say(f"{len(chosen)} bug(s) selected, {len(todo)} to run, {len(chosen) - len(todo)} already recorded in "
            f"{rows}")
    code = 0
    try:
        with sigterm_raises():
            if args.reproduce_only and todo:
                reproduce.run_reproductions(todo, Bundles(args.data, args.out / "clones"), args.out, rows,
                                            stamp(bench, commit, "no model"), say, fresh=args.fresh)
            elif todo:
                speed = _speed(args)
                line = speed_line(speed, 1) if speed else None
                if line:
                    say(line)
                run_bugs(todo, args, rows, stamp(BENCH, commit, line), config, say)
    except (KeyboardInterrupt, Interrupted) as exc:
        signum = signal_of(exc)
        say(f"interrupted ({signal.Signals(signum).name}): the bug under way is not recorded; run again to resume")
        code = 128 + signum
    report = reproduce if args.reproduce_only else fixing
    summary = report.summarize(list(read_rows(rows, "id").values()))
    if args.json:
        print(json.dumps(summary))
    else:
        say(f"rows: {rows}")
        say(report.console_table(summary))
    return code


if __name__ == "__main__":
    sys.exit(main())
