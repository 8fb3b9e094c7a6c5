"""From fixed files to a patch a maintainer can trust: minimal unified diff, parsed back with unidiff, checked
with `git apply --check` against the real checkout, and held to a scope (only the target files; never tests,
CI configuration, or anything outside the repository)."""
from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from bot.checkout.paths import is_test_path

NO_NEWLINE = "\\ No newline at end of file\n"


class PatchRejected(Exception):
    """The patch broke a rule (scope, format) or does not apply: a bug of fixbot's, never published."""


def file_diff(before: str, after: str, path: str) -> str:
    """git-style diff of one file; a last line without newline gets git's marker, so `git apply` agrees."""
    out: list[str] = []
    for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}"):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    if not out:
        return ""
    return f"diff --git a/{path} b/{path}\n" + "".join(out)


def make_patch(original: Mapping[str, bytes], fixed: Mapping[str, bytes]) -> str:
    parts = []
    for path in sorted(fixed):
        if fixed[path] != original.get(path):
            parts.append(file_diff(original[path].decode("utf-8", "surrogateescape"),
                                   fixed[path].decode("utf-8", "surrogateescape"), path))
    return "".join(parts)


def _parse(patch: str) -> PatchSet:
    try:
        return PatchSet(patch)
    except UnidiffParseError as exc:
        raise PatchRejected(f"the patch does not parse as a unified diff: {exc}") from None


def touched_files(patch: str) -> list[str]:
    return [f.path for f in _parse(patch)]


def check_scope(patch: str, allowed: Iterable[str]) -> list[str]:
    """The files the patch touches, after checking every one is allowed; raises PatchRejected otherwise."""
    allowed = set(allowed)
    touched = []
    for f in _parse(patch):
        path = f.path
        parts = PurePosixPath(path).parts
        if PurePosixPath(path).is_absolute() or ".." in parts:
            raise PatchRejected(f"the patch reaches outside the repository: {path}")
        if parts[:1] == (".github",) or is_test_path(path):
            raise PatchRejected(f"the patch touches {path}: fixbot never edits tests or CI configuration")
        if path not in allowed:
            raise PatchRejected(f"the patch touches {path}, which is not a repaired target's file")
        if f.is_added_file or f.is_removed_file:
            raise PatchRejected(f"the patch adds or removes {path}: a fix edits existing code")
        touched.append(path)
    return touched


def _git_env(root: str | Path) -> dict[str, str]:
    """Paths in the patch are relative to `root`. Inside an enclosing repository git would read them from that
    repository's top and silently skip files outside the current directory; the ceiling stops the search at
    `root` (a repository whose top is `root` is still found)."""
    return {**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(root).resolve().parent)}


def check_applies(patch: str, root: str | Path) -> None:
    """`git apply --check` against the checkout itself (works in a plain directory too)."""
    git = shutil.which("git")
    if git is None:
        raise PatchRejected("git is not installed: cannot check that the patch applies")
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False, encoding="utf-8",
                                     errors="surrogateescape") as f:
        f.write(patch)
    try:
        proc = subprocess.run([git, "apply", "--check", f.name], cwd=root, capture_output=True, text=True,
                              env=_git_env(root))
    finally:
        Path(f.name).unlink(missing_ok=True)
    if proc.returncode != 0:
        raise PatchRejected(f"git apply --check failed: {proc.stderr.strip() or proc.stdout.strip()}")


def apply_patch(patch: str, root: str | Path) -> None:
    """Applies a checked patch to the working tree (the user asked: --apply)."""
    check_applies(patch, root)
    proc = subprocess.run(["git", "apply", "-"], cwd=root, input=patch.encode("utf-8", "surrogateescape"),
                          capture_output=True, env=_git_env(root))
    if proc.returncode != 0:
        raise PatchRejected(f"git apply failed: {proc.stderr.decode(errors='replace').strip()}")


def validate(patch: str, root: str | Path, allowed: Iterable[str]) -> list[str]:
    touched = check_scope(patch, allowed)
    check_applies(patch, root)
    return touched
