"""bot.failures on real pytest output: small throw-away projects run by a real pytest subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.failures import Failure, ParseError, parse_ci_log, parse_junit, parse_pytest_output

CALC = """\
def add(a, b):
    return a - b


def pick(xs, i):
    return helper(xs, i)


def helper(xs, i):
    return xs[i + 1]
"""
TEST_CALC = """\
from calc import add, pick


def test_add():
    assert add(1, 2) == 3


def test_pick():
    assert pick([1, 2], 1) == 2


class TestThing:
    def test_method(self):
        x = [1, 2]
        assert x == [1, 3]


def test_ok():
    assert pick([1, 2, 3], 0) == 2
"""
BROKEN = "def f(:\n    return 1\n"
TEST_BROKEN = "from mod import f\n\n\ndef test_f():\n    assert f() == 1\n"
SETUP_ERROR = {
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef db():\n    raise ConnectionError('no db')\n",
    "tests/test_db.py": "def test_query(db):\n    assert db\n",
}
PASSING = "def test_fine():\n    assert 1 + 1 == 2\n"


def write_project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    # pytest.ini pins the rootdir and makes the project importable from tests/
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def run_pytest(project: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # faster, and no third-party plugin changes the report format
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("failures")
    calc = write_project(base / "calc", {"calc.py": CALC, "tests/test_calc.py": TEST_CALC})
    broken = write_project(base / "broken", {"mod.py": BROKEN, "tests/test_mod.py": TEST_BROKEN})
    green = write_project(base / "green", {"tests/test_fine.py": PASSING})
    return {
        "calc": calc, "broken": broken,
        "long": run_pytest(calc, "--tb=long", "--junitxml=x1.xml", "-o", "junit_family=xunit1"),
        "short": run_pytest(calc, "--tb=short", "--junitxml=x2.xml", "-o", "junit_family=xunit2"),
        "auto": run_pytest(calc, "--color=no"),
        "color": run_pytest(calc, "--color=yes"),
        "broken_long": run_pytest(broken, "--tb=long", "--junitxml=x1.xml", "-o", "junit_family=xunit1"),
        "green": run_pytest(green, "--junitxml=x1.xml"),
        "setup": run_pytest(write_project(base / "setup", SETUP_ERROR), "--tb=short"),
        "green_dir": green,
    }


def by_id(failures: list[Failure]) -> dict[str, Failure]:
    return {f.test_id: f for f in failures}


def check_calc(failures: list[Failure], *, functions_known: bool = True) -> None:
    """What every format must yield for the calc project."""
    got = by_id(failures)
    assert set(got) == {"tests/test_calc.py::test_add", "tests/test_calc.py::test_pick",
                        "tests/test_calc.py::TestThing::test_method"}  # not test_ok, which passed
    add = got["tests/test_calc.py::test_add"]
    assert (add.file, add.line, add.assertion) == ("tests/test_calc.py", 5, "assert add(1, 2) == 3")
    assert (add.actual, add.expected, add.error_type) == ("-1", "3", "AssertionError")
    assert "where -1 = add(1, 2)" in add.message

    pick = got["tests/test_calc.py::test_pick"]
    assert (pick.file, pick.line, pick.assertion) == ("tests/test_calc.py", 9, "assert pick([1, 2], 1) == 2")
    assert pick.error_type == "IndexError" and "list index out of range" in pick.message
    assert (pick.actual, pick.expected) == (None, None)
    project = [(f.path, f.line, f.function, f.code) for f in pick.traceback if f.path == "calc.py"]
    assert project == [("calc.py", 6, "pick", "return helper(xs, i)"), ("calc.py", 10, "helper", "return xs[i + 1]")]
    if functions_known:
        assert pick.traceback[0].function == "test_pick"

    method = got["tests/test_calc.py::TestThing::test_method"]
    assert (method.line, method.assertion) == (15, "assert x == [1, 3]")
    assert (method.actual, method.expected) == ("[1, 2]", "[1, 3]")


def test_long_output(runs):
    check_calc(parse_pytest_output(runs["long"]))


def test_short_output(runs):
    check_calc(parse_pytest_output(runs["short"]))


def test_auto_output(runs):
    check_calc(parse_pytest_output(runs["auto"]))


def test_junit_xunit1(runs):
    check_calc(parse_junit(runs["calc"] / "x1.xml"), functions_known=False)


def test_junit_xunit2_from_text(runs):
    # xunit2 has no file attribute: the id comes from the classname and the traceback's test-file frame
    xml_text = (runs["calc"] / "x2.xml").read_text()
    check_calc(parse_junit(xml_text))
    assert parse_junit(xml_text.encode()) == parse_junit(xml_text)


def test_collection_error_points_at_broken_module(runs):
    for failures in (parse_pytest_output(runs["broken_long"]),
                     parse_junit(runs["broken"] / "x1.xml", root=str(runs["broken"]))):
        [f] = failures
        assert f.test_id == "tests/test_mod.py"
        assert (f.file, f.line, f.error_type) == ("mod.py", 1, "SyntaxError")
        assert f.assertion == "def f(:"
        assert f.traceback[-1].path == "mod.py"
        assert any(fr.path == "tests/test_mod.py" and fr.code == "from mod import f" for fr in f.traceback)


def test_junit_without_root_keeps_absolute_path(runs):
    [f] = parse_junit(runs["broken"] / "x1.xml")
    assert Path(f.file) == runs["broken"] / "mod.py"


def test_fixture_error_at_setup(runs):
    [f] = parse_pytest_output(runs["setup"])
    assert (f.test_id, f.error_type) == ("tests/test_db.py::test_query", "ConnectionError")
    assert (f.file, f.line) == ("tests/conftest.py", 6)  # no frame in the test file: the deepest one
    assert "no db" in f.message


def test_green_run_is_empty(runs):
    assert parse_pytest_output(runs["green"]) == []
    assert parse_junit(runs["green_dir"] / "x1.xml") == []


def test_summary_alone_still_gives_ids(runs):
    # A log cut before the FAILURES section (Actions shows the tail of a long log) keeps the summary.
    text = runs["long"]
    tail = text[text.index("short test summary info") - 40:]
    got = by_id(parse_pytest_output(tail))
    assert set(got) == {"tests/test_calc.py::test_add", "tests/test_calc.py::test_pick",
                        "tests/test_calc.py::TestThing::test_method"}
    add = got["tests/test_calc.py::test_add"]
    assert (add.file, add.line, add.actual, add.expected) == ("tests/test_calc.py", None, "-1", "3")
    assert got["tests/test_calc.py::test_pick"].error_type == "IndexError"


def github_log(pytest_stdout: str) -> bytes:
    """An Actions log as the API serves it: BOM, a timestamp on every line, group markers, a stray latin-1 byte."""
    stamp = "2024-05-01T12:34:56.1234567Z "
    lines = ["##[group]Run actions/setup-python@v5", "Successfully set up CPython", "##[endgroup]",
             "##[group]Run pytest -rA", "pytest -rA", "shell: /usr/bin/bash -e {0}", "##[endgroup]",
             *pytest_stdout.splitlines(), "##[error]Process completed with exit code 1."]
    body = "\n".join(stamp + line for line in lines).encode()
    return b"\xef\xbb\xbf" + body.replace(b"Successfully", b"Successfully caf\xe9", 1)


def test_ci_log_with_colours_matches_plain_output(runs):
    assert "\x1b[" in runs["color"]  # the run really was coloured
    log = github_log(runs["color"])
    failures = parse_ci_log(log)
    check_calc(failures)
    assert failures == parse_pytest_output(runs["auto"])
    assert parse_ci_log(log.decode("utf-8", errors="replace")) == failures



def test_ci_log_of_a_conftest_that_does_not_load_names_it_and_the_code_that_raised(tmp_path):
    """pytest stops before any test (exit 4, no session header, no summary) when a conftest's import raises."""
    project = write_project(tmp_path / "p", {"calc.py": "def net(x):\n    return (x\n",
                                             "tests/conftest.py": "import calc\n", "tests/test_calc.py": PASSING})
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4 and "ImportError while loading conftest" in proc.stdout + proc.stderr
    [failure] = parse_ci_log(github_log(proc.stdout + proc.stderr), root=str(project))
    assert (failure.test_id, failure.file, failure.line, failure.error_type) == (
        "tests/conftest.py", "calc.py", 2, "SyntaxError")
    assert [(f.path, f.line) for f in failure.traceback][-2:] == [("tests/conftest.py", 1), ("calc.py", 2)]

def test_not_test_output_raises():
    with pytest.raises(ParseError, match="no pytest output"):
        parse_pytest_output("hello\nworld\n")
    with pytest.raises(ParseError, match="CI log"):
        parse_ci_log(b"2024-05-01T12:34:56.1234567Z npm ERR! missing script: test\n")
    with pytest.raises(ParseError, match="not JUnit XML"):
        parse_junit("<html><body/></html>")
    with pytest.raises(ParseError, match="not JUnit XML"):
        parse_junit(b"<testsuite><testcase")
    with pytest.raises(ParseError, match="not found"):
        parse_junit("no/such/report.xml")


def test_assertion_message_and_nested_comparison():
    # pytest's layout when the assert carries a message; `==` inside a call must not split the comparison
    text = textwrap.dedent("""\
        =================================== FAILURES ===================================
        ___________________________________ test_eq ____________________________________
        tests/test_x.py:3: in test_eq
            assert f(a == b) == [1, "=="], "bad"
        E   AssertionError: bad
        E   assert f(True) == [1, '==']
        =========================== short test summary info ============================
        FAILED tests/test_x.py::test_eq - AssertionError: bad
        """)
    [f] = parse_pytest_output(text)
    assert (f.test_id, f.line, f.error_type) == ("tests/test_x.py::test_eq", 3, "AssertionError")
    assert (f.actual, f.expected) == ("f(True)", "[1, '==']")
