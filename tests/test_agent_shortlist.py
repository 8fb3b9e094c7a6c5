"""Which candidates stay in the choice (bot/agent/choose/shortlist.py): the outputs are written out, nothing runs."""
from __future__ import annotations

from bot.agent.choose.expectations import parse_asserts
from bot.agent.choose.shortlist import Outputs, shortlist

# a triangle's sides on six inputs: (3, 4, 5) and (1, 2, 3) as the examples give them, then (5, 4, 3), (4, 3, 5),
# (3, 5, 4), (2, 2, 3); the original checks only c*c == a*a + b*b
ORIGINAL = ["True", "False", "False", "True", "False", "False"]
RIGHT = ["True", "False", "True", "True", "True", "False"]


def test_the_references_decide_when_two_agree():
    out = Outputs(fixes=[ORIGINAL, RIGHT], references=[RIGHT, RIGHT], original=ORIGINAL)
    chosen = shortlist(out)
    assert (chosen.fixes, chosen.references, chosen.set_aside) == ([1], [], 0)
    assert chosen.expected == RIGHT


def test_where_the_original_passes_what_behaves_like_it_neither_votes_nor_stays():
    """Two references repeat the bug and one does not; both fixes behave like the original. The task says the
    original is wrong, so the one reference that differs is what is left, and it replaces the fixes."""
    out = Outputs(fixes=[ORIGINAL, ORIGINAL], references=[ORIGINAL, ORIGINAL, RIGHT], original=ORIGINAL,
                  original_passes=True)
    chosen = shortlist(out, ["a", "a", "b"])
    assert (chosen.fixes, chosen.references, chosen.set_aside) == ([], [2], 4)
    # without the task's word that the original is wrong, the two references that agree decide
    assert shortlist(Outputs(fixes=[ORIGINAL, RIGHT], references=[ORIGINAL, ORIGINAL],
                             original=ORIGINAL)).fixes == [0]


def test_where_nothing_differs_from_the_original_everything_stays():
    """The inputs may not reach the bug: then every fix behaves like the original, and every fix stays (the
    reference that behaves like it too gives no vote)."""
    out = Outputs(fixes=[ORIGINAL, ORIGINAL], references=[ORIGINAL], original=ORIGINAL, original_passes=True)
    assert (shortlist(out).fixes, shortlist(out).set_aside) == ([0, 1], 1)


def test_a_fix_that_differs_from_an_original_that_passes_is_kept_over_one_that_does_not():
    out = Outputs(fixes=[ORIGINAL, RIGHT], references=[], original=ORIGINAL, original_passes=True)
    assert (shortlist(out).fixes, shortlist(out).set_aside) == ([1], 1)


def test_a_lone_reference_breaks_ties_where_the_original_raises_everywhere():
    """A prime test that raises on every input leaves the original no vote: no consensus. Among the fixes, those
    that return what the lone reference returns (where it returns) stay; the reference does not replace them."""
    raises = ["!ZeroDivisionError"] * 4
    right, wrong = ["True", "False", "False", "False"], ["True", "False", "False", "True"]
    reference = ["True", "False", "!ValueError", "False"]
    chosen = shortlist(Outputs(fixes=[wrong, right, right], references=[reference], original=raises))
    assert (chosen.fixes, chosen.references, chosen.expected) == ([1, 2], [], [None] * 4)


def test_references_that_fail_the_models_asserts_do_not_replace_a_fix_that_passes_them():
    """No visible test: the inputs are those of the model's asserts, whose first copies the docstring's worked
    example (9). Three references agree on left-to-right evaluation (15) and meet more of their own consensus
    than any fix, but pass none of the asserts; the fix that passes one stays."""
    asserts = parse_asserts("assert f(1) == 9\nassert f(2) == 1\nassert f(3) == 11\n", "f")
    refs = [["15", "24", "13"]] * 3
    fixes = [["9", "15", "13"], ["2345", "5234", "4321"]]
    chosen = shortlist(Outputs(fixes=fixes, references=refs, original=["1939", "-92", "297217"], asserts=asserts))
    assert (chosen.fixes, chosen.references) == ([0], [])
    # references that pass as many asserts as the best fix still replace the fixes where they meet more
    passing = [["9", "24", "13"]] * 3
    assert shortlist(Outputs(fixes=fixes, references=passing, original=["1", "2", "3"], asserts=asserts)
                     ).references == [0, 1, 2]


def test_a_fix_that_raises_where_the_original_returns_is_left_out_while_one_does_not():
    """Counting sentences that start with "I": a fix that reads each sentence's first character raises on an empty
    text, where the original (and the other fix) return 0."""
    original = ["0", "0", "0"]
    reads_first, slices = ["0", "1", "!IndexError"], ["0", "1", "0"]
    assert shortlist(Outputs(fixes=[reads_first, slices], references=[], original=original)).fixes == [1]
    # where the original raises too, a raise is nothing new
    assert shortlist(Outputs(fixes=[reads_first, slices], references=[], original=["0", "0", "!IndexError"])
                     ).fixes == [0, 1]


def test_where_the_original_fails_the_visible_tests_a_lone_reference_replaces_only_fixes_that_raise():
    """A bracket checker that always says False agrees with a wrong lone reference on most inputs: not enough to
    replace a fix that returns a value on each. A fix that raises where both return the same value is replaced."""
    original = ["False"] * 4
    reference, fix = ["True", "False", "False", "False"], ["True", "False", "True", "True"]
    assert shortlist(Outputs(fixes=[fix], references=[reference], original=original)).fixes == [0]
    raises = ["True", "False", "!KeyError", "True"]
    chosen = shortlist(Outputs(fixes=[raises], references=[reference], original=original))
    assert (chosen.fixes, chosen.references) == ([], [0])
    # where the visible tests pass on the original, its bug is narrow, and the two replace the fix as they did before
    assert shortlist(Outputs(fixes=[fix], references=[reference], original=original, original_passes=True)
                     ).references == [0]
