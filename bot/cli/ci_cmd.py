"""`fixbot ci`: the Action's entry point. Event → plan → (logs of the failed run) → `fix` on the workspace →
publish the verified fix as a pull request → outputs, step summary, annotation.

Resolve first, publish second: the pipeline never sees the token (the sandbox has no network and a clean
environment); only the publisher talks to GitHub with it."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bot.action.event import BadEvent, Plan, plan, read_event
from bot.action.runner_io import RunnerIO
from bot.checkout.repository import Checkout, commit_date, load_checkout
from bot.config import Config, load_file, with_inputs
from bot.environment.prepare import EnvRequest
from bot.environment.python.choice import job_python_versions
from bot.environment.python.workflow import job_test_env, shared_values
from bot.errors import UserError
from bot.failures import Failure, ParseError, parse_ci_log
from bot.fix.options import FixOptions
from bot.fix.reproduce.command import TestCommand
from bot.fix.result import FixResult
from bot.fix.run import fix_checkout
from bot.fix.verify.patch import apply_patch, touched_files
from bot.fix.verify.report import write_outputs
from bot.github.client import GitHubRepo, connect
from bot.github.publish import publish
from bot.github.redact import redact as redact_text
from bot.github.types import JobInfo
from bot.llm import parse_model_spec
from bot.llm.spec import require_tools

OUT_DIR = "fixbot-out"


class WrongCheckout(UserError):
    """The workspace does not hold the commit that failed."""


def _head(workspace: Path) -> str:
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=workspace, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _log_failures(gh: GitHubRepo, jobs: Sequence[JobInfo], io: RunnerIO) -> tuple[Failure, ...]:
    failures: list[Failure] = []
    for job in jobs:
        try:
            found = parse_ci_log(gh.job_log(job.id))
        except ParseError:
            io.say(f"  job {job.name!r}: no pytest or unittest failures in its log")
            continue
        io.say(f"  job {job.name!r}: {len(found)} failing test(s)")
        failures += found
    return tuple(failures)


def _job_pythons(env: Mapping[str, str], workflow_text: str, jobs: Sequence[JobInfo]) -> tuple[str, ...]:
    """The python-version the failing job ran: in the job itself, actions/setup-python's `pythonLocation`
    (".../Python/3.9.18/x64"); for a run read afterwards, its workflow file's text and the failed jobs' matrix
    values."""
    if match := re.search(r"/(\d+\.\d+)\.\d+[^/]*/[^/]+/?$", env.get("pythonLocation", "")):
        return (match.group(1),)
    return tuple(dict.fromkeys(v for job in jobs for v in job_python_versions(workflow_text, job.name)))


def _workflow_text(workspace: Path, workflow: str) -> str:
    """The run's workflow file as the workspace holds it; "" when the run names none or it is not there."""
    path = workspace / workflow if workflow else None
    return path.read_text(encoding="utf-8", errors="replace") if path is not None and path.is_file() else ""


def _ci_test_env(workflow_text: str, jobs: Sequence[JobInfo]) -> tuple[tuple[str, str], ...]:
    """The variables the failed jobs' test step ran with (the same in each), from the workflow file: the sandbox
    runs the tests in a clean environment, so a settings module or locale the CI sets must be set there too."""
    if not workflow_text:
        return ()
    return tuple(shared_values([job_test_env(workflow_text, job.name) for job in jobs]).items())


def _env_request(config: Config, versions: tuple[str, ...], root: str) -> EnvRequest:
    return EnvRequest(python=config.python or None, setup=config.setup, ci_versions=versions,
                      commit_date=commit_date(root))


def _files_after(result: FixResult, root: str) -> dict[str, bytes]:
    """The fixed content of every file the patch touches (applied to a copy, never to the workspace)."""
    touched = touched_files(result.diff)
    with tempfile.TemporaryDirectory(prefix="fixbot-after-") as tmp:
        for path in touched:
            (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(root) / path, Path(tmp) / path)
        apply_patch(result.diff, tmp)
        return {path: (Path(tmp) / path).read_bytes() for path in touched}


def _options(config: Config, failures: tuple[Failure, ...], ci_env: Sequence[tuple[str, str]] = ()) -> FixOptions:
    """`ci_env`: the workflow's variables for the tests; the test command's own `NAME=value` words win."""
    command = TestCommand.parse(config.test_command)
    own = {name for name, _ in command.env}
    command = replace(command, env=(*((k, v) for k, v in ci_env if k not in own), *command.env))
    return FixOptions(test_command=command, log_failures=failures,
                      max_targets=config.max_targets, wall_s=config.wall_s,
                      test_timeout_s=config.test_timeout or None,
                      paths=config.paths, repair=config.repair())


def _design_line(config: Config) -> str:
    """The design and answers per call this run uses."""
    return f"design: {config.agent}, {config.samples} answer(s) per model call"


def _notice(io: RunnerIO, result: FixResult) -> None:
    for repair in result.repairs:
        if repair.status == "fixed":
            io.notice(f"fixbot: {repair.target.qualname} fixed ({repair.changed_lines} line(s) changed)",
                      file=repair.target.path, line=repair.target.start)


@dataclass(frozen=True)
class _RunRead:
    """What the failed run says: the plan completed from it, its URL, workflow file, failed jobs and failures."""

    plan: Plan
    url: str
    workflow: str = ""
    jobs: tuple[JobInfo, ...] = ()
    failures: tuple[Failure, ...] = ()


def _read_run(gh: GitHubRepo, the_plan: Plan, env: Mapping[str, str], io: RunnerIO) -> _RunRead:
    url = f"{env.get('GITHUB_SERVER_URL', 'https://github.com')}/{the_plan.repository}/actions/runs/{the_plan.run_id}"
    if the_plan.mode == "in-job":  # fixbot runs inside the failing job: its log is not written yet
        return _RunRead(the_plan, url)
    assert the_plan.run_id is not None  # plan() acts only on a run it can name
    with io.group("reading the failed run"):
        run = gh.failed_run(the_plan.run_id)
        if not the_plan.head_sha:  # a dispatch names only the run: the rest comes from it
            the_plan = replace(the_plan, head_sha=run.head_sha, base_branch=run.head_branch or "",
                               source_pr=run.pull_requests[0] if run.pull_requests else None,
                               fork=(run.head_repo_full_name or the_plan.repository) != the_plan.repository)
        jobs = gh.failed_jobs(run.id)
        return _RunRead(the_plan, run.html_url, run.workflow_path, tuple(jobs), _log_failures(gh, jobs, io))


def run_ci(env: Mapping[str, str]) -> int:
    """Read the event and the failed run, fix the workspace, publish the fix, report: each a step below."""
    token = env.get("INPUT_GITHUB-TOKEN", "").strip() or env.get("GITHUB_TOKEN", "")
    io = RunnerIO(env, lambda text: redact_text(text, (token,) if token else ()))
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    config = with_inputs(load_file(workspace / (env.get("INPUT_CONFIG") or ".github/fixbot.yml")), env)
    parse_model_spec(config.model)
    if config.agent == "tool-call":
        require_tools(config.model)
    name, event = read_event(env)
    the_plan: Plan = plan(name, event, env, run_id_input=env.get("INPUT_RUN-ID", "").strip(),
                          allow_forks=config.allow_forks)
    io.say(f"fixbot ci: {name}: {the_plan.reason}")
    if not the_plan.act:
        io.set_outputs({"status": "skipped", "pr-url": "", "patch-path": ""})
        io.summary(f"## fixbot: skipped\n\n{the_plan.reason}")
        return 0
    io.say(_design_line(config))
    if not token:
        raise BadEvent("the `github-token` input is empty")
    with connect(token, repo=the_plan.repository, base_url=env.get("GITHUB_API_URL", "https://api.github.com")) as gh:
        read = _read_run(gh, the_plan, env, io)
        head = _head(workspace)
        checkout = _checkout_of(workspace, read.plan, head)
        with io.group("fixing"):
            result = _fix(env, config, checkout, read, io)
        out = workspace / OUT_DIR
        write_outputs(result, out)
        pr_url = _publish(gh, io, config, read, checkout, result, head)
    return _report(io, result, out, pr_url)


def _checkout_of(workspace: Path, the_plan: Plan, head: str) -> Checkout:
    if the_plan.head_sha and head and head != the_plan.head_sha:
        raise WrongCheckout(f"the workspace holds {head[:12]}, but the run failed on {the_plan.head_sha[:12]}: "
                            "check out the failing commit first (see the example workflows)")
    return load_checkout(workspace)


def _fix(env: Mapping[str, str], config: Config, checkout: Checkout, read: _RunRead, io: RunnerIO) -> FixResult:
    workflow_text = _workflow_text(Path(checkout.root), read.workflow)
    versions = _job_pythons(env, workflow_text, read.jobs)
    ci_env = _ci_test_env(workflow_text, read.jobs)
    if ci_env:
        io.say(f"the tests' environment, as {read.workflow} sets it: " + " ".join(f"{k}={v}" for k, v in ci_env))
    return fix_checkout(checkout, _options(config, read.failures, ci_env), model=config.model,
                        env_request=_env_request(config, versions, checkout.root),
                        api_base=config.api_base or env.get("INPUT_API-BASE") or None,
                        api_key=env.get("INPUT_API-KEY") or None, say=io.say)


def _publish(gh: GitHubRepo, io: RunnerIO, config: Config, read: _RunRead, checkout: Checkout,
             result: FixResult, head: str) -> str:
    """The pull request's URL ("" when nothing was published). `head`: the workspace's commit."""
    if result.status != "fixed":
        return ""
    if config.dry_run or not read.plan.can_publish:
        io.say(f"not publishing ({'dry-run' if config.dry_run else 'read-only token: a fork'}): "
               f"the patch is in {OUT_DIR}/")
        return ""
    with io.group("publishing"):
        after = _files_after(result, checkout.root)
        modes = {p: "100755" for p in after if os.access(Path(checkout.root) / p, os.X_OK)}
        pub = publish(gh, result, base_branch=read.plan.base_branch,
                      head_sha=read.plan.head_sha or head, run_url=read.url,
                      labels=config.labels, draft=config.draft, source_pr=read.plan.source_pr, files_after=after,
                      modes=modes)
        io.say(f"pull request {pub.action}: {pub.pr_url or ''} {pub.reason}".rstrip())
        return pub.pr_url or ""


def _report(io: RunnerIO, result: FixResult, out: Path, pr_url: str) -> int:
    """Annotation, outputs and step summary; the exit status."""
    _notice(io, result)
    patch_path = str(out / "fix.patch") if result.status == "fixed" else ""
    io.set_outputs({"status": result.status, "pr-url": pr_url, "patch-path": patch_path})
    io.summary((out / "report.md").read_text(encoding="utf-8") + (f"\n\nPull request: {pr_url}" if pr_url else ""))
    if result.error:
        raise UserError(result.error)
    if result.status == "interrupted":
        return result.exit_code
    return 1 if result.status == "not_fixed" else 0  # the job is red already; green-or-flaky is no error


def cmd_ci(args: argparse.Namespace) -> int:
    return run_ci(os.environ)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "ci", help="the GitHub Action's entry point: a failed run in, a fix pull request out",
        description="Runs inside GitHub Actions (reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH and the Action's "
                    "INPUT_* variables). Acts on a failed job (as its last step), on workflow_run when the run "
                    "failed, or on workflow_dispatch with a run id; fixes the workspace's checkout with `fixbot "
                    "fix`, and publishes a verified fix as a pull request through the git data API. Settings: "
                    ".github/fixbot.yml, overridden by the Action's inputs.")
    parser.set_defaults(handler=cmd_ci)
