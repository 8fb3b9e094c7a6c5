"""Reading the user's repository: which files the sandbox gets, and the checks that make bad input a clear error."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.checkout.paths import is_test_path
from bot.errors import UserError

# Never shipped to the sandbox: version control, virtualenvs, caches and build output.
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "node_modules", "__pycache__", ".tox", ".nox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "build", "dist", ".fixbot", ".idea", ".vscode"}
DEFAULT_MAX_MB = 50.0


@dataclass(frozen=True)
class Checkout:
    """The files of the user's repository that the sandbox gets (no .git, caches or virtualenvs)."""

    root: str  # absolute path on the host
    files: Mapping[str, bytes]  # posix path relative to root -> content

    def text(self, path: str) -> str:
        return self.files[path].decode("utf-8", "surrogateescape")


class BadRepository(UserError):
    """The path is not a Python repository fixbot can work on."""


def _skip_dir(name: str) -> bool:
    return name in SKIP_DIRS or name.endswith(".egg-info")


def load_checkout(path: str | Path, *, max_mb: float = DEFAULT_MAX_MB) -> Checkout:
    root = Path(path).expanduser()
    if not root.exists():
        raise BadRepository(f"{path}: no such directory")
    if not root.is_dir():
        raise BadRepository(f"{path}: not a directory (give the repository's top directory)")
    root = root.resolve()
    limit = int(max_mb * 1024 * 1024)
    files: dict[str, bytes] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not _skip_dir(d))
        for name in sorted(filenames):
            full = Path(dirpath, name)
            if full.is_symlink() or not full.is_file():
                continue  # a link could point anywhere on the host; the sandbox gets real files only
            rel = full.relative_to(root).as_posix()
            size = full.stat().st_size
            total += size
            if total > limit:
                raise BadRepository(f"{root} holds more than {max_mb:g} MB of files (without .git, virtualenvs and "
                                    "caches); raise the limit with --max-repo-mb if that is expected")
            files[rel] = full.read_bytes()
    python = [p for p in files if p.endswith(".py")]
    if not python:
        raise BadRepository(f"{root}: no Python files; fixbot repairs Python projects")
    if not any(is_test_path(p) and p.endswith(".py") and Path(p).name != "conftest.py" for p in python):
        raise BadRepository(f"{root}: no test files (test_*.py, *_test.py, *_tests.py or tests.py); fixbot needs "
                            "failing tests to work from")
    return Checkout(root=str(root), files=files)


def commit_date(root: str | Path) -> str | None:
    """The date of the commit checked out at `root` (ISO 8601, UTC), or None outside a git repository: the day the
    failing code was written, which dates the dependencies it was tested with (bot/environment/prepare.py)."""
    try:
        proc = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%cI"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None
