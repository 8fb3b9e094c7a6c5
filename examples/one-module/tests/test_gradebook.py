"""Tests of the gradebook summaries."""
from gradebook import letter_grade, mean, pass_rate


def test_mean_of_scores():
    assert mean([70, 80, 90]) == 80


def test_mean_of_empty_class_is_zero():
    assert mean([]) == 0.0


def test_letter_grade_inside_bands():
    assert [letter_grade(s) for s in (95, 85, 75, 65, 10)] == ["A", "B", "C", "D", "F"]


def test_letter_grade_at_band_boundaries():
    assert [letter_grade(s) for s in (90, 80, 70, 60)] == ["A", "B", "C", "D"]


def test_pass_rate_counts_the_pass_mark_as_a_pass():
    assert pass_rate([49, 50, 51, 20]) == 0.5
