"""Tests of temperature conversions."""
import pytest

from units.temperature import celsius_to_fahrenheit, celsius_to_kelvin, fahrenheit_to_celsius


def test_boiling_point():
    assert celsius_to_fahrenheit(100) == 212


def test_round_trip():
    assert fahrenheit_to_celsius(celsius_to_fahrenheit(37.5)) == pytest.approx(37.5)


def test_kelvin_refuses_below_absolute_zero():
    assert celsius_to_kelvin(0) == pytest.approx(273.15)
    with pytest.raises(ValueError):
        celsius_to_kelvin(-300)
