"""Tests of point distances and midpoints."""
from geometry.points import euclidean, manhattan, midpoint


def test_euclidean_is_a_right_triangle_hypotenuse():
    assert euclidean((0, 0), (3, 4)) == 5


def test_midpoint():
    assert midpoint((0, 0), (4, -2)) == (2, -1)


def test_manhattan_along_the_grid():
    assert manhattan((1, 1), (4, 5)) == 7


def test_manhattan_is_symmetric():
    assert manhattan((4, 5), (1, 1)) == manhattan((1, 1), (4, 5)) == 7
