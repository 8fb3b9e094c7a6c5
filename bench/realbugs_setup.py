"""The real-bug bench's --reproduce-only mode: no `fixbot fix`, no model. For each bug, the test environment as
fixbot builds it (prepare_environment on the `bug-N` checkout, twice: a first build, then a call that must reuse
the image), then the bug's test files in fixbot's sandbox at `bug-N` and at the developers' `fix-N`. A bug is

  set up       both prepare_environment calls returned an image (no set-up error);
  reproduced   the exposing tests fail at bug-N and pass at fix-N, and the other tests of their files that pass
               at bug-N pass at fix-N too (realbugs_score.judge, as the normal mode counts it); other tests that
               fail at bug-N and pass at fix-N are recorded as `also_exposing` (the same bug, unnamed by the
               manifest).

Records go to OUT/reproduce.jsonl (one per bug, resumable like results.jsonl); pytest's output of both runs and
the set-up log are kept in OUT/bugs/ID/ for whatever did not reproduce."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from realbugs_corpus import Bug, Bundles
from realbugs_score import TEST_TIMEOUT_S, TESTS_TIMEOUT_S, covers, failed_in, judge, others, tree_files

from bot.errors import UserError
from bot.fix.environment import Environment, EnvRequest, cache_tag, plan_environment, prepare_environment
from bot.fix.install_plan import InstallPlan
from bot.fix.pip_settings import pip_settings
from bot.fix.testrun import TestCommand, run_many
from bot.fix.types import Checkout, TestRun
from sandbox import open_sandbox
from sandbox.containers import connect
from sandbox.image import default_image

RESULTS = "reproduce.jsonl"
SUMMARY = "reproduce-summary.json"
CONFIG = "reproduce-run.json"
MESSAGE_CHARS = 200


CAUSE = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)|error): ")  # "ModuleNotFoundError: ...", "error: ..."


def one_line(text: str) -> str:
    """A multi-line error as one line: its first line, then the cause pip quotes (the last `SomethingError: ...`
    or `error: ...` line of a build's output) or else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    causes = [line for line in lines[1:] if CAUSE.match(line) and not line.startswith("error: subprocess-")]
    line = lines[0] if len(lines) == 1 else f"{lines[0]} ... {(causes or lines)[-1]}"
    return line[:2 * MESSAGE_CHARS]


def forget_environment(client, python: str, plan: InstallPlan) -> bool:
    """Untag the cached environment prepare_environment would look up for this Python and plan (its `-in-` tag),
    so that the next call builds it: the first set-up is measured as a new user meets it. When no container was
    started from the image, its other tags go too (the new build takes the lock tag, and the old image would be
    left dangling); a tag that a running container was started by is left alone (its process may start more).
    True when the next call will build."""
    from docker.errors import APIError, ImageNotFound

    if not plan.steps:
        return False  # nothing to install: the base image is the environment
    try:
        base_id = client.images.get(default_image(python)).id
    except ImageNotFound:
        return True  # the base is made first (or missing, which prepare_environment reports)
    cached = cache_tag(base_id, python, plan, pip_settings(plan.index_urls))
    try:
        # "ancestor" matches the image by id, under any of its tags; only this tag's users matter
        used = client.api.containers(all=True, filters={"ancestor": cached})
        if any(c.get("Image") == cached and c.get("State") == "running" for c in used):
            return False
        tags = [cached] if used else client.images.get(cached).tags
        for tag in tags:
            client.images.remove(tag, noprune=True)
    except ImageNotFound:
        pass
    except APIError:
        return False
    return True


def _timed_environment(checkout: Checkout, request: EnvRequest, client, log) -> tuple[Environment, float]:
    start = time.monotonic()
    env = prepare_environment(checkout, request, client=client, log=log)
    return env, time.monotonic() - start


def _messages(run: TestRun, ids: set[str]) -> dict[str, str]:
    """One line per failed test among `ids` (a parametrized id by its cases): its error type and message."""
    found = {}
    for f in run.failures:
        if f.test_id in ids or f.test_id.split("[", 1)[0] in ids:
            message = f.message or f.assertion or ""
            text = message if not f.error_type or message.startswith(f.error_type) else f"{f.error_type}: {message}"
            text = " ".join(text.split())
            found[f.test_id] = text[:MESSAGE_CHARS]
    return found


def _status(test_id: str, run: TestRun) -> str:
    if failed_in((test_id,), run.failed):
        return "failed"
    return "passed" if covers((test_id,), run.passed) else "not run"


def explain(bug: Bug, at_bug: TestRun, at_fix: TestRun) -> dict:
    """What kept a bug from reproducing: the exposing tests that did not fail at bug-N or did not pass at fix-N
    (each as passed, failed or not run: a module that fails to import runs none), the other tests that passed
    at one version only, and the failure messages of what failed there (collection errors included)."""
    at_bug_ids = {i: _status(i, at_bug) for i in bug.pytest_ids if not failed_in((i,), at_bug.failed)}
    at_fix_ids = {i: _status(i, at_fix) for i in bug.pytest_ids if not covers((i,), at_fix.passed)}
    bug_others, fix_others = others(bug, at_bug.passed), others(bug, at_fix.passed)
    only_bug, only_fix = sorted(bug_others - fix_others), sorted(fix_others - bug_others)
    collection = {t for t in (*at_bug.failed, *at_fix.failed) if "::" not in t}  # a module that did not import
    return {"exposing_at_bug": at_bug_ids, "exposing_at_fix": at_fix_ids,
            "others_passed_at_bug_only": only_bug, "others_passed_at_fix_only": only_fix,
            "messages_at_bug": _messages(at_bug, set(only_fix) | collection),
            "messages_at_fix": _messages(at_fix, set(at_fix_ids) | set(only_bug) | collection),
            "error_at_bug": _error_line(at_bug) if "not run" in at_bug_ids.values() else "",
            "error_at_fix": _error_line(at_fix) if "not run" in at_fix_ids.values() else ""}


def _error_line(run: TestRun) -> str:
    """Why a run ran none of the exposing tests, from pytest's output: its first `E   ` line (a broken conftest,
    an import error), else its last line."""
    lines = [line.strip() for line in run.output.splitlines() if line.strip()]
    found = next((line[1:].strip() for line in lines if line.startswith("E ")), lines[-1] if lines else "")
    return found[:MESSAGE_CHARS]


def _run_line(run: TestRun) -> dict:
    return {"exit_code": run.exit_code, "passed": len(run.passed), "failed": len(run.failed),
            "timed_out": run.timed_out, "duration_s": round(run.duration_s, 1)}


def _write(path: Path, run: TestRun) -> None:
    path.write_text(f"$ {' '.join(run.command)}\n(exit {run.exit_code}, {len(run.passed)} passed, "
                    f"{len(run.failed)} failed)\n{run.output}", encoding="utf-8")


def reproduce_bug(bug: Bug, bundles: Bundles, where: Path, *, client, request: EnvRequest = EnvRequest(),
                  fresh: bool = True, timeout: float = TESTS_TIMEOUT_S) -> dict:
    """The record of one bug (see the module doc); its worktrees under `where` are removed afterwards. `request`
    is what a user could tell fixbot about the environment (--python, setup commands): none by default."""
    where.mkdir(parents=True, exist_ok=True)
    dirs = {name: where / name for name in ("bug", "fix")}
    record: dict = {"id": bug.id, "project": bug.project, "bug": bug.number, "set_up": False, "reproduced": False,
                    "python": None, "python_source": None, "setup_error": "", "forgotten": None, "first_s": None,
                    "first_built": None,
                    "reuse_s": None, "reused": None, "image": None, "packages": None, "tests": None,
                    "also_exposing": [], "modules_failed_at_bug": {}, "why": None}
    try:
        with (where / "setup.log").open("w", encoding="utf-8") as sink:
            return _reproduce(bug, bundles, dirs, record, sink, client=client, request=request, fresh=fresh,
                              timeout=timeout, where=where)
    finally:
        for d in dirs.values():
            bundles.remove(bug.project, d)


def _reproduce(bug: Bug, bundles: Bundles, dirs: dict[str, Path], record: dict, sink, *, client,
               request: EnvRequest, fresh: bool, timeout: float, where: Path) -> dict:
    def log(line: str) -> None:
        sink.write(line + "\n")
        sink.flush()

    root = bundles.checkout(bug.project, bug.bug_tag, dirs["bug"])
    at_bug = Checkout(str(root), tree_files(root))
    at_fix = tree_files(bundles.checkout(bug.project, bug.fix_tag, dirs["fix"]))
    try:
        choice, plan = plan_environment(at_bug, request)  # what prepare_environment will choose, known even if it fails
        record.update(python=choice.version, python_source=choice.source)
        if fresh:
            record["forgotten"] = forget_environment(client, choice.version, plan)
            log(f"bench: the cached environment forgotten: {record['forgotten']}")
        first, first_s = _timed_environment(at_bug, request, client, log)
        record.update(python=first.python.version, python_source=first.python.source, first_s=round(first_s, 1),
                      first_built=first.built, image=first.image, packages=len(first.lock))
        log("bench: the second call, which must reuse the image")
        second, reuse_s = _timed_environment(at_bug, request, client, log)
    except UserError as exc:  # what fixbot would stop on with exit 2
        log(f"bench: set-up error: {exc}")
        record["setup_error"] = one_line(str(exc)) or type(exc).__name__
        return record
    record.update(set_up=True, reuse_s=round(reuse_s, 1), reused=not second.built and second.image == first.image)
    with open_sandbox("docker", image=first.image, pool_size=2) as sandbox:
        # not strict: a version whose tests cannot be collected has failed runs, like any other failure
        runs = run_many(sandbox, [at_bug.files, at_fix], TestCommand.parse(bug.test_cmd),
                        pythonpath=first.pythonpath, timeout=timeout, test_timeout=TEST_TIMEOUT_S, strict=False)
    _write(where / "bug.out", runs[0])
    _write(where / "fix.out", runs[1])
    record["tests"] = {"bug": _run_line(runs[0]), "fix": _run_line(runs[1])}
    record["reproduced"] = judge(bug, 1, runs[0], runs[1], None, None).reproduced
    # tests that failed themselves at bug-N (not by their module's import error) and pass at fix-N
    record["also_exposing"] = sorted(t for t in others(bug, runs[1].passed) if t in runs[0].failed)
    modules = sorted(t for t in runs[0].failed if "::" not in t and not t.startswith("<"))  # did not import
    record["modules_failed_at_bug"] = {m: _error_line(runs[0]) for m in modules}
    if not record["reproduced"]:
        record["why"] = explain(bug, runs[0], runs[1])
    return record


def progress_line(i: int, n: int, r: dict) -> str:
    head = f"[{i}/{n}] {r['id']}: "
    if not r["set_up"]:
        return head + f"SET-UP FAILED on Python {r['python'] or '?'} · {r['setup_error']}"
    t = r["tests"]
    line = (head + ("reproduced" if r["reproduced"] else "NOT REPRODUCED")
            + f" · Python {r['python']} ({r['python_source']}) · set-up {r['first_s']:.0f} s"
            + (" (built)" if r["first_built"] else " (not built)") + f", reuse {r['reuse_s']:.1f} s"
            + ("" if r["reused"] else " (DID NOT REUSE)")
            + f" · bug-N {t['bug']['passed']} passed {t['bug']['failed']} failed"
            + f" · fix-N {t['fix']['passed']} passed {t['fix']['failed']} failed")
    also = f" · also failing at bug-N only: {_listed(r['also_exposing'])}" if r.get("also_exposing") else ""
    also += "".join(f" · at bug-N {m} did not import: {e}" for m, e in (r.get("modules_failed_at_bug") or {}).items())
    return line + also + (f" · {why_line(r['why'])}" if r["why"] else "")


def _listed(ids: list[str], limit: int = 3) -> str:
    return ", ".join(ids[:limit]) + (f" (+{len(ids) - limit})" if len(ids) > limit else "")


def why_line(why: dict) -> str:
    """A record's `why` on one line: the exposing tests by what they did at each version, the others that
    differ, and the first failure message (often the reason: an import error, a removed API)."""
    parts = [f"at bug-N {_listed(ids)} {status}"
             for status, ids in _by_status(why["exposing_at_bug"]).items()]
    parts += [f"at fix-N {_listed(ids)} {status}" for status, ids in _by_status(why["exposing_at_fix"]).items()]
    for key, what in (("others_passed_at_bug_only", "passed at bug-N only"),
                      ("others_passed_at_fix_only", "passed at fix-N only")):
        if why[key]:
            parts.append(f"{what}: {_listed(why[key])}")
    message = next(iter({**why["messages_at_fix"], **why["messages_at_bug"]}.items()), None)
    if message:
        parts.append(f"{message[0]}: {message[1]}")
    elif why.get("error_at_bug") or why.get("error_at_fix"):
        parts.append(why.get("error_at_bug") or why["error_at_fix"])
    return "; ".join(parts)


def _by_status(statuses: dict[str, str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for test_id, status in statuses.items():
        grouped.setdefault(status, []).append(test_id)
    return grouped


def run_reproductions(todo: list[Bug], bundles: Bundles, out: Path, say, *, commit: str) -> None:
    """Each bug's record appended to OUT/reproduce.jsonl as soon as it is known (an interrupted bug is not)."""
    client = connect()
    with (out / RESULTS).open("a", encoding="utf-8") as results:
        for i, bug in enumerate(todo, 1):
            where = out / "bugs" / bug.id
            say(f"[{i}/{len(todo)}] {bug.id}: set-up and tests at {bug.bug_tag} and {bug.fix_tag} ... "
                f"(log: {where / 'setup.log'})")
            r = {**reproduce_bug(bug, bundles, where, client=client, request=bug.env_request),
                 "date": time.strftime("%Y-%m-%d %H:%M"), "commit": commit, "user_setup": list(bug.setup)}
            results.write(json.dumps(r) + "\n")
            results.flush()
            os.fsync(results.fileno())
            say(progress_line(i, len(todo), r))
