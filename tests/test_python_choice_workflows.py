"""Which Python the failing job of a GitHub Actions workflow runs (bot.environment.python.choice.job_python_versions):
matrices, include and exclude, names as GitHub writes them, and the job's versions as the choice's first source
after an explicit one."""
from __future__ import annotations

import pytest

from bot.environment.python.choice import PythonChoice, job_python_versions
from bot.environment.python.workflow import job_test_env

from .test_python_choice import choose, tox_ini

WORKFLOW = """\
name: CI
on: [push, pull_request]
env:
  LINT_PYTHON: 3.10
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        python-version: [3.8, 3.9, 3.10]
        os: [ubuntu-latest, windows-latest]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: pytest
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@0b93645e9fea7318ecaed2b359559ac225c90a2b  # v5.3.0
        with:
          python-version: ${{ env.LINT_PYTHON }}
  named:
    name: Python ${{ matrix.python }} on ${{ matrix.os }}
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        python: ["3.11", "3.12"]
        os: [ubuntu-latest]
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
  tests:
    name: Tests
    strategy:
      matrix:
        python: ["3.9", "3.12"]
        os: [ubuntu, macos]
        exclude:
          - {python: "3.9", os: macos}
        include:
          - {os: macos, label: mac}
          - {python: "3.13", os: ubuntu, experimental: true}
    env:
      PY: ${{ matrix.python }}
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ env.PY }}
  configs:
    strategy:
      matrix:
        config:
          - {python: "3.7", toxenv: py37}
          - {python: "3.8", toxenv: py38}
    name: tox ${{ matrix.config.toxenv }}
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.config.python }}
  several:
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: |
            3.9
            3.12
      - uses: actions/setup-python@v5
        with:
          python-version: [3.8, "3.13"]
  computed:
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
  from-file:
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version-file: .python-version
  docs:
    steps:
      - run: make docs
  reusable:
    uses: ./.github/workflows/test.yml
"""

JOBS = [
    ("test (3.9, ubuntu-latest)", ("3.9",)),
    ("test (3.10, windows-latest)", ("3.10",)),  # unquoted 3.10, read as written
    ("test (3.1, windows-latest)", ("3.10",)),  # how GitHub itself names it (YAML's float 3.1)
    ("test", ("3.8", "3.9", "3.10")),  # the job as a whole: every combination
    ("lint", ("3.10",)),  # env at the workflow level, a pinned commit
    ("Python 3.12 on ubuntu-latest", ("3.12",)),
    ("named", ("3.11", "3.12")),
    ("Tests (3.12, macos, mac)", ("3.12",)),  # include extends the macos combinations
    ("Tests (3.13, ubuntu, true)", ("3.13",)),  # include adds a combination of its own
    ("Tests (3.9, macos, mac)", ()),  # excluded
    ("tox py38", ("3.8",)),  # a nested matrix value
    ("several", ("3.9", "3.12", "3.8", "3.13")),
    ("computed", ("3.12",)),  # the computed matrix resolves nothing; the literal stays
    ("from-file", ()),  # python-version-file: left to the caller
    ("docs", ()),
    ("reusable", ()),
    ("deploy", ()),
    ("test (3.7, ubuntu-latest)", ()),
]


@pytest.mark.parametrize("job_name, versions", JOBS)
def test_job_python_versions(job_name, versions):
    assert job_python_versions(WORKFLOW, job_name) == versions


@pytest.mark.parametrize("text", ["", "jobs: [", "- just\n- a list\n", "jobs: 3\n"])
def test_workflow_that_says_nothing(text):
    assert job_python_versions(text, "test") == ()


def test_failing_job_to_python():
    versions = job_python_versions(WORKFLOW, "test (3.1, ubuntu-latest)")
    choice = choose(tox_ini("py39"), ci_versions=versions)
    assert choice == PythonChoice(version="3.11", source="CI job python-version (3.10): 3.10 is not available, "
                                  "the nearest newer", wanted="3.10")


ENV_WORKFLOW = """\
env:
  LANG: C
  TOKEN: ${{ secrets.API_TOKEN }}
  GITHUB_SOMETHING: x
jobs:
  test:
    strategy:
      matrix:
        python: ["3.9", "3.12"]
        db: [sqlite]
    env:
      DJANGO_SETTINGS_MODULE: site.settings
      DB: ${{ matrix.db }}
      PY: ${{ matrix.python }}
      WHERE: ${{ github.workspace }}/src
    steps:
      - run: pip install -e .
        env:
          PIP_ONLY: "1"
      - run: python -m pytest -x tests
        env:
          PYTHONPATH: src
          DB: sqlite-${{ env.PY }}
"""


@pytest.mark.parametrize("job_name, env", [
    ("test (3.9, sqlite)", {"LANG": "C", "DJANGO_SETTINGS_MODULE": "site.settings", "DB": "sqlite-3.9", "PY": "3.9",
                            "PYTHONPATH": "src"}),
    ("test", {"LANG": "C", "DJANGO_SETTINGS_MODULE": "site.settings", "PYTHONPATH": "src"}),  # both combinations
    ("lint", {}),
])
def test_job_test_env_is_what_the_test_step_runs_with(job_name, env):
    """Secrets and other contexts never resolve; the runner's own names and another step's env stay out; a value
    that differs between the combinations a name matches is not guessed."""
    assert job_test_env(ENV_WORKFLOW, job_name) == env
