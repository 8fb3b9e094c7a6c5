"""Discount codes and the arithmetic of taking a percentage off an amount."""
from __future__ import annotations

CODES = {"WELCOME5": 5, "SAVE10": 10, "HALFPRICE": 50}


def percent_for(code: str) -> int:
    """The percentage a discount code takes off; a KeyError names an unknown code."""
    try:
        return CODES[code.upper()]
    except KeyError:
        raise KeyError(f"unknown discount code {code!r}") from None


def apply_discount(amount: float, percent: float) -> float:
    """The amount after taking `percent` per cent off it, rounded to cents."""
    return round(amount + amount * percent / 100, 2)
