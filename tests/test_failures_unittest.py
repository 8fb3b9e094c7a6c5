"""bot.failures on real unittest output: a small project made here, run by `python -m unittest` in a subprocess,
read into the same records as pytest's output of the same tests."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.failures import Failure, ParseError, parse_ci_log, parse_pytest_output, parse_unittest_output
from tests.test_failures_parsers import github_log, run_pytest, write_project
from tests.test_failures_properties import outcome

CALC = """\
def add(a, b):
    return a - b


def div(a, b):
    return a / b
"""
TEST_CALC = '''\
import unittest

from pkg.calc import add, div


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(1, 2), 3)

    def test_div(self):
        """Division by zero gives zero."""
        self.assertEqual(div(1, 0), 0)

    def test_list(self):
        self.assertEqual([1, 2, 3], [1, 2, 4], "lists")

    def test_text(self):
        self.assertEqual("abc\\ndef\\n", "abc\\nxyz\\n")

    def test_almost(self):
        self.assertAlmostEqual(add(0.5, 0.25), 0.75, msg="sum")

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertEqual(add(i, 0), i + 1)

    def test_ok(self):
        self.assertEqual(add(0, 0), 0)


class TestSetup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise ConnectionError("no db")

    def test_query(self):
        pass


if __name__ == "__main__":
    unittest.main()
'''
FILES = {
    "pkg/__init__.py": "", "pkg/calc.py": CALC, "pkg/bad.py": "def f(:\n    return 1\n",
    "tests/__init__.py": "", "tests/test_calc.py": TEST_CALC,
    "tests/test_imports.py": "from pkg.calc import nope\n",
    "tests/test_syntax.py": "import unittest\n\nfrom pkg.bad import f\n",
}
FAILING = {"tests/test_calc.py::TestCalc::" + name for name in ("test_add", "test_div", "test_list", "test_text",
                                                                 "test_almost", "test_sub")}
EVERY = FAILING | {"tests/test_calc.py::TestSetup", "tests/test_imports.py", "tests/test_syntax.py"}


def run_unittest(project: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(project)}  # `python tests/test_x.py` imports the package too
    proc = subprocess.run([sys.executable, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1) and "\nRan " in proc.stderr, proc.stderr
    return proc.stderr  # unittest reports on stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("unittest")
    project = write_project(base / "calc", FILES)
    # a checkout under an Actions workspace, its tests discovered from tests/ as the import root
    actions = write_project(base / "home" / "runner" / "work" / "calc" / "calc", FILES)
    green = write_project(base / "green", {"test_ok.py": "import unittest\n\n\nclass T(unittest.TestCase):\n"
                                                         "    def test_ok(self):\n        pass\n"})
    return {
        "project": project, "actions": actions,
        "plain": run_unittest(project, "-m", "unittest"),
        "verbose": run_unittest(project, "-m", "unittest", "-v"),
        "main": run_unittest(project, "tests/test_calc.py"),
        "top_tests": run_unittest(actions, "-m", "unittest", "discover", "-s", "tests", "-t", "tests"),
        "green": run_unittest(green, "-m", "unittest", "-v"),
        "pytest": run_pytest(project, "--tb=long", "--continue-on-collection-errors"),
    }


def by_id(failures: list[Failure]) -> dict[str, Failure]:
    return {f.test_id: f for f in failures}


def check_calc(failures: list[Failure]) -> None:
    """What every form of unittest output must yield for the project."""
    got = by_id(failures)
    assert set(got) == EVERY and len(failures) == len(EVERY)  # the subtests' three reports are one test
    add = got["tests/test_calc.py::TestCalc::test_add"]
    assert (add.file, add.line, add.assertion) == ("tests/test_calc.py", 8, "self.assertEqual(add(1, 2), 3)")
    assert (add.actual, add.expected, add.error_type, add.message) == ("-1", "3", "AssertionError",
                                                                       "AssertionError: -1 != 3")
    div = got["tests/test_calc.py::TestCalc::test_div"]
    assert (div.file, div.line, div.error_type) == ("tests/test_calc.py", 12, "ZeroDivisionError")
    assert (div.actual, div.expected, div.message) == (None, None, "ZeroDivisionError: division by zero")
    assert [(f.path, f.line, f.function, f.code) for f in div.traceback] == [
        ("tests/test_calc.py", 12, "test_div", "self.assertEqual(div(1, 0), 0)"),
        ("pkg/calc.py", 6, "div", "return a / b")]
    lists = got["tests/test_calc.py::TestCalc::test_list"]
    assert (lists.actual, lists.expected) == ("[1, 2, 3]", "[1, 2, 4]")
    assert "First differing element 2:" in lists.message and lists.message.endswith(" : lists")
    text = got["tests/test_calc.py::TestCalc::test_text"]
    assert (text.actual, text.expected) == (r"'abc\ndef\n'", r"'abc\nxyz\n'")
    assert "- def\n+ xyz" in text.message
    almost = got["tests/test_calc.py::TestCalc::test_almost"]
    assert (almost.actual, almost.expected) == ("0.25", "0.75")
    sub = got["tests/test_calc.py::TestCalc::test_sub"]
    assert (sub.line, sub.actual, sub.expected) == (26, "0", "1")
    setup = got["tests/test_calc.py::TestSetup"]
    assert (setup.file, setup.line, setup.error_type) == ("tests/test_calc.py", 35, "ConnectionError")
    imports = got["tests/test_imports.py"]
    assert (imports.file, imports.line, imports.assertion) == ("tests/test_imports.py", 1,
                                                                "from pkg.calc import nope")
    assert imports.error_type == "ImportError" and "cannot import name 'nope'" in imports.message
    assert all("unittest" not in f.path for f in imports.traceback)  # the loader's own frames are left out
    syntax = got["tests/test_syntax.py"]
    assert (syntax.file, syntax.line, syntax.assertion, syntax.error_type) == ("pkg/bad.py", 1, "def f(:",
                                                                               "SyntaxError")
    assert ("tests/test_syntax.py", 3, "<module>", "from pkg.bad import f") in [
        (f.path, f.line, f.function, f.code) for f in syntax.traceback]


def test_plain_output(runs):
    assert "FAIL: test_add (tests.test_calc.TestCalc" in runs["plain"]
    check_calc(parse_unittest_output(runs["plain"]))


def test_verbose_output(runs):
    assert "test_add (tests.test_calc.TestCalc" in runs["verbose"] and " ... FAIL" in runs["verbose"]
    check_calc(parse_unittest_output(runs["verbose"]))


def test_headers_before_python_3_11(runs):
    # 3.8-3.10 name the class only: `FAIL: test_add (tests.test_calc.TestCalc)`
    old = re.sub(r"^((?:FAIL|ERROR): (\S+) \(([\w.]+))\.\2\)", r"\1)", runs["plain"], flags=re.M)
    assert old != runs["plain"] and "FAIL: test_add (tests.test_calc.TestCalc)\n" in old
    check_calc(parse_unittest_output(old))


def test_same_records_as_pytest_gives(runs):
    # pytest runs the same TestCases; every field it fills is filled alike (the id of a subtest or a setUpClass
    # error differs: pytest reports each test of the class, unittest the class)
    mine = by_id(parse_unittest_output(runs["plain"]))
    theirs = by_id(parse_pytest_output(runs["pytest"]))
    common = set(mine) & set(theirs)
    assert common >= FAILING - {"tests/test_calc.py::TestCalc::test_sub"} | {"tests/test_imports.py"}
    for test_id in common:
        a, b = mine[test_id], theirs[test_id]
        assert (a.file, a.line, a.assertion, a.expected, a.actual, a.error_type) == (
            b.file, b.line, b.assertion, b.expected, b.actual, b.error_type), test_id
        project = [(f.path, f.line, f.code) for f in b.traceback if not f.path.startswith(("/", "<"))]
        assert [(f.path, f.line, f.code) for f in a.traceback] == project, test_id


def test_module_run_as_main_with_a_root(runs):
    # `python tests/test_calc.py` names the module __main__; the frame of the test method gives the file
    got = by_id(parse_unittest_output(runs["main"], root=str(runs["project"])))
    assert set(got) == FAILING | {"tests/test_calc.py::TestSetup"}
    assert got["tests/test_calc.py::TestCalc::test_add"].line == 8


def test_actions_log_with_a_subdirectory_as_import_root(runs):
    # module names relative to tests/ (`-t tests`): the Actions workspace is the root, so ids match pytest's
    assert "(test_calc.TestCalc" in runs["top_tests"]
    got = by_id(parse_ci_log(github_log(runs["top_tests"])))
    assert FAILING <= set(got)
    div = got["tests/test_calc.py::TestCalc::test_div"]
    assert [f.path for f in div.traceback] == ["tests/test_calc.py", "pkg/calc.py"]


def test_ci_log_with_pytest_and_unittest_runs(runs):
    log = github_log(runs["pytest"] + "\n" + runs["plain"])
    failures = parse_ci_log(log)
    pytest_part, unittest_part = parse_pytest_output(runs["pytest"]), parse_unittest_output(runs["plain"])
    assert failures == pytest_part + unittest_part
    check_calc(parse_ci_log(github_log(runs["plain"])))


def test_green_run_and_other_text(runs):
    assert "Ran 1 test" in runs["green"]
    assert parse_unittest_output(runs["green"]) == []
    assert parse_ci_log(github_log(runs["green"])) == []
    with pytest.raises(ParseError, match="no unittest output"):
        parse_unittest_output("hello\nFAIL: not a header\n")
    with pytest.raises(ParseError, match="no pytest or unittest output"):
        parse_ci_log(b"2024-05-01T12:34:56.1234567Z npm ERR! missing script: test\n")


def test_a_cut_log_keeps_what_it_shows(runs):
    # Actions shows a long log's tail: a verbose run cut after its progress lines still names the failing tests
    text = runs["verbose"]
    head = text[:text.index("======")]
    got = by_id(parse_unittest_output(head))
    assert set(got) == EVERY  # a docstring's line and a subtest's indented line included
    assert got["tests/test_calc.py::TestCalc::test_add"].file is None


SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
UNITTEST_LINES = st.sampled_from([
    "=" * 70, "-" * 70, "FAIL: test_x (tests.test_x.TestX.test_x)", "ERROR: test_x (tests.test_x.TestX)",
    "ERROR: setUpClass (tests.test_x.TestX)", "ERROR: tests.test_y (unittest.loader._FailedTest.tests.test_y)",
    "UNEXPECTED SUCCESS: test_z (a.B.test_z)", "Traceback (most recent call last):",
    '  File "/w/tests/test_x.py", line 3, in test_x', '  File "/w/x.py", line 9', "    self.assertEqual(1, 2)",
    "    ^^^^", "AssertionError: 1 != 2", "AssertionError: Lists differ: [1] != [2", "SyntaxError: x", "Stdout:",
    "test_x (tests.test_x.TestX.test_x) ... FAIL", "Ran 3 tests in 0.001s", "FAILED (failures=1)", "",
])
TEXT = st.lists(st.one_of(UNITTEST_LINES, st.text(max_size=40)), max_size=30).map("\n".join)


@SETTINGS
@given(text=TEXT)
def test_any_text(text):
    outcome(parse_unittest_output, text)
    outcome(parse_ci_log, text)


@SETTINGS
@given(cut=st.integers(min_value=0, max_value=10**6), start=st.integers(min_value=0, max_value=10**6))
def test_real_output_cut_anywhere(runs, cut, start):
    for key in ("plain", "verbose", "main"):
        text = runs[key]
        a, b = sorted((start % (len(text) + 1), cut % (len(text) + 1)))
        outcome(parse_unittest_output, text[a:b])
        outcome(parse_ci_log, text[a:b].encode()[: b - a])


@SETTINGS
@given(cut=st.integers(min_value=0, max_value=10**6))
def test_a_cut_never_invents_tests(runs, cut):
    # Whatever survives the cut is among the full run's failing ids (no half line mistaken for a test).
    for key in ("plain", "verbose"):
        result = outcome(parse_unittest_output, runs[key][: cut % (len(runs[key]) + 1)])
        if isinstance(result, list):
            assert {f.test_id for f in result} <= EVERY
