"""The test environment as a project's CI builds it: real pip in a real build container, the result a cached image
in which the tests run with the network off. Which steps and which Python are unit-tested in
test_install_plan.py and test_python_choice.py; here they are built."""
from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker.errors import ImageNotFound

from bot.checkout.repository import Checkout
from bot.environment.build import DependencyInstallFailed, lock_tag
from bot.environment.prepare import Environment, EnvRequest, prepare_environment, python_path
from sandbox import open_sandbox
from sandbox.containers import OWNER_LABEL, owner_tag

pytestmark = pytest.mark.timeout(900)


def checkout(files: dict[str, str]) -> Checkout:
    return Checkout("/nowhere", {path: text.encode() for path, text in files.items()})


def unique() -> str:
    # Every build test gets a repository no other run has built: a cached image would prove nothing.
    return f"# build {uuid.uuid4().hex}\n"


def run_in(image: str, *command: str) -> tuple[int, str]:
    with open_sandbox("docker", image=image, pool_size=1) as sb:
        result = sb.run({}, list(command))
    return result.exit_code, result.stdout + result.stderr


def versions(image: str, *names: str) -> dict[str, str]:
    code = "import importlib.metadata as m, json, sys; print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
    exit_code, output = run_in(image, "python3", "-c", code, *names)
    assert exit_code == 0, output
    return json.loads(output)


def leftovers(docker_client) -> list[str]:
    """Build containers and volumes this process left (other processes may be building at the same time)."""
    mine = {"label": f"{OWNER_LABEL}={owner_tag()}"}
    containers = [c.name for c in docker_client.containers.list(all=True, filters=mine)]
    return containers + [v.name for v in docker_client.volumes.list(filters=mine)]


@pytest.fixture
def built(docker_client, sandbox_image):
    """prepare_environment that removes the images it built afterwards (they are test-only): both tags, the
    inputs' and the lock's. A lock image left behind would be reused by the next build with the same lock, so a
    second run of a test would read the first run's image."""
    made: list[str] = []

    def build(project: Checkout, request: EnvRequest = EnvRequest(), log=None):
        lines: list[str] = []
        env = prepare_environment(project, request, client=docker_client, log=log or lines.append)
        if env.built:
            made.extend([env.image, lock_tag(env.python.version, env.lock)])
        return env

    yield build
    for tag in made:
        try:
            docker_client.images.remove(tag, force=True)
        except ImageNotFound:
            pass
    assert leftovers(docker_client) == []


def test_python_path_follows_the_layout():
    assert python_path(checkout({"src/pkg/__init__.py": "", "tests/test_x.py": ""})) == ("src",)
    assert python_path(checkout({"src/mod.py": ""})) == ("src",)
    assert python_path(checkout({"pkg/__init__.py": "", "src/notes.txt": ""})) == ("",)
    assert python_path(checkout({"calc.py": ""})) == ("",)


def test_nothing_declared_uses_the_base_image_without_a_build(docker_client, sandbox_image, built):
    env = built(checkout({"calc.py": "", "tests/test_calc.py": ""}))
    assert (env.image, env.built, env.plan.steps) == (sandbox_image, False, ())


SETUP_PY = """\
from setuptools import setup
{marker}
setup(name="demo", version="0.1", py_modules=["demo"], install_requires=["tabulate==0.9.0"])
"""


def test_setup_py_dependencies_are_installed_and_the_project_comes_from_the_checkout(built, sandbox_image):
    project = checkout({"setup.py": SETUP_PY.format(marker=unique()), "demo.py": "def f():\n    return 1\n"})
    start = time.monotonic()
    env = built(project)
    first_s = time.monotonic() - start
    assert env.built and env.image != sandbox_image and env.image.startswith("fixbot-env:py3.11-")
    assert "tabulate==0.9.0" in " ".join(env.lock) and not any(line.startswith("demo==") for line in env.lock)
    assert versions(env.image, "tabulate") == {"tabulate": "0.9.0"}
    code, output = run_in(env.image, "python3", "-c", "import demo")
    assert code != 0 and "No module named 'demo'" in output, "the project's own copy must not be installed"

    start = time.monotonic()
    again = built(project)
    assert (again.image, again.built) == (env.image, False) and time.monotonic() - start < 5
    print(f"first build {first_s:.1f} s, reuse {again.setup_s:.2f} s")


def test_setup_cfg_hatchling_and_flit_projects(built):
    setup_cfg = checkout({
        "setup.cfg": "[metadata]\nname = democfg\nversion = 0.1\n[options]\npy_modules = democfg\n"
                     "install_requires =\n    termcolor==2.4.0\n[options.extras_require]\ntest =\n    six==1.16.0\n"
                     + unique(),
        "setup.py": "from setuptools import setup\nsetup()\n", "democfg.py": ""})
    hatch = checkout({"pyproject.toml": '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
                                        '[project]\nname = "demohatch"\nversion = "0.1"\n'
                                        'dependencies = ["toml==0.10.2"]\n' + unique(),
                      "src/demohatch/__init__.py": ""})
    flit = checkout({"pyproject.toml": '[build-system]\nrequires = ["flit_core>=3.4"]\n'
                                       'build-backend = "flit_core.buildapi"\n[project]\nname = "demoflit"\n'
                                       'version = "0.1"\ndescription = "d"\ndependencies = ["colorama==0.4.6"]\n'
                                       '[project.optional-dependencies]\ntest = ["wcwidth==0.2.13"]\n' + unique(),
                     "demoflit.py": ""})
    assert versions(built(setup_cfg).image, "termcolor", "six") == {"termcolor": "2.4.0", "six": "1.16.0"}
    assert versions(built(hatch).image, "toml") == {"toml": "0.10.2"}
    assert versions(built(flit).image, "colorama", "wcwidth") == {"colorama": "0.4.6", "wcwidth": "0.2.13"}


def _wheel_hash(tmp_path: Path, requirement: str) -> str:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d",
                    str(tmp_path), requirement], check=True, timeout=300)
    wheel = next(tmp_path.glob("*.whl"))
    return hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_tox_deps_constraints_and_hashed_requirements(built, tmp_path):
    good = _wheel_hash(tmp_path, "tabulate==0.9.0")
    project = checkout({
        "tox.ini": "[tox]\nenvlist = py311\nskipsdist = true\n[testenv]\ndeps =\n    six\n"
                   "    -c{toxinidir}/constraints.txt\ncommands = pytest\n" + unique(),
        "constraints.txt": "six==1.15.0\n",
        "requirements-test.txt": f"tabulate==0.9.0 --hash=sha256:{good}\n"})
    env = built(project)
    assert versions(env.image, "six", "tabulate") == {"six": "1.15.0", "tabulate": "0.9.0"}

    tampered = checkout({"requirements-test.txt": f"tabulate==0.9.0 --hash=sha256:{'0' * 64}\n" + unique()})
    with pytest.raises(DependencyInstallFailed) as caught:
        built(tampered)
    assert "DO NOT MATCH THE HASHES" in str(caught.value) and "requirements-test.txt" in str(caught.value)


def test_a_dependency_that_does_not_resolve_is_one_clear_error_and_leaves_nothing(built, docker_client):
    images_before = {i.id for i in docker_client.images.list(all=True)}
    project = checkout({"requirements.txt": "fixbot-no-such-package-xyz==1.0\n" + unique()})
    with pytest.raises(DependencyInstallFailed) as caught:
        built(project)
    message = str(caught.value)
    assert message.startswith("setting up the test environment failed: installing the requirements in "
                              "requirements.txt"), message
    assert "No matching distribution found for fixbot-no-such-package-xyz==1.0" in message
    assert len(message.splitlines()) <= 17
    new = [i for i in docker_client.images.list(all=True) if i.id not in images_before]
    assert len(new) == 1 and len(new[0].tags) == 1 and new[0].tags[0].endswith("-failed"), new  # the marker alone
    assert json.loads(new[0].labels["fixbot.failure"])["message"] == message
    assert leftovers(docker_client) == []


def _set_up_twice(built, setup: tuple[str, ...]) -> tuple[list[DependencyInstallFailed], list[list[str]]]:
    """Two runs of the same failing setup commands: each one's failure and log."""
    failures, logs = [], []
    for _ in range(2):
        logs.append([])
        with pytest.raises(DependencyInstallFailed) as caught:
            built(checkout({"a.py": unique()}), EnvRequest(setup=setup), log=logs[-1].append)
        failures.append(caught.value)
    return failures, logs


def test_a_setup_command_that_fails_quotes_its_output_and_the_next_run_says_the_same(built):
    """The failure is remembered (the setup commands alone make the environment, so an earlier run of this test
    may have marked it already): a second run does not build again, and its message is the first one's."""
    failing = ("echo preparing", f"echo 'run {uuid.uuid4().hex}' >/dev/null; echo 'no such tool' >&2; exit 3")
    failures, logs = _set_up_twice(built, failing)
    messages = [str(f) for f in failures]
    assert "your setup command: echo 'run " in messages[0] and "echo 'no such tool' >&2; exit 3" in messages[0]
    assert "exited with 3" in messages[0] and messages[0].endswith("no such tool")
    assert messages[1] == messages[0]
    assert not any("earlier run" in line for line in logs[0])
    assert any("failed on an earlier run; not trying it again (`docker rmi fixbot-env:" in line for line in logs[1])


def test_a_setup_command_killed_by_a_signal_is_not_remembered(built):
    """A build killed from outside (Ctrl-C, `docker kill`, the OOM killer) says nothing about the requirements: the
    next run builds again instead of failing at once on a marker."""
    killed = (f"echo 'run {uuid.uuid4().hex}' >/dev/null; echo 'half done'; kill -KILL $$",)
    failures, logs = _set_up_twice(built, killed)
    assert "was killed by signal 9 (exit 137)" in str(failures[0]), failures[0]
    assert failures[0].killed and not failures[0].transient
    assert not any("earlier run" in line for log in logs for line in log), logs


def test_setup_commands_replace_inference(built):
    project = checkout({"requirements.txt": "fixbot-no-such-package-xyz==1.0\n", "a.py": unique()})
    env = built(project, EnvRequest(setup=("pip install six==1.16.0",)))
    assert env.plan.custom and versions(env.image, "six") == {"six": "1.16.0"}


# --- a hostile setup.py ---------------------------------------------------------------------------------------

HOSTILE_SETUP_PY = """\
import http.client, json, os, socket
from setuptools import setup
{marker}
report = {{"env": dict(os.environ), "docker_socket": os.path.exists("/var/run/docker.sock"), "reached": []}}
for ip in {ips!r}:
    try:
        socket.create_connection((ip, {port}), timeout=3).close()
        report["reached"].append("direct " + ip)
    except OSError:
        pass
    try:  # through the build's own proxy, as pip connects
        conn = http.client.HTTPConnection("127.0.0.1", 3128, timeout=5)
        conn.set_tunnel(ip, {port})
        conn.request("GET", "/")
        report["reached"].append("proxy " + ip)
    except OSError:
        pass
try:
    with open({host_file!r}, "w") as f:
        f.write("written by setup.py")
except OSError:
    pass
os.makedirs("/usr/local/share", exist_ok=True)
with open("/usr/local/share/fixbot-hostile-report.json", "w") as f:
    json.dump(report, f)
setup(name="hostile", version="0.1", py_modules=["hostile"])
"""


def _host_addresses() -> list[str]:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3].split("/")[0] for line in out.splitlines()]


class Listener:
    """A TCP listener on all of the host's addresses that counts who connects."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("0.0.0.0", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


def test_a_hostile_setup_py_reaches_neither_the_host_nor_the_token(built, docker_client, sandbox_image,
                                                                   monkeypatch, tmp_path):
    secret = f"ghs_{uuid.uuid4().hex}"
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", secret)
    listener, ips, host_file = Listener(), _host_addresses(), tmp_path / "written-by-setup-py"
    # The control: an ordinary container on the default bridge does reach the listener.
    docker_client.containers.run(sandbox_image, ["python3", "-c", f"import socket; socket.create_connection("
                                                 f"({ips[-1]!r}, {listener.port}), timeout=5)"], remove=True)
    time.sleep(0.5)
    assert listener.accepted == 1, f"the control container did not reach {ips[-1]}:{listener.port}"

    project = checkout({"setup.py": HOSTILE_SETUP_PY.format(marker=unique(), ips=ips, port=listener.port,
                                                            host_file=str(host_file)), "hostile.py": ""})
    env = built(project)
    code, output = run_in(env.image, "cat", "/usr/local/share/fixbot-hostile-report.json")
    assert code == 0, output
    report = json.loads(output)
    assert report["reached"] == [] and listener.accepted == 1
    assert report["docker_socket"] is False
    assert secret not in json.dumps(report["env"]) and "GITHUB_TOKEN" not in report["env"]
    assert not host_file.exists()
    _, found = run_in(env.image, "sh", "-c", f"grep -rls {secret} /usr/local /etc; true")
    assert found == "", "the token must be nowhere in the image"


def test_a_build_never_reuses_another_project_s_image_with_the_same_lock(built):
    """Two projects without dependencies have the same (empty) lock; each setup.py writes its name outside
    site-packages. Each project's tests must run in an image only its own setup.py wrote to."""
    def project(name: str) -> Checkout:
        setup = (f"import os\nfrom setuptools import setup\n{unique()}\n"
                 "os.makedirs('/usr/local/share', exist_ok=True)\n"
                 f"open('/usr/local/share/fixbot-who-built', 'w').write({name!r})\n"
                 f"setup(name={name!r}, version='0.1', py_modules=[{name!r}])\n")
        return checkout({"setup.py": setup, f"{name}.py": ""})

    first, second = built(project("first")), built(project("second"))
    assert first.lock == second.lock and first.image != second.image
    assert run_in(first.image, "cat", "/usr/local/share/fixbot-who-built") == (0, "first")
    assert run_in(second.image, "cat", "/usr/local/share/fixbot-who-built") == (0, "second")


# --- the Python the project needs ----------------------------------------------------------------------------

NEEDS_39 = {  # tested on 3.5-3.8 by its tox.ini; `collections.Mapping` is gone from 3.10 on
    "tox.ini": "[tox]\nenvlist = py35,py36,py37,py38\n[testenv]\ndeps = pytest\ncommands = pytest\n",
    "legacy.py": "from collections import Mapping\n\ndef is_mapping(x):\n    return isinstance(x, Mapping)\n",
    "test_legacy.py": "import sys\nfrom legacy import is_mapping\n\ndef test_it():\n    assert is_mapping({})\n"
                      "    assert sys.version_info[:2] == (3, 9)\n"}
NEEDS_313 = {  # copy.replace is new in 3.13
    "pyproject.toml": '[project]\nname = "modern"\nversion = "0.1"\nrequires-python = ">=3.13"\n',
    "modern.py": "import copy\nfrom dataclasses import dataclass\n\n@dataclass\nclass P:\n    x: int\n\n"
                 "def moved(p):\n    return copy.replace(p, x=p.x + 1)\n",
    "test_modern.py": "import sys\nfrom modern import P, moved\n\ndef test_it():\n    assert moved(P(1)).x == 2\n"
                      "    assert sys.version_info[:2] == (3, 13)\n"}


@pytest.mark.parametrize("files, python", [(NEEDS_39, "3.9"), (NEEDS_313, "3.13")], ids=["3.9", "3.13"])
def test_the_tests_run_on_the_python_the_project_needs(built, files, python):
    from bot.fix.reproduce.command import TestCommand
    from bot.fix.reproduce.testrun import run_tests

    project = checkout({**files, "conftest.py": unique()})
    env = built(project)
    assert env.python.version == python and env.image.startswith(f"fixbot-env:py{python}-")
    with open_sandbox("docker", image=env.image, pool_size=1) as sb:
        run = run_tests(sb, project.files, TestCommand.parse("pytest"), pythonpath=env.pythonpath)
    assert len(run.passed) == 1 and not run.failed, run



def test_a_project_on_pytest_3_has_its_class_tests_named_as_today(built):
    """pytest before 4 names a test of a class `t.py::TestX::()::test_y`, JUnit XML `t.py::TestX::test_y`: one
    failing test must count once, by the id a selection finds again (httpie's tests need pytest < 3.6)."""
    from bot.fix.reproduce.command import TestCommand
    from bot.fix.reproduce.testrun import run_tests

    tests = ("class TestSign:\n    def test_positive(self):\n        assert 1 > 0\n\n"
             "    def test_negative(self):\n        assert -1 > 0\n")
    project = checkout({"test_sign.py": tests, "conftest.py": unique()})
    env = built(project, EnvRequest(python="3.9", setup=('pip install "pytest==3.5.1"',)))
    assert versions(env.image, "pytest") == {"pytest": "3.5.1"}
    failing = "test_sign.py::TestSign::test_negative"
    with open_sandbox("docker", image=env.image, pool_size=1) as sb:
        run = run_tests(sb, project.files, TestCommand.parse("pytest"), pythonpath=env.pythonpath, coverage=True)
        again = run_tests(sb, project.files, TestCommand.parse("pytest"), pythonpath=env.pythonpath,
                          select=[failing])
    assert run.failed == {failing} and run.passed == {"test_sign.py::TestSign::test_positive"}, run.output
    assert [f.test_id for f in run.failures] == [failing] and set(run.durations) == run.passed | run.failed
    assert again.failed == {failing} and not again.passed, again.output

def test_no_available_python_is_one_line_naming_both(built):
    from bot.environment.python.choice import NoSuitablePython

    project = checkout({"pyproject.toml": '[project]\nname = "x"\nversion = "0"\nrequires-python = "<3.8"\n'})
    with pytest.raises(NoSuitablePython) as caught:
        built(project)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and "<3.8" in message and "3.9, 3.11, 3.13" in message, message


# --- fixbot env -----------------------------------------------------------------------------------------------

def _repo(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_fixbot_env_shows_the_plan_then_builds_and_reuses(tmp_path, docker_client):
    from .conftest import run_fixbot

    root = _repo(tmp_path / "demo", {"setup.py": SETUP_PY.format(marker=unique()), "demo.py": "", "test_demo.py": "",
                                      "tox.ini": "[tox]\nenvlist = py38\n[testenv]\ndeps = six==1.16.0\n"})
    plan = run_fixbot("env", str(root), "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert "python:  3.9 (tox.ini envlist (py38): 3.8 is not available, the nearest newer)" in plan.stdout
    assert "$ pip install ." in plan.stdout and "(not built yet)" in plan.stdout
    built_now = run_fixbot("env", str(root), "--lock")
    again = run_fixbot("env", str(root))
    image = again.stdout.split("ready:   ")[1].split()[0]
    try:
        assert built_now.returncode == 0 and again.returncode == 0, built_now.stdout + built_now.stderr
        assert "  tabulate==0.9.0 --hash=sha256:" in built_now.stdout and "six==1.16.0" in built_now.stdout
        assert "(cached)" in again.stdout and "reusing" in again.stdout
    finally:
        docker_client.images.remove(docker_client.images.get(image).id, force=True)  # every tag: none left dangling


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_fixbot_env_bad_input_is_exit_2_with_pips_reason(tmp_path):
    from .conftest import run_fixbot

    root = _repo(tmp_path / "bad", {"requirements.txt": "fixbot-no-such-package-xyz==1.0\n" + unique(),
                                    "test_x.py": ""})
    proc = run_fixbot("env", str(root))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("fixbot: error: setting up the test environment failed: installing the "
                                  "requirements in requirements.txt")
    assert "No matching distribution found for fixbot-no-such-package-xyz==1.0" in proc.stderr


def test_a_project_that_does_not_build_is_left_out_and_the_rest_installed(docker_client):
    # an old setup.py that today's setuptools cannot run; its tests still run from the checkout
    with _set_up(docker_client, "import py2exe_is_gone\n" + unique()) as (env, lines):
        assert env.plan.steps[0].optional and env.built
        assert any("the project does not build as a package" in line and "its tests run from the checkout" in line
                   for line in lines), lines
        assert versions(env.image, "six") == {"six": "1.16.0"}


@contextlib.contextmanager
def _set_up(docker_client, setup_py: str) -> Iterator[tuple[Environment, list[str]]]:
    """The environment of a project with this setup.py, a module and one requirement, and its log; removed after."""
    project = checkout({"setup.py": setup_py, "requirements.txt": "six==1.16.0\n", "old.py": ""})
    lines: list[str] = []
    env = prepare_environment(project, EnvRequest(), client=docker_client, log=lines.append)
    try:
        yield env, lines
    finally:
        docker_client.images.remove(env.image, force=True)


FAILS_ONCE_AS_THE_INDEX_DOES = """\
import os, sys
from setuptools import setup
{marker}
if not os.path.exists("/tmp/fixbot-tried-once"):  # the build container's /tmp outlives one step, not the image
    open("/tmp/fixbot-tried-once", "w").close()
    print("Max retries exceeded with url: /simple/setuptools/ (Caused by ProxyError('Unable to connect to proxy'))")
    sys.exit(1)
setup(name="flaky_index", version="0.1", py_modules=["old"])
"""


def test_a_project_whose_build_fails_as_the_index_does_is_built_once_more(docker_client):
    """The environment built without the project is cached and reused by later runs: a build that failed because
    the index did not answer is tried again, not left out for good."""
    with _set_up(docker_client, FAILS_ONCE_AS_THE_INDEX_DOES.format(marker=unique())) as (env, lines):
        assert env.plan.steps[0].optional and env.built
        assert any("failed as the package index does" in line and "trying it once more" in line
                   for line in lines), lines
        assert not any("does not build as a package" in line for line in lines), lines
        assert any(re.search(r"Successfully installed .*flaky[-_]index-0\.1", line) for line in lines), lines
        assert versions(env.image, "six") == {"six": "1.16.0"}


def test_a_pinned_range_no_release_satisfies_is_loosened_and_said(built):
    """An old pin whose releases the index no longer serves (packaging has none below 14.0): the nearest that
    installs, said in the log; a requirement without a range is not loosened (its failure stays pip's)."""
    lines: list[str] = []
    project = checkout({"requirements-test.txt": "six==1.16.0\npackaging<1.0 ; python_version >= '3'\n" + unique()})
    env = built(project, log=lines.append)
    assert set(versions(env.image, "six", "packaging")) == {"six", "packaging"}
    assert any("no release of packaging<1.0" in line and "installing packaging instead" in line for line in lines), \
        lines
