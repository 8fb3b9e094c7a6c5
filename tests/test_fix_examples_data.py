"""The demo repositories are what they claim: red as shipped, green once FIXES are applied, documented."""
from __future__ import annotations

import ast
import difflib
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from .fix_examples import EXAMPLES, FIXES, HOST_DEPENDENCIES

pytestmark = pytest.mark.timeout(300)


def replace_function(source: str, qualname: str, fixed: str) -> str:
    """Swap the function `qualname` (decorators included) for `fixed`, indented like the original. Works on the
    text, not the AST, so it also repairs a module that does not parse."""
    lines = source.splitlines(keepends=True)
    *classes, name = qualname.split(".")
    indent, start = "", 0
    for cls in classes:
        start = next(i for i in range(start, len(lines)) if re.match(rf"{indent}class {cls}\b", lines[i])) + 1
        body = next(line for line in lines[start:] if line.strip())
        indent = body[:len(body) - len(body.lstrip())]
    first = next(i for i in range(start, len(lines)) if re.match(rf"{indent}(async\s+)?def {name}\(", lines[i]))
    end = first + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(indent + " ")
                                or lines[end].startswith(indent + "\t")):
        end += 1
    while not lines[end - 1].strip():  # the blank lines after the function stay where they are
        end -= 1
    while first > 0 and lines[first - 1].startswith(indent + "@"):
        first -= 1
    return "".join(lines[:first]) + textwrap.indent(fixed, indent) + "".join(lines[end:])


@pytest.fixture(scope="module")
def host_deps(tmp_path_factory) -> dict[str, Path]:
    """The examples' third-party dependencies, installed on the host into a directory of their own."""
    dirs = {}
    for example, requirements in HOST_DEPENDENCIES.items():
        target = tmp_path_factory.mktemp(f"deps-{example}")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target",
                        str(target), *requirements], check=True, capture_output=True, timeout=240)
        dirs[example] = target
    return dirs


def run_tests(root: Path, deps: Path | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the examples need none of .venv's plugins (3 s a start here)
    if deps:
        env["PYTHONPATH"] = str(deps)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_example_has_fixes():
    assert sorted(p.name for p in EXAMPLES.iterdir() if (p / "pyproject.toml").is_file()) == sorted(FIXES)


@pytest.mark.parametrize("example", sorted(FIXES))
def test_red_as_shipped_and_green_after_the_fixes(example, tmp_path, host_deps):
    root = tmp_path / example
    shutil.copytree(EXAMPLES / example, root)
    before = run_tests(root, host_deps.get(example))
    assert before.returncode in (1, 2), before.stdout + before.stderr
    assert re.search(r"\d+ (failed|error)", before.stdout), before.stdout
    for fix in FIXES[example]:
        path = root / fix.path
        original = path.read_text()
        path.write_text(replace_function(original, fix.qualname, fix.fixed))
        assert path.read_text() != original, f"{fix.qualname}: the fix changes nothing"
    after = run_tests(root, host_deps.get(example))
    assert after.returncode == 0, after.stdout + after.stderr
    assert re.search(r"\d+ passed", after.stdout) and "failed" not in after.stdout


@pytest.mark.parametrize("example", sorted(FIXES))
def test_fix_is_a_small_change_of_one_function(example, tmp_path):
    for fix in FIXES[example]:
        original = (EXAMPLES / example / fix.path).read_text()
        fixed = replace_function(original, fix.qualname, fix.fixed)
        old, new = original.splitlines(), fixed.splitlines()
        assert len(new) == len(old) + fix.added_lines, "a one-line bug keeps the line count; a missing branch adds"
        changes = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
                   if op[0] != "equal"]
        if fix.added_lines:
            assert [op[0] for op in changes] == ["insert"], "a missing branch only adds lines"
        else:
            assert sum(a != b for a, b in zip(old, new)) == 1, "exactly one line differs"


@pytest.mark.parametrize("example", sorted(FIXES))
def test_example_is_documented_and_declared(example, tmp_path):
    root = EXAMPLES / example
    first_line = (root / "README.md").read_text().splitlines()[0]
    assert first_line.endswith(".") and first_line.count(". ") == 0, "the first line is one sentence"
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    assert {"name", "version"} <= meta["project"].keys() and meta["project"]["requires-python"] == ">=3.9"
    assert meta["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
    assert len(list((root / "tests").glob("test_*.py"))) >= 1
    fixed_root = tmp_path / example
    shutil.copytree(root, fixed_root)
    for fix in FIXES[example]:
        path = fixed_root / fix.path
        path.write_text(replace_function(path.read_text(), fix.qualname, fix.fixed))
    for path in fixed_root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        assert ast.get_docstring(tree), f"{path.relative_to(fixed_root)} has no module docstring"
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and "tests" not in path.parts:
                assert ast.get_docstring(node), f"{path.relative_to(fixed_root)}: {node.name} has no docstring"
