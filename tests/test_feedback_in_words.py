"""A failed comparison with its direction, read from the assertion's line (bot/failures/sides.py): the record's
actual and expected sides (bot/failures/traceback.py, `comparison`), and the feedback's line for the model
(bot/feedback.py, `in_words`)."""
from __future__ import annotations

import pytest

from bot.failures import Failure
from bot.failures.traceback import comparison
from bot.feedback import in_words


def failure(assertion: str | None, actual: str | None, expected: str | None) -> Failure:
    return Failure("tests/test_x.py::test_x", "tests/test_x.py", 3, assertion, expected, actual, "AssertionError", "")


@pytest.mark.parametrize(("message", "assertion", "sides"), [
    ("AssertionError: 0.0 != None", "self.assertEqual(f(None), None)", ("0.0", "None")),
    ("AssertionError: Lists differ: [1, 2] != [2, 1]", "self.assertEqual([1, 2], sorted(xs))", ("[2, 1]", "[1, 2]")),
    ("assert 'ab' == 'a'", "assert 'ab' == g(x)", ("'a'", "'ab'")),
    ("AssertionError: -1.5 != -1.2 within 2 places (0.3 difference)", "self.assertAlmostEqual(-1.5, h(2), places=2)",
     ("-1.2", "-1.5")),
    ("AssertionError: 1 != 2", "self.assertEqual(f(x), g(x))", ("1", "2")),  # cannot tell: the order written
    ("AssertionError: 1 != 2", None, ("1", "2")),
])
def test_the_side_that_is_not_a_literal_is_the_actual_one(message: str, assertion: str | None,
                                                          sides: tuple[str, str]) -> None:
    assert comparison(message, assertion) == sides


@pytest.mark.parametrize(("assertion", "said"), [
    ("self.assertEqual(f(None), None)", "So `f(None)` gave `0.0`; the test expects `None`."),
    ("self.assertEqual(None, sorted(xs))", "So `sorted(xs)` gave `0.0`; the test expects `None`."),
    ("assert g(x) == 'ab'", "So `g(x)` gave `0.0`; the test expects `None`."),
])
def test_the_model_is_told_what_the_code_gave_and_what_the_test_expects(assertion: str, said: str) -> None:
    assert in_words(failure(assertion, "0.0", "None")) == said


@pytest.mark.parametrize("assertion", [
    "self.assertEqual(f(x), g(x))",  # neither side a literal: no way to tell
    "self.assertEqual(1, 1)",  # both
    "self.assertTrue(f(x))",  # not a comparison of two values
    "assert f(x) != 3",
    "self.assertEqual(f(x),",  # the first line of an assertion on several lines
    None,
])
def test_nothing_is_said_where_the_line_does_not_show_the_direction(assertion: str | None) -> None:
    assert in_words(failure(assertion, "1", "2")) is None


def test_nothing_is_said_without_both_values() -> None:
    assert in_words(failure("self.assertEqual(f(None), None)", None, None)) is None
