"""Temperatures: degrees Celsius, Fahrenheit and kelvins."""
from __future__ import annotations

ABSOLUTE_ZERO_C = -273.15


def celsius_to_fahrenheit(celsius: float) -> float:
    """Degrees Celsius in degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def fahrenheit_to_celsius(fahrenheit: float) -> float:
    """Degrees Fahrenheit in degrees Celsius."""
    return (fahrenheit - 32) * 5 / 9


def celsius_to_kelvin(celsius: float) -> float:
    """Degrees Celsius in kelvins; a ValueError for a temperature below absolute zero."""
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError(f"{celsius} °C is below absolute zero")
    return celsius - ABSOLUTE_ZERO_C
