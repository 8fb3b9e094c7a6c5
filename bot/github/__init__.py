"""GitHub: read a failed workflow run, its jobs and logs; publish a verified fix as a pull request, once per
failure. Every call goes through PyGithub; `FixResult` is the only thing taken from the rest of fixbot."""
from .client import DEFAULT_BASE_URL, GitHubRepo, RetrySettings, connect
from .errors import BadInput, BranchConflict, GitHubError
from .publish import publish
from .redact import redact
from .signature import signature
from .types import JobInfo, Publication, RunInfo

__all__ = ["DEFAULT_BASE_URL", "BadInput", "BranchConflict", "GitHubError", "GitHubRepo", "JobInfo", "Publication",
           "RetrySettings", "RunInfo", "connect", "publish", "redact", "signature"]
