"""The local fallback: same runner and results, explicit opt-in, a warning, a clean environment."""
from __future__ import annotations

import logging

import pytest

from sandbox import Job, open_sandbox

from .conftest import run_fixbot


@pytest.fixture()
def local(caplog):
    with caplog.at_level(logging.WARNING, logger="fixbot.sandbox"):
        sb = open_sandbox("local")
    assert "WITHOUT isolation" in caplog.text
    return sb


def test_local_runs_and_reports(local):
    result = local.run({"t.py": "import sys\nprint('hi')\nsys.exit(4)\n"}, ["python3", "t.py"])
    assert (result.exit_code, result.stdout) == (4, "hi\n")


def test_local_environment_is_clean(local, monkeypatch):
    monkeypatch.setenv("FIXBOT_TEST_SECRET", "hunter2")
    result = local.run({"t.py": "import os\nprint(sorted(os.environ.items()))\n"}, ["python3", "t.py"])
    assert result.ok and "hunter2" not in result.stdout


def test_local_timeout_kills_the_group(local):
    [slow, fast] = local.run_batch([Job({"t.py": "import time; time.sleep(60)"}, ["python3", "t.py"], 1),
                                    Job({"t.py": "print('fast')"}, ["python3", "t.py"], 10)])
    assert slow.timed_out and slow.duration_s < 5 and fast.stdout == "fast\n"


def test_local_memory_rlimit(local):
    result = local.run({"t.py": "x = b'x' * (4 * 1024 ** 3)\n"}, ["python3", "t.py"])
    assert result.exit_code != 0 and "MemoryError" in result.stderr


def test_unknown_sandbox_kind_is_a_clear_error():
    from sandbox import SandboxError

    with pytest.raises(SandboxError, match="choose docker or local"):
        open_sandbox("chroot")  # type: ignore[arg-type]


def test_cli_local_says_it_is_not_isolation():
    result = run_fixbot("sandbox", "run", "--local", "--", "python3", "-c", "print('x')")
    assert result.returncode == 0 and result.stdout == "x\n" and "WITHOUT isolation" in result.stderr
