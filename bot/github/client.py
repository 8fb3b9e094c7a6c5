"""A thin wrapper over PyGithub for one repository: connect with retries, read a failed run, its jobs and logs.

Every GitHub call goes through PyGithub. Transient trouble (rate limits, 429 Retry-After, 5xx, dropped
connections) is retried at the HTTP layer by PyGithub's `GithubRetry`; what remains is turned into a one-line
`GitHubError` with the token masked."""
from __future__ import annotations

import re
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import requests
import tenacity
from github import Auth, Github, GithubRetry
from github.Repository import Repository

from bot.github.errors import BadInput, GitHubError, translated
from bot.github.redact import redact
from bot.github.types import JobInfo, RunInfo

DEFAULT_BASE_URL = "https://api.github.com"
FAILED = frozenset({"failure", "timed_out"})  # job conclusions that mean the tests (or the job) broke
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_LOG_CAP = 16 * 1024 * 1024  # bytes kept from a job log: the tail, where pytest's summary is


@dataclass(frozen=True)
class RetrySettings:
    """How hard to try. The defaults suit GitHub; tests shrink the waits."""

    total: int = 6  # retries per request, all causes together
    backoff_factor: float = 1.0  # urllib3: the n-th consecutive retry sleeps factor * 2**(n-1) (the first: none)
    backoff_max: float = 60.0
    secondary_rate_wait: float = 60.0  # a secondary rate limit without Retry-After
    max_rate_limit_wait: float = 900.0  # a primary limit resetting later than this is an error, not a nap
    timeout_s: int = 30  # per request (PyGithub wants an int)
    log_attempts: int = 3  # whole log downloads: a fresh signed URL each time
    # PyGithub's pacing, which GitHub asks of integrations to stay clear of secondary rate limits
    seconds_between_requests: float = 0.25
    seconds_between_writes: float = 1.0


def retry_policy(settings: RetrySettings) -> GithubRetry:
    """PyGithub's retry, told about 429 as well: GithubRetry alone retries 403 (rate limits, judged from the
    body) and 5xx, and urllib3 honours Retry-After. POST is retried too (GithubRetry's default); `publish`
    makes each of its POSTs safe to repeat (content-addressed objects, 422 on a second ref or PR resolved
    to the first). PATCH is not retried, and fixbot never sends one."""
    return GithubRetry(
        total=settings.total,
        backoff_factor=settings.backoff_factor,
        backoff_max=settings.backoff_max,
        status_forcelist=[429, 500, 502, 503, 504],
        allowed_methods=frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE"}),
        respect_retry_after_header=True,
        # After the last retry hand the response to PyGithub, whose exception carries GitHub's message.
        raise_on_status=False,
        secondary_rate_wait=settings.secondary_rate_wait,
        max_rate_limit_wait=settings.max_rate_limit_wait,
    )


def connect(token: str, *, repo: str, base_url: str = DEFAULT_BASE_URL,
            retry: RetrySettings = RetrySettings(), per_page: int = 100) -> GitHubRepo:
    """Open `repo` ("owner/name"). One GET checks the token and the access now, not halfway through a publish.

    `base_url` is the REST root: https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server."""
    if not token:
        raise GitHubError("no GitHub token: set GITHUB_TOKEN (or pass --token)")
    if not _REPO.match(repo):
        raise BadInput(f"repository must be OWNER/NAME, got {repo!r}")
    secrets = (token,)
    # lazy: an object is fetched when first read, so commenting on PR #n is one POST, without a GET of the issue
    # first (an endpoint fixbot otherwise has no use for, and one more call to fail or be rate-limited).
    github = Github(auth=Auth.Token(token), base_url=base_url.rstrip("/"), timeout=retry.timeout_s, lazy=True,
                    retry=retry_policy(retry), per_page=per_page, user_agent="fixbot",
                    seconds_between_requests=retry.seconds_between_requests or None,
                    seconds_between_writes=retry.seconds_between_writes or None)
    try:
        with translated(f"opening repository {repo}", secrets):
            api = github.get_repo(repo)
            default_branch = api.default_branch  # the read that fetches it (and the canonical full name)
            found = (api.full_name, api.owner.login, default_branch)
    except GitHubError:
        github.close()
        raise
    return GitHubRepo(github, api, secrets, retry, *found)


def _workflow_file(path: str) -> str:
    """".github/workflows/ci.yml" from the run's `path`, which may also carry the repository and "@ref"."""
    path = path.partition("@")[0]
    return path[path.index(".github/"):] if ".github/" in path else path


class GitHubRepo:
    """One repository on GitHub, reached with one token. Holds the token only to mask it."""

    def __init__(self, github: Github, api: Repository, secrets: tuple[str, ...], retry: RetrySettings,
                 full_name: str, owner: str, default_branch: str):
        self._github = github
        self.api = api  # the PyGithub repository, for `publish`
        self._secrets = secrets
        self._retry = retry
        self.full_name = full_name
        self.owner = owner  # login of the owner: the `owner:branch` form of a PR head
        self.default_branch = default_branch

    def __repr__(self) -> str:  # never the token
        return f"GitHubRepo({self.full_name!r})"

    def __enter__(self) -> GitHubRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._github.close()

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def call(self, action: str) -> AbstractContextManager[None]:
        """Wrap PyGithub calls: failures become a `GitHubError` that names `action`."""
        return translated(action, self._secrets)

    def failed_run(self, run_id: int) -> RunInfo:
        with self.call(f"reading workflow run {run_id}"):
            run = self.api.get_workflow_run(run_id)
            head_repo = run.head_repository
            return RunInfo(
                id=run.id, head_sha=run.head_sha, head_branch=run.head_branch,
                head_repo_full_name=head_repo.full_name if head_repo is not None else None,
                event=run.event, conclusion=run.conclusion, html_url=run.html_url,
                pull_requests=tuple(pr.number for pr in run.pull_requests or ()),
                workflow_path=_workflow_file(run.path or ""),
            )

    def failed_jobs(self, run_id: int) -> list[JobInfo]:
        """The jobs of the run's latest attempt that failed or timed out, in GitHub's order."""
        with self.call(f"listing the jobs of workflow run {run_id}"):
            jobs = self.api.get_workflow_run(run_id).jobs("latest")
            return [JobInfo(j.id, j.name, j.conclusion, j.html_url) for j in jobs if j.conclusion in FAILED]

    def job_log(self, job_id: int, *, max_bytes: int = _LOG_CAP) -> str:
        """The job's plain-text log (its last `max_bytes` when longer), credentials masked.

        GitHub answers the logs endpoint with a 302 to a short-lived signed URL on another host. That URL is
        fetched without our Authorization header (it needs none, and the token must not travel to another host);
        when it fails (expired, 5xx, dropped), tenacity asks GitHub for a fresh URL and tries again."""
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self._retry.log_attempts),
            wait=tenacity.wait_exponential(multiplier=self._retry.backoff_factor, max=self._retry.backoff_max),
            retry=tenacity.retry_if_exception_type(_LogFetchFailed),
            reraise=True,
        )
        try:
            return retrying(self._fetch_log, job_id, max_bytes)
        except _LogFetchFailed as exc:
            raise GitHubError(self.redact(f"downloading the log of job {job_id}: {exc}")) from None

    def _fetch_log(self, job_id: int, max_bytes: int) -> str:
        with self.call(f"asking for the log of job {job_id}"):
            try:
                url = self.api.get_workflow_job(job_id).logs_url()
            except KeyError:  # a 2xx without Location
                raise GitHubError(f"asking for the log of job {job_id}: GitHub did not redirect to the log") from None
        where = url.split("?", 1)[0]  # the query is the signature: keep it out of messages
        try:
            with requests.get(url, stream=True, timeout=self._retry.timeout_s, allow_redirects=True) as response:
                if response.status_code != 200:
                    raise _LogFetchFailed(f"{where} answered {response.status_code}")
                return self.redact(_tail(response, max_bytes))
        except requests.RequestException as exc:
            raise _LogFetchFailed(f"{where}: {type(exc).__name__}") from None


class _LogFetchFailed(Exception):
    """A signed log URL failed; worth one more try with a fresh URL."""


def _tail(response: Any, max_bytes: int) -> str:
    kept = bytearray()
    dropped = 0
    for chunk in response.iter_content(chunk_size=1 << 16):
        kept += chunk
        if len(kept) > max_bytes:
            dropped += len(kept) - max_bytes
            del kept[: len(kept) - max_bytes]
    text = kept.decode("utf-8", "replace")
    return f"[fixbot: the first {dropped} bytes of this log were dropped]\n{text}" if dropped else text
