"""The triggering event → a `Plan`: act or not (and why), which run, which commit, where a fix PR goes."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from bot.errors import UserError

Mode = Literal["in-job", "workflow_run", "dispatch", "none"]


class BadEvent(UserError):
    """The Actions environment or event payload is missing or malformed."""


@dataclass(frozen=True)
class Plan:
    act: bool
    reason: str  # why fixbot acts, or why it does not
    mode: Mode
    repository: str  # owner/name
    run_id: int | None
    head_sha: str  # the failing commit ("" until read from the run, for a dispatch)
    base_branch: str  # the branch a fix PR targets: the one that failed (a PR's head branch)
    source_pr: int | None = None
    fork: bool = False
    can_publish: bool = True  # False for a fork's pull request: the token is read-only there


def read_event(env: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    name = env.get("GITHUB_EVENT_NAME", "")
    path = env.get("GITHUB_EVENT_PATH", "")
    if not name or not path:
        raise BadEvent("GITHUB_EVENT_NAME and GITHUB_EVENT_PATH are not set: `fixbot ci` runs inside GitHub "
                       "Actions (use `fixbot fix PATH` on a local checkout)")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadEvent(f"cannot read the event payload {path}: {exc}") from None
    if not isinstance(payload, dict):
        raise BadEvent(f"the event payload {path} is not a JSON object")
    return name, payload


def _int(value: Any, what: str) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise BadEvent(f"{what} must be a workflow run id (a number), not {value!r}") from None


def plan(name: str, event: Mapping[str, Any], env: Mapping[str, str], *, run_id_input: str = "",
         allow_forks: bool = False) -> Plan:
    repository = env.get("GITHUB_REPOSITORY") or (event.get("repository") or {}).get("full_name", "")
    if not repository:
        raise BadEvent("GITHUB_REPOSITORY is not set")
    if name == "workflow_run":
        run = event.get("workflow_run") or {}
        prs = run.get("pull_requests") or []
        head_repo = (run.get("head_repository") or {}).get("full_name", repository)
        fork = head_repo != repository
        base = Plan(False, "", "workflow_run", repository, run.get("id"), run.get("head_sha", ""),
                    run.get("head_branch") or "", prs[0]["number"] if prs else None, fork, not fork)
        if run.get("conclusion") != "failure":
            conclusion = run.get("conclusion")
            return replace(base, reason=f"the run concluded {conclusion!r}, not 'failure': nothing to fix")
        if fork and not allow_forks:
            return replace(base, reason=f"the run's head is the fork {head_repo}; fixbot acts on it only with "
                                        "allow-forks")
        if not isinstance(base.run_id, int):
            raise BadEvent("the workflow_run event names no run id (workflow_run.id)")
        return replace(base, act=True, reason=f"workflow run {base.run_id} failed")
    if name == "workflow_dispatch":
        text = run_id_input or str((event.get("inputs") or {}).get("run-id") or "")
        if not text:
            raise BadEvent("a manual run needs the failed run's id: the `run-id` input")
        return Plan(True, "run by hand", "dispatch", repository, _int(text, "run-id"), "", "")
    if name in ("push", "pull_request"):
        run_id = _int(run_id_input, "run-id") if run_id_input else _int(env.get("GITHUB_RUN_ID", "0"), "GITHUB_RUN_ID")
        if name == "pull_request":
            pr = event.get("pull_request") or {}
            head = pr.get("head") or {}
            fork = (head.get("repo") or {}).get("full_name", repository) != repository
            return Plan(True, "this job's tests failed", "in-job", repository, run_id, head.get("sha", ""),
                        head.get("ref", ""), pr.get("number"), fork, can_publish=not fork)
        return Plan(True, "this job's tests failed", "in-job", repository, run_id, env.get("GITHUB_SHA", ""),
                    env.get("GITHUB_REF_NAME", ""))
    return Plan(False, f"fixbot acts on workflow_run, workflow_dispatch, push and pull_request, not {name}", "none",
                repository, None, "", "")

