"""Durations written as hours, minutes and seconds ("1h30m", "2m5s", "45s") and the number of seconds they last."""
from __future__ import annotations

import re

_PART = re.compile(r"(\d+)([hms])")


def parse_duration(text: str) -> int:
    """The seconds in a duration made of parts like "1h", "30m" and "5s", in any order ("1h30m", "2m5s", "45s").
    A ValueError names text that holds no such part."""
    parts = _PART.findall(text)
    if not parts:
        raise ValueError(f"not a duration: {text!r}")
    total = 0
    for amount, unit in parts:
        if unit == "h":
            total += int(amount) * 3600
        elif unit == "m":
            total += int(amount) * 60
    return total


def format_duration(seconds: int) -> str:
    """The shortest text `parse_duration` reads back as `seconds`: "1h30m", "2m5s", "0s"."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return text or "0s"
