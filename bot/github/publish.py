"""Publish a verified `FixResult` as a branch, a commit and a pull request — once per failure.

Only GitHub's git data API writes: a blob per changed file, a tree on top of the failing commit's tree, a commit
whose parent is that commit, and a new ref `fixbot/<sha>-<signature>`. No clone and no push credentials are
needed, the base branch is never written, and no existing ref is ever moved.

Every step is safe to repeat, which is what lets the HTTP layer retry POSTs after a dropped connection: blobs,
trees and commits are content-addressed; a second ref creation answers 422 "Reference already exists" and is
accepted only when the branch holds the same tree on the same parent; a second PR creation answers 422 "already
exists" and resolves to that PR. Before writing anything, the open PRs are searched for the failure's signature."""
from __future__ import annotations

import base64
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from github import GithubException, InputGitTreeElement
from github.PullRequest import PullRequest
from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from bot.fix.result import FixResult
from bot.github import body as render
from bot.github.client import GitHubRepo
from bot.github.errors import BadInput, BranchConflict, GitHubError, api_message
from bot.github.signature import branch_name, carries, signature
from bot.github.types import Publication

log = logging.getLogger(__name__)

_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_BRANCH = re.compile(r"^(?!/)(?!.*(?:\.\.|//|@\{|\.lock$|/$))[^\s~^:?*\[\\\x00-\x1f\x7f]+$")  # git check-ref-format
_MODES = frozenset({"100644", "100755"})
_LABEL_LIMIT = 50  # GitHub's longest label name


@dataclass(frozen=True)
class _Written:
    commit_sha: str
    tree_sha: str


def publish(repo: GitHubRepo, result: FixResult, *, base_branch: str, head_sha: str, run_url: str | None,
            labels: Sequence[str], draft: bool, source_pr: int | None, files_after: Mapping[str, bytes],
            modes: Mapping[str, str] | None = None) -> Publication:
    """Open a PR against `base_branch` whose single commit, on top of `head_sha` (the commit the tests failed
    on), changes the files in `files_after` (path -> full new content; every file the diff touches, no other).
    `modes` gives a file's git mode when it is not "100644" (e.g. "100755" for an executable script).

    Returns "skipped" when there is no verified fix, "existing" when a PR for the same failure is open (or
    the branch already has one), "opened" otherwise. Failures to label or to comment after the PR is open are
    logged and returned as warnings: the PR stands, and a re-run would find it."""
    sig = signature(result)
    if result.status != "fixed" or not result.diff.strip():
        return Publication("skipped", None, None, None, sig, reason=f"nothing to publish (status {result.status})")
    _check_inputs(base_branch, head_sha, labels, modes or {})
    _check_files(result.diff, files_after)
    branch = branch_name(head_sha, sig)

    found = _find_open(repo, sig)
    if found is not None:
        return _existing(found, sig, "an open pull request already carries this failure's signature")

    written = _write_commit(repo, result, head_sha, run_url, files_after, modes or {})
    ours = _create_branch(repo, branch, written, head_sha)
    text = repo.redact(render.body(result, signature=sig, run_url=run_url, branch=branch))
    pr, opened, warnings = _open_pull(repo, branch, base_branch, repo.redact(render.title(result)), text, draft,
                                      branch_is_new=ours)
    if not opened:
        return _existing(pr, sig, f"a pull request from {branch} exists already")
    log.info("opened pull request #%d from %s", pr.number, branch)
    warnings += _decorate(repo, result, pr, labels, source_pr)
    return Publication("opened", pr.number, pr.html_url, branch, sig, reason="; ".join(warnings))


def _existing(pr: PullRequest, sig: str, reason: str) -> Publication:
    return Publication("existing", pr.number, pr.html_url, pr.head.ref, sig, reason=reason)


def _check_inputs(base_branch: str, head_sha: str, labels: Sequence[str], modes: Mapping[str, str]) -> None:
    if not _SHA.match(head_sha):
        raise BadInput(f"head commit must be a full hexadecimal SHA, got {head_sha[:80]!r}")
    if not _BRANCH.match(base_branch) or base_branch.startswith("refs/"):
        raise BadInput(f"base branch must be a branch name like 'main', got {base_branch[:80]!r}")
    for label in labels:
        if not label.strip() or len(label) > _LABEL_LIMIT:
            raise BadInput(f"a label must be 1 to {_LABEL_LIMIT} characters, got {label[:80]!r}")
    for path, mode in modes.items():
        if mode not in _MODES:
            raise BadInput(f"mode of {path} must be one of {sorted(_MODES)}, got {mode!r}")


def _check_files(diff: str, files_after: Mapping[str, bytes]) -> None:
    """The commit must hold exactly the change the PR shows: each file the diff touches is in `files_after`, and
    its new content has every hunk's post-image at the line the hunk names. A mismatch is a bug upstream."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError as exc:
        raise ValueError(f"the fix's diff does not parse: {exc}") from None
    touched = {}
    for patched in patch:
        if patched.is_removed_file or patched.is_rename:
            raise ValueError(f"publish writes modified or added files only, not the removal of {patched.path}")
        touched[patched.path] = patched
    if set(touched) != set(files_after):
        raise ValueError(f"files_after {sorted(files_after)} does not match the files in the diff {sorted(touched)}")
    for path, patched in touched.items():
        # split at "\n" only, like a diff: str.splitlines would also split at form feeds and other separators
        lines = [line.rstrip("\r") for line in files_after[path].decode("utf-8", "surrogateescape").split("\n")]
        for hunk in patched:
            image = [line.value.rstrip("\n").rstrip("\r") for line in hunk if line.is_context or line.is_added]
            start = max(hunk.target_start - 1, 0)
            if lines[start:start + len(image)] != image:
                raise ValueError(f"files_after[{path!r}] does not hold the diff's hunk at line {hunk.target_start}")


def _find_open(repo: GitHubRepo, sig: str) -> PullRequest | None:
    with repo.call("listing open pull requests"):
        for pr in repo.api.get_pulls(state="open"):
            if carries(sig, head_ref=pr.head.ref, body=pr.body):
                return pr
    return None


def _write_commit(repo: GitHubRepo, result: FixResult, head_sha: str, run_url: str | None,
                  files_after: Mapping[str, bytes], modes: Mapping[str, str]) -> _Written:
    with repo.call(f"reading commit {head_sha[:12]}"):
        parent = repo.api.get_git_commit(head_sha)
        base_tree = parent.tree
    with repo.call("writing the fix as a commit"):
        elements = []
        for path, content in sorted(files_after.items()):
            # base64: the file's bytes exactly (any encoding, line endings and final newline kept)
            blob = repo.api.create_git_blob(base64.b64encode(content).decode("ascii"), "base64")
            elements.append(InputGitTreeElement(path, modes.get(path, "100644"), "blob", sha=blob.sha))
        tree = repo.api.create_git_tree(elements, base_tree)
        commit = repo.api.create_git_commit(repo.redact(render.commit_message(result, run_url)), tree, [parent])
    return _Written(commit.sha, tree.sha)


def _create_branch(repo: GitHubRepo, branch: str, written: _Written, head_sha: str) -> bool:
    """Create the branch; if it exists, accept it only when it holds the very same change.
    True when this run made the branch (so any PR from it is this run's too)."""
    with repo.call(f"creating branch {branch}"):
        try:
            repo.api.create_git_ref(f"refs/heads/{branch}", written.commit_sha)
            return True
        except GithubException as exc:
            if exc.status != 422 or "already exists" not in api_message(exc).lower():
                raise
        # Our own POST retried after a lost answer (the ref holds our very commit), or an earlier run that
        # stopped before opening the PR (another commit with the same tree on the same parent).
        sha = repo.api.get_git_ref(f"heads/{branch}").object.sha
        if sha == written.commit_sha:
            return True
        other = repo.api.get_git_commit(sha)
        if other.tree.sha == written.tree_sha and [p.sha for p in other.parents] == [head_sha]:
            log.info("branch %s exists with the same change (commit %s); using it", branch, sha[:12])
            return False
    raise BranchConflict(f"branch {branch} already exists with other changes; fixbot leaves it alone "
                         "(delete it to let fixbot publish)")


def _open_pull(repo: GitHubRepo, branch: str, base: str, title: str, text: str, draft: bool, *,
               branch_is_new: bool) -> tuple[PullRequest, bool, list[str]]:
    """(the PR, whether this run opened it, warnings)."""
    warnings: list[str] = []
    with repo.call(f"opening a pull request from {branch} into {base}"):
        try:
            return repo.api.create_pull(base=base, head=branch, title=title, body=text, draft=draft), True, warnings
        except GithubException as exc:
            message = api_message(exc).lower()
            if exc.status != 422:
                raise
            if draft and "draft" in message:  # plans without draft PRs: a ready PR is still a proposal
                warnings.append("draft pull requests are not available here; opened a ready one")
                log.warning("%s", warnings[-1])
                return repo.api.create_pull(base=base, head=branch, title=title, body=text), True, warnings
            if "already exists" not in message:
                raise
        # Our own POST retried after a lost answer (then the branch is new: nobody else knew it), or a PR from
        # this branch opened by an earlier run.
        for pr in repo.api.get_pulls(state="all", head=f"{repo.owner}:{branch}"):
            return pr, branch_is_new, warnings
    raise GitHubError(f"GitHub says a pull request from {branch} exists but lists none; run again later")


def _decorate(repo: GitHubRepo, result: FixResult, pr: PullRequest, labels: Sequence[str],
              source_pr: int | None) -> list[str]:
    """Labels (GitHub creates a missing one when it is added) and the note on the source PR."""
    warnings = []
    if labels:
        try:
            with repo.call(f"labelling pull request #{pr.number}"):
                pr.add_to_labels(*labels)
        except GitHubError as exc:
            warnings.append(str(exc))
    if source_pr is not None:
        try:
            with repo.call(f"commenting on pull request #{source_pr}"):
                note = render.source_comment(result, pr_number=pr.number, pr_url=pr.html_url)
                repo.api.get_issue(source_pr).create_comment(repo.redact(note))
        except GitHubError as exc:
            warnings.append(str(exc))
    for warning in warnings:
        log.warning("%s", warning)
    return warnings
