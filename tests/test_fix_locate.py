"""bot.fix.locate.rank on real runs (tests/locate_run.py): functions and methods, ranked by the raising frame, the
assertion and the spectrum of the tests that ran them."""
from __future__ import annotations

import dataclasses
import os

import pytest

from bot.failures import parse_pytest_output
from bot.fix.locate.rank import locate

from .locate_run import run_repo, where

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
