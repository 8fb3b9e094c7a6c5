"""GitHub: read a failed workflow run, its jobs and logs; publish a verified fix as a pull request, once per
failure. Every call goes through PyGithub; `FixResult` is the only thing taken from the rest of fixbot."""
from bot.github.client import DEFAULT_BASE_URL, GitHubRepo, RetrySettings, connect
from bot.github.errors import BadInput, BranchConflict, GitHubError
from bot.github.publish import publish
from bot.github.redact import redact
from bot.github.signature import signature
from bot.github.types import JobInfo, Publication, RunInfo

__all__ = ["DEFAULT_BASE_URL", "BadInput", "BranchConflict", "GitHubError", "GitHubRepo", "JobInfo", "Publication",
           "RetrySettings", "RunInfo", "connect", "publish", "redact", "signature"]
