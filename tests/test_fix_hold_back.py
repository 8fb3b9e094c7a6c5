"""Dependencies newer than the project, as its tests show them (bot/fix/reproduce/hold_back.py): real builds through the
package index, real test runs in the sandbox. A project declaring `requests>=2.3.0` sends a header value with a
leading space, which requests 2.11 and later refuse inside `prepare()`; its own bug is elsewhere. The environment
goes back to requests 2.3.0 only where fewer tests fail that way, and the project's bug still fails there."""
from __future__ import annotations

from dataclasses import replace

import pytest

from bot.checkout.repository import Checkout
from bot.environment.drift import Floor
from bot.environment.prepare import EnvRequest
from bot.failures import Failure
from bot.failures.types import Frame
from bot.fix.context import FixRun
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.hold_back import raised_inside, to_hold_back, with_held_back
from bot.fix.reproduce.runs import reproduce
from bot.llm import ScriptedLLM
from sandbox import open_sandbox
from tests.test_fix_environment import built, unique, versions  # noqa: F401 (built: the fixture)

pytestmark = pytest.mark.timeout(900)

SETUP_PY = """\
from setuptools import setup
{marker}
setup(name="tinyhttp", version="0.1", packages=["tinyhttp"], install_requires=["requests>=2.3.0"])
"""
CORE = "def add(a, b):\n    return a - b\n"  # the project's own bug
SPACED = """\
import requests

def test_a_header_value_with_a_leading_space():
    prepared = requests.Request("GET", "http://example.invalid/", headers={"X-Note": " spaced"}).prepare()
    assert prepared.headers["X-Note"] == " spaced"
"""
NO_SCHEME = """\
import requests

def test_a_url_without_a_scheme():
    requests.Request("GET", "example.invalid/path").prepare()  # MissingSchema in every release
"""
ADD = "from tinyhttp.core import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"
REQUESTS = Floor(dist="requests", lowest="2.3.0", version="2.32.5", modules=("requests",))


def project(dependency_test: str) -> Checkout:
    files = {"setup.py": SETUP_PY.format(marker=unique()), "tinyhttp/__init__.py": "", "tinyhttp/core.py": CORE,
             "tests/test_dependency.py": dependency_test, "tests/test_core.py": ADD}
    return Checkout("/nowhere", {path: text.encode() for path, text in files.items()})


def reproduced_with_hold_back(built, checkout: Checkout):
    request = EnvRequest(python="3.9")
    env = built(checkout, request)
    assert [f.dist for f in env.floors] == ["requests"] and env.floors[0].lowest == "2.3.0", env.floors
    images: list[str] = []
    lines: list[str] = []
    with open_sandbox("docker", image=env.image, pool_size=1) as sandbox:
        def rebuild(pins: tuple[str, ...]):
            held = built(checkout, replace(request, hold_back=pins))
            images.append(held.image)
            return open_sandbox("docker", image=held.image, pool_size=1)

        ctx = FixRun(llm=ScriptedLLM([]), sandbox=sandbox, pythonpath=env.pythonpath, say=lines.append,
                     floors=env.floors, rebuild=rebuild)

        def again(run: FixRun):
            return reproduce(run, checkout.files, TestCommand.parse("pytest"), log_failures=(),
                             suite_timeout_s=300, test_timeout_s=60, deadline=float("inf"))

        found, pins = with_held_back(ctx, again(ctx), again)
        ctx.sandbox.close()
    return found, pins, images, "\n".join(lines)


def test_a_test_failing_inside_a_newer_release_gets_the_lowest_declared_version(built):
    found, pins, images, log = reproduced_with_hold_back(built, project(SPACED))
    assert "1 failing test(s) fail inside requests " in log and "building the environment again with " \
        "requests==2.3.0" in log, log
    assert pins == ("requests==2.3.0",), log
    assert versions(images[0], "requests") == {"requests": "2.3.0"}
    assert found.failing == {"tests/test_core.py::test_add"}, log  # the project's own bug still fails
    assert "tests/test_dependency.py::test_a_header_value_with_a_leading_space" in found.before.passed


def test_the_newest_release_stays_when_the_older_one_fails_the_same(built):
    found, pins, images, log = reproduced_with_hold_back(built, project(NO_SCHEME))
    assert "building the environment again with requests==2.3.0" in log and "keeping the newest versions" in log
    assert pins == () and len(images) == 1
    assert found.failing == {"tests/test_core.py::test_add", "tests/test_dependency.py::test_a_url_without_a_scheme"}


def failure(*paths: str) -> Failure:
    frames = tuple(Frame(path, 1, "f", "x") for path in paths)
    return Failure("tests/test_x.py::test_y", "tests/test_x.py", 1, None, None, None, "Error", "boom", frames)


def test_only_the_innermost_frames_outside_the_checkout_count():
    site = "/usr/local/lib/python3.9/dist-packages"
    assert raised_inside(failure("tests/test_x.py", f"{site}/requests/models.py", "/usr/lib/python3.9/re.py"),
                         [REQUESTS]) == REQUESTS
    # requests called back into the project, which raised: the project's code, not the dependency's
    assert raised_inside(failure("tests/test_x.py", f"{site}/requests/hooks.py", "tinyhttp/core.py"),
                         [REQUESTS]) is None
    assert raised_inside(failure("tests/test_x.py", f"{site}/urllib3/util.py"), [REQUESTS]) is None
    assert raised_inside(failure("tests/test_x.py", "/usr/lib/python3.9/json/decoder.py"), [REQUESTS]) is None


def test_hold_back_names_each_distribution_once_and_only_for_tests_still_failing():
    site = "/usr/lib/python3/site-packages"
    one = failure("tests/test_x.py", f"{site}/requests/utils.py")
    other = replace(one, test_id="tests/test_x.py::test_z")
    wanted = to_hold_back([one, other], frozenset({one.test_id, other.test_id}), [REQUESTS])
    assert wanted is not None and wanted.pins == ("requests==2.3.0",)
    assert wanted.tests == ("tests/test_x.py::test_y", "tests/test_x.py::test_z")
    assert to_hold_back([one], frozenset(), [REQUESTS]) is None


def test_fixbot_env_prints_what_could_be_held_back(tmp_path, docker_client):
    from tests.conftest import run_fixbot
    from tests.test_fix_environment import _repo

    files = {path: text.decode() for path, text in project(SPACED).files.items()}
    root = _repo(tmp_path / "tinyhttp", {**files, "tox.ini": "[tox]\nenvlist = py39\n"})
    proc = run_fixbot("env", str(root))
    image = proc.stdout.split("ready:   ")[1].split()[0] if "ready:   " in proc.stdout else None
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "newer:   requests " in proc.stdout and "(declared >= 2.3.0)" in proc.stdout, proc.stdout
    finally:
        if image:
            docker_client.images.remove(docker_client.images.get(image).id, force=True)  # every tag


class Closable:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_an_older_release_that_breaks_the_suite_keeps_the_newest_without_an_error():
    from bot.fix.reproduce.runs import Reproduced, SuiteCrashed
    from bot.fix.types import TestRun

    site = "/usr/lib/python3/dist-packages"
    failing = failure("tests/test_x.py", f"{site}/requests/models.py")
    run = TestRun(command=("pytest",), exit_code=1, passed=frozenset(), failed=frozenset({failing.test_id}),
                  failures=(failing,), duration_s=1.0, output="")
    found = Reproduced(run, frozenset({failing.test_id}), (), 5.0)
    newest, older, lines = Closable(), Closable(), []

    def crashes(ctx):
        raise SuiteCrashed("pytest stopped before reporting any test: ImportError")

    ctx = FixRun(llm=ScriptedLLM([]), sandbox=newest, say=lines.append, floors=(REQUESTS,),
                 rebuild=lambda pins: older)
    assert with_held_back(ctx, found, crashes) == (found, ())
    assert ctx.sandbox is newest and older.closed and not newest.closed
    assert "the suite does not run (pytest stopped before reporting any test" in "\n".join(lines)
