"""bot.fix.locate on real runs: small repositories run by a real pytest, failures parsed by bot.failures, and
per-test line coverage recorded by a tiny sys.settrace plugin (coverage.py is not a dependency) in the shape
`TestRun.coverage` has: path -> line -> ids of the tests that executed it."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.failures import parse_junit, parse_pytest_output
from bot.fix.briefing import agent_target, blamed_tests, without_shown
from bot.fix.locate import locate
from bot.fix.project_files import folders_of_tests, is_project_file
from bot.fix.spans import Span, replace_span
from bot.fix.types import Checkout, TestRun

PLUGIN = '''
import json, os, sys
import pytest

ROOT = os.getcwd() + os.sep
LINES, PASSED, FAILED = {}, set(), set()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    def line_tracer(frame, event, arg):
        if event == "line":
            LINES.setdefault(frame.f_code.co_filename, {}).setdefault(frame.f_lineno, set()).add(item.nodeid)
        return line_tracer

    sys.settrace(lambda frame, event, arg: line_tracer if frame.f_code.co_filename.startswith(ROOT) else None)
    try:
        yield
    finally:
        sys.settrace(None)


def pytest_runtest_logreport(report):
    if report.failed:
        FAILED.add(report.nodeid)
        PASSED.discard(report.nodeid)
    elif report.when == "call" and report.nodeid not in FAILED:
        PASSED.add(report.nodeid)


def pytest_collectreport(report):
    if report.failed:
        FAILED.add(report.nodeid)


def pytest_sessionfinish(session):
    lines = {path: {n: sorted(ids) for n, ids in by_line.items()} for path, by_line in LINES.items()}
    with open(os.environ["LINETRACE_OUT"], "w") as out:
        json.dump({"lines": lines, "passed": sorted(PASSED), "failed": sorted(FAILED)}, out)
'''


def run_repo(tmp_path: Path, files: dict[str, str], *, coverage: bool = True) -> tuple[Checkout, TestRun]:
    """Write the repository, run pytest on it for real, and read the run as the pipeline would."""
    root = tmp_path / "repo"
    for name, text in {"pytest.ini": "[pytest]\npythonpath = .\n", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "linetrace.py").write_text(PLUGIN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(tmp_path / "plugin"),
               LINETRACE_OUT=str(tmp_path / "trace.json"))
    command = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "linetrace",
               f"--junitxml={tmp_path / 'junit.xml'}", "-q")
    began = time.monotonic()
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1, 2), proc.stdout + proc.stderr
    trace = json.loads((tmp_path / "trace.json").read_text())
    failures = parse_junit(tmp_path / "junit.xml", root=str(root))
    lines = {path: {int(n): frozenset(ids) for n, ids in by_line.items()} for path, by_line in trace["lines"].items()}
    run = TestRun(command=command, exit_code=proc.returncode, passed=frozenset(trace["passed"]),
                  failed=frozenset(trace["failed"]), failures=tuple(failures), duration_s=time.monotonic() - began,
                  output=proc.stdout, coverage=lines if coverage else None)
    checkout = Checkout(str(root), {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                                    if p.is_file() and "__pycache__" not in p.parts})
    return checkout, run


def where(targets) -> list[str]:
    return [f"{t.path}::{t.qualname}" for t in targets]


PARSE = {
    "pkg/__init__.py": "",
    "pkg/parse.py": '''\
def check(text):
    if not text:
        raise ValueError("empty")
    return text


def field(part):
    key, value = part.split("=")
    return key, int(value)


def parse(text):
    check(text)
    return dict(field(part) for part in text.split(","))
''',
    "tests/test_parse.py": '''\
from pkg.parse import parse


def test_parse_pairs():
    assert parse("a=1,b=2") == {"a": 1, "b": 2}


def test_parse_flag():
    assert parse("a=1,b") == {"a": 1, "b": None}
''',
}


def test_an_exception_raised_in_project_code_points_at_the_raising_function(tmp_path):
    checkout, run = run_repo(tmp_path, PARSE)
    [failure] = run.failures
    assert failure.error_type == "ValueError" and failure.file == "tests/test_parse.py"
    assert [f.path for f in failure.traceback][-1] == "pkg/parse.py"
    targets = locate(checkout, run, run.failures)
    # `field` raised; `parse` called it; `check` ran only in tests both passing and failing (Ochiai < 1)
    assert where(targets)[:2] == ["pkg/parse.py::field", "pkg/parse.py::parse"]
    assert targets[0].reasons[0] == "raised here (deepest project frame)"
    assert targets[0].score > targets[1].score
    assert (targets[0].start, targets[0].end) == (7, 9)


def test_the_raising_frame_beats_a_perfect_spectrum_score(tmp_path):
    files = dict(PARSE)
    audited = "    check(text)\n    if len(text) < 6:\n        audit(text)\n"
    files["pkg/parse.py"] = files["pkg/parse.py"].replace("    check(text)\n", audited) \
        + "\n\ndef audit(text):\n    return len(text)\n"
    checkout, run = run_repo(tmp_path, files)
    targets = locate(checkout, run, run.failures)
    assert where(targets)[0] == "pkg/parse.py::field"
    assert "pkg/parse.py::audit" in where(targets)  # only the failing test ran it: Ochiai 1.0, but no frame
    audit = targets[where(targets).index("pkg/parse.py::audit")]
    assert audit.reasons == ("ochiai 1.00 (1 failing, 0 passing tests ran it)",)


STATS = {
    "pkg/__init__.py": "",
    "pkg/stats.py": "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n\n\n"
                    "def spread(xs):\n    return max(xs) - min(xs)\n",
    "pkg/legacy.py": "def mean(xs):\n    return sum(xs) / len(xs)\n",
    "tests/test_stats.py": '''\
from pkg.stats import mean, spread


def test_mean():
    xs = [1, 2, 3]
    assert spread(xs) == 2
    assert mean(xs) == 2
''',
}


def test_an_assertion_failing_in_the_test_points_at_the_function_it_calls(tmp_path):
    checkout, run = run_repo(tmp_path, STATS, coverage=False)
    [failure] = run.failures
    assert failure.error_type == "AssertionError" and failure.assertion == "assert mean(xs) == 2"
    assert [f.path for f in failure.traceback] == ["tests/test_stats.py"]
    targets = locate(checkout, run, run.failures)
    # pkg/legacy.py also defines `mean`, but the test imports pkg.stats; `spread` ran earlier in the test
    assert where(targets) == ["pkg/stats.py::mean", "pkg/stats.py::spread"]
    assert targets[0].reasons == ("called by tests/test_stats.py::test_mean",)
    assert targets[0].score > targets[1].score


def test_an_assertion_in_a_test_helper_and_only_the_printed_assertion(tmp_path):
    test = STATS["tests/test_stats.py"].replace(
        "def test_mean():", "def assert_close(a, b):\n    assert abs(a - b) < 1e-9\n\n\ndef test_mean():").replace(
        "assert mean(xs) == 2", "assert_close(mean(xs), 2)")
    checkout, run = run_repo(tmp_path, {**STATS, "tests/test_stats.py": test}, coverage=False)
    [failure] = run.failures
    assert [(f.path, f.function) for f in failure.traceback] == [
        ("tests/test_stats.py", "test_mean"), ("tests/test_stats.py", "assert_close")]
    assert failure.assertion == "assert abs(a - b) < 1e-9"  # the helper's line: `mean` is one frame up
    assert where(locate(checkout, run, run.failures)) == ["pkg/stats.py::mean", "pkg/stats.py::spread"]
    # no test source at all (a log from elsewhere): the printed assertion, even cut short, still names a call
    bare = dataclasses.replace(failure, file="gone/test_x.py", traceback=(), assertion="assert spread(xs) == [")
    assert where(locate(checkout, run, [bare])) == ["pkg/stats.py::spread"]


def test_the_same_from_pytest_terminal_output(tmp_path):
    checkout, run = run_repo(tmp_path, STATS, coverage=False)
    failures = parse_pytest_output(run.output, root=checkout.root)
    assert where(locate(checkout, run, failures))[0] == "pkg/stats.py::mean"


HELPER = {
    "pkg/__init__.py": "",
    "pkg/util.py": "def helper(xs):\n    return [x * 2 for x in xs[1:]]\n",
    "pkg/report.py": '''\
from pkg.util import helper


def outer(xs, double=False):
    ys = list(xs)
    return helper(ys) if double else ys
''',
    "tests/test_report.py": '''\
from pkg.report import outer


def test_plain():
    assert outer([1, 2]) == [1, 2]


def test_double():
    assert outer([1, 2], double=True) == [2, 4]
''',
}


def test_a_buggy_helper_in_another_module_ranks_first_by_spectrum(tmp_path):
    checkout, run = run_repo(tmp_path, HELPER)
    assert run.failed == {"tests/test_report.py::test_double"}
    assert run.passed == {"tests/test_report.py::test_plain"}
    targets = locate(checkout, run, run.failures)
    assert where(targets) == ["pkg/util.py::helper", "pkg/report.py::outer"]
    assert targets[0].reasons == ("ochiai 1.00 (1 failing, 0 passing tests ran it)",)
    assert "ochiai 0.71 (1 failing, 1 passing tests ran it)" in targets[1].reasons
    assert "called by tests/test_report.py::test_double" in targets[1].reasons
    # coverage.py credits `def` lines (run at import) to whatever context is active: they must not count
    everyone = run.passed | run.failed
    noisy = {path: {**lines, 1: everyone, 4: everyone} for path, lines in run.coverage.items()}
    assert locate(checkout, dataclasses.replace(run, coverage=noisy), run.failures) == targets
    # without coverage only the assertion's call is left to go on
    no_cov = dataclasses.replace(run, coverage=None)
    assert where(locate(checkout, no_cov, run.failures)) == ["pkg/report.py::outer"]


def test_a_branch_only_the_failing_test_takes_outranks_a_helper_fewer_tests_run(tmp_path):
    # the spectrum is read per line: `process` runs in every test (0.58 as a whole, which ranked the helper `lower`
    # first at 0.71), but its `kind == "flag"` branch, where the bug is, runs only in the failing test
    files = {"pkg/__init__.py": "", "pkg/util.py": "def lower(s):\n    return s.lower()\n",
             "pkg/steps.py": '''\
from pkg.util import lower


def process(kind, value):
    value = value.strip()
    if kind == "int":
        return int(value)
    if kind == "flag":
        return lower(value) == "yes"
    return lower(value)
''',
             "tests/test_steps.py": '''\
from pkg.steps import process


def test_int():
    assert process("int", " 4 ") == 4


def test_text():
    assert process("text", " A ") == "a"


def test_flag():
    assert process("flag", "true") is True
'''}
    checkout, run = run_repo(tmp_path, files)
    assert run.failed == {"tests/test_steps.py::test_flag"}
    targets = locate(checkout, run, run.failures)
    assert where(targets) == ["pkg/steps.py::process", "pkg/util.py::lower"]
    assert "ochiai 1.00 (1 failing, 0 passing tests ran line 9)" in targets[0].reasons
    assert "ochiai 0.71 (1 failing, 1 passing tests ran it)" in targets[1].reasons


CART = {
    "shop/__init__.py": "",
    "shop/cart.py": '''\
class Cart:
    def __init__(self):
        self.items = []

    def add(self, price, qty=1):
        self.items.append((price, qty))

    def total(self):
        return sum(price for price, qty in self.items)
''',
    "tests/test_cart.py": '''\
from shop.cart import Cart


def test_total():
    cart = Cart()
    cart.add(2, qty=3)
    assert cart.total() == 6


def test_empty():
    assert Cart().items == []
''',
}


def test_a_method_called_in_the_assertion(tmp_path):
    checkout, run = run_repo(tmp_path, CART)
    targets = locate(checkout, run, run.failures)
    assert where(targets) == ["shop/cart.py::Cart.total", "shop/cart.py::Cart.add", "shop/cart.py::Cart.__init__"]
    assert (targets[0].start, targets[0].end) == (8, 9)
    no_cov = locate(checkout, dataclasses.replace(run, coverage=None), run.failures)
    assert where(no_cov)[0] == "shop/cart.py::Cart.total"
    assert locate(checkout, run, run.failures, limit=1) == targets[:1]


FILTER = {
    "pkg/__init__.py": "",
    "pkg/filters.py": '''\
def match_one(part, record):
    key, _, wanted = part.partition("=")
    if not wanted:
        return record.get(key) is not None
    return str(record.get(key)) == wanted


def match_all(spec, record):
    """Whether the record matches every `key=value` (or bare `key`) part of spec."""
    return all(match_one(part, record) for part in spec.split("&"))
''',
    "tests/test_filters.py": '''\
from pkg.filters import match_all


def test_a_false_flag_does_not_match():
    assert not match_all("live", {"live": False})
''',
}


def test_a_one_statement_wrapper_ranks_after_the_function_it_delegates_to(tmp_path):
    # the test calls match_all, which only hands each part to match_one; both ran in the one failing test only
    checkout, run = run_repo(tmp_path, FILTER)
    targets = locate(checkout, run, run.failures)
    assert where(targets) == ["pkg/filters.py::match_one", "pkg/filters.py::match_all"]
    assert targets[0].score == 1.0 and targets[1].score == 1.01  # the same spectrum; the call would put it first
    assert "a one-statement wrapper of a suspect function" in targets[1].reasons
    # without coverage the wrapper is all the assertion names: nothing to delegate to, so it stays
    no_cov = locate(checkout, dataclasses.replace(run, coverage=None), run.failures)
    assert where(no_cov) == ["pkg/filters.py::match_all"]


@pytest.mark.parametrize(("source", "line", "span"), [
    ("def mean(xs)\n    return sum(xs) / len(xs)\n\n\ndef spread(xs):\n    return max(xs) - min(xs)\n", 1, (1, 2)),
    ("def spread(xs):\n    return max(xs) - min(xs)\n\n\n"
     "def mean(xs):\n    total = sum(xs\n    return total / len(xs)\n",
     6, (5, 7)),
], ids=["missing colon", "unclosed parenthesis"])
def test_a_syntax_error_breaking_collection(tmp_path, source, line, span):
    checkout, run = run_repo(tmp_path, {**STATS, "pkg/stats.py": source})
    [failure] = run.failures
    assert failure.test_id == "tests/test_stats.py"
    assert (failure.error_type, failure.file, failure.line) == ("SyntaxError", "pkg/stats.py", line)
    [target] = locate(checkout, run, run.failures)
    assert (target.path, target.qualname, (target.start, target.end)) == ("pkg/stats.py", "mean", span)
    assert target.broken
    assert target.reasons == (f"SyntaxError at line {line}",)


TWO = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def first(xs):\n    return xs[len(xs)]\n",
    "pkg/b.py": "def upper(s):\n    return s.lower()\n",
    "tests/test_a.py": "from pkg.a import first\n\n\ndef test_first():\n    assert first([1]) == 1\n",
    "tests/test_b.py": "from pkg.b import upper\n\n\ndef test_upper():\n    assert upper('a') == 'A'\n",
}


def test_two_independent_bugs_are_both_found(tmp_path):
    checkout, run = run_repo(tmp_path, TWO)
    assert len(run.failures) == 2
    targets = locate(checkout, run, run.failures)
    assert where(targets) == ["pkg/a.py::first", "pkg/b.py::upper"]  # a frame first, then Ochiai + the call
    assert targets[0].reasons[0] == "raised here (deepest project frame)"


def test_sandbox_paths_are_made_relative_and_outside_frames_ignored(tmp_path):
    checkout, run = run_repo(tmp_path, PARSE)
    moved = [dataclasses.replace(f, traceback=tuple(
        dataclasses.replace(fr, path="/work/" + fr.path) for fr in f.traceback)
        + (dataclasses.replace(f.traceback[-1], path="/usr/lib/python3.11/json/decoder.py"),)) for f in run.failures]
    coverage = {"/work/" + os.path.relpath(p, checkout.root): {n: frozenset(t + "|run" for t in ids)
                                                                for n, ids in lines.items()}
                for p, lines in run.coverage.items()}  # pytest-cov's --cov-context=test names "id|run"
    moved_run = dataclasses.replace(run, coverage=coverage)
    assert locate(checkout, moved_run, moved) == locate(checkout, run, run.failures)


@pytest.mark.parametrize(("test", "error"), [
    ("from pkg.m import f\n\n\ndef test_f():\n    assert fn() == 1\n", "NameError"),
    ("from pkg.m import f\n\n\ndef test_f(:\n    assert f() == 1\n", "SyntaxError"),
])
def test_a_tests_own_mistake_locates_nothing(tmp_path, test, error):
    checkout, run = run_repo(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": "def f():\n    return 1\n",
                                        "tests/test_m.py": test})
    assert [f.error_type for f in run.failures] == [error]
    assert locate(checkout, run, []) == []
    assert locate(checkout, run, run.failures) == []


def test_files_that_are_not_utf8_are_skipped(tmp_path):
    checkout, run = run_repo(tmp_path, STATS, coverage=False)
    files = {**checkout.files, "pkg/latin.py": "def mean(xs):\n    return 'caf\xe9'\n".encode("latin-1")}
    targets = locate(dataclasses.replace(checkout, files=files), run, run.failures)
    assert where(targets)[0] == "pkg/stats.py::mean"


@pytest.mark.parametrize(("path", "project"), [
    ("pkg/mod.py", True), ("src/pkg/mod.py", True), ("setup.py", True),
    ("tests/helpers.py", False), ("pkg/test/util.py", False), ("testing/x.py", False),
    ("pkg/test_mod.py", False), ("pkg/mod_test.py", False), ("conftest.py", False),
    (".github/scripts/x.py", False), (".venv/lib/python3.11/site-packages/x.py", False),
    ("venv/lib/x.py", False), ("pkg/README.md", False),
])
def test_project_files(path, project):
    assert is_project_file(path) is project


CONVERT = {
    "pkg/__init__.py": "",
    "pkg/convert.py": '''\
import re

_UNITS = re.compile(r"(\\\\d+)([a-z]+)")

_CONVERT = {
    "int": lambda s: int(s),
    "hex": lambda s: int(s, 10),
    "oct": lambda s: int(s, 8),
}


def convert(kind, text):
    return _CONVERT[kind](text)
''',
    "tests/test_convert.py": '''\
from pkg.convert import convert


def test_int():
    assert convert("int", "12") == 12


def test_hex():
    assert convert("hex", "ff") == 255
''',
}


def test_a_bug_in_a_lambda_of_a_module_level_dict_targets_the_dict(tmp_path):
    checkout, run = run_repo(tmp_path, CONVERT)
    [failure] = run.failures
    assert (failure.traceback[-1].path, failure.traceback[-1].line) == ("pkg/convert.py", 7)  # in <lambda>
    targets = locate(checkout, run, run.failures)
    assert where(targets)[:2] == ["pkg/convert.py::_CONVERT", "pkg/convert.py::convert"]
    table = targets[0]
    assert (table.kind, table.start, table.end) == ("assignment", 5, 9)
    assert table.reasons[0] == "raised here (deepest project frame)"
    assert "ochiai 1.00 (1 failing, 0 passing tests ran it)" in table.reasons  # only the `hex` lambda's line
    assert targets[1].kind == "function"


def test_a_lambda_that_returns_a_wrong_value_is_found_by_its_coverage(tmp_path):
    files = {**CONVERT, "tests/test_convert.py": CONVERT["tests/test_convert.py"].replace('"ff") == 255',
                                                                                             '"10") == 16')}
    checkout, run = run_repo(tmp_path, files)
    [failure] = run.failures
    assert failure.error_type == "AssertionError" and failure.traceback[-1].path == "tests/test_convert.py"
    targets = locate(checkout, run, run.failures)
    # the table's lambda ran in the failing test alone; `convert` also in the passing one; `_UNITS` never
    assert where(targets) == ["pkg/convert.py::_CONVERT", "pkg/convert.py::convert"]
    assert targets[0].reasons == ("ochiai 1.00 (1 failing, 0 passing tests ran it)", "read by convert")
    # module-level lines run at import: coverage that credits them to a test must not make a constant a suspect
    everyone = run.passed | run.failed
    noisy = {p: {**lines, 3: everyone, 5: everyone} for p, lines in run.coverage.items()}
    assert locate(checkout, dataclasses.replace(run, coverage=noisy), run.failures) == targets


UNITS = {
    "geo/__init__.py": "",
    "geo/units.py": '''\
class Length:
    BASE = "m"
    FACTORS = {
        "km": lambda v: v * 1000,
        "cm": lambda v: v * 100,
    }
    SIDES: dict = {"square": 3, "triangle": 3}

    def to_metres(self, unit, value):
        return self.FACTORS[unit](value)
''',
    "tests/test_units.py": '''\
from geo.units import Length


def test_km():
    assert Length().to_metres("km", 2) == 2000


def test_cm():
    assert Length().to_metres("cm", 250) == 2.5


def test_sides():
    assert Length.SIDES["square"] == 4
''',
}


def test_class_attributes_are_targets(tmp_path):
    checkout, run = run_repo(tmp_path, UNITS)
    assert run.failed == {"tests/test_units.py::test_cm", "tests/test_units.py::test_sides"}
    cm = [f for f in run.failures if f.test_id.endswith("test_cm")]
    targets = locate(checkout, run, cm)
    assert where(targets)[:2] == ["geo/units.py::Length.FACTORS", "geo/units.py::Length.to_metres"]
    assert (targets[0].kind, targets[0].start, targets[0].end) == ("assignment", 3, 6)
    # an assertion that names the attribute: nothing ran, nothing raised, the name is the evidence
    sides = [f for f in run.failures if f.test_id.endswith("test_sides")]
    [target] = locate(checkout, dataclasses.replace(run, coverage=None), sides)
    assert (where([target]), target.kind, target.start) == (["geo/units.py::Length.SIDES"], "assignment", 7)
    assert target.reasons == ("called by tests/test_units.py::test_sides",)


def test_an_assignment_target_as_the_agent_sees_it(tmp_path):
    checkout, run = run_repo(tmp_path, UNITS)
    target = locate(checkout, run, [f for f in run.failures if f.test_id.endswith("test_cm")])[0]
    seen = agent_target(checkout.files, target)
    assert seen.name == "FACTORS" and seen.source.startswith("FACTORS = {\n    \"km\"")
    assert "class Length:" in seen.context.splitlines()
    relative = {os.path.relpath(p, checkout.root): lines for p, lines in run.coverage.items()}  # as the probe's
    assert blamed_tests(target, dataclasses.replace(run, coverage=relative), run.failed) == {
        "tests/test_units.py::test_cm"}  # its lambda ran there, test_sides never did
    span = Span(target.qualname, target.start, target.end, target.kind)
    text = checkout.text(target.path)
    assert replace_span(text, span, seen.source) == text
    fixed = replace_span(text, span, seen.source.replace("v * 100", "v / 100"))
    assert fixed == text.replace("v * 100", "v / 100")


def test_a_constant_read_by_the_suspect_function_comes_right_after_it(tmp_path):
    files = {"pkg/__init__.py": "",
             "pkg/money.py": "RATE = 10\nOTHER = 3\n\n\ndef cents(units):\n    return units * RATE\n\n\n"
                             "def euros(cents):\n    return cents / 100\n",
             "pkg/other.py": "RATE = 100\n",
             "tests/test_money.py": "from pkg.money import cents, euros\n\n\ndef test_cents():\n"
                                    "    assert cents(2) == 200\n\n\ndef test_euros():\n    assert euros(100) == 1\n"}
    checkout, run = run_repo(tmp_path, files)
    targets = locate(checkout, run, run.failures)
    assert where(targets) == ["pkg/money.py::cents", "pkg/money.py::RATE"]
    assert targets[1].reasons == ("read by cents",) and targets[1].kind == "assignment"
    # no coverage: a named function has no frame or spectrum score, and reads make nobody a suspect
    assert where(locate(checkout, dataclasses.replace(run, coverage=None), run.failures)) == ["pkg/money.py::cents"]


EXTRACTORS = {
    "ydl/__init__.py": "",
    "ydl/common.py": '''\
import re


class InfoExtractor:
    _VALID_URL = None

    @classmethod
    def suitable(cls, url):
        return re.match(cls._VALID_URL, url) is not None
''',
    "ydl/facebook.py": '''\
from ydl.common import InfoExtractor


class FacebookIE(InfoExtractor):
    _VALID_URL = r"https?://(?:www\\.)?facebook\\.com/(?:[^#?]*\\#!/)?photo\\.php\\?v=(?P<id>\\d+)"
''',
    "ydl/youtube.py": '''\
from ydl.common import InfoExtractor


class YoutubeIE(InfoExtractor):
    _VALID_URL = r"https?://(?:www\\.)?youtube\\.com/watch\\?v=(?P<id>\\w+)"

    @classmethod
    def suitable(cls, url):
        return "list=" not in url and super().suitable(url)
''',
    "test/test_all_urls.py": '''\
from ydl.facebook import FacebookIE
from ydl.youtube import YoutubeIE


def test_youtube_matching():
    assert YoutubeIE.suitable("https://www.youtube.com/watch?v=abc")


def test_facebook_matching():
    assert FacebookIE.suitable("https://www.facebook.com/Shiniknoh?fref=ts#!/photo.php?v=10153317450565268")
''',
}


def test_a_class_attribute_read_by_the_base_class_when_the_test_names_the_class(tmp_path):
    checkout, run = run_repo(tmp_path, EXTRACTORS)
    assert run.failed == {"test/test_all_urls.py::test_facebook_matching"}
    targets = locate(checkout, run, run.failures, limit=5)
    # the base's `suitable` ran (in the passing test too), FacebookIE's pattern is what it read for this test;
    # (it shadows the base's own); YoutubeIE's is read by the same code, but the failing test does not name it
    assert where(targets) == ["ydl/common.py::InfoExtractor.suitable", "ydl/facebook.py::FacebookIE._VALID_URL",
                              "ydl/youtube.py::YoutubeIE.suitable"]
    assert targets[1].reasons == ("read by InfoExtractor.suitable",)


def test_the_named_classs_attribute_comes_before_code_that_merely_ran_in_every_test(tmp_path):
    """youtube-dl-36: the extractors' registry ran in every test (a lower Ochiai than `suitable`, but not 0); the
    pattern of the class the failing test names must still come right after `suitable`, within 2 targets."""
    files = dict(EXTRACTORS)
    files["ydl/common.py"] += "\n\ndef registry():\n    return [InfoExtractor]\n"
    files["test/test_all_urls.py"] = files["test/test_all_urls.py"].replace(
        "from ydl.youtube import YoutubeIE\n", "from ydl.youtube import YoutubeIE\nfrom ydl.common import registry\n"
    ).replace("def test_youtube_matching():\n", "def test_youtube_matching():\n    registry()\n").replace(
        "def test_facebook_matching():\n", "def test_facebook_matching():\n    registry()\n"
    ) + "\n\ndef test_registry():\n    assert registry()\n"
    checkout, run = run_repo(tmp_path, files)
    assert run.failed == {"test/test_all_urls.py::test_facebook_matching"}
    targets = locate(checkout, run, run.failures, limit=3)
    assert where(targets)[:3] == ["ydl/common.py::InfoExtractor.suitable", "ydl/facebook.py::FacebookIE._VALID_URL",
                                  "ydl/common.py::registry"]


def test_a_module_constant_named_in_the_assertion(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/limits.py": "MAX_ITEMS = 9\nMIN_ITEMS = 1\n",
             "tests/test_limits.py": "from pkg.limits import MAX_ITEMS\n\n\n"
                                     "def test_max():\n    assert MAX_ITEMS == 10\n"}
    checkout, run = run_repo(tmp_path, files)
    [target] = locate(checkout, run, run.failures)
    assert (target.path, target.qualname, target.kind, target.start, target.end) == (
        "pkg/limits.py", "MAX_ITEMS", "assignment", 1, 1)
    # a name the test binds itself is not the project's constant
    own = files["tests/test_limits.py"].replace("from pkg.limits import MAX_ITEMS", "MAX_ITEMS = 9")
    checkout, run = run_repo(tmp_path / "own", {**files, "tests/test_limits.py": own})
    assert locate(checkout, run, run.failures) == []


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
