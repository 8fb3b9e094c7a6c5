"""Environment or code: each failing test's cause read from its traceback (bot/fix/reproduce/classify.py)."""
from __future__ import annotations

from bot.failures.types import Failure, Frame
from bot.fix.reproduce.classify import Setting, classify, classify_one

FILES = {"shop/cart.py": b"", "shop/__init__.py": b"", "tests/test_cart.py": b"", "tests/helpers.py": b""}
HERE = Setting(FILES, "3.11", older=("3.9",))


def failure(error_type: str, message: str, frames: tuple[Frame, ...] = (), test: str = "tests/test_cart.py::t"):
    return Failure(test, "tests/test_cart.py", 3, None, None, None, error_type, message, frames)


def frame(path: str) -> Frame:
    return Frame(path, 1, "f", "x")


def test_a_name_the_standard_library_removed_is_the_environment_with_an_older_python_as_remedy():
    removed = classify_one(failure("ImportError", "cannot import name 'Mapping' from 'collections' "
                                                  "(/usr/lib/python3.11/collections/__init__.py)"), HERE)
    assert removed == ("removed-stdlib", "the standard library of Python 3.11 has no collections.Mapping",
                       "--python 3.9")
    attribute = classify_one(failure("AttributeError", "module 'inspect' has no attribute 'getargspec'"), HERE)
    assert attribute is not None and attribute[0] == "removed-stdlib"
    module = classify_one(failure("ModuleNotFoundError", "No module named 'imp'"), Setting(FILES, "3.12",
                                                                                        ("3.11", "3.9")))
    assert module == ("removed-stdlib", "Python 3.12 has no module imp (removed in 3.12)", "--python 3.11")
    # on the oldest Python fixbot has, the remedy says what is missing
    oldest = classify_one(failure("AttributeError", "module 'collections' has no attribute 'Mapping'"),
                          Setting(FILES, "3.9"))
    assert oldest is not None and "needs a Python older than 3.9" in oldest[2]


def test_a_module_neither_installed_nor_the_projects_is_the_environment_and_the_projects_own_is_the_code():
    missing = classify_one(failure("ModuleNotFoundError", "No module named 'pkg_resources'"), HERE)
    assert missing is not None and missing[0] == "missing-module" and "pip install setuptools<81" in missing[2]
    assert classify_one(failure("ModuleNotFoundError", "No module named 'shop.payments'"), HERE) is None
    assert classify_one(failure("ImportError", "cannot import name 'total' from 'shop.cart'"), HERE) is None
    assert classify_one(failure("AttributeError", "module 'shop' has no attribute 'cart'"), HERE) is None
    api = classify_one(failure("ImportError", "cannot import name 'soft_unicode' from 'markupsafe'"), HERE)
    assert api is not None and api[0] == "dependency-api" and "markupsafe" in api[1]


def test_an_error_inside_a_package_that_a_test_helper_called_is_the_environment_only_without_project_frames():
    site = "/usr/local/lib/python3.11/site-packages/requests/models.py"
    helper = failure("TypeError", "unexpected keyword", (frame("tests/test_cart.py"), frame("tests/helpers.py"),
                                                          frame(site)))
    assert classify_one(helper, HERE) == ("dependency-error", "the tests' own code fails inside requests "
                                          "(TypeError)", "--as-of the failing commit's date, or pin the release "
                                          "the project was tested with")
    through_project = failure("TypeError", "unexpected keyword", (frame("tests/test_cart.py"),
                                                                  frame("shop/cart.py"), frame(site)))
    assert classify_one(through_project, HERE) is None  # the project may misuse the package: the code's
    assertion = failure("AssertionError", "assert 1 == 2", (frame("tests/test_cart.py"), frame(site)))
    assert classify_one(assertion, HERE) is None
    assert classify_one(failure("ValueError", "bad value", (frame("tests/test_cart.py"),
                                                             frame("/usr/lib/python3.11/json/decoder.py"))),
                        HERE) is None  # the standard library raising on the project's output is the code's


def test_old_syntax_and_a_missing_shared_library_are_the_environment():
    syntax = classify_one(failure("SyntaxError", "Missing parentheses in call to 'print'. Did you mean print(...)?"),
                          HERE)
    assert syntax is not None and syntax[0] == "python-syntax" and syntax[2] == "--python 3.9"
    library = classify_one(failure("ImportError", "libGL.so.1: cannot open shared object file"), HERE)
    assert library is not None and library[0] == "system-library"
    assert classify_one(failure("SyntaxError", "invalid syntax"), HERE) is None  # a typo is the code's


def test_causes_gather_their_tests_and_only_the_failing_tests_count():
    failures = [failure("ModuleNotFoundError", "No module named 'yaml'", test=f"tests/test_cart.py::t{i}")
                for i in range(3)] + [failure("AssertionError", "assert 0", test="tests/test_cart.py::real")]
    failing = frozenset({"tests/test_cart.py::t0", "tests/test_cart.py::t1", "tests/test_cart.py::real"})
    [cause] = classify(failures, failing, HERE)
    assert cause.kind == "missing-module" and cause.tests == ("tests/test_cart.py::t0", "tests/test_cart.py::t1")
    assert cause.line() == ("the test environment has no module yaml (2 test(s)): declare it in the project's test "
                            "requirements, or --setup 'pip install pyyaml'")


def test_a_name_the_standard_library_may_have_added_is_not_called_removed_and_the_projects_test_package_is_code():
    added = classify_one(failure("ImportError", "cannot import name 'ParamSpec' from 'typing'"),
                         Setting(FILES, "3.9"))
    assert added is not None and added[0] == "python-version"
    toml = classify_one(failure("ModuleNotFoundError", "No module named 'tomllib'"), Setting(FILES, "3.9"))
    assert toml == ("python-version", "Python 3.9 has no module tomllib (added in 3.11)", "--python 3.11 or newer")
    ours = Setting({**FILES, "test/helper.py": b"", "test/__init__.py": b""}, "3.11", ("3.9",))
    assert classify_one(failure("ImportError", "cannot import name 'fake_ydl' from 'test.helper'"), ours) is None
    assert classify_one(failure("AttributeError", "module 'test.helper' has no attribute 'x'"), ours) is None


def test_a_data_file_the_tests_read_and_the_checkout_lacks_is_not_the_code_unless_project_code_is_on_the_way():
    here = Setting({**FILES, "tests/data/small.json": b"{}"}, "3.11")
    tests_only = (frame("tests/test_cart.py"), frame("tests/helpers.py"),
                  frame("/usr/lib/python3.11/pathlib.py"))

    def read(path: str, frames: tuple[Frame, ...] = tests_only):
        return classify_one(failure("FileNotFoundError", f"[Errno 2] No such file or directory: '{path}'", frames),
                            here)

    assert read("tests/data/large.json") == ("missing-test-file", "the tests read tests/data/large.json, which the "
                                             "checkout does not hold", "commit that file, or correct the path the "
                                             "test reads it from")
    # as the sandbox (or the host) prints it, absolute: the tail inside the checkout
    assert read("/work/run-1/0/tests/data/large.json") == read("tests/data/large.json")
    assert read("tests/data/large.json", (frame("tests/test_cart.py"), frame("shop/cart.py"))) is None
    assert read("/tmp/pytest-of-root/pytest-0/test_save0/out.json") is None  # the code's output, not an input
    # ... even where the code writes a tree like the checkout's into a temporary folder
    assert read("/tmp/pytest-of-root/pytest-0/test_gen0/proj/tests/data/large.json") is None
    assert read("tests/data/small.json") is None  # the checkout has it: the test looked in the wrong place
    assert read("tests/data/large.csv") is None  # no file like it there: not a folder of test inputs
    assert read("tests/large.json") is None  # files like it only in a folder below
    # a path the project's code named (its frame returned before the test opened it) is no test folder
    shop = Setting({**FILES, "shop/locales/en_US.json": b"{}"}, "3.11")
    assert classify_one(failure("FileNotFoundError", "[Errno 2] No such file or directory: "
                                                     "'shop/locales/en-US.json'", tests_only), shop) is None
