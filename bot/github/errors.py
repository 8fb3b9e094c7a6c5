"""GitHub failures as one-line user errors, with every credential masked.

PyGithub and requests raise their own exceptions whose text can be long (whole JSON bodies) and, through URLs or
headers, could in principle carry a secret; the CLI prints a `UserError` as one line, so everything that leaves
`bot.github` goes through `translated`."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import requests
from github import BadCredentialsException, GithubException, RateLimitExceededException
from github.GithubException import RateLimitExceededExceedsMaxWait

from bot.errors import UserError
from bot.github.redact import redact

_MAX_LINE = 300
_HINTS = {
    401: "check the token (GITHUB_TOKEN or --token)",
    403: "the token lacks a permission: fixbot needs actions: read, contents: write and pull-requests: write",
    404: "not found, or the token cannot see it",
    410: "gone (expired or deleted)",
}


class GitHubError(UserError):
    """A GitHub call failed for a reason the user can act on: token, permissions, repository, rate limit,
    network. The message is one line with credentials masked."""


class BranchConflict(GitHubError):
    """The fix branch already exists and holds other changes; fixbot never moves a ref it did not create."""


class BadInput(UserError):
    """A malformed repository name, commit SHA or branch name handed to `bot.github`."""


def one_line(text: str, secrets: Sequence[str] = ()) -> str:
    line = " ".join(redact(text, secrets).split())
    return line if len(line) <= _MAX_LINE else line[: _MAX_LINE - 1] + "…"


def api_message(exc: GithubException) -> str:
    """GitHub's own explanation: the body's `message` plus any `errors[].message` (422 details live there)."""
    data: Any = exc.data
    if not isinstance(data, dict):
        return str(data or "")[:200]
    parts = [str(data.get("message") or "")]
    for err in data.get("errors") or ():
        if isinstance(err, dict) and err.get("message"):
            parts.append(str(err["message"]))
        elif isinstance(err, str):
            parts.append(err)
    return ": ".join(p for p in parts if p)


@contextlib.contextmanager
def translated(action: str, secrets: Sequence[str]) -> Iterator[None]:
    """Turn PyGithub/requests failures inside the block into a `GitHubError` naming `action`.

    `from None`: the original exception stays out of the printed chain; its useful part is in the message."""
    try:
        yield
    except GitHubError:
        raise
    except RateLimitExceededExceedsMaxWait as exc:
        raise GitHubError(one_line(f"{action}: GitHub's rate limit resets in {exc.wait or 0:.0f} s, longer than "
                                   "fixbot waits; run again later", secrets)) from None
    except RateLimitExceededException as exc:
        raise GitHubError(one_line(f"{action}: GitHub rate limit exceeded ({api_message(exc)}); run again later",
                                   secrets)) from None
    except BadCredentialsException:
        raise GitHubError(one_line(f"{action}: GitHub rejected the token (401); {_HINTS[401]}", secrets)) from None
    except GithubException as exc:
        hint = _HINTS.get(exc.status, "")
        detail = "; ".join(p for p in (api_message(exc), hint) if p)
        raise GitHubError(one_line(f"{action}: GitHub answered {exc.status}" + (f" ({detail})" if detail else ""),
                                   secrets)) from None
    except requests.RequestException as exc:
        raise GitHubError(one_line(f"{action}: could not reach GitHub after retries ({type(exc).__name__}: {exc})",
                                   secrets)) from None
