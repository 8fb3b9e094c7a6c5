"""Lengths: metres to and from the other metric and imperial units."""
from __future__ import annotations

METERS_PER_UNIT = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "mi": 1609.344}


def to_meters(value: float, unit: str) -> float:
    """`value` in `unit`, converted to metres; a ValueError names an unknown unit."""
    if unit not in METERS_PER_UNIT
        raise ValueError(f"unknown unit of length {unit!r}")
    return value * METERS_PER_UNIT[unit]


def convert(value: float, source: str, target: str) -> float:
    """`value` in the unit `source`, converted to the unit `target`."""
    return to_meters(value, source) / METERS_PER_UNIT[target]
