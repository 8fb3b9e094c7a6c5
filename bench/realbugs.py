"""The real-bug benchmark: `fixbot fix` on bugs that real projects' developers fixed (../shared/data/realbugs:
youtube-dl 43, httpie 5, PySnooper 3), scored independently of fixbot's own claims.

For each bug: a fresh checkout of its `bug-N` tag; `fixbot fix DIR --test-cmd "pytest <the bug's test files>"`
as a subprocess (its output in OUT/bugs/ID/fixbot.log, one progress line here when the bug is done); then, in
fixbot's Docker sandbox, the bug's test files at `bug-N`, at the developers' `fix-N` and with fixbot's fix.patch
applied to a fresh `bug-N`. A bug is

  fixed         fixbot exited 0, its patch makes the exposing tests pass, and every test of those files that
                passed at bug-N still passes;
  reproduced    the exposing tests fail at bug-N and pass at fix-N, and the other tests that pass at bug-N pass
                at fix-N too (others that fail at bug-N only are the same bug: the developers' fix repairs them);
  regression accepted   fixbot exited 0 with a patch that breaks a test that passed (must be 0);
  same functions        (fixed) the patch changes the same functions/spans as the developers' fix;
  identical             (fixed) the changed modules equal fix-N's after normalisation (equal ASTs).

Each finished bug is appended to OUT/results.jsonl; a re-run skips recorded bugs (--force runs them again),
so an interrupted bench (Ctrl-C, SIGTERM) resumes where it stopped. OUT/summary.json summarises every bug
recorded in OUT (all --part slices run into it), per project: fixed/reproduced/total, same functions,
identical, regressions accepted, exit-2 runs with their reasons, median wall time and model calls per bug,
and the model's speed on this machine (measured before the first bug unless --no-speed).

With --reproduce-only, no fixbot fix and no model: only the test environment and the reproduction of each bug
(bench/realbugs_setup.py), recorded apart from the fixing runs (OUT/reproduce.jsonl, reproduce-summary.json).

    .venv/bin/python bench/realbugs.py [--bugs youtube-dl-1,youtube-dl-7 | --project youtube-dl] [--part K/N]
        [--wall 600] [--model llamacpp:bundled] [--fixbot-args "--agent thought-patch"] [--out DIR] [--force]
        [--no-speed] [--json] [--results-md [FILE]] [--report-only] [--reproduce-only]
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
from pathlib import Path

import realbugs_setup_report as setup_report
from common import Interrupted, signal_of, sigterm_raises, speed_line, stop_child
from realbugs_corpus import DEFAULT_DATA, REPO, BenchError, Bug, Bundles, load_manifest, select
from realbugs_report import console_table, markdown_section, read_results, summarize, update_results_md
from realbugs_score import Score
from realbugs_setup import CONFIG, RESULTS, run_reproductions

from bot.errors import UserError
from bot.llm import DEFAULT_MODEL

PROG = "realbugs.py"
WALL_S = 600.0
GRACE_S = 60.0  # past --wall plus this, the bench stops fixbot itself (and records that it overran)
STOP_WAIT_S = 60.0  # for fixbot to write its report after SIGTERM
RESULTS_MD = REPO / "bench" / "RESULTS.md"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()


def code_commit() -> str:
    """The commit the bench's fixbot runs, with +dirty when its code (bot/, sandbox/) differs from it."""
    dirty = _git("status", "--porcelain", "--", "bot", "sandbox")
    return _git("rev-parse", "--short", "HEAD") + ("+dirty" if dirty else "")


def to_run(bugs: list[Bug], recorded: dict[str, dict], force: bool) -> list[Bug]:
    return list(bugs) if force else [b for b in bugs if b.id not in recorded]


def fixbot_command(bug: Bug, repo: Path, out: Path, args: Namespace) -> list[str]:
    """`fixbot fix` as the bench runs it: the bug's test files, the bench's settings, the bug's user setup."""
    return [sys.executable, "-m", "bot.cli.main", "fix", str(repo), "--test-cmd", bug.test_cmd, "--out", str(out),
            "--wall", f"{args.wall:g}", "--model", args.model, *args.extra,
            *(arg for command in bug.setup for arg in ("--setup", command))]


def run_fixbot(bug: Bug, repo: Path, out: Path, log: Path, args: Namespace) -> dict:
    """`fixbot fix` on the checkout, its output streamed to `log`; what it did, read from its report.json."""
    shutil.rmtree(out, ignore_errors=True)  # an older run's report must not be read as this one's
    cmd = fixbot_command(bug, repo, out, args)
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
    calls = sum(len(r.get("attempts", ())) for r in report.get("repairs", ())) if report else 0
    reason = ""  # why a run ended without a verdict: exit 2, or no report at all (a crash, a kill)
    if proc.returncode == 2 or report is None:
        reason = (report or {}).get("error") or _last_line(log)
    patch = out / "fix.patch"
    return {"exit_code": proc.returncode, "status": (report or {}).get("status", "no report"),
            "message": (report or {}).get("message", ""), "reason": reason, "wall_s": round(wall, 1),
            "overran": overran, "model_calls": calls, "patch": patch.read_text() if patch.exists() else ""}


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _last_line(path: Path) -> str:
    lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def record(bug: Bug, run: dict, score: Score, commit: str) -> dict:
    v = score.verdict
    return {"id": bug.id, "project": bug.project, "bug": bug.number, "date": time.strftime("%Y-%m-%d %H:%M"),
            "commit": commit, **{k: run[k] for k in run if k != "patch"}, "patch_lines": len(run["patch"].splitlines()),
            "user_setup": list(bug.setup),
            "reproduced": v.reproduced, "patch_applies": v.patch_applies, "exposing_pass": v.exposing_pass,
            "fixed": v.fixed, "regression": v.regression, "broken": list(v.broken),
            "same_functions": score.same_functions, "identical": score.identical,
            "fixbot_spans": list(score.fixbot_spans), "developer_spans": list(score.developer_spans),
            "score_error": score.error, "tests_s": round(score.tests_s, 1), "counts": score.counts}


def progress_line(i: int, n: int, r: dict) -> str:
    def yes(v: object) -> str:
        return "-" if v is None else "yes" if v else "no"
    verdict = "REGRESSION ACCEPTED" if r["regression"] else "FIXED" if r["fixed"] else "not fixed"
    line = (f"[{i}/{n}] {r['id']}: {verdict} · fixbot exit {r['exit_code']} ({r['status']}) · {r['wall_s']:.0f} s · "
            f"{r['model_calls']} model call(s) · reproduced {yes(r['reproduced'])} · same functions "
            f"{yes(r['same_functions'])} · identical {yes(r['identical'])}")
    extra = r["reason"] or r["score_error"] or ("overran --wall" if r["overran"] else "")
    return line + (f" · {extra}" if extra else "")


def bench_bug(bug: Bug, bundles: Bundles, args: Namespace, commit: str) -> dict:
    from realbugs_score import score_bug

    from sandbox.containers import connect

    where = args.out / "bugs" / bug.id
    where.mkdir(parents=True, exist_ok=True)
    repo = bundles.checkout(bug.project, bug.bug_tag, where / "repo")
    try:
        run = run_fixbot(bug, repo, where / "fixbot", where / "fixbot.log", args)
    finally:
        bundles.remove(bug.project, repo)
    score = score_bug(bug, bundles, run["patch"], run["exit_code"], where / "score", client=connect())
    return record(bug, run, score, commit)


def check_config(path: Path, args: Namespace) -> dict:
    """run.json: what every bug in OUT ran with. A resume with another model, wall or fixbot arguments would mix
    two benches in one summary, so it is refused."""
    config = {"model": args.model, "wall": args.wall, "fixbot_args": args.extra}
    state = _read_json(path) or {}
    if args.report_only:
        return {**config, **state}
    old = {k: state[k] for k in config if k in state}
    if old and old != config:
        raise BenchError(f"{path.parent} holds a run with {json.dumps(old)}, not {json.dumps(config)}; "
                         "use another --out")
    return {**state, **config}


def _speed(args: Namespace) -> dict | None:
    from agents import model_speed
    return model_speed(Namespace(no_speed=args.no_speed, model=args.model, workers=1))


def parse_args(argv: list[str] | None) -> Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bugs", metavar="IDS", help="comma-separated bug ids, e.g. youtube-dl-1,youtube-dl-7 "
                                                      "(default: all in the manifest)")
    parser.add_argument("--project", help="only this project's bugs (the manifest's `project`, e.g. luigi)")
    parser.add_argument("--part", metavar="K/N", help="only the K-th of N consecutive slices of the selection")
    parser.add_argument("--wall", type=float, default=WALL_S, metavar="S",
                        help=f"fixbot's --wall per bug (default {WALL_S:g}); past it plus {GRACE_S:g} s the bench "
                             "stops fixbot itself and records that it overran")
    parser.add_argument("--model", default=DEFAULT_MODEL, metavar="SPEC",
                        help=f"fixbot's --model (default {DEFAULT_MODEL})")
    parser.add_argument("--fixbot-args", default="", metavar="ARGS",
                        help='more arguments for `fixbot fix`, one string, e.g. "--agent thought-patch --no-search"')
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="the realbugs directory (manifest.jsonl, bundles)")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-realbugs",
                        help="results, logs and the bundles' clones (default ~/.cache/fixbot/bench-realbugs)")
    parser.add_argument("--force", action="store_true", help="run the selected bugs again even when recorded")
    parser.add_argument("--no-speed", action="store_true", help="skip measuring the model's speed before the bugs")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON (progress goes to stderr)")
    parser.add_argument("--results-md", nargs="?", type=Path, const=RESULTS_MD, metavar="FILE",
                        help=f"write this results directory's section of {RESULTS_MD.relative_to(REPO)} (or FILE)")
    parser.add_argument("--report-only", action="store_true", help="run nothing: summarise what OUT holds")
    parser.add_argument("--reproduce-only", action="store_true",
                        help="no fixbot fix, no model: build each bug's environment as fixbot does (twice: a first "
                             "build, then a reuse) and run its test files at bug-N and fix-N; records in "
                             f"OUT/{RESULTS}, its own summary and RESULTS.md section")
    args = parser.parse_args(argv)
    if args.wall <= 0:
        raise BenchError("--wall must be a positive number of seconds")
    try:
        args.extra = shlex.split(args.fixbot_args)
    except ValueError as exc:
        raise BenchError(f"--fixbot-args: {exc}") from None
    args.out = args.out.expanduser().resolve()
    return args


def write_summary(args: Namespace, config: dict, bugs: list[Bug]) -> dict:
    """summary.json over every bug recorded in OUT (in manifest order), and the RESULTS.md section if asked."""
    recorded = read_results(args.out / "results.jsonl")
    records = [recorded[b.id] for b in bugs if b.id in recorded]
    speed = config.get("model_speed")
    summary = {"date": time.strftime("%Y-%m-%d"), "out": str(args.out), "model": config["model"],
               "wall": config["wall"], "fixbot_args": config["fixbot_args"],
               "commits": sorted({r["commit"] for r in records}), "commands": config.get("commands", []),
               "model_speed": speed, "speed_line": speed_line(speed, 1) if speed else None, **summarize(records)}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if args.results_md:
        section = markdown_section(str(args.out), date=summary["date"], commits=summary["commits"],
                                   command=" ; ".join(summary["commands"]), speed=summary["speed_line"],
                                   fixbot=shlex.join(["--model", config["model"], "--wall", f"{config['wall']:g}",
                                                      *config["fixbot_args"]]),
                                   summary=summary, records=records)
        update_results_md(args.results_md, str(args.out), section)
    return summary


def _files(args: Namespace) -> tuple[str, str]:
    """Where this mode's records and its configuration live in OUT (each mode has its own)."""
    return (RESULTS, CONFIG) if args.reproduce_only else ("results.jsonl", "run.json")


def run_bugs(todo: list[Bug], args: Namespace, say) -> None:
    bundles = Bundles(args.data, args.out / "clones")
    commit = code_commit()
    with (args.out / "results.jsonl").open("a", encoding="utf-8") as results:
        for i, bug in enumerate(todo, 1):
            say(f"[{i}/{len(todo)}] {bug.id}: fixbot fix ... (log: {args.out / 'bugs' / bug.id / 'fixbot.log'})")
            r = bench_bug(bug, bundles, args, commit)
            results.write(json.dumps(r) + "\n")
            results.flush()
            os.fsync(results.fileno())
            say(progress_line(i, len(todo), r))


def main(argv: list[str] | None = None) -> int:
    stream = sys.stdout
    try:
        args = parse_args(argv)
        stream = sys.stderr if args.json else sys.stdout
        all_bugs = load_manifest(args.data)
        chosen = select(all_bugs, ids=args.bugs, project=args.project, part=args.part)
        args.out.mkdir(parents=True, exist_ok=True)
        results, run_json = _files(args)
        config = (_read_json(args.out / run_json) or {}) if args.reproduce_only else check_config(args.out / run_json,
                                                                                                 args)
        todo = [] if args.report_only else to_run(chosen, read_results(args.out / results), args.force)
    except UserError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    if todo:  # the section in RESULTS.md names every command that added bugs to OUT
        command = shlex.join([".venv/bin/python", "bench/realbugs.py", *(sys.argv[1:] if argv is None else argv)])
        config["commands"] = list(dict.fromkeys([*config.get("commands", []), command]))
    if not args.report_only:
        say(f"{len(chosen)} bug(s) selected, {len(todo)} to run, {len(chosen) - len(todo)} already recorded in "
            f"{args.out}")
    code = 0
    try:
        with sigterm_raises():
            if todo and not args.no_speed and not args.reproduce_only:
                config["model_speed"] = _speed(args)
                if config["model_speed"]:
                    say(speed_line(config["model_speed"], 1))
            if todo:
                (args.out / run_json).write_text(json.dumps(config, indent=2) + "\n")
                if args.reproduce_only:
                    run_reproductions(todo, Bundles(args.data, args.out / "clones"), args.out, say,
                                      commit=code_commit())
                else:
                    run_bugs(todo, args, say)
    except (KeyboardInterrupt, Interrupted) as exc:
        signum = signal_of(exc)
        say(f"interrupted ({signal.Signals(signum).name}): the bug under way is not recorded; run again to resume")
        code = 128 + signum
    if args.reproduce_only:
        summary = setup_report.write_summary(args.out, config, all_bugs, args.results_md)
        table = setup_report.console_table(summary)
    else:
        summary = write_summary(args, config, all_bugs)
        table = console_table(summary)
    if args.json:
        print(json.dumps(summary))
    else:
        say(table)
    return code


if __name__ == "__main__":
    sys.exit(main())
