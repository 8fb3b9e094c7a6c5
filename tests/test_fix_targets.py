"""The pipeline on targets beyond one function, in the real Docker sandbox with repositories made here: a bug in a
lambda of a module-level table (repaired there by the model, and by the search when one edit fixes it), and a
test folder not called tests/ whose helper raises (never a target). A scripted model answers by the name the
prompt asks for."""
from __future__ import annotations

import re

import pytest

from bot.agent.options import SearchOptions
from bot.fix.verify.report import to_markdown
from bot.llm import Completion

from .test_fix import fix_example
from .test_fix_realrepo import make_repo

pytestmark = pytest.mark.timeout(900)
ASK = re.compile(r"corrected (function|assignment to) `([\w, ]+)`")

CONVERT = {
    "pkg/__init__.py": "",
    "pkg/convert.py": '''\
        _CONVERT = {
            # the bases
            "int": lambda s: int(s),
            "hex": lambda s: int(s, 10),
        }


        def convert(kind, text):
            return _CONVERT[kind](text)
        ''',
    "tests/test_convert.py": '''\
        from pkg.convert import convert


        def test_int():
            assert convert("int", "12") == 12


        def test_hex():
            assert convert("hex", "ff") == 255
        ''',
}
TABLE_FIXED = '_CONVERT = {\n    "int": lambda s: int(s),\n    "hex": lambda s: int(s, 16),\n}\n'


class ByKindLLM:
    """Answers with the known fix of the function or assignment the prompt asks for; records what was asked."""

    name = "by-kind"

    def __init__(self, fixes: dict[str, str]) -> None:
        self.fixes = fixes
        self.asked: list[tuple[str, str]] = []

    def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None) -> Completion:
        kind, name = ASK.findall(messages[-1].content)[-1]
        self.asked.append((kind, name))
        text = f"```python\n{self.fixes[name]}```" if name in self.fixes else "I cannot help."
        return Completion(text=text, prompt_tokens=10, completion_tokens=10, latency_s=0.0, model=self.name)


def test_a_bug_in_a_lambda_of_a_table_is_repaired_in_the_table(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "repo", CONVERT)
    llm = ByKindLLM({"_CONVERT": TABLE_FIXED})
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed", result.message
    assert llm.asked == [("assignment to", "_CONVERT")]
    assert (result.targets[0].qualname, result.targets[0].kind) == ("_CONVERT", "assignment")
    # the comment and the untouched entry stay byte for byte: the diff is the one line
    removed = [x for x in result.diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    added = [x for x in result.diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    assert (removed, added) == (['-    "hex": lambda s: int(s, 10),'], ['+    "hex": lambda s: int(s, 16),'])


def test_the_search_repairs_a_table_when_one_edit_does(tmp_path, docker_client, sandbox_image):
    files = {**CONVERT, "pkg/convert.py": CONVERT["pkg/convert.py"].replace("int(s, 10)", "int(s, 15)")}
    llm = ByKindLLM({})
    result, _ = fix_example(docker_client, sandbox_image, make_repo(tmp_path / "repo", files), llm,
                            search=SearchOptions())
    assert result.status == "fixed", result.message
    assert llm.asked == []  # the search found it before the model was asked
    assert "+    \"hex\": lambda s: int(s, 16)," in result.diff.splitlines()


WALK = {
    "python_programs/__init__.py": "",
    "python_programs/walk.py": '''\
        def walk(node, steps):
            for _ in range(steps + 1):
                node = node.first()
            return node.value
        ''',
    "python_testcases/node.py": '''\
        class Node:
            def __init__(self, value, successors=()):
                self.value = value
                self.successors = list(successors)

            def first(self):
                return self.successors[0]
        ''',
    "python_testcases/test_walk.py": '''\
        import os
        import sys

        sys.path.insert(0, os.path.dirname(__file__))
        from node import Node  # noqa: E402
        from python_programs.walk import walk  # noqa: E402


        def test_walk():
            c = Node("c")
            assert walk(Node("a", [Node("b", [c])]), 2) == "c"
        ''',
}


def test_a_helper_of_the_test_folder_is_never_repaired(tmp_path, docker_client, sandbox_image):
    llm = ByKindLLM({"walk": "def walk(node, steps):\n    for _ in range(steps):\n        node = node.first()\n"
                             "    return node.value\n"})
    result, _ = fix_example(docker_client, sandbox_image, make_repo(tmp_path / "repo", WALK), llm)
    assert result.status == "fixed", result.message
    assert [t.path for t in result.targets] == ["python_programs/walk.py"]  # node.py raised, yet is no target
    assert llm.asked == [("function", "walk")]


DJANGO_STYLE = {  # an app's tests in tests.py, as Django lays them out and pytest-django's python_files collects
    "pytest.ini": "[pytest]\npython_files = tests.py test_*.py\n",
    "shop/__init__.py": "",
    "shop/cart.py": '''\
        def total(prices, discount):
            return sum(prices) - discount * 2
        ''',
    "shop/tests.py": '''\
        from shop.cart import total


        def check(prices, discount, expected):
            got = total(prices, discount)
            if got != expected:
                raise AssertionError(f"total({prices}, {discount}) is {got}, not {expected}")


        def test_total():
            check([3, 4], 2, 5)


        def test_no_discount():
            check([3, 4], 0, 7)
        ''',
}


def test_an_apps_tests_py_is_a_test_module_never_a_target(tmp_path, docker_client, sandbox_image):
    """Before, a checkout whose only tests were in tests.py was refused ("no test files"), and a helper of
    tests.py that raises would have been the first target, its file within the patch's scope."""
    llm = ByKindLLM({"total": "def total(prices, discount):\n    return sum(prices) - discount\n",
                     "check": "def check(prices, discount, expected):\n    pass\n"})
    result, _ = fix_example(docker_client, sandbox_image, make_repo(tmp_path / "repo", DJANGO_STYLE), llm)
    assert result.status == "fixed", result.message
    assert [t.path for t in result.targets] == ["shop/cart.py"] and llm.asked == [("function", "total")]


RELEASE = {
    "release/__init__.py": "",
    "release/tools.py": '''\
        import subprocess


        def last_tag():
            return subprocess.run(["git", "describe", "--tags"], capture_output=True, text=True).stdout.strip()


        def bump(version):
            major, minor = version.split(".")
            return major + "." + str(int(minor) + 2)


        def label(version):
            try:
                subprocess.run(["git", "--version"], capture_output=True)
            except FileNotFoundError:
                pass  # a source tarball has no git: the version as it is
            return "v" + version + "-dev"
        ''',
    "tests/test_tools.py": '''\
        import subprocess
        import sys

        from release.tools import bump, label, last_tag


        def test_last_tag_of_a_fresh_repository_is_empty(tmp_path, monkeypatch):
            monkeypatch.chdir(tmp_path)
            assert last_tag() == ""


        def test_bump():
            assert bump("1.4") == "1.5"


        def test_label():
            assert label("1.4") == "v1.4"


        def test_python_is_there():
            assert subprocess.run([sys.executable, "-c", "pass"]).returncode == 0
        ''',
}


def test_a_test_that_runs_a_program_the_sandbox_lacks_is_set_aside(tmp_path, docker_client, sandbox_image):
    """git is not in the sandbox: the test that fails for running it fails there whatever the code does, so it is
    no failure to repair (a "fix" that catches FileNotFoundError would pass it); a test of code that ran git, fell
    back, and then failed its assertion is repaired like the other failure."""
    llm = ByKindLLM({})
    result, _ = fix_example(docker_client, sandbox_image, make_repo(tmp_path / "repo", RELEASE), llm,
                            search=SearchOptions())
    assert result.status == "fixed", result.message
    assert result.lacking == ("tests/test_tools.py::test_last_tag_of_a_fresh_repository_is_empty",)
    assert {r.target.qualname for r in result.repairs if r.status == "fixed"} == {"bump", "label"}
    assert "last_tag" not in result.diff
    assert "## Run programs the sandbox does not have" in to_markdown(result)
