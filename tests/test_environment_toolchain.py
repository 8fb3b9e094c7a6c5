"""A dependency that compiles from source (bot/environment/build.py, prepare.py): what pip says when the build
container lacks the compiler, Python's headers or a system library's development files sends the build to the
base with the C toolchain (sandbox/image.py's BUILD_TOOLS), and there it builds. The real one: psycopg2, which PyPI
serves only as source and which needs PostgreSQL's `pg_config`."""
from __future__ import annotations

import pytest

from bot.checkout.repository import Checkout
from bot.environment.build import _failure
from bot.environment.prepare import EnvRequest
from sandbox.builder import CommandResult
from tests.test_fix_environment import built, run_in, unique  # noqa: F401 (built: the fixture)

pytestmark = pytest.mark.timeout(900)


def _says(output: str) -> bool:
    return _failure("installing x", CommandResult(argv=("pip",), exit_code=1, output=output,
                                                  duration_s=1.0)).needs_compiler


def test_what_pip_says_of_a_missing_compiler_header_or_library_sends_the_build_to_the_toolchain():
    assert _says("error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory")
    assert _says("Error: pg_config executable not found.\n\npg_config is required to build psycopg2 from source.")
    assert _says("OSError: mysql_config not found")
    assert _says("/bin/sh: 1: xml2-config: not found")
    assert _says("/bin/sh: pg_config: command not found")
    assert _says("FileNotFoundError: [Errno 2] No such file or directory: 'mysql_config'")
    assert _says("src/_yaml.c:4:10: fatal error: yaml.h: No such file or directory")
    # a build that failed for another reason: the toolchain would not help
    assert not _says("ERROR: Could not find a version that satisfies the requirement nosuch==1.0")
    assert not _says("SyntaxError: Missing parentheses in call to 'print'")
    assert not _says("ModuleNotFoundError: No module named 'setuptools.config'")
    assert not _says("jupyter_config not found; using defaults")  # a program's configuration, not a library's


SETUP_PY = """\
from setuptools import setup
{marker}
setup(name="pgapp", version="0.1", packages=["pgapp"], install_requires=["psycopg2"])
"""


@pytest.mark.parametrize("declared", ["requirements.txt", "setup.py"])  # a setup.py's install step is optional
def test_a_dependency_that_needs_a_system_librarys_development_files_builds_with_the_toolchain(built, declared):
    declares = {"requirements.txt": f"psycopg2\n{unique()}"} if declared == "requirements.txt" else \
        {"setup.py": SETUP_PY.format(marker=unique())}
    files = {**declares, "pgapp/__init__.py": "",
             "tests/test_pg.py": "import psycopg2\n\ndef test_libpq():\n    assert psycopg2.__libpq_version__\n"}
    lines: list[str] = []
    env = built(Checkout("/nowhere", {path: text.encode() for path, text in files.items()}),
                EnvRequest(python="3.11"), log=lines.append)
    log = "\n".join(lines)
    assert "a dependency compiles from source; building with a C toolchain" in log, log
    code, output = run_in(env.image, "python3", "-c", "import psycopg2; print('libpq', psycopg2.__libpq_version__)")
    assert code == 0 and "libpq " in output, output
