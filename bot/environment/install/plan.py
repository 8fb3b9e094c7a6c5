"""Which pip commands rebuild a checkout's test environment: the declarations are read, never run, and pip itself
resolves and installs them in the build container (cwd /src, a copy of the repository).

In order: the project with its test extras, setup.py's tests_require, the PEP 735 test groups, the test and
development requirements files, tox's deps. Every pip option in the project's own files passes through to pip.
"""
from __future__ import annotations

import ast
import configparser
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from packaging.utils import canonicalize_name

from bot.checkout.paths import is_test_path
from bot.checkout.repository import Checkout
from bot.environment.install.requirement_files import (
    DECLARATION_FILE,
    chosen_requirement_files,
    install_roots,
    read_closure,
    relocate,
    scan_lines,
)
from bot.environment.install.scm_version import pretend_version_env
from bot.environment.install.setup_py import read_setup_py
from bot.environment.install.tox import ToxDeps, read_tox
from bot.environment.python.sources import read_pyproject

TEST_NAMES = ("test", "tests", "testing", "dev")  # extras and dependency groups installed for the tests
BUILD_DIR = ".fixbot-build"  # under /src: the files the plan writes before running its steps
PLAN_FORMAT = 1  # hashed into every digest: a change to how plans are made never reuses an old environment
_CONFIG_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "tox.toml")


@dataclass(frozen=True, kw_only=True)
class InstallStep:
    what: str  # for the user: "the project with its extras test, dev (setup.py)"
    argv: tuple[str, ...]  # run with cwd /src; argv[0] "pip" is `python -m pip` of the target Python
    files: tuple[tuple[str, str], ...] = ()  # (path under /src/.fixbot-build/, text) to write before running
    source: str  # the file (or "setup") that asked for this step
    # run instead when this step fails: the project's statically declared dependencies, for a project that does
    # not build as a package (a uv-style application: [project] without [build-system], several top-level modules)
    fallback: InstallStep | None = None
    # the project itself, with no static declaration to fall back to: when it does not build (an old setup.py),
    # its tests may still run from the checkout, so the run goes on without it and says so
    optional: bool = False


@dataclass(frozen=True, kw_only=True)
class InstallPlan:
    steps: tuple[InstallStep, ...]
    sources: tuple[str, ...]  # files that declared something
    inputs_digest: str  # sha256 over the declaration files read, the steps and the setup commands
    custom: bool  # True when the steps are the user's `setup` commands
    index_urls: tuple[str, ...] = ()  # --index-url, -i, --extra-index-url, --find-links URLs, as written
    notes: tuple[str, ...] = ()  # declarations that could not be read, one line each, for the log
    env: tuple[tuple[str, str], ...] = ()  # variables the build runs with: a git-derived version (scm_version.py)


@dataclass(frozen=True)
class _Project:
    source: str | None  # the file that makes the repository a project; None: it is not one
    extras: tuple[str, ...] | None  # the extras it declares; None: they cannot be read without running code
    groups: tuple[str, ...]  # its PEP 735 dependency groups
    tests_require: tuple[tuple[str, tuple[str, ...]], ...]  # (file, requirement strings)
    files: tuple[str, ...]  # other files its metadata reads (setuptools `file =` directives)
    declared: tuple[str, ...] | None = None  # [project] dependencies and optional ones by extra, when static
    name: str | None = None  # the distribution's name, where pyproject.toml, setup.cfg or setup.py gives it
    optional: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # every extra whose requirements can be read, from pyproject.toml, setup.cfg and setup.py
    extras_require: tuple[tuple[str, tuple[str, ...]], ...] = ()


def install_plan(checkout: Checkout, *, setup: Sequence[str] = (), python: str | None = None) -> InstallPlan:
    """The steps that install `checkout`'s test environment; with `setup`, the user's commands instead. `python`
    ("3.9"), the version the tests run on, picks the tox environment whose deps are installed.

    Raises UserError for a pyproject.toml that is not TOML (pip, tox and pytest would all stop on it)."""
    notes: list[str] = []
    project = _read_project(checkout, notes)
    tox = read_tox(checkout, python=python)
    if tox and tox.note:
        notes.append(tox.note)
    chosen = chosen_requirement_files(checkout)
    tox_file = scan_lines(tox.source, list(tox.deps)) if tox else None
    tox_includes = (*tox_file.requirements, *tox_file.constraints) if tox_file else ()
    closure = read_closure(checkout, (*chosen, *tox_includes))
    urls = [url for f in (*closure.values(), *([tox_file] if tox_file else [])) for url in f.index_urls]
    if commands := tuple(c for c in setup if c.strip()):
        steps: tuple[InstallStep, ...] = tuple(
            InstallStep(what=f"your setup command: {c}", argv=("sh", "-c", c), source="setup") for c in commands)
        sources: tuple[str, ...] = ("setup",)
    else:
        roots = install_roots(chosen, closure)
        steps = (*_project_steps(project, tox, _test_imports(checkout)), *_tests_require_steps(project),
                 *_group_steps(project),
                 *_requirements_steps(roots), *_tox_steps(tox))
        # then the files the installed requirements files pull in with -r and -c
        included = read_closure(checkout, (*roots, *(tox_includes if tox and tox.deps else ())))
        sources = tuple(dict.fromkeys((*(step.source for step in steps), *included)))
    read = {p for p in checkout.files if p in _CONFIG_FILES or DECLARATION_FILE.fullmatch(p)}
    read |= {p for p in (*closure, *project.files) if p in checkout.files}
    env = tuple(pretend_version_env(checkout, project.name).items())
    return InstallPlan(steps=steps, sources=sources, inputs_digest=_digest(checkout, read, steps, commands, env),
                       custom=bool(commands), index_urls=tuple(dict.fromkeys(urls)), notes=tuple(notes), env=env)


def _digest(checkout: Checkout, paths: set[str], steps: tuple[InstallStep, ...], setup: tuple[str, ...],
            env: tuple[tuple[str, str], ...]) -> str:
    record = {
        "format": PLAN_FORMAT,
        "files": [[path, hashlib.sha256(checkout.files[path]).hexdigest()] for path in sorted(paths)],
        "steps": [[list(step.argv), [list(f) for f in step.files]] for step in steps],  # `what` is display only
        "setup": list(setup),
        **({"env": [list(pair) for pair in env]} if env else {}),  # absent: the digests of other projects stay
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def _setup_cfg(checkout: Checkout, notes: list[str]) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # extras keep their spelling
    if "setup.cfg" in checkout.files:
        try:
            parser.read_string(checkout.text("setup.cfg"), source="setup.cfg")
        except configparser.Error as exc:
            notes.append(f"setup.cfg: not readable as an ini file ({str(exc).splitlines()[0]})")
    return parser


def _table(data: Any, *keys: str) -> dict[str, Any]:
    """data[k1][k2]..., or {} where a key is missing or a value is not a table."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _pyproject_extras(data: dict[str, Any]) -> list[tuple[str, ...] | None]:
    """The extras each of pyproject's places declares ([project], setuptools' dynamic table, poetry, old flit)."""
    found: list[tuple[str, ...] | None] = []
    if "project" in data:
        project = _table(data, "project")
        if "optional-dependencies" in project:
            found.append(tuple(_table(project, "optional-dependencies")))
        elif "optional-dependencies" in (project.get("dynamic") or []):
            dynamic = _table(data, "tool", "setuptools", "dynamic")
            found.append(tuple(dynamic["optional-dependencies"]) if isinstance(
                dynamic.get("optional-dependencies"), dict) else None)
        else:
            found.append(())
    for keys in (("tool", "poetry", "extras"), ("tool", "flit", "metadata", "requires-extra")):
        if table := _table(data, *keys):
            found.append(tuple(table))
    return found


def _file_directives(value: Any) -> list[str]:
    """The paths of setuptools' `{file = ...}` directives anywhere in a table."""
    if isinstance(value, dict):
        named = value.get("file")
        own = [named] if isinstance(named, str) else [p for p in named if isinstance(p, str)] \
            if isinstance(named, list) else []
        return own + [p for v in value.values() for p in _file_directives(v)]
    return []


def _cfg_list(parser: configparser.ConfigParser, section: str, key: str) -> tuple[str, ...]:
    lines = (line.strip() for line in parser.get(section, key, fallback="").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


def _read_project(checkout: Checkout, notes: list[str]) -> _Project:
    data = read_pyproject(checkout)
    cfg = _setup_cfg(checkout, notes)
    setup_py = read_setup_py(checkout.text("setup.py")) if "setup.py" in checkout.files else None
    cfg_project = cfg.has_section("metadata") or cfg.has_section("options")
    source = next((path for path, yes in (("pyproject.toml", "project" in data), ("setup.py", setup_py is not None),
                                          ("setup.cfg", cfg_project), ("pyproject.toml", "build-system" in data))
                   if yes), None)
    extras = _pyproject_extras(data)
    if cfg.has_section("options.extras_require"):
        extras.append(tuple(cfg.options("options.extras_require")))
    if setup_py is not None:
        extras.append(setup_py.extras)
    readable = [names for names in extras if names is not None]
    tests_require = []
    if setup_py is not None and setup_py.tests_require:
        tests_require.append(("setup.py", setup_py.tests_require))
    if cfg_project and (cfg_tests := _cfg_list(cfg, "options", "tests_require")):
        tests_require.append(("setup.cfg", cfg_tests))
    project = _table(data, "project")
    static = "project" in data and "dependencies" not in (project.get("dynamic") or [])
    optional = _table(project, "optional-dependencies")
    name = project.get("name") if isinstance(project.get("name"), str) else None
    name = name or cfg.get("metadata", "name", fallback=None) or (setup_py.name if setup_py else None)
    cfg_extras = tuple((extra, _cfg_list(cfg, "options.extras_require", extra))
                       for extra in (cfg.options("options.extras_require")
                                     if cfg.has_section("options.extras_require") else ()))
    return _Project(source=source, name=name,
                    extras=tuple(dict.fromkeys(e for names in readable for e in names)) if readable else None,
                    groups=tuple(_table(data, "dependency-groups")), tests_require=tuple(tests_require),
                    files=tuple(_file_directives(_table(data, "tool", "setuptools", "dynamic"))),
                    declared=_strings(project.get("dependencies", []), project) if static else None,
                    optional=tuple((name, _strings(value, project)) for name, value in optional.items()),
                    extras_require=(*((n, _strings(v, project)) for n, v in optional.items()), *cfg_extras,
                                    *(setup_py.extras_require if setup_py else ())))


def _strings(value: Any, project: dict[str, Any]) -> tuple[str, ...]:
    """The requirement strings of a list, without the project's own name (`demo[test]` inside demo)."""
    itself = canonicalize_name(str(project.get("name", "")))
    own = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
    return tuple(v for v in value if isinstance(v, str) and (m := own.match(v)) and
                 canonicalize_name(m.group(1)) != itself) if isinstance(value, list) else ()


def _wanted(declared: tuple[str, ...], extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The declared names that are test or development ones (compared normalized, PEP 685), then `extra`."""
    spelled: dict[str, str] = {}
    for name in declared:
        spelled.setdefault(canonicalize_name(name), name)
    wanted: dict[str, str] = {}
    for name in [spelled[n] for n in TEST_NAMES if n in spelled] + list(extra):
        wanted.setdefault(canonicalize_name(name), name)
    return tuple(wanted.values())


def _test_imports(checkout: Checkout) -> frozenset[str]:
    """The top-level modules the test files import (in `try` blocks too), lowercased."""
    found: set[str] = set()
    for path in checkout.files:
        if not (path.endswith(".py") and is_test_path(path)):
            continue
        try:
            tree = ast.parse(checkout.text(path))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0].lower() for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0].lower())
    return frozenset(found)


def imported_extras(project: _Project, imports: frozenset[str]) -> tuple[str, ...]:
    """The extras one of whose requirements provides a module the tests import (`d = ["aiohttp"]` when a test
    imports aiohttp.test_utils): the tests need them, whatever they are called."""
    def module(requirement: str) -> str:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        return canonicalize_name(match.group(1)).replace("-", "_") if match else ""
    return tuple(dict.fromkeys(extra for extra, requirements in project.extras_require
                               if any(module(r) in imports for r in requirements)))


def _project_steps(project: _Project, tox: ToxDeps | None, imports: frozenset[str] = frozenset()
                   ) -> list[InstallStep]:
    if project.source is None:
        return []
    # tox's `extras` are the project's recipe; an extra that provides what the tests import is needed too
    extras = _wanted(project.extras or (), (*(tox.extras if tox else ()), *imported_extras(project, imports)))
    target = f".[{','.join(extras)}]" if extras else "."
    what = f"the project with its extras {', '.join(extras)}" if extras else "the project"
    fallback = _declared_step(project, extras)
    return [InstallStep(what=f"{what} ({project.source})", argv=("pip", "install", target), source=project.source,
                        fallback=fallback, optional=fallback is None)]


def _declared_step(project: _Project, extras: tuple[str, ...]) -> InstallStep | None:
    if project.declared is None:
        return None
    wanted = {canonicalize_name(e) for e in extras}
    lines = [*project.declared, *(line for name, group in project.optional if canonicalize_name(name) in wanted
                                  for line in group)]
    name = "project-dependencies.txt"
    return InstallStep(what="the dependencies [project] declares, without the project itself (pyproject.toml)",
                       argv=("pip", "install", "-r", f"{BUILD_DIR}/{name}"), source="pyproject.toml",
                       files=((name, "".join(f"{line}\n" for line in lines)),))


def _requirements_file(name: str, lines: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return ((name, "".join(f"{relocate(line, '..')}\n" for line in lines)),)


def _tests_require_steps(project: _Project) -> list[InstallStep]:
    steps = []
    for source, requirements in project.tests_require:
        name = f"tests-require-{source.replace('.', '-')}.txt"
        steps.append(InstallStep(what=f"tests_require of {source}", source=source,
                                 argv=("pip", "install", "-r", f"{BUILD_DIR}/{name}"),
                                 files=_requirements_file(name, requirements)))
    return steps


def _group_steps(project: _Project) -> list[InstallStep]:
    return [InstallStep(what=f"the dependency group {group} (pyproject.toml)", source="pyproject.toml",
                        argv=("pip", "install", "--group", group)) for group in _wanted(project.groups)]


def _requirements_steps(paths: tuple[str, ...]) -> list[InstallStep]:
    # One invocation per file: a file with --hash puts pip in hash-checking mode for everything it installs.
    return [InstallStep(what=f"the requirements in {path}", argv=("pip", "install", "-r", path), source=path)
            for path in paths]


def _tox_steps(tox: ToxDeps | None) -> list[InstallStep]:
    if not tox or not tox.deps:
        return []
    name = "tox-deps.txt"
    return [InstallStep(what=f"tox's deps for {tox.env} ({tox.source})", source=tox.source,
                        argv=("pip", "install", "-r", f"{BUILD_DIR}/{name}"), files=_requirements_file(name, tox.deps))]
