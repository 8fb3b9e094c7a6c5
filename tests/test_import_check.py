"""The import check (bot/inside/import_check.py, run in the build container) and what the host makes of it
(bot/environment/drift.py): the check reports what it found even when classifying a failed import takes longer
than one module's time limit or an installed distribution has no name, and a check that wrote no report says why
instead of reading as "0 modules imported"."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pip

from bot.environment.drift import check_imports
from sandbox.builder import CommandResult

SCRIPT = resources.files("bot.inside").joinpath("import_check.py")

# Runs the check on the host's Python with a one-second limit per module and a classification that outlasts it.
SLOW_CLASSIFY = """\
import runpy, sys, time
sys.argv = ["import_check.py", {src!r}, {out!r}]
sys.path.insert(0, {site!r})
check = runpy.run_path({script!r}, run_name="import_check")
check["main"].__globals__["PER_MODULE_S"] = 1
real_owner = check["_owner"]
def slow_owner(top):
    time.sleep(2)  # reading every distribution's file list, on a slow disk
    return real_owner(top)
check["main"].__globals__["_owner"] = slow_owner
check["main"]()
"""


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    src, site = tmp_path / "src", tmp_path / "lib" / "site-packages"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "uses_dep.py").write_text("from dep import dropped\n")  # fails inside an installed module
    (src / "pkg" / "fine.py").write_text("X = 1\n")
    (site / "dep-2.0.dist-info").mkdir(parents=True)
    (site / "dep.py").write_text("KEPT = 1\n")
    (site / "dep-2.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: dep\nVersion: 2.0\n")
    (site / "dep-2.0.dist-info" / "RECORD").write_text("dep.py,,\n")
    (site / "broken-1.0.dist-info").mkdir()  # a leftover of a failed install: no Name in its METADATA
    (site / "broken-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\n")
    return src, site


def test_the_check_reports_when_classifying_outlasts_a_modules_limit_and_a_distribution_has_no_name(tmp_path):
    src, site = _tree(tmp_path)
    out = tmp_path / "report.json"
    code = SLOW_CLASSIFY.format(src=str(src), out=str(out), site=str(site), script=str(SCRIPT))
    tools = tmp_path / "tools"  # pip alone (the check parses requirements with pip's vendored packaging)
    tools.mkdir()
    (tools / "pip").symlink_to(Path(pip.__file__).parent)
    # -S: no site-packages, so the installed distributions are the tree's two, not this machine's hundreds
    run = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(tools)}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["modules"] == 3 and report["failed"] == 1 and report["finished"] is True, report
    assert report["drift"] == [{"module": "pkg.uses_dep", "name": "dropped", "from": "dep", "dist": "dep",
                                "version": "2.0", "lowest": None}], report
    assert report["floors"] == [], report


def _check(tmp_path: Path, modules: dict[str, str]) -> tuple[subprocess.CompletedProcess, dict]:
    """The check on the host's Python over package `pkg` of `modules`, one second per module, for the installed
    project `proj`, which asks for dep>=1.0 (2.0 installed: a floor)."""
    src, site = _tree(tmp_path)
    (site / "proj-0.1.dist-info").mkdir()
    (site / "proj-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: proj\nVersion: 0.1\nRequires-Dist: dep>=1.0\n")
    for name, text in modules.items():
        (src / "pkg" / f"{name}.py").write_text(text)
    out, tools = tmp_path / "report.json", tmp_path / "tools"
    tools.mkdir()
    (tools / "pip").symlink_to(Path(pip.__file__).parent)
    code = (f"import runpy, sys\nsys.argv = ['import_check.py', {str(src)!r}, {str(out)!r}, 'proj']\n"
            f"sys.path.insert(0, {str(site)!r})\ncheck = runpy.run_path({str(SCRIPT)!r}, run_name='import_check')\n"
            "check['main'].__globals__['PER_MODULE_S'] = 1\ncheck['main']()\n")
    run = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(tools)}, cwd=tmp_path)
    return run, json.loads(out.read_text())


def test_a_module_cannot_take_away_the_limit_of_the_modules_after_it(tmp_path):
    run, report = _check(tmp_path, {
        "a_ignores": "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n",  # its own handler
        "b_swallows": "import time\ntry:\n    time.sleep(30)\nexcept Exception:\n    pass\n",  # a retry loop's
        "c_sleeps": "import time\ntime.sleep(30)\n"})
    assert run.returncode == 0, run.stderr[-2000:]
    # uses_dep (drift) and the two sleepers failed, each stopped at its limit
    assert report["finished"] is True and report["modules"] == 6 and report["failed"] == 3, report


def test_a_module_that_ends_the_process_keeps_the_floors_and_says_the_check_did_not_finish(tmp_path):
    run, report = _check(tmp_path, {"a_exits": "import os\nos._exit(3)\n"})
    assert run.returncode == 3
    assert report["finished"] is False and report["modules"] == 0, report
    assert report["floors"] == [{"dist": "dep", "lowest": "1.0", "version": "2.0", "modules": ["dep"]}], report


class _Box:
    """A build container whose import check ended without writing its report."""

    def __init__(self, output: str, timed_out: bool = False) -> None:
        self.output, self.timed_out = output, timed_out

    def run(self, argv, *, timeout_s, echo=True):  # type: ignore[no-untyped-def]
        if argv[0] == "cat":
            return CommandResult(argv=tuple(argv), exit_code=1, output="cat: no such file", duration_s=0.0)
        return CommandResult(argv=tuple(argv), exit_code=1, output=self.output, duration_s=6.4,
                             timed_out=self.timed_out)


def test_a_check_that_wrote_no_report_says_why():
    found = check_imports(_Box("Traceback (most recent call last):\n  ...\nMemoryError\n"), ["proj"])  # type: ignore[arg-type]
    assert found.unfinished == "MemoryError" and found.modules == 0 and found.seconds == 6.4
    assert check_imports(_Box("", timed_out=True), ["proj"]).unfinished == "timed out"  # type: ignore[arg-type]


class _Ended(_Box):
    """A build container whose import check wrote its first report (the floors) and then ended."""

    def run(self, argv, *, timeout_s, echo=True):  # type: ignore[no-untyped-def]
        if argv[0] == "cat":
            report = {"drift": [], "floors": [{"dist": "dep", "lowest": "1.0", "version": "2.0", "modules": ["dep"]}],
                      "failed": 0, "modules": 0, "finished": False}
            return CommandResult(argv=tuple(argv), exit_code=0, output=json.dumps(report), duration_s=0.0)
        return super().run(argv, timeout_s=timeout_s, echo=echo)


def test_a_check_that_ended_early_keeps_its_floors():
    found = check_imports(_Ended("some module's last words\n"), ["proj"])  # type: ignore[arg-type]
    assert found.unfinished == "some module's last words" and not found.drifts
    assert [(f.dist, f.lowest, f.version, f.modules) for f in found.floors] == [("dep", "1.0", "2.0", ("dep",))]


def test_the_build_log_says_the_check_did_not_finish_and_holds_nothing_back():
    from bot.environment.build import _report_drift

    lines: list[str] = []
    pins = _report_drift(check_imports(_Box("MemoryError\n"), ["proj"]), lines.append)  # type: ignore[arg-type]
    assert pins == () and len(lines) == 1
    assert "did not finish in 6.4 s (MemoryError)" in lines[0] and "0 package module(s)" not in lines[0]
