"""What `fixbot init` tells the user: what it found and where, what it wrote, which permissions the workflow
grants and why, what to commit, and what happens next."""
from __future__ import annotations

import shlex
from pathlib import Path

from bot.init.plan import WORKFLOW_PATH, InitPlan
from bot.init.templates import DISPATCH_RESOLVE, FIXBOT

_TRIGGERS = {
    "in-job": "fixbot as the last step of the test job, when the tests fail",
    "workflow_run": "a workflow that runs when {name!r} completes and acts when it failed",
    "dispatch": "a workflow run by hand with the id of a failed run",
}


def _next(plan: InitPlan) -> str:
    if plan.trigger == "in-job":
        return ("push: when a run's tests fail, fixbot's step opens a draft pull request with a verified fix (on a "
                "fork's pull request it keeps the patch as the run's `fixbot` artifact instead)")
    if plan.trigger == "workflow_run":
        return (f"push to the default branch (GitHub starts workflow_run workflows from there): when "
                f"{plan.reacts_to!r} fails, fixbot opens a draft pull request with a verified fix")
    return ("push to the default branch, then Actions -> fixbot (manual) -> Run workflow, with the id of a failed "
            "run: fixbot opens a draft pull request with a verified fix")


def files_text(plan: InitPlan) -> str:
    """The files as --dry-run shows them."""
    parts = []
    for file in plan.files:
        state = "exists: written only with --force" if file.exists else "new"
        parts.append(f"--- {file.path} ({state})\n{file.text}")
    return "\n".join(parts)


def describe(plan: InitPlan, *, dry_run: bool) -> list[str]:
    trigger = _TRIGGERS[plan.trigger].format(name=plan.reacts_to)
    lines = [f"fixbot init: {plan.root}",
             f"  trigger: {plan.trigger}: {trigger}",
             f"  tests:   {plan.tests.command}  (from {plan.tests.source})"]
    if plan.trigger == "in-job":
        lines.append(f"  python:  {plan.python.version} for setup-python  (from {plan.python_source})")
    lines += [f"  note:    {note}" for note in plan.notes]
    verb = "would write" if dry_run else "wrote"
    lines += [f"{verb} {file.path}" for file in plan.files]
    lines.append(f"{WORKFLOW_PATH} starts from `permissions: {{}}` and grants the job that runs fixbot only:")
    lines += [f"  {g.scope + ':':<14} {g.level:<5}  to {g.why}" for g in plan.grants]
    if plan.trigger == "dispatch":
        lines.append(f"  ({DISPATCH_RESOLVE.scope}: {DISPATCH_RESOLVE.level} also for {DISPATCH_RESOLVE.why})")
    lines.append("The token never enters the sandbox where the repository's code runs.")
    lines.append("Nothing was written (--dry-run); without it, next:" if dry_run else "Next:")
    git = "git" if plan.root == Path.cwd().resolve() else f"git -C {shlex.quote(str(plan.root))}"
    lines += [f"  {FIXBOT.action} is pinned to {FIXBOT.sha} ({FIXBOT.version}): replace it with the commit of the "
              "release you reviewed",
              f"  {git} add {' '.join(f.path for f in plan.files)}",
              f"  {git} commit -m 'Run fixbot when the tests fail'",
              f"  then {_next(plan)}"]
    return lines
