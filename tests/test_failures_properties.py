"""bot.failures never crashes: any text, any bytes, real output cut anywhere → a list of Failures or ParseError."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.failures import Failure, ParseError, parse_ci_log, parse_junit, parse_pytest_output
from tests.test_failures_parsers import CALC, TEST_CALC, run_pytest, write_project

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[str, str]:
    project = write_project(tmp_path_factory.mktemp("props") / "calc",
                            {"calc.py": CALC, "tests/test_calc.py": TEST_CALC})
    out = {
        "long": run_pytest(project, "--tb=long", "--junitxml=x1.xml", "-o", "junit_family=xunit1"),
        "short": run_pytest(project, "--tb=short", "--color=yes"),
    }
    out["xml"] = (project / "x1.xml").read_text()
    return out


def outcome(parse, data) -> list[Failure] | ParseError:
    """The contract: a list of well-typed records, or ParseError; anything else propagates and fails the test."""
    try:
        result = parse(data)
    except ParseError as exc:
        assert str(exc)
        return exc
    assert isinstance(result, list)
    for f in result:
        assert isinstance(f, Failure) and isinstance(f.test_id, str)
        assert f.line is None or isinstance(f.line, int)
        assert all(isinstance(fr.line, int) and fr.path for fr in f.traceback)
    return result


# Lines that look like pytest's own, so the generated text reaches the parsers' inner branches.
PYTEST_LINES = st.sampled_from([
    "=================================== FAILURES ===================================",
    "==================================== ERRORS ====================================",
    "=========================== short test summary info ============================",
    "___________________________________ test_x ___________________________________",
    "____________________ ERROR collecting tests/test_x.py ____________________",
    "_ _ _ _ _ _ _ _ _ _", "tests/test_x.py:3: in test_x", "tests/test_x.py:3: AssertionError", "x.py:1: ",
    ">       assert f(1) == [2, (3", "E       assert 1 == ", "E     File \"/a/b.py\", line 9", "E   SyntaxError: x",
    "E", "    def test_x():", "FAILED tests/test_x.py::test_x - assert 1 == 2", "ERROR tests/x.py", "rootdir: /a",
    "----------------------------- Captured stdout call -----------------------------", "3 failed in 0.1s",
])
TEXT = st.lists(st.one_of(PYTEST_LINES, st.text(max_size=40)), max_size=30).map("\n".join)


@SETTINGS
@given(text=TEXT)
def test_any_text(text):
    outcome(parse_pytest_output, text)
    outcome(parse_ci_log, text)


@SETTINGS
@given(data=st.binary(max_size=400))
def test_any_bytes_in_a_ci_log(data):
    outcome(parse_ci_log, data)
    outcome(parse_ci_log, b"2024-05-01T12:34:56.1234567Z \x1b[31m" + data)


@SETTINGS
@given(data=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda t: "<" + t)))
def test_any_junit_input(data):
    outcome(parse_junit, data)


@SETTINGS
@given(cut=st.integers(min_value=0, max_value=10**6), start=st.integers(min_value=0, max_value=10**6))
def test_real_output_cut_anywhere(real, cut, start):
    for key in ("long", "short"):
        text = real[key]
        a, b = sorted((start % (len(text) + 1), cut % (len(text) + 1)))
        outcome(parse_pytest_output, text[a:b])
        outcome(parse_ci_log, text[a:b].encode()[: b - a])
    xml = real["xml"]
    outcome(parse_junit, xml[: cut % (len(xml) + 1)])


@SETTINGS
@given(cut=st.integers(min_value=0, max_value=10**6))
def test_a_cut_never_invents_tests(real, cut):
    # Whatever survives the cut is a subset of the full run's failing ids (no header mistaken for a test).
    full = {f.test_id for f in parse_pytest_output(real["long"])}
    text = real["long"][: cut % (len(real["long"]) + 1)]
    result = outcome(parse_pytest_output, text)
    if isinstance(result, list):
        assert {f.test_id for f in result} <= full | {"?::test_add", "?::test_pick", "?::TestThing::test_method"}
