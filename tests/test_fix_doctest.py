"""A failing doctest's module stays a place to repair (bot/fix/loop/work.py); the pipeline's own run of one is in
test_fix.py."""
from __future__ import annotations

from bot.fix.loop.work import is_doctest


def test_doctest_ids_are_told_from_test_functions():
    assert is_doctest("calc.py::calc.mean") and is_doctest("src/pkg/calc.py::pkg.calc.Stats.mean")
    assert not is_doctest("calc.py::calc")  # the module's own docstring: no function of it to repair
    assert not is_doctest("tests/test_calc.py::test_mean") and not is_doctest("t.py::TestX::test_y")
    assert not is_doctest("python_testcases/test_walk.py::test_walk")  # a test named like its module
    assert not is_doctest("tests/test_calc.py::test_mean[calc.x]") and not is_doctest("README.rst::README.rst")
