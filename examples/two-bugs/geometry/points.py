"""Points as (x, y) tuples: distances between them and the midpoint of two."""
from __future__ import annotations

import math
from typing import Tuple

Point = Tuple[float, float]


def euclidean(p: Point, q: Point) -> float:
    """The straight-line distance between two points."""
    return math.hypot(q[0] - p[0], q[1] - p[1])


def manhattan(p: Point, q: Point) -> float:
    """The distance between two points along the grid: the sum of the absolute coordinate differences."""
    return (q[0] - p[0]) + (q[1] - p[1])


def midpoint(p: Point, q: Point) -> Point:
    """The point halfway between two points."""
    return ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
