"""A small repository run by a real pytest, its failures parsed by bot.failures, and per-test line coverage
recorded by a tiny sys.settrace plugin (coverage.py is not a dependency) in the shape `TestRun.coverage` has:
path -> line -> ids of the tests that executed it. Shared by the localization tests."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bot.checkout.repository import Checkout
from bot.failures import parse_junit
from bot.fix.types import TestRun

PLUGIN = '''
import json, os, sys
import pytest

ROOT = os.getcwd() + os.sep
LINES, PASSED, FAILED = {}, set(), set()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    def line_tracer(frame, event, arg):
        if event == "line":
            LINES.setdefault(frame.f_code.co_filename, {}).setdefault(frame.f_lineno, set()).add(item.nodeid)
        return line_tracer

    sys.settrace(lambda frame, event, arg: line_tracer if frame.f_code.co_filename.startswith(ROOT) else None)
    try:
        yield
    finally:
        sys.settrace(None)


def pytest_runtest_logreport(report):
    if report.failed:
        FAILED.add(report.nodeid)
        PASSED.discard(report.nodeid)
    elif report.when == "call" and report.nodeid not in FAILED:
        PASSED.add(report.nodeid)


def pytest_collectreport(report):
    if report.failed:
        FAILED.add(report.nodeid)


def pytest_sessionfinish(session):
    lines = {path: {n: sorted(ids) for n, ids in by_line.items()} for path, by_line in LINES.items()}
    with open(os.environ["LINETRACE_OUT"], "w") as out:
        json.dump({"lines": lines, "passed": sorted(PASSED), "failed": sorted(FAILED)}, out)
'''


def run_repo(tmp_path: Path, files: dict[str, str], *, coverage: bool = True) -> tuple[Checkout, TestRun]:
    """Write the repository, run pytest on it for real, and read the run as the pipeline would."""
    root = tmp_path / "repo"
    for name, text in {"pytest.ini": "[pytest]\npythonpath = .\n", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "linetrace.py").write_text(PLUGIN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(tmp_path / "plugin"),
               LINETRACE_OUT=str(tmp_path / "trace.json"))
    command = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "linetrace",
               f"--junitxml={tmp_path / 'junit.xml'}", "-q")
    began = time.monotonic()
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1, 2), proc.stdout + proc.stderr
    trace = json.loads((tmp_path / "trace.json").read_text())
    failures = parse_junit(tmp_path / "junit.xml", root=str(root))
    lines = {path: {int(n): frozenset(ids) for n, ids in by_line.items()} for path, by_line in trace["lines"].items()}
    run = TestRun(command=command, exit_code=proc.returncode, passed=frozenset(trace["passed"]),
                  failed=frozenset(trace["failed"]), failures=tuple(failures), duration_s=time.monotonic() - began,
                  output=proc.stdout, coverage=lines if coverage else None)
    checkout = Checkout(str(root), {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                                    if p.is_file() and "__pycache__" not in p.parts})
    return checkout, run


def where(targets) -> list[str]:
    return [f"{t.path}::{t.qualname}" for t in targets]
