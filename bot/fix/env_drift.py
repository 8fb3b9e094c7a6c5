"""Dependencies newer than the project: after the build installs the newest versions its declarations allow, the
checkout's modules and test files are imported in the build container (bot/fix/import_check.py); an import that
fails inside an installed distribution (`cannot import name 'is_windows' from 'requests.compat'`) means the
project was written against an older release. The distribution is then pinned to the lowest version the project
declares (`requests>=2.3.0` → `requests==2.3.0`), as its CI installed when that bound was new."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.builder import SRC, BuildBox

CHECK_TIMEOUT_S = 120
REPORT = "/tmp/fixbot-imports.json"


@dataclass(frozen=True, kw_only=True)
class Drift:
    """One import of the checkout that failed inside an installed distribution."""

    module: str  # the checkout's module or test file that failed to import ("httpie.compat")
    name: str  # what it asked for ("is_windows")
    source: str  # the installed module it asked ("requests.compat")
    dist: str  # the distribution that provides that module ("requests")
    version: str  # its installed version
    lowest: str | None  # the lowest version the installed project declares for it, if any

    def describe(self) -> str:
        return f"{self.module} cannot import {self.name!r} from {self.source} ({self.dist} {self.version})"


@dataclass(frozen=True, kw_only=True)
class ImportCheck:
    """What importing the checkout's package modules and test files in the build container found."""

    drifts: tuple[Drift, ...] = ()
    failed: int = 0  # modules that did not import, for any reason (a missing test tool, an old stdlib name...)
    modules: int = 0  # modules tried
    seconds: float = 0.0


def check_imports(box: BuildBox, project: Sequence[str]) -> ImportCheck:
    """The checkout's imports that fail, with the lowest versions `project` (its installed distributions)
    declares; nothing found when the check itself did not finish (a module that ends the process, a hang): it
    only ever adds information."""
    script = (Path(__file__).parent / "import_check.py").read_text()
    run = box.run(("python3", "-c", script, SRC, REPORT, *project), timeout_s=CHECK_TIMEOUT_S, echo=False)
    report = box.run(("cat", REPORT), timeout_s=30, echo=False)
    try:
        found = json.loads(report.output) if report.ok else {}
    except json.JSONDecodeError:
        return ImportCheck()
    drifts = tuple(Drift(module=d["module"], name=d["name"], source=d["from"], dist=d["dist"], version=d["version"],
                         lowest=d["lowest"]) for d in found.get("drift", ()))
    return ImportCheck(drifts=drifts, failed=found.get("failed", 0), modules=found.get("modules", 0),
                       seconds=run.duration_s)


def pins_for(drifts: tuple[Drift, ...]) -> tuple[str, ...]:
    """`name==lowest` for each drifting distribution whose declared lowest version is not what is installed."""
    pins = {d.dist: f"{d.dist}=={d.lowest}" for d in drifts if d.lowest and d.lowest != d.version}
    return tuple(sorted(pins.values()))
