"""Which paths of a repository are tests, and which a fix may change: one answer for the checkout's checks,
the ranking of targets, and the patch's scope guard."""
from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath
from typing import Iterable

TEST_PARTS = ("tests", "test", "testing")


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return (any(p in TEST_PARTS for p in parts[:-1]) or name.startswith("test_") or name.endswith("_test.py")
            or name == "conftest.py")


def in_paths(path: str, patterns: Iterable[str]) -> bool:
    """`path` matches one of the glob patterns (`**/` also matches no directory: `**/*.py` holds `mod.py`)."""
    return any(fnmatch.fnmatchcase(path, p) or (p.startswith("**/") and fnmatch.fnmatchcase(path, p[3:]))
               for p in patterns)
