"""Which of the sandbox's test ids a CI log's id names (bot/fix/reproduce/runs.py)."""
from __future__ import annotations

from bot.fix.reproduce.runs import same_test


def test_a_logged_id_names_the_same_test_across_rootdirs_classes_and_old_pytest():
    here = "tests/test_x.py::TestX::test_y"
    assert same_test(here, here) and same_test("pkg/tests/test_x.py::TestX::test_y", here)
    assert same_test("tests/test_x.py::TestX", here)  # its setUpClass failed
    assert same_test("tests/test_x.py::TestX::()::test_y", here)  # pytest before 4
    assert not same_test("tests/test_x.py::TestX::test_z", here) and not same_test("tests/test_x.py::TestX::test", here)


def test_a_logged_test_whose_module_does_not_import_here_failed_here_too():
    assert same_test("tests/test_x.py::TestX::test_y", "tests/test_x.py")  # the module failed at collection
    assert same_test("pkg/tests/test_x.py::test_y", "tests/test_x.py")
    assert not same_test("tests/test_x.py::test_y", "tests/test_z.py")


def test_a_parametrized_test_logged_without_its_parameters_is_each_of_them():
    assert same_test("tests/test_d.py::TestD::test_name", "tests/test_d.py::TestD::test_name[foo.bar-1]")
    assert not same_test("tests/test_d.py::TestD::test_name[a]", "tests/test_d.py::TestD::test_name[b]")
    assert not same_test("tests/test_d.py::TestD::test_nam", "tests/test_d.py::TestD::test_name[a]")
