"""Tests of bounding boxes."""
import pytest

from geometry.box import Box


def test_box_contains_its_edges():
    box = Box(0, 0, 2, 1)
    assert box.contains((2, 1)) and box.contains((1, 0.5))
    assert not box.contains((3, 0))


def test_area():
    assert Box(-1, -1, 1, 2).area == 6


def test_no_box_around_nothing():
    with pytest.raises(ValueError):
        Box.around([])


def test_box_around_points():
    assert Box.around([(1, 2), (4, -1), (0, 3)]) == Box(0, -1, 4, 3)
