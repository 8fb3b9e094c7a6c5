"""The command that runs a repository's tests, detected from what it already has, most authoritative first: the
test step of its CI workflow (what CI really runs; a tox step reads tox.ini's commands), tox.ini's [testenv]
commands, a pytest configuration (with its testpaths), a unittest layout, test modules pytest collects; else
plain pytest. Every result says where it came from and parses as fixbot's --test-cmd does."""
from __future__ import annotations

import configparser
import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from bot.checkout.paths import is_test_path
from bot.checkout.repository import Checkout
from bot.fix.reproduce.command import BadTestCommand, TestCommand
from bot.init.ci import CiWorkflow, ci_workflows, commands, find_runner
from bot.init.repo import Repo

DEFAULT_COMMAND = "pytest"
# pytest options a CI line may carry that fixbot sets itself or that change which tests run to completion
# (coverage, parallel workers, reports, stop-at-first-failure, reruns, time limits, verbosity): left out
_DROP_WITH_VALUE = {"-n", "--numprocesses", "--maxprocesses", "--dist", "--junitxml", "--junit-xml", "--html",
                    "--durations", "--maxfail", "--color", "--tb", "--basetemp", "--cov-report", "--cov-config",
                    "--cov-fail-under", "--reruns", "--reruns-delay", "--timeout", "-r"}
_DROP_FLAGS = {"-x", "--exitfirst", "--verbose", "--quiet", "--no-cov", "--cov-append", "--cov-branch", "-l",
               "--showlocals", "--lf", "--last-failed", "--ff", "--failed-first", "--sw", "--stepwise",
               "--no-header", "--no-summary", "--cov"}
_DROP_CLUSTER = re.compile(r"-[vqx]+|-r\w+|-n\w+")
_TESTCASE = re.compile(r"\bTestCase\b")
_USES_PYTEST = re.compile(r"^\s*(import pytest|from pytest\b|from _pytest\b)|@pytest\.", re.MULTILINE)
_TOX_SUBSTITUTIONS = ((re.compile(r"\{posargs:([^{}]*)\}"), r"\1"), (re.compile(r"\{posargs\}"), ""),
                      (re.compile(r"\{toxinidir\}/?"), ""), (re.compile(r"\{env(python|bindir/python)\}"), "python"),
                      (re.compile(r"\{envbindir\}/"), ""))


@dataclass(frozen=True, kw_only=True)
class DetectedTests:
    __test__ = False

    command: str  # as fixbot's test-command: `pytest ...`, `python -m pytest ...` or `python -m unittest ...`
    source: str  # where it came from, for the user: "pytest.ini (testpaths)"
    notes: tuple[str, ...] = ()  # what was left out or passed over, one line each


def _unresolved(word: str) -> bool:
    return "$" in word or ("{" in word and "}" in word)  # a shell variable, `${{ }}`, a tox substitution


def clean_pytest_args(args: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(kept, left out): the arguments fixbot can run with, and the options it sets itself or that would stop
    a run early, and the words that only CI can resolve (variables, expressions)."""
    kept: list[str] = []
    dropped: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        name = word.split("=", 1)[0]
        takes_value = name in _DROP_WITH_VALUE and "=" not in word
        optional = word == "--cov" and index + 1 < len(args) and not args[index + 1].startswith("-")
        if takes_value or optional:
            dropped += args[index:index + 2]
            index += 2
            continue
        if name in _DROP_WITH_VALUE or name in _DROP_FLAGS or name.startswith("--cov") \
                or _DROP_CLUSTER.fullmatch(word) or _unresolved(word):
            dropped.append(word)
        else:
            kept.append(word)
        index += 1
    return tuple(kept), tuple(dropped)


def _command(kind: str, launcher: str, args: tuple[str, ...], env: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]]:
    """The command as fixbot runs it, after the `NAME=value` settings CI gives it (fixbot sets them too)."""
    if kind == "pytest":
        kept, dropped = clean_pytest_args(args)
    else:
        kept = tuple(a for a in args if not _unresolved(a))
        dropped = tuple(a for a in args if _unresolved(a))
    settings = tuple(a for a in env if not _unresolved(a))
    return shlex.join((*settings, *launcher.split(), *kept)), (*(a for a in env if _unresolved(a)), *dropped)


def _launcher(kind: str, module: bool) -> str:
    if kind == "unittest":
        return "python -m unittest"
    return "python -m pytest" if module else "pytest"  # as written: `-m` also makes the checkout importable


def _left_out(dropped: tuple[str, ...], where: str) -> tuple[str, ...]:
    if not dropped:
        return ()
    why = []
    if not all(_unresolved(word) for word in dropped):
        why.append("fixbot runs, reports and times the tests itself")
    if any(_unresolved(word) for word in dropped):
        why.append("variables mean nothing outside CI")
    return (f"left out of {where}: {shlex.join(dropped)} ({'; '.join(why)})",)


def _ci_step(repo: Repo, ci: CiWorkflow | None) -> DetectedTests | None:
    if ci is None:
        return None
    for step in ci.steps:
        where = f"the step {step.step!r} of {step.workflow} (job {step.job})"
        if step.kind == "tox":
            found = _tox_commands(repo)
            if found is not None:
                return DetectedTests(command=found.command, source=f"{found.source}, which {where} runs",
                                     notes=found.notes)
            continue
        command, dropped = _command(step.kind, _launcher(step.kind, step.module), step.args, step.env)
        return DetectedTests(command=command, source=where, notes=_left_out(dropped, "the CI command"))
    return None


def _tox_lines(parser: configparser.ConfigParser) -> list[tuple[str, str]]:
    sections = [s for s in parser.sections() if s == "testenv"] + \
        [s for s in parser.sections() if s.startswith("testenv:")]
    lines = []
    for section in sections:
        text = parser.get(section, "commands", fallback="").replace("\\\n", " ")
        lines += [(section, line.strip().lstrip("-").strip()) for line in text.splitlines() if line.strip()]
    return lines


def _tox_commands(repo: Repo) -> DetectedTests | None:
    parser = _ini(repo, "tox.ini")
    if parser is None:
        return None
    for section, line in _tox_lines(parser):
        for pattern, replacement in _TOX_SUBSTITUTIONS:
            line = pattern.sub(replacement, line)
        for words in commands(line):
            found = find_runner(words)
            if found is None or found.kind == "tox":
                continue
            command, dropped = _command(found.kind, _launcher(found.kind, found.module), found.args)
            return DetectedTests(command=command, source=f"tox.ini [{section}] commands",
                                 notes=_left_out(dropped, "tox's command"))
    return None


def _ini(repo: Repo, path: str) -> configparser.ConfigParser | None:
    if path not in repo.checkout.files:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(repo.checkout.text(path), source=path)
    except configparser.Error:
        return None  # pytest and tox would stop on it too; the detection just passes over it
    return parser


def _pytest_tables(repo: Repo) -> list[tuple[str, object]]:
    """(where, testpaths or None) for each pytest configuration, in pytest's own order of precedence."""
    found: list[tuple[str, object]] = []
    if "pytest.ini" in repo.checkout.files:  # pytest.ini counts even without a [pytest] section
        parser = _ini(repo, "pytest.ini")
        found.append(("pytest.ini", parser.get("pytest", "testpaths", fallback=None) if parser else None))
    if "pyproject.toml" in repo.checkout.files:
        try:
            data = tomllib.loads(repo.checkout.text("pyproject.toml"))
        except tomllib.TOMLDecodeError:
            data = {}
        table = data.get("tool", {}).get("pytest", {}).get("ini_options")
        if isinstance(table, dict):
            found.append(("pyproject.toml [tool.pytest.ini_options]", table.get("testpaths")))
    for path, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = _ini(repo, path)
        if parser is not None and parser.has_section(section):
            found.append((f"{path} [{section}]", parser.get(section, "testpaths", fallback=None)))
    return found


def _pytest_config(repo: Repo) -> DetectedTests | None:
    tables = _pytest_tables(repo)
    if not tables:
        return None
    where, testpaths = tables[0]
    paths = testpaths.split() if isinstance(testpaths, str) else testpaths if isinstance(testpaths, list) else []
    paths = [str(p) for p in paths if not _unresolved(str(p))]
    if paths:
        return DetectedTests(command=shlex.join(["pytest", *paths]), source=f"{where} (testpaths)")
    return DetectedTests(command=DEFAULT_COMMAND, source=where)


def _test_modules(repo: Repo) -> list[str]:
    return [p for p in repo.checkout.files if p.endswith(".py") and is_test_path(p)
            and (fnmatchcase(posixpath.basename(p), "test*.py") or p.endswith("_test.py"))]


def _unittest_layout(repo: Repo) -> DetectedTests | None:
    files = repo.checkout.files
    if any(posixpath.basename(p) == "conftest.py" for p in files) \
            or any(_USES_PYTEST.search(repo.checkout.text(p)) for p in _test_modules(repo)):
        return None
    modules = [p for p in _test_modules(repo) if _TESTCASE.search(repo.checkout.text(p))
               and "unittest" in repo.checkout.text(p)]
    if not modules:
        return None
    folders = [posixpath.dirname(p) for p in modules]
    start = "." if "" in folders else posixpath.commonpath(folders) or "."
    args = ["python", "-m", "unittest", "discover", "-s", start]
    if not all(fnmatchcase(posixpath.basename(p), "test*.py") for p in modules):
        if not all(p.endswith("_test.py") for p in modules):
            return None  # discovery takes one file pattern; pytest collects test_*.py and *_test.py alike
        args += ["-p", "*_test.py"]
    return DetectedTests(command=shlex.join(args),
                         source=f"unittest layout: {len(modules)} test module(s) with unittest.TestCase, no pytest "
                                "configuration")


def _test_files(repo: Repo) -> DetectedTests | None:
    if not _test_modules(repo):
        return None
    return DetectedTests(command=DEFAULT_COMMAND, source="test modules that pytest collects (no configuration)")


def detect_tests(repo: Repo, ci: CiWorkflow | None) -> DetectedTests:
    """The first source that names a command fixbot can run (see the module doc)."""
    notes: list[str] = []
    sources: tuple[Callable[[], DetectedTests | None], ...] = (
        lambda: _ci_step(repo, ci), lambda: _tox_commands(repo), lambda: _pytest_config(repo),
        lambda: _unittest_layout(repo), lambda: _test_files(repo))
    for source in sources:
        found = source()
        if found is None:
            continue
        try:
            TestCommand.parse(found.command)
        except BadTestCommand as exc:
            notes.append(f"passed over {found.command!r} from {found.source}: {exc}")
            continue
        return DetectedTests(command=found.command, source=found.source, notes=(*notes, *found.notes))
    notes.append("no test modules found: fixbot works from failing tests, so add some before it can help")
    return DetectedTests(command=DEFAULT_COMMAND, source="nothing found, the default", notes=tuple(notes))


def detect_checkout_tests(checkout: Checkout) -> DetectedTests:
    """`detect_tests` on a checkout that `fixbot fix` or a benchmark loaded, reading its first CI workflow that
    runs the tests (fixbot's own workflow is never one: it does not run them)."""
    repo = Repo(root=Path(checkout.root), checkout=checkout, git=False, branch=None)
    workflows = ci_workflows(repo)
    return detect_tests(repo, workflows[0] if workflows else None)
