"""A pinned range no release satisfies, loosened to its name (bot/environment/install/relax.py): which requirement,
which files, and the in-container rewrite, run here on real files."""
from __future__ import annotations

import subprocess
import sys

from bot.environment.install.relax import RELAX_SCRIPT, loosened, relaxed_argv, requirement_files


def test_only_a_requirement_with_a_range_is_loosened():
    assert loosened("moto<1.0") == "moto"
    assert loosened("boto3[crt]>=1,<1.2") == "boto3[crt]"
    assert loosened("moto") is None and loosened("not a requirement!") is None and loosened(None) is None


def test_the_files_a_pip_command_reads_and_a_requirement_on_it():
    argv = ("python3", "-m", "pip", "install", "-r", ".fixbot-build/tox-deps.txt", "-rreq.txt",
            "--requirement=/etc/x.txt", "Moto<1.0", "six==1.16.0")
    assert requirement_files(argv) == [".fixbot-build/tox-deps.txt", "req.txt"]  # never outside the checkout
    assert relaxed_argv(argv, "moto<1.0")[-2:] == ("moto", "six==1.16.0")


def test_the_rewrite_keeps_every_other_line_and_each_lines_extras_and_marker(tmp_path):
    path = tmp_path / "deps.txt"
    path.write_text("nose\nmoto<1.0 ; python_version < '3.12'  # old api\nMoto_Ext>=2\nmoto-extra<1\n"
                    "  moto [server] ==0.4.31\nmock<2.0\n")
    done = subprocess.run([sys.executable, "-c", RELAX_SCRIPT, "moto", str(path)], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == str(path)
    assert path.read_text() == ("nose\nmoto ; python_version < '3.12'  # old api\nMoto_Ext>=2\nmoto-extra<1\n"
                                "  moto[server]\nmock<2.0\n")


class _Box:
    """A build container's answers, in order: pip's, and the rewrite script's (the files it changed)."""

    def __init__(self, *outputs: tuple[int, str]) -> None:
        self.outputs, self.ran = list(outputs), []

    def run(self, argv, *, timeout_s, echo=True):
        from sandbox.builder import CommandResult

        self.ran.append(tuple(argv))
        code, output = self.outputs.pop(0) if argv[:2] != ("python3", "-c") else (0, "")
        return CommandResult(argv=tuple(argv), exit_code=code, output=output, duration_s=0.1)


def test_the_loosened_commands_failure_is_the_one_acted_on():
    """Past the missing release a dependency compiles from source: that failure (a C toolchain helps), not the
    missing release the loosening got past, is what the build tries next and what the user reads."""
    import pytest

    from bot.environment.build import PIP, DependencyInstallFailed, _run_step

    missing = "ERROR: No matching distribution found for moto<1.0\n"
    compiler = "error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory\nFailed to build psutil\n"
    box = _Box((1, missing), (1, compiler))
    with pytest.raises(DependencyInstallFailed) as failed:
        _run_step(box, (*PIP, "install", "moto<1.0", "psutil<4.0"), "installing deps", None, lambda _m: None)
    assert failed.value.needs_compiler and "Failed to build psutil" in str(failed.value)
    assert "moto<1.0 loosened to its name" in str(failed.value)
    assert box.ran[-1] == (*PIP, "install", "moto", "psutil<4.0")
    # no release of it at all, loosened or not: pip's first failure, which names the pin
    box = _Box((1, missing), (1, missing.replace("moto<1.0", "moto")))
    with pytest.raises(DependencyInstallFailed) as failed:
        _run_step(box, (*PIP, "install", "moto<1.0"), "installing deps", None, lambda _m: None)
    assert failed.value.last_line.endswith("moto<1.0") and "loosened" not in str(failed.value)
    # nothing to loosen: pip's own failure
    box = _Box((1, missing.replace("moto<1.0", "moto")))
    with pytest.raises(DependencyInstallFailed) as failed:
        _run_step(box, (*PIP, "install", "moto"), "installing deps", None, lambda _m: None)
    assert not failed.value.needs_compiler and failed.value.last_line.endswith("moto")
