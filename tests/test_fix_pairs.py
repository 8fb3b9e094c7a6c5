"""Two-span repairs on the repository side: splicing a caller and its helper into their own spans byte for byte
(one file or two), when a pair is tried (bot/fix/repair/pairs.py), and what the report says about it."""
from __future__ import annotations

from dataclasses import replace

import pytest

from bot.agent.source.parts import join_parts
from bot.agent.types import Attempt
from bot.failures import Failure
from bot.fix.locate.excerpt import MAX_FUNCTION_LINES
from bot.fix.locate.spans import code_spans
from bot.fix.repair.briefing import agent_target, explanation, target_source
from bot.fix.repair.harness import with_code
from bot.fix.repair.pairs import calls, current, next_pair, pair_key
from bot.fix.result import FixResult, TargetRepair
from bot.fix.types import CodeTarget
from bot.fix.verify.patch import make_patch
from bot.fix.verify.report import to_markdown

MODULE = (
    "import math\r\n"
    "\r\n"
    "\r\n"
    "class Stats:\r\n"
    "    def percent(self, part, whole):\r\n"
    '        """part as a percentage of whole."""\r\n'
    "        return round(ratio(whole, part) * 100, 1)  # the caller\r\n"
    "\r\n"
    "\r\n"
    "def ratio(a, b):\r\n"
    "    # a over b\r\n"
    "    return 0.0 if b == 0 else a // b"  # no final newline
)
FILES = {"stats.py": MODULE.encode(), "other.py": b"def unrelated():\n    return ratio(1, 2)\n"}


def target(files, path: str, qualname: str) -> CodeTarget:
    span = next(s for s in code_spans(files[path].decode()) if s.qualname == qualname)
    return CodeTarget(path, qualname, span.start, span.end, 1.0, (f"ranked {qualname}",))


CALLER, HELPER = target(FILES, "stats.py", "Stats.percent"), target(FILES, "stats.py", "ratio")


def test_the_pairs_code_is_both_functions_dedented_caller_first():
    source = target_source(FILES, CALLER, HELPER)
    assert source == join_parts([target_source(FILES, CALLER), target_source(FILES, HELPER)])
    assert (source.startswith("def percent(self, part, whole):\r\n")
            and "# the caller\n\n\ndef ratio(a, b):\r\n" in source)
    seen = agent_target(FILES, CALLER, HELPER)
    assert seen.name == "percent, ratio" and seen.source == source
    assert seen.context == "import math\nclass Stats:"


def test_each_function_goes_into_its_own_span_and_every_other_byte_stays():
    fixed = target_source(FILES, CALLER, HELPER).replace("ratio(whole, part)", "ratio(part, whole)") \
        .replace("a // b", "a / b")
    out = with_code(FILES, (CALLER, HELPER), fixed)
    assert out["stats.py"].decode() == MODULE.replace("ratio(whole, part)", "ratio(part, whole)") \
        .replace("a // b", "a / b")  # CRLF endings, the method's indent, the comments, no final newline
    assert out["other.py"] == FILES["other.py"]
    changed = [line for line in make_patch(FILES, out).splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    assert changed == ["-        return round(ratio(whole, part) * 100, 1)  # the caller",
                       "+        return round(ratio(part, whole) * 100, 1)  # the caller",
                       "-    return 0.0 if b == 0 else a // b", "+    return 0.0 if b == 0 else a / b"]
    # one span alone, as before
    assert with_code(FILES, (HELPER,), "def ratio(a, b):\n    return 1\n")["stats.py"].decode().endswith(
        "def ratio(a, b):\r\n    return 1")


def test_spans_in_two_files():
    files = {"a.py": b"from b import helper\n\n\ndef caller(x):\n    return helper(x) + 1\n",
             "b.py": b"X = 1\n\n\ndef helper(x):\n    return x * 2\n"}
    pair = (target(files, "a.py", "caller"), target(files, "b.py", "helper"))
    out = with_code(files, pair, "def caller(x):\n    return helper(x) - 1\n\n\ndef helper(x):\n    return x * 3\n")
    assert out["a.py"] == files["a.py"].replace(b"+ 1", b"- 1")
    assert out["b.py"] == files["b.py"].replace(b"x * 2", b"x * 3")


def test_code_that_is_not_the_pairs_functions_is_refused():
    with pytest.raises(ValueError, match="2 spans"):
        with_code(FILES, (CALLER, HELPER), "def percent(self, part, whole):\n    return 1\n")


def test_a_pair_is_a_caller_and_the_helper_it_calls_by_name():
    assert calls(FILES, CALLER, HELPER) and not calls(FILES, HELPER, CALLER)
    method_call = {"m.py": b"class A:\n    def run(self):\n        return self.step() + 1\n\n    def step(self):\n"
                           b"        return 1\n"}
    assert calls(method_call, target(method_call, "m.py", "A.run"), target(method_call, "m.py", "A.step"))
    same_name = {"m.py": b"def f(x):\n    return x\n\n\nclass A:\n    def f(self):\n        return f(1)\n"}
    assert not calls(same_name, target(same_name, "m.py", "A.f"), target(same_name, "m.py", "f"))


def _repair(t: CodeTarget, tests=("tests/test_s.py::test_percent",), status="not_fixed", stop="iterations"):
    return TargetRepair(target=t, tests=tests, status=status, stop_reason=stop, attempts=(), changed_lines=None,
                        wall_s=1.0)


def test_the_pair_is_tried_right_after_the_second_one_span_repair_failed():
    failing = frozenset({"tests/test_s.py::test_percent"})
    first, second = _repair(CALLER), _repair(HELPER)
    assert next_pair(FILES, [first], failing, set()) is None
    assert next_pair(FILES, [first, second], failing, set()) == (CALLER, HELPER, failing)
    assert next_pair(FILES, [second, first], failing, set()) == (CALLER, HELPER, failing)  # either order
    assert next_pair(FILES, [first, second], failing, {pair_key(CALLER, HELPER)}) is None  # tried already
    assert next_pair(FILES, [first, second], frozenset({"tests/test_s.py::test_other"}), set()) is None
    unrelated = _repair(CALLER, tests=("tests/test_s.py::test_other",))
    assert next_pair(FILES, [unrelated, second], failing | {"tests/test_s.py::test_other"}, set()) is None
    not_it = _repair(HELPER, stop="passed_without_change")
    assert next_pair(FILES, [first, not_it], failing, set()) is None
    fixed = _repair(HELPER, status="fixed")
    assert next_pair(FILES, [first, fixed], failing, set()) is None


def test_a_function_too_long_to_be_shown_whole_is_never_paired():
    """A pair is shown to the model whole: a long caller (shown alone, it would be an excerpt) and its helper
    would not fit the model's context."""
    long_body = "".join(f"        x{i} = {i}\r\n" for i in range(MAX_FUNCTION_LINES))
    doc = '        """part as a percentage of whole."""\r\n'
    long = {**FILES, "stats.py": MODULE.replace(doc, doc + long_body).encode()}
    caller, helper = target(long, "stats.py", "Stats.percent"), target(long, "stats.py", "ratio")
    failing = frozenset({"tests/test_s.py::test_percent"})
    assert caller.end - caller.start + 1 > MAX_FUNCTION_LINES and calls(long, caller, helper)
    assert next_pair(long, [_repair(caller), _repair(helper)], failing, set()) is None
    assert next_pair(FILES, [_repair(CALLER), _repair(HELPER)], failing, set()) is not None


def test_a_pairs_spans_are_read_again_in_the_files_as_they_are_now():
    moved = {**FILES, "stats.py": b"# a line\n" + FILES["stats.py"]}
    stale = replace(HELPER, start=1, end=2)
    now = current(moved, stale)
    assert now is not None and (now.start, now.end) == (HELPER.start + 1, HELPER.end + 1)
    assert next_pair(moved, [_repair(CALLER), _repair(HELPER)], frozenset({"tests/test_s.py::test_percent"}),
                     set())[:2] == (current(moved, CALLER), now)


def test_the_report_says_both_spans_were_changed():
    before = target_source(FILES, CALLER, HELPER)
    after = before.replace("ratio(whole, part)", "ratio(part, whole)").replace("a // b", "a / b")
    text = explanation(CALLER, before, after, (), (), HELPER)
    assert text.startswith("The bug was split between `Stats.percent` (stats.py, lines 5-7) and `ratio` (stats.py, "
                           "lines 10-12), which it calls; the fix changes both (2 lines in all)")
    assert "ranked Stats.percent, ranked ratio" in text
    attempt = Attempt(iteration=1, node="draft", code=after, outcome="passed", feedback="", prompt_tokens=10,
                      completion_tokens=10, latency_s=1.0, temperature=0.0, changed_lines=2)
    repair = replace(_repair(CALLER, status="fixed"), helper=HELPER, original=before, fixed=after,
                     attempts=(attempt,))
    assert repair.spans == (CALLER, HELPER)
    report = to_markdown(FixResult("fixed", "/r", "pytest", "m", "fixed", repairs=(repair,), explanation=text))
    assert "split between `Stats.percent`" in report
    row = next(line for line in report.splitlines() if line.startswith("| `stats.py::Stats.percent` + "))
    assert row.startswith("| `stats.py::Stats.percent` + `stats.py::ratio` | 1 | draft | ") and "| passed |" in row
    assert '"helper": {' in FixResult("fixed", "/r", "pytest", "m", "fixed", repairs=(repair,)).to_json()


def test_the_report_names_the_error_once():
    """JUnit XML's message starts with the exception's name, which the explanation already gives."""
    before = target_source(FILES, CALLER)
    failure = Failure("tests/test_s.py::test_percent", "tests/test_s.py", 3, "percent(1, 2)", None, None,
                      "AttributeError", "AttributeError: 'NoneType' object has no attribute 'type'")
    text = explanation(CALLER, before, before.replace("a // b", "a / b"), (failure,), (failure.test_id,))
    assert "fail at `percent(1, 2)` with AttributeError: 'NoneType' object has no attribute 'type'." in text, text
    own = Failure("tests/test_s.py::test_percent", "tests/test_s.py", 3, "percent(1, 2)", None, None,
                  "ExtractorError", "youtube_dl.utils.ExtractorError: Unsupported JS expression 'x()'. See the docs.")
    text = explanation(CALLER, before, before.replace("a // b", "a / b"), (own,), (own.test_id,))
    assert "with ExtractorError: Unsupported JS expression 'x()'. See the docs. Located" in text, text
