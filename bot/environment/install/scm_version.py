"""A version for a project that takes its version from git (setuptools-scm, hatch-vcs, vcs-versioning).

The build container gets the checkout's files without `.git`, and those plugins then stop the build ("unable to
detect version"): the project would not install, and code that reads its own metadata
(`importlib.metadata.version("pkg")` in `__init__.py`) would fail every test. setuptools-scm reads the version
from `SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>` instead: the checkout's latest tag (`git describe` on the host
reads the repository's history, never runs its code), else 0.0.0.
"""
from __future__ import annotations

import re
import subprocess

from packaging.version import InvalidVersion, Version

from bot.checkout.repository import Checkout

_PLUGINS = re.compile(r"setuptools[_-]scm|hatch-vcs|vcs-versioning|use_scm_version")
FALLBACK = "0.0.0"


def _text(checkout: Checkout, path: str) -> str:
    return checkout.text(path) if path in checkout.files else ""


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


def pretend_version_env(checkout: Checkout, name: str | None) -> dict[str, str]:
    """The build's variable for a project that uses a git-versioning plugin; {} for any other project. `name`: the
    distribution's (install_plan reads it); without one the variable without suffix applies to every package the
    build makes from source."""
    if not any(_PLUGINS.search(_text(checkout, path)) for path in ("pyproject.toml", "setup.cfg", "setup.py")):
        return {}
    version = latest_tag_version(checkout.root)
    if name is None:
        return {"SETUPTOOLS_SCM_PRETEND_VERSION": version}
    return {f"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_{re.sub(r'[-_.]+', '_', name).upper()}": version}
