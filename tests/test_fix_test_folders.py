"""What is never a target: test files, helpers beside the tests, folders the test command names
(bot.fix.locate.project_files, bot.fix.locate.rank on real runs); and the feedback without the test lines the
prompt shows."""
from __future__ import annotations

import pytest

from bot.failures import Failure, Frame
from bot.fix.locate.project_files import folders_of_tests, is_project_file
from bot.fix.locate.rank import locate
from bot.fix.repair import briefing
from bot.fix.repair.briefing import without_shown

from .locate_run import run_repo, where


@pytest.mark.parametrize(("path", "project"), [
    ("pkg/mod.py", True), ("src/pkg/mod.py", True), ("setup.py", True),
    ("tests/helpers.py", False), ("pkg/test/util.py", False), ("testing/x.py", False),
    ("pkg/test_mod.py", False), ("pkg/mod_test.py", False), ("conftest.py", False),
    (".github/scripts/x.py", False), (".venv/lib/python3.11/site-packages/x.py", False),
    ("venv/lib/x.py", False), ("pkg/README.md", False),
])
def test_project_files(path, project):
    assert is_project_file(path) is project


WALK = {
    "python_programs/__init__.py": "",
    "python_programs/walk.py": '''\
def walk(node, steps):
    for _ in range(steps + 1):
        node = node.first()
    return node.value
''',
    "python_testcases/node.py": '''\
class Node:
    def __init__(self, value, successors=()):
        self.value = value
        self.successors = list(successors)

    def first(self):
        return self.successors[0]
''',
    "python_testcases/test_walk.py": '''\
from node import Node
from python_programs.walk import walk


def test_walk():
    c = Node("c")
    assert walk(Node("a", [Node("b", [c])]), 2) == "c"
''',
}


def test_a_helper_module_of_the_test_folder_is_never_a_target(tmp_path):
    files = {**WALK, "pytest.ini": "[pytest]\npythonpath = . python_testcases\n"}
    checkout, run = run_repo(tmp_path, files)
    [failure] = run.failures
    assert failure.traceback[-1].path == "python_testcases/node.py"  # the helper raised
    # the folder is not called tests/: by its name alone the helper looks like project code (the case) ...
    assert where(locate(checkout, run, run.failures))[0] == "python_testcases/node.py::Node.first"
    # ... but it holds the failing test, and its name says test: nothing in it is a target
    targets = locate(checkout, run, run.failures, test_roots=["python_testcases/test_walk.py"])
    assert where(targets) == ["python_programs/walk.py::walk"]
    assert targets[0].reasons[0] == "raised here (deepest project frame)"


def test_nothing_under_a_folder_the_test_command_names_is_a_target(tmp_path):
    files = {k.replace("python_testcases/", "checks/"): v for k, v in WALK.items()}
    checkout, run = run_repo(tmp_path, {**files, "pytest.ini": "[pytest]\npythonpath = . checks\n"})
    assert "checks/node.py::Node.first" in where(locate(checkout, run, run.failures))
    # a test file in a folder whose name does not say test: the folder may be the project's own package
    assert "checks/node.py::Node.first" in where(locate(checkout, run, run.failures,
                                                        test_roots=["checks/test_walk.py"]))
    for roots in (["checks"], ["./checks/"], ["checks/node.py"]):
        assert where(locate(checkout, run, run.failures, test_roots=roots)) == ["python_programs/walk.py::walk"]


def test_a_helper_under_tests_is_never_a_target(tmp_path):
    files = {k.replace("python_testcases/", "tests/"): v for k, v in WALK.items()}
    checkout, run = run_repo(tmp_path, {**files, "pytest.ini": "[pytest]\npythonpath = . tests\n"})
    assert where(locate(checkout, run, run.failures)) == ["python_programs/walk.py::walk"]


@pytest.mark.parametrize(("roots", "folders"), [
    (["tests/test_a.py::test_x"], ("tests/test_a.py", "tests")),
    (["python_testcases/test_walk.py"], ("python_testcases/test_walk.py", "python_testcases")),
    (["pkg/test_mod.py"], ("pkg/test_mod.py",)),  # tests beside the modules: the package stays project code
    (["test_root.py", ".", "./", ""], ("test_root.py",)),  # never the whole checkout
    (["./e2e/", "e2e"], ("e2e",)),
])
def test_test_folders(roots, folders):
    files = ["tests/test_a.py", "python_testcases/test_walk.py", "pkg/test_mod.py", "test_root.py", "e2e/x.py"]
    assert folders_of_tests(files, roots) == folders


def test_the_feedback_leaves_out_the_test_lines_the_prompt_shows():
    shown = ("def test_join(self):\n    self.assertEqual(join('a', 'b'), 'a/b')\n"
             "    self.assertEqual(join('', 'b'), 'b')\n")
    feedback = ("    def test_join(self):\n        self.assertEqual(join('a', 'b'), 'a/b')\n"
                ">       self.assertEqual(join('', 'b'), 'b')\nE       AssertionError: '/b' != 'b'\n"
                "test/test_paths.py:9: AssertionError")
    assert without_shown(feedback, shown).splitlines() == [
        ">       self.assertEqual(join('', 'b'), 'b')", "E       AssertionError: '/b' != 'b'",
        "test/test_paths.py:9: AssertionError"]
    assert without_shown(feedback, "") == feedback


def test_a_long_test_is_shown_around_the_line_it_failed_at():
    cases = "".join(f"        self.assertEqual(unified('{d}'), '2020010{d % 9}')\n" for d in range(30))
    source = f"import unittest\n\n\nclass TestDates(unittest.TestCase):\n    def test_unified(self):\n{cases}"
    files = {"test/test_dates.py": source.encode()}
    test_id = "test/test_dates.py::TestDates::test_unified"
    failing = 6 + 24  # the 25th assertion
    failure = Failure(test_id=test_id, file="test/test_dates.py", line=failing, assertion=None, expected=None,
                      actual=None, error_type="AssertionError", message=None,
                      traceback=(Frame("test/test_dates.py", failing, "test_unified", None),))
    shown = briefing.tests_shown(files, [test_id], [failure]).splitlines()
    assert shown[0] == "def test_unified(self):"
    assert shown[1] == "    # ... 16 lines"
    assert shown[2:11] == [line.strip().join(["    ", ""]) for line in cases.splitlines()[16:25]]
    assert shown[-1] == "    # ... 3 more lines"
    assert len(shown) == 1 + 1 + 8 + 1 + 2 + 1
    # without its failure, or when it is short, the test is shown whole
    assert len(briefing.tests_shown(files, [test_id]).splitlines()) == 31
    short = {"test/test_dates.py": source.replace(cases, cases.splitlines(keepends=True)[0]).encode()}
    assert len(briefing.tests_shown(short, [test_id], [failure]).splitlines()) == 2


def test_a_long_test_keeps_its_whole_signature():
    cases = "".join(f"    assert unified('{d}') == '2020010{d % 9}'\n" for d in range(30))
    header = "@pytest.mark.slow\ndef test_unified(tmp_path,\n                 monkeypatch):\n"
    source = f"import pytest\n\n\n{header}{cases}"
    files = {"tests/test_dates.py": source.encode()}
    test_id = "tests/test_dates.py::test_unified"
    failure = Failure(test_id=test_id, file="tests/test_dates.py", line=30, assertion=None, expected=None,
                      actual=None, error_type="AssertionError", message=None, traceback=())
    shown = briefing.tests_shown(files, [test_id], [failure]).splitlines()
    assert shown[:4] == ["@pytest.mark.slow", "def test_unified(tmp_path,", "                 monkeypatch):",
                         "    # ... 15 lines"]
    assert shown[4 + 8] == "    " + cases.splitlines()[23].strip()  # line 30 of the file: the 24th assertion
