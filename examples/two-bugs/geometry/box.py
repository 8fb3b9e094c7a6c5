"""Axis-aligned boxes: the bounding box of some points, and whether a point lies inside a box."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .points import Point


@dataclass(frozen=True)
class Box:
    """The box between a bottom-left corner (left, bottom) and a top-right corner (right, top)."""

    left: float
    bottom: float
    right: float
    top: float

    @classmethod
    def around(cls, points: Iterable[Point]) -> "Box":
        """The smallest box that holds every point; a ValueError when there is none."""
        points = list(points)
        if not points:
            raise ValueError("no points to put a box around")
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        return cls(min(xs), min(ys), max(xs), min(ys))

    def contains(self, point: Point) -> bool:
        """Whether the point lies inside the box or on its edge."""
        x, y = point
        return self.left <= x <= self.right and self.bottom <= y <= self.top

    @property
    def area(self) -> float:
        """The area of the box."""
        return (self.right - self.left) * (self.top - self.bottom)
