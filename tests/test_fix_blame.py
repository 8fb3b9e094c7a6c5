"""Which failing tests a target answers for (bot/fix/briefing.blamed_tests): a test that ran the target but
crashed in other code is another bug's, so a fix of this target is not asked to make it pass."""
from __future__ import annotations

import dataclasses
import os

from bot.agent.options import SearchOptions
from bot.fix.locate.rank import locate
from bot.fix.repair.briefing import blamed_tests

from .locate_run import run_repo
from .test_fix import ByNameLLM, fix_example
from .test_fix_realrepo import make_repo

HEADERS = '''def normalise(headers):
    out = {}
    for name, value in headers.items():
        out[name.title()] = value.strip()
    return out


def validate(headers):
    for name in headers:
        if not name.replace("-", "").isalnum():
            raise ValueError(f"invalid header name {name!r}")


def prepare(headers):
    headers = normalise(headers)
    validate(headers)
    return headers
'''
TESTS = '''from pkg.headers import prepare


def test_plain():
    assert prepare({"host": " a.de "}) == {"Host": "a.de"}


def test_an_unset_header_is_left_out():
    assert prepare({"host": "a.de", "accept": None}) == {"Host": "a.de"}


def test_an_underscore_is_allowed():
    assert prepare({"x_id": "1"}) == {"X_Id": "1"}


def test_a_value_is_stripped():
    assert prepare({"host": "a.de "})["Host"] == "a.de"
'''
FILES = {"pkg/__init__.py": "", "pkg/headers.py": HEADERS, "tests/test_headers.py": TESTS}



def _run(tmp_path, files):
    """The repository run for real, its coverage keyed by checkout paths as the probe's is."""
    checkout, run = run_repo(tmp_path, files)
    return checkout, dataclasses.replace(run, coverage={os.path.relpath(p, checkout.root): lines
                                                        for p, lines in run.coverage.items()})

def test_a_test_that_crashed_in_other_code_is_not_blamed_on_a_function_it_only_ran(tmp_path):
    checkout, run = _run(tmp_path, FILES)
    unset, underscore = "tests/test_headers.py::test_an_unset_header_is_left_out", \
        "tests/test_headers.py::test_an_underscore_is_allowed"
    assert run.failed == {unset, underscore}
    targets = {t.qualname: t for t in locate(checkout, run, run.failures)}
    # both ran normalise; only the None crashed there, the underscore crashed in validate
    assert blamed_tests(targets["normalise"], run, run.failed) == {unset}
    assert blamed_tests(targets["validate"], run, run.failed) == {underscore}


def test_two_bugs_in_two_functions_are_each_fixed_by_their_own_tests(tmp_path, docker_client, sandbox_image):
    buggy = HEADERS.replace('        if not name.replace("-", "").isalnum():',
                            '        if not name.replace("-", "").replace("_", "").isalnum() or "_" in name:')
    root = make_repo(tmp_path / "headers", {**FILES, "pkg/headers.py": buggy})
    llm = ByNameLLM({})  # it knows no fix: the search alone repairs both, each against its own failing test
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    added = [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+        if value is None:", "+            continue",
                     '+        if not name.replace("-", "").replace("_", "").isalnum() and "_" in name:']
    assert llm.asked == []  # blamed on both tests, the None's function needed the model or a pair


def test_an_error_raised_by_a_helper_of_the_tests_is_still_blamed_on_what_the_test_ran(tmp_path):
    checkout, run = _run(tmp_path, {
        "pkg/__init__.py": "", "pkg/text.py": 'def shout(s):\n    return s.upper() + "!"\n',
        "tests/helpers.py": "def expect(value, wanted):\n    if value != wanted:\n"
                            "        raise ValueError(f'{value!r} != {wanted!r}')\n",
        "tests/test_text.py": "from pkg.text import shout\nfrom tests.helpers import expect\n\n\n"
                              "def test_shout():\n    expect(shout('hi'), 'HI!!')\n\n\n"
                              "def test_none():\n    expect(shout(None), '')\n"})
    assert run.failed == {"tests/test_text.py::test_shout", "tests/test_text.py::test_none"}
    [shout] = [t for t in locate(checkout, run, run.failures) if t.qualname == "shout"]
    assert blamed_tests(shout, run, run.failed) == run.failed  # the helper's ValueError is the test's own check
