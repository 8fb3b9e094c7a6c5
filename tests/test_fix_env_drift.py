"""Dependencies newer than the project (bot/environment/drift.py): real builds in the build container, through the
package index. A project written against requests 2.3 imports `requests.compat.is_windows`, which later releases
dropped; the environment goes back to the lowest version the project declares only when more of its modules
import that way."""
from __future__ import annotations

import pytest

from bot.checkout.repository import Checkout
from bot.environment.drift import Drift, pins_for
from bot.environment.prepare import Environment, EnvRequest
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from sandbox import open_sandbox
from tests.test_fix_environment import built, unique, versions  # noqa: F401 (built: the fixture)

pytestmark = pytest.mark.timeout(900)

SETUP_PY = """\
from setuptools import setup
{marker}
setup(name="oldhttp", version="0.1", packages=["oldhttp"], install_requires=["requests>=2.3.0"])
"""
TEST = "from oldhttp.compat import is_windows\n\ndef test_not_windows():\n    assert is_windows is False\n"


def project(compat: str) -> Checkout:
    files = {"setup.py": SETUP_PY.format(marker=unique()), "oldhttp/__init__.py": "", "oldhttp/compat.py": compat,
             "tests/test_compat.py": TEST}
    return Checkout("/nowhere", {path: text.encode() for path, text in files.items()})


def build(built, project: Checkout) -> tuple[Environment, list[str]]:
    lines: list[str] = []
    return built(project, EnvRequest(python="3.9"), log=lines.append), lines


def test_an_import_that_newer_releases_dropped_pins_the_lowest_declared_version(built):
    env, lines = build(built, project("from requests.compat import is_windows\n"))
    log = "\n".join(lines)
    assert "oldhttp.compat cannot import 'is_windows' from requests.compat (requests " in log, log
    assert "imported the checkout's 3 package module(s) and test file(s) in" in log and "2 did not import" in log
    assert env.pins == ("requests==2.3.0",), log
    assert versions(env.image, "requests") == {"requests": "2.3.0"}
    checkout = project("from requests.compat import is_windows\n")
    with open_sandbox("docker", image=env.image, pool_size=1) as sb:
        run = run_tests(sb, checkout.files, TestCommand.parse("pytest"), pythonpath=env.pythonpath)
    assert run.passed == {"tests/test_compat.py::test_not_windows"} and not run.failed, run.output


def test_going_back_is_kept_only_when_more_modules_import(built):
    # No release of requests has this name: the pinned build fails the same import, so the newest stays.
    env, lines = build(built, project("from requests.compat import is_windows, no_release_has_this\n"))
    log = "\n".join(lines)
    assert "building again with requests==2.3.0" in log and "keeping the newest versions" in log, log
    assert env.pins == ()
    assert versions(env.image, "requests")["requests"] != "2.3.0"


def drift(dist: str, version: str, lowest: str | None) -> Drift:
    return Drift(module="m", name="n", source=f"{dist}.x", dist=dist, version=version, lowest=lowest)


def test_pins_name_each_drifting_distribution_once_at_its_lowest_declared_version():
    assert pins_for((drift("requests", "2.32.3", "2.3.0"), drift("requests", "2.32.3", "2.3.0"),
                     drift("six", "1.17.0", None), drift("attrs", "19.1.0", "19.1.0"))) == ("requests==2.3.0",)
    assert drift("requests", "2.32.3", "2.3.0").describe() == "m cannot import 'n' from requests.x (requests 2.32.3)"
