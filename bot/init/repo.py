"""The repository `fixbot init` sets up: where it is, whether it is a git repository's top, and the few files
the detection reads (configuration, requirement files, test modules, workflows). Nothing is run."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot.checkout.paths import is_test_path
from bot.checkout.repository import SKIP_DIRS, Checkout
from bot.environment.install.requirement_files import DECLARATION_FILE
from bot.errors import UserError

# What the detection and the install plan read; the rest of the repository (sources, data) is not needed.
_SUFFIXES = {".txt", ".in", ".toml", ".cfg", ".ini", ".yml", ".yaml"}
_NAMES = {".python-version", "setup.py", "conftest.py"}
_MAX_FILE_BYTES = 1024 * 1024  # a larger file is data, not configuration or a test module
WORKFLOWS_DIR = ".github/workflows"


class InitError(UserError):
    """`fixbot init` cannot set up this path; the message says what to do instead."""


@dataclass(frozen=True, kw_only=True)
class Repo:
    root: Path  # absolute
    checkout: Checkout  # the files read (see the module doc), for the detection and bot.fix's readers
    git: bool  # the root holds `.git` (a directory, or a file for a worktree or submodule)
    branch: str | None  # the branch checked out, from .git/HEAD; None when unknown or detached

    def workflow_files(self) -> list[str]:
        return sorted(p for p in self.checkout.files if PurePosixPath(p).parent.as_posix() == WORKFLOWS_DIR
                      and p.endswith((".yml", ".yaml")))


def _wanted(rel: str) -> bool:
    path = PurePosixPath(rel)
    if path.suffix == ".py":
        return path.name in _NAMES or is_test_path(rel)
    return path.suffix in _SUFFIXES or path.name in _NAMES or bool(DECLARATION_FILE.fullmatch(rel))


def _files(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            if full.is_symlink() or not full.is_file() or not _wanted(rel):
                continue
            if full.stat().st_size <= _MAX_FILE_BYTES:
                files[rel] = full.read_bytes()
    return files


def _enclosing_git(root: Path) -> Path | None:
    for parent in root.parents:
        if (parent / ".git").exists():
            return parent
    return None


def _branch(root: Path) -> str | None:
    head = root / ".git" / "HEAD"  # a worktree's .git is a file: its branch stays unknown, which is fine
    try:
        text = head.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    prefix = "ref: refs/heads/"
    return text[len(prefix):] if text.startswith(prefix) else None


def read_repo(path: str | Path) -> Repo:
    """The repository at `path`. InitError when it is not a directory, or is a subdirectory of a git repository
    (GitHub reads workflows only from `.github/` at the top, so files written there would never run)."""
    root = Path(path).expanduser()
    if not root.exists():
        raise InitError(f"{path}: no such directory")
    if not root.is_dir():
        raise InitError(f"{path}: not a directory (give the repository's top directory)")
    root = root.resolve()
    git = (root / ".git").exists()
    if not git and (top := _enclosing_git(root)) is not None:
        raise InitError(f"{root} is inside the git repository {top}, and GitHub reads workflows only from .github/ "
                        f"at its top: run `fixbot init {top}`")
    return Repo(root=root, checkout=Checkout(root=str(root), files=_files(root)), git=git,
                branch=_branch(root) if git else None)
