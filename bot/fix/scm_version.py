"""A version for a project that takes its version from git (setuptools-scm, hatch-vcs, vcs-versioning).

The build container gets the checkout's files without `.git`, and those plugins then stop the build ("unable to
detect version"): the project would not install, and code that reads its own metadata
(`importlib.metadata.version("pkg")` in `__init__.py`) would fail every test. setuptools-scm reads the version
from `SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>` instead: the checkout's latest tag (`git describe` on the host
reads the repository's history, never runs its code), else 0.0.0.
"""
from __future__ import annotations

import configparser
import re
import subprocess

from packaging.version import InvalidVersion, Version

from .python_sources import read_pyproject
from .types import Checkout

_PLUGINS = re.compile(r"setuptools[_-]scm|hatch-vcs|vcs-versioning|use_scm_version")
_SETUP_NAME = re.compile(r"""\bname\s*=\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']""")
FALLBACK = "0.0.0"


def _text(checkout: Checkout, path: str) -> str:
    return checkout.text(path) if path in checkout.files else ""


def project_name(checkout: Checkout) -> str | None:
    """The distribution's name as pyproject.toml, setup.cfg or a literal in setup.py gives it."""
    project = read_pyproject(checkout).get("project")
    name = project.get("name") if isinstance(project, dict) else None
    if isinstance(name, str) and name:
        return name
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(_text(checkout, "setup.cfg"))
        name = parser.get("metadata", "name", fallback=None)
    except configparser.Error:
        name = None
    if name:
        return name
    found = _SETUP_NAME.search(_text(checkout, "setup.py"))
    return found.group(1) if found else None


def latest_tag_version(root: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", root, "describe", "--tags", "--abbrev=0"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return FALLBACK
    try:
        return str(Version(proc.stdout.strip().removeprefix("v"))) if proc.returncode == 0 else FALLBACK
    except InvalidVersion:
        return FALLBACK


def pretend_version_env(checkout: Checkout) -> dict[str, str]:
    """The build's variable for a project that uses a git-versioning plugin; {} for any other project. Without a
    readable name the variable without suffix applies to every package the build makes from source."""
    if not any(_PLUGINS.search(_text(checkout, path)) for path in ("pyproject.toml", "setup.cfg", "setup.py")):
        return {}
    version = latest_tag_version(checkout.root)
    name = project_name(checkout)
    if name is None:
        return {"SETUPTOOLS_SCM_PRETEND_VERSION": version}
    return {f"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_{re.sub(r'[-_.]+', '_', name).upper()}": version}
