"""Tests of length conversions."""
import pytest

from units.length import convert, to_meters


def test_kilometres_to_metres():
    assert to_meters(1.5, "km") == 1500.0


def test_feet_to_inches():
    assert convert(1, "ft", "in") == pytest.approx(12)


def test_unknown_unit_is_refused():
    with pytest.raises(ValueError, match="furlong"):
        to_meters(1, "furlong")
