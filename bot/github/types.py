"""Records that leave `bot.github`: what a failed run was, which of its jobs failed, what publishing did."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Action = Literal["opened", "existing", "skipped"]


@dataclass(frozen=True)
class RunInfo:
    """A workflow run, as fixbot needs it to check out the failing commit and to link back to it."""

    id: int
    head_sha: str
    head_branch: str | None  # None for a run on a tag or a deleted branch
    head_repo_full_name: str | None  # differs from the repository for a pull request from a fork
    event: str  # "push", "pull_request", ...
    conclusion: str | None  # None while the run is still going
    html_url: str
    pull_requests: tuple[int, ...] = ()  # open PRs in this repository whose head is this run's commit
    workflow_path: str = ""  # ".github/workflows/ci.yml": where the failing jobs' python-version is read


@dataclass(frozen=True)
class JobInfo:
    id: int
    name: str
    conclusion: str | None
    html_url: str | None


@dataclass(frozen=True)
class Publication:
    """The outcome of `publish`: a PR opened now, one found for the same failure, or nothing to publish."""

    action: Action
    pr_number: int | None
    pr_url: str | None
    branch: str | None
    signature: str = ""  # the failure's identity, also in the PR body's marker
    reason: str = ""  # why it was skipped or found, one line for the console
