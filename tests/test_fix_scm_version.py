"""A project that takes its version from git (setuptools-scm, hatch-vcs) builds in a container without `.git`,
and code that reads its own metadata finds it although the project's code comes from the checkout."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.checkout.repository import Checkout, load_checkout
from bot.environment.install.plan import install_plan
from bot.environment.install.scm_version import pretend_version_env
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from sandbox import open_sandbox

from .test_fix_environment import built, unique, versions  # noqa: F401 (built: a fixture)

SCM_PYPROJECT = ('[build-system]\nrequires = ["setuptools>=64", "setuptools-scm>=8"]\n'
                 'build-backend = "setuptools.build_meta"\n\n[project]\nname = "Demo.Pkg"\ndynamic = ["version"]\n\n'
                 "[tool.setuptools_scm]\n")


def git_repo(root: Path, files: dict[str, str], tag: str | None) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for argv in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "i"],
                 *([["tag", tag]] if tag else [])):
        subprocess.run(["git", "-C", str(root), *argv], check=True)
    return root


@pytest.mark.parametrize("files, name", [
    ({"pyproject.toml": SCM_PYPROJECT}, "DEMO_PKG"),
    ({"setup.cfg": "[metadata]\nname = demo-cfg\n", "setup.py": "setup(use_scm_version=True)\n"}, "DEMO_CFG"),
    ({"setup.py": "from setuptools import setup\nsetup(name='demo_py', use_scm_version=True)\n"}, "DEMO_PY"),
    ({"setup.py": "setup(name=NAME, use_scm_version=True)\n"}, None),
])
def test_the_project_name_the_plan_reads_names_the_variable(files, name):
    plan = install_plan(Checkout("/nowhere", {p: t.encode() for p, t in files.items()}))
    variable = "SETUPTOOLS_SCM_PRETEND_VERSION" + (f"_FOR_{name}" if name else "")
    assert plan.env == ((variable, "0.0.0"),)  # /nowhere has no tags


@pytest.mark.parametrize("tag, version", [("v2.3.1", "2.3.1"), ("release-x", "0.0.0"), (None, "0.0.0")])
def test_the_version_is_the_latest_tag_for_the_project_alone(tmp_path, tag, version):
    checkout = load_checkout(git_repo(tmp_path, {"pyproject.toml": SCM_PYPROJECT, "test_x.py": ""}, tag))
    assert pretend_version_env(checkout, "Demo.Pkg") == {"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_DEMO_PKG": version}
    plain = {"pyproject.toml": '[project]\nname = "plain"\nversion = "1.0"\n', "test_x.py": ""}
    assert pretend_version_env(load_checkout(git_repo(tmp_path / "plain", plain, tag)), "plain") == {}


def test_a_git_versioned_project_installs_and_reads_its_own_version(built, tmp_path):
    files = {"pyproject.toml": SCM_PYPROJECT, "conftest.py": unique(),
             "src/demo/__init__.py": 'from importlib.metadata import version\n\n__version__ = version("Demo.Pkg")\n',
             "tests/test_version.py": "import importlib.metadata\n\nimport demo\n\n\ndef test_version():\n"
                                      "    assert demo.__version__ == '4.5.6'\n\n\ndef test_code_from_the_checkout():\n"
                                      "    assert 'packages' not in demo.__file__\n"
                                      "    assert importlib.metadata.distribution('Demo.Pkg').files is None\n"}
    checkout = load_checkout(git_repo(tmp_path, files, "v4.5.6"))
    lines: list[str] = []
    env = built(checkout, log=lines.append)
    assert not any("does not install as a package" in line for line in lines), lines
    with open_sandbox("docker", image=env.image, pool_size=1) as sb:
        run = run_tests(sb, checkout.files, TestCommand(), pythonpath=env.pythonpath)
    assert run.passed == {"tests/test_version.py::test_version", "tests/test_version.py::test_code_from_the_checkout"}
    assert not run.failed, run.output
