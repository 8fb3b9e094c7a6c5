"""Dependencies newer than the project: after the build installs the newest versions its declarations allow, the
checkout's modules and test files are imported in the build container (bot/inside/import_check.py); an import that
fails inside an installed distribution (`cannot import name 'is_windows' from 'requests.compat'`) means the
project was written against an older release. The distribution is then pinned to the lowest version the project
declares (`requests>=2.3.0` → `requests==2.3.0`), as its CI installed when that bound was new."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

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
class Floor:
    """A declared dependency installed above the lowest version the project declares for it: the release to go
    back to when a test fails inside it (bot/fix/reproduce/hold_back.py)."""

    dist: str  # "requests"
    lowest: str  # "2.3.0"
    version: str  # installed: "2.32.5"
    modules: tuple[str, ...]  # its top-level modules: ("requests",)

    @property
    def pin(self) -> str:
        return f"{self.dist}=={self.lowest}"

    def line(self) -> str:
        """One line of an image label: `dist lowest version module,module`."""
        return f"{self.dist} {self.lowest} {self.version} {','.join(self.modules)}"

    @classmethod
    def parse(cls, line: str) -> Floor | None:
        parts = line.split()
        if len(parts) != 4:
            return None
        return cls(dist=parts[0], lowest=parts[1], version=parts[2], modules=tuple(parts[3].split(",")))


@dataclass(frozen=True, kw_only=True)
class ImportCheck:
    """What importing the checkout's package modules and test files in the build container found."""

    drifts: tuple[Drift, ...] = ()
    floors: tuple[Floor, ...] = ()  # every declared dependency installed above its lowest declared version
    failed: int = 0  # modules that did not import, for any reason (a missing test tool, an old stdlib name...)
    modules: int = 0  # modules tried
    seconds: float = 0.0
    unfinished: str = ""  # why the check wrote no report (its last line of output), when it did not finish


def check_imports(box: BuildBox, project: Sequence[str]) -> ImportCheck:
    """The checkout's imports that fail, with the lowest versions `project` (its installed distributions)
    declares; no drift found when the check itself did not finish (a module that ends the process, a hang), only
    the floors and why: it only ever adds information."""
    script = resources.files("bot.inside").joinpath("import_check.py").read_text(encoding="utf-8")
    run = box.run(("python3", "-c", script, SRC, REPORT, *project), timeout_s=CHECK_TIMEOUT_S, echo=False)
    report = box.run(("cat", REPORT), timeout_s=30, echo=False)
    try:
        found = json.loads(report.output) if report.ok else None
    except json.JSONDecodeError:
        found = None
    floors = tuple(Floor(dist=f["dist"], lowest=f["lowest"], version=f["version"], modules=tuple(f["modules"]))
                   for f in (found or {}).get("floors", ()) if f["modules"])
    if found is None or not found.get("finished", True):
        lines = [line.strip() for line in run.output.splitlines() if line.strip()]
        why = "timed out" if run.timed_out else (lines[-1] if lines else f"exit code {run.exit_code}")
        if run.ok and found is None:  # the check finished; reading its report did not
            why = f"its report could not be read: {' '.join(report.output.split())}"
        return ImportCheck(floors=floors, seconds=run.duration_s, unfinished=why[:200])
    drifts = tuple(Drift(module=d["module"], name=d["name"], source=d["from"], dist=d["dist"], version=d["version"],
                         lowest=d["lowest"]) for d in found.get("drift", ()))
    return ImportCheck(drifts=drifts, floors=floors, failed=found.get("failed", 0), modules=found.get("modules", 0),
                       seconds=run.duration_s)


def pins_for(drifts: tuple[Drift, ...]) -> tuple[str, ...]:
    """`name==lowest` for each drifting distribution whose declared lowest version is not what is installed."""
    pins = {d.dist: f"{d.dist}=={d.lowest}" for d in drifts if d.lowest and d.lowest != d.version}
    return tuple(sorted(pins.values()))
