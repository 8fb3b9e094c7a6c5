"""Tests of the duration parser and formatter."""
import pytest

from durations import format_duration, parse_duration


def test_hours_and_minutes():
    assert parse_duration("1h30m") == 5400


def test_minutes_and_seconds():
    assert parse_duration("2m5s") == 125


def test_seconds_alone():
    assert parse_duration("45s") == 45


def test_text_without_a_part_is_refused():
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_formatting_is_the_shortest_text():
    assert [format_duration(s) for s in (5400, 125, 0)] == ["1h30m", "2m5s", "0s"]


def test_formatting_reads_back():
    for seconds in (1, 59, 60, 3599, 3600, 3661, 86399):
        assert parse_duration(format_duration(seconds)) == seconds
