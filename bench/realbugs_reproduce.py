"""The real-bug bench's --reproduce-only mode: no `fixbot fix`, no model. For each bug, the test environment as
fixbot builds it (prepare_environment on the `bug-N` checkout, twice: a first call, which builds unless an earlier
run built it (`--fresh` forgets every cached environment of the bug first), then a call that must reuse it), then
the project's whole suite (the judge's command and runs, bench/realbugs_score.py) at `bug-N` and at the
developers' `fix-N`. A bug is

  set up       both prepare_environment calls returned an image;
  reproduced   every exposing test fails at bug-N and passes at fix-N; otherwise the row says why in one line,
               its `cause` one of: environment, network, files (a file neither snapshot holds), bug-N (the exposing
               tests do not fail before the fix here), set-up.

Rows go to bench/results/reproduce-COMMIT.jsonl (bench/rows.py), resumable like the fixing mode's; the suite's
runs are kept where the fixing mode reads them (OUT/bugs/ID/suite-runs.json), so a reproduction run makes the
next fixing run of the same bugs cheaper."""
from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from pathlib import Path

from common import Interrupted, aligned
from realbugs_corpus import Bug, Bundles, suite_command
from realbugs_score import SuiteRunner, cached_runs, judge, runs_key, tree_files
from rows import append_row

from bot.checkout.repository import Checkout
from bot.environment.install.plan import InstallPlan
from bot.environment.pip_settings import pip_settings
from bot.environment.prepare import (
    FAILED,
    FAILED_COMPILER,
    Environment,
    EnvRequest,
    cache_tag,
    plan_environment,
    prepare_environment,
)
from bot.errors import UserError
from bot.fix.reproduce.command import TestCommand
from bot.fix.run import SUITE_LIMITS
from sandbox import open_sandbox
from sandbox.containers import connect
from sandbox.image import default_image, tools_spec

BENCH = "reproduce"
SPLITS = ("dev", "holdout")
MESSAGE_CHARS = 300
_CAUSE = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)|error): ")  # "ModuleNotFoundError: ...", "error: ..."


def one_line(text: str) -> str:
    """A multi-line error as one line: its first line, then the cause pip quotes (the last `SomethingError: ...`
    or `error: ...` line of a build's output) or else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    causes = [line for line in lines[1:] if _CAUSE.match(line) and not line.startswith("error: subprocess-")]
    line = lines[0] if len(lines) == 1 else f"{lines[0]} ... {(causes or lines)[-1]}"
    return line[:MESSAGE_CHARS]


def forget_environment(client, python: str, plan: InstallPlan, commit_date: str | None) -> bool:
    """Untag every cached environment prepare_environment could use for this Python and plan (on the plain base
    and the one with a C toolchain, with today's releases and as of the commit's date) and the marks of failed
    builds, so that the next call builds as a new user meets it. A tag that a running container was started from
    is left alone. True when the next call will build."""
    from docker.errors import APIError, ImageNotFound

    if not plan.steps:
        return False  # nothing to install: the base image is the environment
    pip = pip_settings(plan.index_urls)
    tags = []
    for base in (default_image(python), tools_spec(python).tag()):
        try:
            base_id = client.images.get(base).id
        except ImageNotFound:
            continue
        for as_of in (None, commit_date):
            tag = cache_tag(base_id, python, plan, pip, (), as_of)
            tags += [tag, tag + FAILED, tag + FAILED_COMPILER]
    for tag in tags:
        try:
            used = client.api.containers(all=True, filters={"ancestor": tag})
            if any(c.get("Image") == tag and c.get("State") == "running" for c in used):
                return False
            client.images.remove(tag, noprune=not tag.endswith((FAILED, FAILED_COMPILER)))  # a marker goes whole
        except (ImageNotFound, APIError):
            continue
    return True


def _timed(checkout: Checkout, request: EnvRequest, client, log) -> tuple[Environment, float]:
    start = time.monotonic()
    env = prepare_environment(checkout, request, client=client, log=log)
    return env, round(time.monotonic() - start, 1)


def cause_of(why: str) -> str:
    """The class of a one-line reason: network, set-up, files (the snapshots lack one), bug-N (the exposing tests
    do not fail before the fix), or environment."""
    return why.split(":", 1)[0] if why.startswith(("network:", "set-up:", "files:", "bug-N:")) else "environment"


def reproduce_bug(bug: Bug, bundles: Bundles, where: Path, *, client, request: EnvRequest | None = None,
                  fresh: bool = False) -> dict:
    """The row of one bug (see the module doc, without the stamp); its worktrees under `where` are removed."""
    where.mkdir(parents=True, exist_ok=True)
    dirs = {name: where / name for name in ("bug", "fix")}
    row: dict = {"id": bug.id, "project": bug.project, "split": bug.split, "set_up": False, "reproduced": False,
                 "why_not_reproduced": "", "cause": "", "python": None, "python_source": None, "setup_s": None,
                 "built": None, "reuse_s": None, "reused": None, "suite": None, "set_aside": {},
                 "user_setup": list(bug.setup)}
    try:
        with (where / "setup.log").open("w", encoding="utf-8") as sink:
            return _reproduce(bug, bundles, dirs, row, sink, client=client, request=request, fresh=fresh,
                              cache=where / "suite-runs.json")
    finally:
        for d in dirs.values():
            bundles.remove(bug.project, d)


def _reproduce(bug: Bug, bundles: Bundles, dirs: dict[str, Path], row: dict, sink, *, client,
               request: EnvRequest | None, fresh: bool, cache: Path) -> dict:
    def log(line: str) -> None:
        sink.write(line + "\n")
        sink.flush()

    root = bundles.checkout(bug.project, bug.bug_tag, dirs["bug"])
    request = request or bug.env_request(root)
    suite = suite_command(root)
    at_bug = Checkout(str(root), tree_files(root))
    bug = bug.resolved(at_bug.files)
    at_fix = tree_files(bundles.checkout(bug.project, bug.fix_tag, dirs["fix"]))
    row["suite"] = {"command": suite.command, "source": suite.source}
    try:
        choice, plan = plan_environment(at_bug, request)  # known even when the build fails
        row.update(python=choice.version, python_source=choice.source)
        if fresh:
            forgotten = forget_environment(client, choice.version, plan, request.commit_date)
            log(f"bench: the cached environments forgotten: {forgotten}")
        first, setup_s = _timed(at_bug, request, client, log)
        row.update(python=first.python.version, python_source=first.python.source, setup_s=setup_s,
                   built=first.built)
        log("bench: the second call, which must reuse the image")
        second, reuse_s = _timed(at_bug, request, client, log)
    except UserError as exc:  # what fixbot would stop on with exit 2
        log(f"bench: set-up error: {exc}")
        why = f"set-up: {one_line(str(exc)) or type(exc).__name__}"
        return {**row, "why_not_reproduced": why, "cause": "set-up"}
    row.update(set_up=True, reuse_s=reuse_s, reused=not second.built and second.image == first.image)
    with open_sandbox("docker", image=first.image, pool_size=1, limits=SUITE_LIMITS) as sandbox:
        runner = SuiteRunner(sandbox, TestCommand.parse(suite.command), tuple(first.pythonpath), 1200.0)
        runs = cached_runs(cache, runs_key(client.images.get(first.image).id, suite.command, 1200.0),
                           lambda: (runner.run(first.with_generated(at_bug.files)),
                                    runner.run(first.with_generated(at_fix))))
    verdict = judge(bug, False, *runs, None, None)
    row["suite"]["runs"] = {name: {"passed": len(r.passed), "failed": len(r.failed), "seconds": r.seconds}
                            for name, r in zip(("bug", "fix"), runs)}
    return {**row, "reproduced": verdict.reproduced, "why_not_reproduced": verdict.why_not,
            "cause": cause_of(verdict.why_not) if verdict.why_not else "", "set_aside": verdict.set_aside.__dict__}


def progress_line(i: int, n: int, r: dict) -> str:
    """One line per bug; a holdout bug's is only that it is done (its row holds the rest)."""
    if r["split"] != "dev":
        return f"[{i}/{n}] a holdout bug: done"
    head = f"[{i}/{n}] {r['id']}: "
    if not r["set_up"]:
        return head + f"SET-UP FAILED on Python {r['python'] or '?'} · {r['why_not_reproduced']}"
    runs = r["suite"]["runs"]
    line = (head + ("reproduced" if r["reproduced"] else "NOT REPRODUCED")
            + f" · Python {r['python']} ({r['python_source']}) · set-up {r['setup_s']:.0f} s"
            + (" (built)" if r["built"] else " (cached)") + f", reuse {r['reuse_s']:.1f} s"
            + ("" if r["reused"] else " (DID NOT REUSE)") + f" · `{r['suite']['command']}`"
            + f" · bug-N {runs['bug']['passed']} passed {runs['bug']['failed']} failed"
            + f" · fix-N {runs['fix']['passed']} passed {runs['fix']['failed']} failed")
    return line + (f" · {r['why_not_reproduced']}" if r["why_not_reproduced"] else "")


def run_reproductions(todo: list[Bug], bundles: Bundles, out: Path, rows: Path, head: dict, say, *,
                      fresh: bool = False) -> None:
    """Each bug's row appended to `rows` as soon as it is known (an interrupted bug is not); `fresh`: every
    environment built as a new user meets it (forget_environment), not reused from an earlier run."""
    client = connect()
    for i, bug in enumerate(todo, 1):
        where = out / "bugs" / bug.id
        if bug.split == "dev":
            say(f"[{i}/{len(todo)}] {bug.id}: set-up and the whole suite at {bug.bug_tag} and {bug.fix_tag} ... "
                f"(log: {where / 'setup.log'})")
        try:
            found = reproduce_bug(bug, bundles, where, client=client, fresh=fresh)
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as exc:  # the bench's own failure on this bug (git, Docker): a row says so, the rest run
            why = f"bench error: {type(exc).__name__}: {' '.join(str(exc).split())}"[:MESSAGE_CHARS]
            found = {"id": bug.id, "project": bug.project, "split": bug.split, "set_up": False, "reproduced": False,
                     "why_not_reproduced": why, "cause": "bench error", "python": None, "python_source": None,
                     "setup_s": None, "built": None, "reuse_s": None, "reused": None, "suite": None, "set_aside": {},
                     "user_setup": list(bug.setup)}
        row = {**head, "date": time.strftime("%Y-%m-%d %H:%M"), **found}
        append_row(rows, row)
        say(progress_line(i, len(todo), row))


# --- the summary ---------------------------------------------------------------------------------------------

COLUMNS = (("bugs", "total"), ("set up", "set_up"), ("reproduced", "reproduced"), ("environment", "environment"),
           ("network", "network"), ("files", "files"), ("not failing at bug-N", "bug-N"), ("set-up failed", "set-up"),
           ("Python", "pythons"),
           ("median set-up s", "median_setup_s"), ("max reuse s", "max_reuse_s"))


def _row(rows: list[dict]) -> dict:
    ready = [r for r in rows if r["set_up"]]
    causes = Counter(r["cause"] for r in rows if not r["reproduced"])
    pythons = Counter(r["python"] for r in rows if r["python"])
    return {"total": len(rows), "set_up": len(ready), "reproduced": sum(bool(r["reproduced"]) for r in rows),
            **{c: causes.get(c, 0) for c in ("environment", "network", "files", "bug-N", "set-up")},
            "pythons": ", ".join(f"{v} ({n})" for v, n in sorted(pythons.items())) or "-",
            "median_setup_s": round(statistics.median([r["setup_s"] for r in ready]), 1) if ready else None,
            "max_reuse_s": max((r["reuse_s"] for r in ready), default=None)}


def summarize(rows: list[dict]) -> dict:
    ordered = sorted(rows, key=lambda r: (r["split"], r["project"], r["id"]))
    table = {}
    for split in SPLITS:
        mine = [r for r in ordered if r["split"] == split]
        for project in sorted({r["project"] for r in mine}):
            table[f"{split} · {project}"] = _row([r for r in mine if r["project"] == project])
        table[f"{split} · all"] = _row(mine)
    table["all"] = _row(ordered)
    return {"bugs": len(rows), "commits": sorted({r["commit"] for r in rows}), "rows": table,
            "not_reproduced": {r["id"]: r["why_not_reproduced"] for r in ordered
                               if r["split"] == "dev" and not r["reproduced"]},
            "not_reused": [r["id"] for r in ordered if r["split"] == "dev" and r["set_up"] and not r["reused"]]}


def table_rows(summary: dict) -> list[list[str]]:
    def cell(v: object) -> str:
        return "-" if v is None else f"{v:g}" if isinstance(v, float) else str(v)
    return [[name] + [cell(row[k]) for _, k in COLUMNS] for name, row in summary["rows"].items()]


def head() -> list[str]:
    return ["split · project"] + [name for name, _ in COLUMNS]


def notes(summary: dict) -> list[str]:
    lines = [f"commit(s) {', '.join(summary['commits'])}"]
    lines += [f"not reproduced · {b}: {why}" for b, why in summary["not_reproduced"].items()]
    return lines + [f"second set-up built again · {b}" for b in summary["not_reused"]]


def console_table(summary: dict) -> str:
    if not summary["bugs"]:
        return "no rows yet"
    return "\n".join(aligned([head()] + table_rows(summary)) + notes(summary))
