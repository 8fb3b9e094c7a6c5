"""`--test-cmd "python -m unittest ..."`: read as unittest reads it, translated to pytest's arguments, and checked
against what unittest itself runs (on the host: our own test project) and in the real sandbox."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.checkout.repository import load_checkout
from bot.environment.prepare import EnvRequest, prepare_environment
from bot.errors import UserError
from bot.fix.reproduce.command import BadTestCommand, TestCommand
from bot.fix.reproduce.testrun import run_tests
from bot.fix.reproduce.unittest_cmd import ONLY_TESTCASES, UnknownTestName
from sandbox import open_sandbox

from .conftest import run_fixbot
from .test_fix_cli import one_line_error, script

pytestmark = pytest.mark.timeout(900)

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
TEST_CALC = """\
import unittest

from pkg.calc import add, sub


def test_helper(x):  # not a test to unittest; pytest would call it and miss a fixture `x`
    assert x


class TestPlain:  # not a TestCase: unittest never runs it
    def test_never(self):
        assert False


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(1, 2), 3)

    def test_sub(self):
        self.assertEqual(sub(3, 2), 1)
"""
CASE = "import unittest\n\n\nclass {name}(unittest.TestCase):\n    def test_{test}(self):\n        pass\n"
PROJECT = {
    "pkg/__init__.py": "", "pkg/calc.py": CALC,
    "tests/__init__.py": "", "tests/test_calc.py": TEST_CALC,
    "tests/sub/__init__.py": "", "tests/sub/test_deep.py": CASE.format(name="TestDeep", test="deep"),
    "tests/check_more.py": CASE.format(name="TestMore", test="more"),
    # not a package: unittest's discovery never enters it (data that looks like a test, and breaks on import)
    "tests/data/test_sample.py": "import no_such_module\n" + CASE.format(name="TestSample", test="sample"),
    "test_top.py": CASE.format(name="TestTop", test="top"),
}
FILES = {path: text.encode() for path, text in PROJECT.items()}
ONLY = ("-o", "python_files=test*.py", *ONLY_TESTCASES)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize("text,args,shown", [
    ("pytest", (), "pytest"), ("python -m pytest -x tests", ("-x", "tests"), "pytest -x tests"),
    ("python3 -m pytest -k 'a or b'", ("-k", "a or b"), "pytest -k 'a or b'"), ("", (), "pytest")])
def test_pytest_commands_are_as_before(text, args, shown):
    command = TestCommand.parse(text)
    assert (command.args, command.kind, str(command)) == (args, "pytest", shown)
    assert command.pytest_args(FILES) == args


@pytest.mark.parametrize("text,args", [
    ("python -m unittest tests.test_calc.TestCalc.test_add", (*ONLY, "tests/test_calc.py::TestCalc::test_add")),
    ("python3 -m unittest tests.test_calc.TestCalc", (*ONLY, "tests/test_calc.py::TestCalc")),
    ("python -m unittest -v tests.test_calc tests/sub/test_deep.py",
     ("-v", *ONLY, "tests/test_calc.py", "tests/sub/test_deep.py")),
    ("python -m unittest tests.sub", (*ONLY, "tests/sub")),  # a package: its directory
    ("python -m unittest ./tests/test_calc.py", (*ONLY, "tests/test_calc.py")),
    ("python -m unittest", (*ONLY, "--ignore=tests/data", ".")),
    ("python -m unittest -q -f -b -c --locals", ("-q", "-x", "--showlocals", *ONLY, "--ignore=tests/data", ".")),
    ("python -m unittest discover -s tests -p 'check_*.py' -t .",
     ("-o", "python_files=check_*.py", *ONLY_TESTCASES, "tests")),  # tests/data holds no check_*.py
    ("python -m unittest discover tests", (*ONLY, "--ignore=tests/data", "tests")),
    ("python -m unittest discover -s tests.sub", (*ONLY, "tests/sub")),  # a package's dotted name
    ("python -m unittest -k add", ("-k", "add", *ONLY, "--ignore=tests/data", ".")),
    ("python -m unittest -k '*add*' -k TestCalc.test_sub",
     ("-k", "(add) or (TestCalc and test_sub)", *ONLY, "--ignore=tests/data", ".")),
])
def test_unittest_commands_become_pytest_arguments(text, args):
    command = TestCommand.parse(text)
    assert (command.kind, str(command)) == ("unittest", text)
    assert command.pytest_args(FILES) == args


def test_names_resolve_under_the_import_roots_too():
    files = {"src/app/__init__.py": b"", "src/app/test_app.py": b"import unittest\nclass TestApp: pass\n"}
    command = TestCommand.parse("python -m unittest app.test_app.TestApp")
    assert command.pytest_args(files, pythonpath=("", "src"))[-1] == "src/app/test_app.py::TestApp"


@pytest.mark.parametrize("text,error,words", [
    ("python -m unittest tests.test_calc.TestNope", UnknownTestName, "'tests.test_calc.TestNope'"),
    ("python -m unittest nothing.here", UnknownTestName, "'nothing.here'"),
    ("python -m unittest tests/test_nope.py", UnknownTestName, "'tests/test_nope.py'"),
    ("python -m unittest discover -s nope", UnknownTestName, "'nope'"),
])
def test_a_name_that_names_nothing_is_the_users_error(text, error, words):
    command = TestCommand.parse(text)  # reading the command needs no files
    with pytest.raises(error) as info:
        command.pytest_args(FILES)
    assert isinstance(info.value, BadTestCommand) and isinstance(info.value, UserError)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("text,words", [
    ("python -m unittest --bogus", "unrecognized arguments: --bogus"),
    ("python -m unittest -s tests", "unrecognized arguments: -s"),  # -s belongs to `discover`
    ("python -m unittest discover -p", "expected one argument"),
    ("python -m unittest -k 'test_a*'", "no wildcards"),
    ("python2 -m unittest", "python -m unittest"),
])
def test_unittest_usage_errors_are_refused_when_read(text, words):
    with pytest.raises(BadTestCommand) as info:
        TestCommand.parse(text)
    assert words in str(info.value) and "\n" not in str(info.value)


def unittest_ran(project: Path, words: list[str]) -> set[str]:
    """The tests unittest itself runs, as node ids (its -v lines: `test_x (pkg.mod.Class.test_x) ... ok`)."""
    proc = subprocess.run([sys.executable, "-m", "unittest", *words, "-v"], cwd=project, capture_output=True,
                          text=True, timeout=120)
    assert "\nRan " in proc.stderr, proc.stderr
    ran = set()
    for module, cls, name in re.findall(r"^\w+ \(([\w.]+)\.(\w+)\.(\w+)\) \.\.\. ", proc.stderr, re.M):
        path = module.replace(".", "/") + ".py"
        if not (project / path).is_file():  # discovery from tests/ names its modules from there
            path = "tests/" + path
        ran.add(f"{path}::{cls}::{name}")
    return ran


def pytest_collected(project: Path, args: tuple[str, ...]) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # no collection error (tests/data stays out)
    return {line.strip() for line in proc.stdout.splitlines() if "::" in line}


@pytest.mark.parametrize("words", [
    [], ["discover", "-s", "tests"], ["discover", "-s", "tests", "-p", "check_*.py"], ["discover", "tests"],
    ["tests.test_calc"], ["tests.test_calc.TestCalc.test_add", "test_top.TestTop"], ["tests/sub/test_deep.py"],
    ["-k", "add"], ["discover", "-s", "tests", "-k", "deep"],
])
def test_pytest_collects_what_unittest_runs(tmp_path, words):
    project = write(tmp_path, PROJECT)
    command = TestCommand.parse("python -m unittest " + " ".join(f"'{w}'" for w in words))
    expected = unittest_ran(project, words)
    assert expected  # every command here runs something
    assert pytest_collected(project, command.pytest_args(load_checkout(project).files)) == expected


def test_unittest_project_in_the_sandbox(tmp_path, docker_client, sandbox_image):
    project = write(tmp_path / "calc", PROJECT)
    checkout = load_checkout(project)
    env = prepare_environment(checkout, EnvRequest(), client=docker_client, log=print)
    one = TestCommand.parse("python -m unittest tests.test_calc.TestCalc.test_add")
    discover = TestCommand.parse("python -m unittest discover -s tests")
    with open_sandbox("docker", image=env.image) as sandbox:
        runs = {c: run_tests(sandbox, checkout.files, c, pythonpath=env.pythonpath) for c in (one, discover)}
        again = run_tests(sandbox, checkout.files, discover, pythonpath=env.pythonpath,
                          select=["tests/test_calc.py::TestCalc::test_add"])
    add = "tests/test_calc.py::TestCalc::test_add"
    assert (runs[one].failed, runs[one].passed) == ({add}, set())
    assert runs[discover].failed == {add}
    assert runs[discover].passed == {"tests/test_calc.py::TestCalc::test_sub",
                                     "tests/sub/test_deep.py::TestDeep::test_deep"}
    [failure] = runs[discover].failures
    assert (failure.test_id, failure.file, failure.line) == (add, "tests/test_calc.py", 17)
    assert (failure.actual, failure.expected, failure.error_type) == ("-1", "3", "AssertionError")
    assert (again.failed, again.passed) == ({add}, set())  # fixbot's own selection within the command


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_fixbot_fix_with_a_unittest_command_and_a_unittest_ci_log(tmp_path):
    # the whole way: the user's unittest command, the CI log unittest wrote, the repair (the mutation search
    # finds this one-edit bug; the scripted model is never needed), the report
    project = write(tmp_path / "calc", PROJECT)
    proc = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "."], cwd=project,
                          capture_output=True, text=True, timeout=120)
    assert "FAIL: test_add (tests.test_calc.TestCalc" in proc.stderr
    log = tmp_path / "ci.log"
    log.write_text("".join(f"2026-11-25T10:00:00.1234567Z {line}\n" for line in proc.stderr.splitlines()))
    command = "python -m unittest discover -s tests -t ."
    out = tmp_path / "out"
    proc = run_fixbot("fix", str(project), "--test-cmd", command, "--from-log", str(log), "--model",
                      script(tmp_path, "no code here"), "--out", str(out), "--apply")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the CI log names 1 failing test" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["test_command"] == command
    assert [f["test_id"] for f in report["failures"]] == ["tests/test_calc.py::TestCalc::test_add"]
    assert "return a + b" in (project / "pkg" / "calc.py").read_text()
    proc = run_fixbot("fix", str(project), "--test-cmd", "python -m unittest tests.test_calc.TestNope",
                      "--out", str(tmp_path / "out2"))
    assert proc.returncode == 2 and "'tests.test_calc.TestNope'" in one_line_error(proc)
