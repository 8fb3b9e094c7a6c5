"""The demo repositories under examples/ and the fix of each of their bugs (data for tests, not a test file).

Scripted-model tests feed `ExampleFix.fixed` as the model's answer: the whole function, dedented, exactly as it
would be written in its file (decorators and docstring included).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EXAMPLES = Path(__file__).parents[1] / "examples"


@dataclass(frozen=True)
class ExampleFix:
    """The corrected text of one buggy function of an example."""

    path: str  # relative to the example's root
    qualname: str  # "mean", or "Cart.total" for a method
    fixed: str  # the whole fixed function, dedented
    added_lines: int = 0  # lines the fix adds (a missing branch); the others change exactly one line


FIXES: dict[str, list[ExampleFix]] = {
    "one-module": [ExampleFix("gradebook.py", "letter_grade", '''\
def letter_grade(score: float) -> str:
    """The letter for a score: A from 90, B from 80, C from 70, D from 60, F below 60."""
    if score >= 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    if score >= 60:
        return "D"
    return "F"
''')],
    "helper-bug": [ExampleFix("invoicing/discounts.py", "apply_discount", '''\
def apply_discount(amount: float, percent: float) -> float:
    """The amount after taking `percent` per cent off it, rounded to cents."""
    return round(amount - amount * percent / 100, 2)
''')],
    "class-method": [ExampleFix("inventory/cart.py", "Cart.total", '''\
def total(self) -> float:
    """The amount to pay: unit price times quantity, summed over the lines, rounded to cents."""
    return round(sum(line.price * line.quantity for line in self._lines.values()), 2)
''')],
    "third-party-dep": [ExampleFix("ormnames/conventions.py", "foreign_key", '''\
def foreign_key(model: str) -> str:
    """The column that refers to a row of `model`: its singular snake-case name and `_id` (`BlogPost` ->
    `blog_post_id`)."""
    return inflection.underscore(model) + "_id"
''')],
    "syntax-error": [ExampleFix("units/length.py", "to_meters", '''\
def to_meters(value: float, unit: str) -> float:
    """`value` in `unit`, converted to metres; a ValueError names an unknown unit."""
    if unit not in METERS_PER_UNIT:
        raise ValueError(f"unknown unit of length {unit!r}")
    return value * METERS_PER_UNIT[unit]
''')],
    "missing-branch": [ExampleFix("durations.py", "parse_duration", '''\
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
        elif unit == "s":
            total += int(amount)
    return total
''', added_lines=2)],
    "two-bugs": [
        ExampleFix("geometry/points.py", "manhattan", '''\
def manhattan(p: Point, q: Point) -> float:
    """The distance between two points along the grid: the sum of the absolute coordinate differences."""
    return abs(q[0] - p[0]) + abs(q[1] - p[1])
'''),
        ExampleFix("geometry/box.py", "Box.around", '''\
@classmethod
def around(cls, points: Iterable[Point]) -> "Box":
    """The smallest box that holds every point; a ValueError when there is none."""
    points = list(points)
    if not points:
        raise ValueError("no points to put a box around")
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    return cls(min(xs), min(ys), max(xs), max(ys))
'''),
    ],
}

# The pinned PyPI packages an example declares; tests install them on the host to run its suite there.
HOST_DEPENDENCIES: dict[str, list[str]] = {"third-party-dep": ["inflection==0.5.1"]}
