"""The repository's existing CI: the workflows under .github/workflows whose steps run the tests (a `run:` line
with pytest, `python -m pytest`, `python -m unittest` or tox), their names, and the Python their test job uses."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from bot.environment.python.choice import job_python_versions
from bot.init.repo import Repo

RunnerKind = Literal["pytest", "unittest", "tox"]
FIXBOT_ACTION = "fixbot-dev/fixbot"
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")"}
_PYTEST = {"pytest", "py.test"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS = {"time", "xvfb-run", "exec", "env", "sudo"}
_RUN_TOOLS = {"poetry", "uv", "pipenv", "pdm", "hatch", "rye"}  # `TOOL run CMD` runs CMD in the tool's env
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?|coverage")


@dataclass(frozen=True, kw_only=True)
class TestStep:
    """One command of a workflow step that runs the tests."""

    __test__ = False

    workflow: str  # ".github/workflows/ci.yml"
    job: str  # the job's id
    step: str  # the step's name, else its command
    kind: RunnerKind
    args: tuple[str, ...]  # the runner's arguments, as written (`${{ ... }}` kept as `$EXPR`)
    module: bool  # run as `python -m ...` (which puts the working directory on sys.path)
    env: tuple[str, ...] = ()  # the `NAME=value` words before the command, as written


@dataclass(frozen=True)
class Runner:
    kind: RunnerKind
    args: tuple[str, ...]
    module: bool
    env: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CiWorkflow:
    path: str  # ".github/workflows/ci.yml"
    name: str  # its `name:`, else its path (GitHub's name for a workflow without one)
    named: bool  # it has a `name:`
    steps: tuple[TestStep, ...]  # its commands that run the tests, in file order
    pythons: tuple[str, ...]  # the python-version values of the job of its first test step, as written
    push_branches: tuple[str, ...]  # `on: push: branches`, when it lists names


def commands(script: str) -> list[list[str]]:
    """A `run:` script as simple commands (words), continuations joined, split at `&&`, `;`, `|` and the like."""
    text = _EXPRESSION.sub("$EXPR", script.replace("\\\n", " "))
    found: list[list[str]] = []
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            words = list(lexer)
        except ValueError:  # an unbalanced quote: not a line we can read
            continue
        current: list[str] = []
        redirect = False
        for word in words:
            if word in _SEPARATORS:
                found.append(current)
                current, redirect = [], False
            elif set(word) <= set("<>&"):  # `> log.txt`, `2>&1`: the redirection and its target are no arguments
                if current and current[-1].isdigit():
                    current.pop()
                redirect = True
            elif redirect:
                redirect = False
            else:
                current.append(word)
        found.append(current)
    return [c for c in found if c]


def find_runner(words: list[str]) -> Runner | None:
    """The test runner a command starts, after environment assignments and wrappers (`poetry run`, `uv run`,
    `coverage run -m`, `python3.11 -m`), with its arguments; None when the command runs no tests (`pip install
    pytest` is not a test run)."""
    index, wrapped, env = 0, False, []
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word) or word in _WRAPPERS:
            env += [word] if _ASSIGNMENT.match(word) else []
            index, wrapped = index + 1, True
        elif wrapped and word.startswith("-"):  # the wrapper's own options: `uv run --frozen pytest`
            index += 1
        elif word in _RUN_TOOLS and index + 1 < len(words) and words[index + 1] == "run":
            index, wrapped = index + 2, True
        else:
            break
    rest = words[index:]
    base = rest[0].rsplit("/", 1)[-1] if rest else ""
    if base in _PYTEST:
        return Runner("pytest", tuple(rest[1:]), False, tuple(env))
    if base == "tox":
        return Runner("tox", tuple(rest[1:]), False, tuple(env))
    if _PYTHON.fullmatch(base) and "-m" in rest:
        at = rest.index("-m")
        module = rest[at + 1] if at + 1 < len(rest) else ""
        if module in ("pytest", "unittest", "tox"):
            return Runner(module, tuple(rest[at + 2:]), True, tuple(env))  # type: ignore[arg-type]
    return None


def _test_steps(path: str, jobs: dict) -> list[TestStep]:
    found = []
    for job_id, job in jobs.items():
        steps = job.get("steps") if isinstance(job, dict) else None
        for step in steps if isinstance(steps, list) else []:
            if not isinstance(step, dict) or not isinstance(step.get("run"), str):
                continue
            for words in commands(step["run"]):
                runner = find_runner(words)
                if runner is not None:
                    label = str(step.get("name") or shlex.join(words))
                    found.append(TestStep(workflow=path, job=str(job_id), step=label, kind=runner.kind,
                                          args=runner.args, module=runner.module, env=runner.env))
    return found


def _uses_fixbot(jobs: dict) -> bool:
    return any(str(step.get("uses", "")).lower().startswith(FIXBOT_ACTION + "@")
               for job in jobs.values() if isinstance(job, dict)
               for step in _list(job.get("steps")) if isinstance(step, dict))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _push_branches(data: dict) -> tuple[str, ...]:
    on = data.get(True, data.get("on"))  # YAML 1.1 reads a bare `on` as true
    push = on.get("push") if isinstance(on, dict) else None
    branches = push.get("branches") if isinstance(push, dict) else None
    if isinstance(branches, list) and all(isinstance(b, str) for b in branches):
        return tuple(branches)
    return ()


def read_workflow(repo: Repo, path: str) -> CiWorkflow | None:
    """The workflow at `path` when it runs the tests and is not fixbot's own; None otherwise (or unreadable)."""
    text = repo.checkout.text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, dict) or _uses_fixbot(jobs):
        return None
    steps = _test_steps(path, jobs)
    if not steps:
        return None
    name = data.get("name")
    named = isinstance(name, str) and bool(name.strip())
    return CiWorkflow(path=path, name=name.strip() if named else path, named=named, steps=tuple(steps),
                      pythons=job_python_versions(text, steps[0].job), push_branches=_push_branches(data))


def ci_workflows(repo: Repo, *, skip: tuple[str, ...] = ()) -> tuple[CiWorkflow, ...]:
    """The workflows that run the tests, by path; `skip`: paths not to read (the file `fixbot init` writes)."""
    found = (read_workflow(repo, path) for path in repo.workflow_files() if path not in skip)
    return tuple(w for w in found if w is not None)
