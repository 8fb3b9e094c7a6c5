"""Which paths of a repository are tests, and which a fix may change: one answer for the checkout's checks,
the ranking of targets, and the patch's scope guard."""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import PurePosixPath

TEST_PARTS = ("tests", "test", "testing")
TEST_NAMES = ("tests.py", "test.py", "conftest.py")  # tests.py: Django's, which pytest-django's python_files adds


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return (any(p in TEST_PARTS for p in parts[:-1]) or name.startswith("test_")
            or name.endswith(("_test.py", "_tests.py")) or name in TEST_NAMES)


def clean_root(root: str) -> str:
    """A path as a test command names it (`./tests/`, `tests/test_a.py::test_x`) as a checkout path; "" for the
    checkout root itself."""
    path = root.partition("::")[0].replace("\\", "/").strip("/")
    while path.startswith("./"):
        path = path[2:]
    return "" if path == "." else path


def under(path: str, roots: Iterable[str]) -> bool:
    """`path` is one of `roots` or inside one of them (checkout paths; "" is not a root: it would hold all)."""
    return any(root and (path == root or path.startswith(root + "/")) for root in roots)


def in_paths(path: str, patterns: Iterable[str]) -> bool:
    """`path` matches one of the glob patterns (`**/` also matches no directory: `**/*.py` holds `mod.py`)."""
    return any(fnmatch.fnmatchcase(path, p) or (p.startswith("**/") and fnmatch.fnmatchcase(path, p[3:]))
               for p in patterns)
