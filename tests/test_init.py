"""`fixbot init`: repositories made here (pytest configuration, a unittest layout, tox, a CI workflow with a
matrix) get a workflow that passes GitHub's workflow schema and `zizmor --offline` (as the example workflows do,
tests/test_action_files.py) and a `.github/fixbot.yml` that bot.config loads, with the test command found."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from bot.config import KEYS, Config, load_file
from bot.fix.reproduce.command import TestCommand
from bot.init.plan import CONFIG_PATH, WORKFLOW_PATH, plan_init
from bot.init.templates import DESCRIPTIONS, PINS

from .conftest import REPO, run_fixbot

BIN = Path(sys.executable).parent
PKG = {"pkg/__init__.py": "def answer():\n    return 42\n"}
PYTEST_TEST = {"tests/test_pkg.py": "from pkg import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"}
UNITTEST_TEST = {"tests/test_pkg.py": "import unittest\n\nfrom pkg import answer\n\n\nclass T(unittest.TestCase):\n"
                                      "    def test_answer(self):\n        self.assertEqual(answer(), 42)\n"}
CI_MATRIX = """\
name: CI
on:
  push:
    branches: [trunk]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.8", "3.9", "3.10"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: python -m pip install pytest pytest-cov pytest-xdist
      - name: Run the tests
        run: |
          python -m pytest -n auto --cov=pkg tests/unit -p no:cacheprovider 2>&1 | tee pytest.log
"""


def make_repo(root: Path, files: dict[str, str], *, git: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    if git:
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True, capture_output=True)
    return root


def tool(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / name), *args], capture_output=True, text=True, timeout=120)


def assert_valid_workflows(*paths: Path) -> None:
    """As tests/test_action_files.py checks the examples: the schema, zizmor, pins, `permissions: {}`."""
    proc = tool("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, paths))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = tool("zizmor", "--offline", *map(str, paths))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path in paths:
        data = yaml.safe_load(path.read_text())
        assert data["permissions"] == {}
        for job in data["jobs"].values():
            assert "checks" not in job["permissions"]  # nothing in fixbot reads the checks API
            for step in job.get("steps", []):
                if "uses" in step:
                    ref = step["uses"].split("@")[1]
                    assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), step["uses"]


def init(*args: str) -> subprocess.CompletedProcess:
    return run_fixbot("init", *args, timeout=120)


def written_config(root: Path) -> Config:
    config = load_file(root / CONFIG_PATH)
    TestCommand.parse(config.test_command)  # fixbot can run what was written
    return config


def test_pytest_configuration_gives_its_testpaths_and_the_files_validate(tmp_path):
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, "pytest.ini": "[pytest]\ntestpaths = tests\n"})
    proc = init(str(root))
    assert proc.returncode == 0, proc.stderr
    assert "tests:   pytest tests  (from pytest.ini (testpaths))" in proc.stdout
    assert f"git -C {root} add {WORKFLOW_PATH} {CONFIG_PATH}" in proc.stdout
    assert "contents:      write  to create the fix branch" in proc.stdout and "next:" in proc.stdout.lower()
    assert_valid_workflows(root / WORKFLOW_PATH)
    assert written_config(root) == Config(test_command="pytest tests")
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    steps = {step.get("name"): step for step in workflow["jobs"]["test"]["steps"]}
    assert steps["Test"]["run"].strip() == "python -m pytest tests"
    assert steps["fixbot"]["if"] == "failure() && steps.test.outcome == 'failure'"
    assert workflow[True]["push"]["branches"] == ["main"]  # the branch checked out
    # the command runs the repository's tests
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests"], cwd=root, capture_output=True, text=True)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout


@pytest.mark.parametrize("files,command,source", [
    ({"pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests', 'more tests']\n"},
     "pytest tests 'more tests'", "pyproject.toml [tool.pytest.ini_options] (testpaths)"),
    ({"setup.cfg": "[metadata]\nname = pkg\n[tool:pytest]\naddopts = -q\n"}, "pytest", "setup.cfg [tool:pytest]"),
    ({"tox.ini": "[pytest]\ntestpaths = tests\n"}, "pytest tests", "tox.ini [pytest] (testpaths)"),
    ({"pytest.ini": "", "setup.cfg": "[tool:pytest]\ntestpaths = other\n"}, "pytest", "pytest.ini"),
])
def test_each_pytest_configuration(tmp_path, files, command, source):
    plan = plan_init(make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, **files}))
    assert (plan.tests.command, plan.tests.source) == (command, source)


def test_a_unittest_layout_is_discovered_where_its_tests_are(tmp_path):
    root = make_repo(tmp_path / "r", {**PKG, **UNITTEST_TEST, "tests/helpers.py": "X = 1\n"})
    proc = init(str(root), "--trigger", "dispatch")
    assert proc.returncode == 0, proc.stderr
    assert "python -m unittest discover -s tests  (from unittest layout" in proc.stdout
    assert written_config(root).test_command == "python -m unittest discover -s tests"
    run = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests"], cwd=root,
                         capture_output=True, text=True)
    assert run.returncode == 0 and "Ran 1 test" in run.stderr, run.stderr
    # *_test.py modules need unittest's pattern; a conftest.py (or `import pytest`) means pytest's layout
    suffixed = make_repo(tmp_path / "s", {**PKG, "checks/answer_test.py": UNITTEST_TEST["tests/test_pkg.py"]})
    assert plan_init(suffixed).tests.command == "python -m unittest discover -s checks -p '*_test.py'"
    mixed = make_repo(tmp_path / "m", {**PKG, **UNITTEST_TEST, "conftest.py": ""})
    assert (plan_init(mixed).tests.command, plan_init(mixed).tests.source) == \
        ("pytest", "test modules that pytest collects (no configuration)")


def test_tox_commands_without_posargs_and_coverage(tmp_path):
    tox = """\
        [tox]
        envlist = py311
        [testenv]
        deps =
            pytest-cov
            -r requirements-test.txt
        commands =
            - python -m pytest --cov=pkg {posargs:tests}
        """
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, "tox.ini": tox, "requirements-test.txt": "pytest\n",
                                      "pytest.ini": "[pytest]\ntestpaths = elsewhere\n"})
    plan = plan_init(root)
    assert (plan.tests.command, plan.tests.source) == ("python -m pytest tests", "tox.ini [testenv] commands")
    assert any("--cov=pkg" in note for note in plan.notes)
    workflow = yaml.safe_load(plan.files[0].text)
    install = next(s for s in workflow["jobs"]["test"]["steps"] if s.get("name") == "Install")["run"].splitlines()
    # tox's deps as fixbot's sandbox installs them, their -r path relative to the checkout again
    assert "python -m pip install pytest-cov -r requirements-test.txt" in install
    unittest_tox = make_repo(tmp_path / "u", {**PKG, **UNITTEST_TEST, "tox.ini":
                                              "[testenv:unit]\ncommands = python -m unittest discover {posargs}\n"})
    assert plan_init(unittest_tox).tests.command == "python -m unittest discover"


def test_an_existing_ci_workflow_with_a_matrix(tmp_path):
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, ".github/workflows/ci.yml": CI_MATRIX,
                                      "pytest.ini": "[pytest]\ntestpaths = tests\n"})
    proc = init(str(root))
    assert proc.returncode == 0, proc.stderr
    assert "python -m pytest tests/unit -p no:cacheprovider  (from the step 'Run the tests' of " \
           ".github/workflows/ci.yml (job test))" in proc.stdout
    assert "left out of the CI command: -n auto --cov=pkg" in proc.stdout
    # 3.8 is not among fixbot's Pythons: the nearest newer one the matrix lists
    assert "python:  3.9 for setup-python  (from CI job python-version (3.8, 3.9, 3.10)" in proc.stdout
    assert "already runs the tests" in proc.stdout
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    steps = workflow["jobs"]["test"]["steps"]
    assert steps[1]["with"]["python-version"] == "3.9"
    assert workflow[True]["push"]["branches"] == ["trunk"]  # the CI's own push branches
    assert_valid_workflows(root / WORKFLOW_PATH)
    assert written_config(root).test_command == "python -m pytest tests/unit -p no:cacheprovider"

    proc = init(str(root), "--trigger", "workflow_run", "--force")
    assert proc.returncode == 0, proc.stderr
    workflow = yaml.safe_load((root / WORKFLOW_PATH).read_text())
    assert workflow[True]["workflow_run"] == {"workflows": ["CI"], "types": ["completed"]}
    assert "actions:       read" in proc.stdout
    assert_valid_workflows(root / WORKFLOW_PATH)


def test_the_ci_commands_settings_stay_in_front_of_it(tmp_path):
    ci = CI_MATRIX.replace("python -m pytest -n auto", "DJANGO_SETTINGS_MODULE=site.settings "
                                                       "PY=${{ matrix.python-version }} python -m pytest -n auto")
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, ".github/workflows/ci.yml": ci})
    plan = plan_init(root)
    assert plan.tests.command == "DJANGO_SETTINGS_MODULE=site.settings python -m pytest tests/unit -p no:cacheprovider"
    assert any("left out of the CI command: 'PY=$EXPR' -n auto --cov=pkg" in note for note in plan.tests.notes)
    TestCommand.parse(plan.tests.command)  # fixbot can run what was written


def test_a_ci_step_that_runs_tox_reads_tox_ini(tmp_path):
    ci = "name: tests\non: [push]\njobs:\n  tox:\n    runs-on: ubuntu-latest\n    steps:\n" \
         "      - run: pip install tox\n      - run: tox -e py\n"
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, ".github/workflows/tests.yaml": ci,
                                      "tox.ini": "[testenv]\ncommands = pytest {posargs} tests\n"})
    tests = plan_init(root).tests
    assert tests.command == "pytest tests"
    assert tests.source == "tox.ini [testenv] commands, which the step 'tox -e py' of .github/workflows/tests.yaml " \
                           "(job tox) runs"


def test_workflow_run_needs_one_ci_workflow(tmp_path):
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST})
    proc = init(str(root), "--trigger", "workflow_run")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--workflow NAME" in proc.stderr and "Traceback" not in proc.stderr
    other = CI_MATRIX.replace("name: CI", "name: nightly")
    make_repo(root, {".github/workflows/ci.yml": CI_MATRIX, ".github/workflows/nightly.yml": other}, git=False)
    proc = init(str(root), "--trigger", "workflow_run")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "'CI' (.github/workflows/ci.yml), 'nightly' (.github/workflows/nightly.yml)" in proc.stderr
    assert not (root / WORKFLOW_PATH).exists()
    proc = init(str(root), "--trigger", "workflow_run", "--workflow", "nightly")
    assert proc.returncode == 0, proc.stderr
    assert yaml.safe_load((root / WORKFLOW_PATH).read_text())[True]["workflow_run"]["workflows"] == ["nightly"]


def test_the_three_triggers_validate(tmp_path):
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, ".github/workflows/ci.yml": CI_MATRIX})
    written = []
    for trigger in ("in-job", "workflow_run", "dispatch"):
        plan = plan_init(root, trigger=trigger)
        path = tmp_path / f"{trigger}.yml"
        path.write_text(plan.files[0].text)
        written.append(path)
        data = yaml.safe_load(plan.files[0].text)
        scopes = {scope for job in data["jobs"].values() for scope in job["permissions"]}
        assert {g.scope for g in plan.grants} <= scopes
        fixbot = [s for job in data["jobs"].values() for s in job.get("steps", []) if s.get("name") == "fixbot"]
        assert len(fixbot) == 1 and fixbot[0]["with"]["github-token"] == "${{ secrets.GITHUB_TOKEN }}"
    triggers = [set(yaml.safe_load(p.read_text())[True]) for p in written]
    assert triggers == [{"push", "pull_request"}, {"workflow_run"}, {"workflow_dispatch"}]
    assert "run-id" in yaml.safe_load(written[2].read_text())[True]["workflow_dispatch"]["inputs"]
    assert_valid_workflows(*written)


def test_existing_files_are_kept_unless_forced_and_dry_run_writes_nothing(tmp_path):
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST})
    proc = init(str(root), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert not (root / ".github").exists()
    assert f"--- {WORKFLOW_PATH} (new)\n# Written by `fixbot init`" in proc.stdout
    assert f"would write {CONFIG_PATH}" in proc.stdout and "Nothing was written (--dry-run)" in proc.stdout
    (root / ".github").mkdir()
    (root / CONFIG_PATH).write_text("iterations: 3\n")
    proc = init(str(root))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert f"{CONFIG_PATH} already exists" in proc.stderr and "--force" in proc.stderr
    assert (root / CONFIG_PATH).read_text() == "iterations: 3\n" and not (root / WORKFLOW_PATH).exists()
    proc = init(str(root), "--dry-run")
    assert proc.returncode == 0 and f"--- {CONFIG_PATH} (exists: written only with --force)" in proc.stdout
    assert (root / CONFIG_PATH).read_text() == "iterations: 3\n"
    proc = init(str(root), "--force")
    assert proc.returncode == 0, proc.stderr
    assert written_config(root) == Config() and (root / WORKFLOW_PATH).is_file()


def test_bad_paths_are_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    repo = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, "sub/x.py": ""})
    for path, message in ((tmp_path / "nope", "no such directory"), (tmp_path / "file", "not a directory"),
                          (repo / "sub", f"inside the git repository {repo}")):
        proc = init(str(path))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr.count("\n") == 1 and message in proc.stderr and "Traceback" not in proc.stderr
    assert not (repo / "sub" / ".github").exists()
    # not a git repository (yet): a warning, and the files
    plain = make_repo(tmp_path / "plain", {**PKG, **PYTEST_TEST}, git=False)
    proc = init(str(plain))
    assert proc.returncode == 0 and "is not a git repository" in proc.stdout
    assert (plain / WORKFLOW_PATH).is_file()


def test_the_config_file_lists_every_key_at_its_default(tmp_path):
    root = make_repo(tmp_path / "r", {**PKG, **PYTEST_TEST, "setup.py": "from setuptools import setup\nsetup()\n"})
    text = plan_init(root).files[1].text
    assert set(DESCRIPTIONS) == set(KEYS)
    for key in KEYS:
        assert f"\n{key}: " in text or f"\n# {key}: " in text, key
    # every commented default, uncommented, is still the default
    uncommented = "\n".join(line[2:] if line.startswith("# ") and ": " in line and not line.startswith("# fixbot")
                            and line[2:].split(":")[0] in KEYS else line for line in text.splitlines())
    (root / "all.yml").write_text(uncommented)
    assert load_file(root / "all.yml") == Config()


def test_the_pins_are_the_examples_pins():
    pins = {}
    for workflow in (REPO / "examples" / "workflows").glob("*.yml"):
        for line in workflow.read_text().splitlines():
            if "uses: " in line:
                uses, _, version = line.split("uses: ", 1)[1].partition(" # ")
                action, sha = uses.split("@")
                pins[action] = (sha, version.split()[0])
    assert {pin.action: (pin.sha, pin.version) for pin in PINS} == pins
