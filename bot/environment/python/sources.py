"""What a checkout's files say about its Python: `.python-version`, requires-python / python_requires, poetry's
python dependency and tox's envlist. Read only, never executed (setup.py through `ast`)."""
from __future__ import annotations

import ast
import configparser
import itertools
import re
import tomllib
from dataclasses import dataclass

import yaml

from bot.checkout.repository import Checkout
from bot.environment.python.workflow import pythons_of_test_jobs
from bot.errors import UserError

# (major, minor); minor None when the entry names only a major ("py3", "3.x")
Wanted = tuple[int, int | None]


@dataclass(frozen=True, kw_only=True)
class Listed:
    """A source that lists versions: tox's envlist, a `.python-version`, a CI job's python-version values."""

    origin: str  # "tox.ini envlist"
    wanted: str  # the value as written
    names: tuple[str, ...]  # the entries that name a Python, e.g. ("py27", "py36")
    versions: tuple[Wanted, ...]  # what those entries name, in the same order


@dataclass(frozen=True, kw_only=True)
class Specified:
    """A source that gives a version specifier: requires-python, python_requires, poetry's python."""

    label: str  # "requires-python"
    path: str  # "pyproject.toml"
    wanted: str  # as written: ">=3.8", "^3.8"
    alternatives: tuple[str, ...]  # PEP 440 specifier sets, any of which may hold ("||" in poetry)


_VERSION = re.compile(r"(?P<impl>pypy|cpython|python)?[-@]?(?P<major>\d)(?:\.(?P<minor>\d+|x|\*))?(?![\d])",
                      re.IGNORECASE)
_TOX_FACTOR = re.compile(r"(?:(?:py|pypy|python)(?P<major>\d)(?:\.?(?P<minor>\d+))?|(?P<bmajor>\d)\.(?P<bminor>\d+))",
                         re.IGNORECASE)


def parse_version_entry(text: str, *, cpython_only: bool = False) -> Wanted | None:
    """"3.8.10", "3.12-dev", "3.13t", "3.x", "pypy-3.9", "pypy3.9-7.3.16" -> (3, 8), (3, 12), (3, 13), (3, None),
    (3, 9), (3, 9); None for what names no Python version ("system", "miniconda3-4.7", "${{ ... }}")."""
    match = _VERSION.match(text.strip())
    if not match:
        return None
    impl = (match["impl"] or "").lower()
    if impl == "pypy" and cpython_only:
        return None
    minor = match["minor"]
    return int(match["major"]), int(minor) if minor and minor.isdigit() else None


def tox_env_python(env: str) -> Wanted | None:
    """The Python a tox environment name names through one of its factors: "py37-django2" -> (3, 7), "py310" ->
    (3, 10), "pypy3" -> (3, None), "3.12" -> (3, 12); None for "flake8", "py", "pypy"."""
    for factor in env.split("-"):
        match = _TOX_FACTOR.fullmatch(factor.strip())
        if match:
            if match["bmajor"]:
                return int(match["bmajor"]), int(match["bminor"])
            return int(match["major"]), int(match["minor"]) if match["minor"] else None
    return None


# --- .python-version --------------------------------------------------------------------------------------------

def python_version_file(checkout: Checkout) -> Listed | None:
    if ".python-version" not in checkout.files:
        return None
    lines = [line.strip() for line in checkout.text(".python-version").splitlines()]
    first = next((line for line in lines if line and not line.startswith("#")), "")
    wanted = parse_version_entry(first, cpython_only=True) if first else None
    if wanted is None:  # "system", "pypy3.9", a conda name: says nothing about which CPython
        return None
    return Listed(origin=".python-version", wanted=first, names=(first,), versions=(wanted,))


# --- requires-python, python_requires, poetry ---------------------------------------------------------------

def read_pyproject(checkout: Checkout) -> dict:
    """pyproject.toml's tables ({} without one); not TOML is the user's error, naming the file."""
    if "pyproject.toml" not in checkout.files:
        return {}
    try:
        return tomllib.loads(checkout.text("pyproject.toml"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"pyproject.toml is not valid TOML: {exc}") from None


def _table(data: object, *keys: str) -> dict:
    for key in keys:
        data = data.get(key, {}) if isinstance(data, dict) else {}
    return data if isinstance(data, dict) else {}


def _ini(checkout: Checkout, path: str) -> configparser.ConfigParser | None:
    if path not in checkout.files:
        return None
    return _parse_ini(checkout.text(path), path)


def _parse_ini(text: str, where: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=where)
    except configparser.Error as exc:
        first = str(exc).splitlines()[0]
        raise UserError(f"{where} is not a readable ini file: {first}") from None
    return parser


def _ini_value(parser: configparser.ConfigParser | None, section: str, *options: str) -> str | None:
    if parser is None or not parser.has_section(section):
        return None
    for option in options:
        if parser.has_option(section, option):
            return parser.get(section, option)
    return None


def _literal_string(node: ast.expr, names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    return None


def setup_py_python_requires(source: str) -> str | None:
    """The `python_requires` of setup.py's setup(...) call when it is a literal string, or a module-level name bound
    to one; None otherwise (computed values, a file that does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # a Python 2 setup.py: nothing we can read without running it
        return None
    names: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) \
                and isinstance(statement.value.value, str):
            names.update({target.id: statement.value.value for target in statement.targets
                          if isinstance(target, ast.Name)})
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called != "setup":
            continue
        for keyword in node.keywords:
            if keyword.arg == "python_requires":
                return _literal_string(keyword.value, names)
    return None


def requires_python(checkout: Checkout) -> Specified | None:
    """requires-python in pyproject's [project], else python_requires in setup.cfg [options], else in setup.py."""
    value = _table(read_pyproject(checkout), "project").get("requires-python")
    if isinstance(value, str) and value.strip():
        return Specified(label="requires-python", path="pyproject.toml", wanted=value.strip(),
                         alternatives=(value.strip(),))
    value = _ini_value(_ini(checkout, "setup.cfg"), "options", "python_requires")
    if value and value.strip():
        return Specified(label="python_requires", path="setup.cfg", wanted=value.strip(),
                         alternatives=(value.strip(),))
    if "setup.py" in checkout.files:
        value = setup_py_python_requires(checkout.text("setup.py"))
        if value and value.strip():
            return Specified(label="python_requires", path="setup.py", wanted=value.strip(),
                             alternatives=(value.strip(),))
    return None


_POETRY_CLAUSE = re.compile(r"(\^|~=|~|>=|<=|!=|==|>|<|=)?\s*(\d+(?:\.(?:\d+|\*))*)")


def _poetry_clause(operator: str, version: str) -> str:
    parts = version.split(".")
    if operator in ("^", "~"):
        release = [int(part) for part in parts if part.isdigit()]
        if operator == "^":  # ^3.8 -> <4; ^0.3 -> <0.4: the first non-zero part may not change
            index = next((i for i, part in enumerate(release) if part), len(release) - 1)
        else:  # ~3.7 -> <3.8; ~3 -> <4
            index = min(len(release) - 1, 1)
        upper = release[:index] + [release[index] + 1]
        return f">={version},<{'.'.join(map(str, upper))}"
    if not operator or operator == "=":
        return f"=={version}" if "*" in version or len(parts) > 2 else f"=={version}.*"
    return f"{operator}{version}"


def poetry_to_pep440(constraint: str) -> tuple[str, ...] | None:
    """Poetry's constraint ("^3.8", "~3.7", ">=3.8,<4.0", ">=2.7,<2.8 || >=3.4") as PEP 440 specifier sets, one per
    "||" alternative; None when a part is not understood or there is no constraint ("*")."""
    alternatives = []
    for alternative in constraint.split("||"):
        text = alternative.strip()
        if text in ("", "*"):
            return None
        clauses, end = [], 0
        for match in _POETRY_CLAUSE.finditer(text):
            if text[end:match.start()].strip(" ,"):
                return None
            clauses.append(_poetry_clause(match[1] or "", match[2]))
            end = match.end()
        if not clauses or text[end:].strip(" ,"):
            return None
        alternatives.append(",".join(clauses))
    return tuple(alternatives)


def poetry_python(checkout: Checkout) -> Specified | None:
    value = _table(read_pyproject(checkout), "tool", "poetry", "dependencies").get("python")
    if isinstance(value, dict):
        value = value.get("version")
    if not isinstance(value, str):
        return None
    alternatives = poetry_to_pep440(value)
    if alternatives is None:
        return None
    return Specified(label="poetry python", path="pyproject.toml", wanted=value.strip(), alternatives=alternatives)


# --- tox ------------------------------------------------------------------------------------------------------

def _split_top_level(text: str) -> list[str]:
    """Split an envlist on commas and newlines outside braces."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += (char == "{") - (char == "}")
        if depth == 0 and char in ",\n":
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item and not item.startswith("#")]


def _brace_choices(inner: str) -> list[str]:
    choices: list[str] = []
    for choice in inner.split(","):
        choice = choice.strip()
        bounds = re.fullmatch(r"(\d+)\s*-\s*(\d+)", choice)  # tox 4's ranges: py3{8-10}
        if bounds and int(bounds[1]) <= int(bounds[2]):
            choices.extend(str(n) for n in range(int(bounds[1]), int(bounds[2]) + 1))
        else:
            choices.append(choice)
    return choices


def expand_env(item: str) -> list[str]:
    """Expand tox's generative names: "py{37,38}-django{2,3}" -> py37-django2, py37-django3, py38-django2, ..."""
    parts = re.split(r"\{([^{}]*)\}", item)
    pieces = [[part] if i % 2 == 0 else _brace_choices(part) for i, part in enumerate(parts)]
    return ["".join(combination) for combination in itertools.product(*pieces)]


def _envlist_source(checkout: Checkout) -> tuple[str, str | list] | None:
    """(where, the envlist as written) from the first tox configuration that has one."""
    found = _ini_value(_ini(checkout, "tox.ini"), "tox", "envlist", "env_list")
    if found is not None:
        return "tox.ini", found
    found = _ini_value(_ini(checkout, "setup.cfg"), "tox:tox", "envlist", "env_list")
    if found is not None:
        return "setup.cfg [tox:tox]", found
    tox = _table(read_pyproject(checkout), "tool", "tox")
    if isinstance(tox.get("legacy_tox_ini"), str):
        found = _ini_value(_parse_ini(tox["legacy_tox_ini"], "pyproject.toml [tool.tox] legacy_tox_ini"), "tox",
                           "envlist", "env_list")
        if found is not None:
            return "pyproject.toml [tool.tox] legacy_tox_ini", found
    if isinstance(tox.get("env_list"), list):
        return "pyproject.toml [tool.tox]", tox["env_list"]
    if "tox.toml" in checkout.files:
        try:
            data = tomllib.loads(checkout.text("tox.toml"))
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"tox.toml is not valid TOML: {exc}") from None
        if isinstance(data.get("env_list"), list):
            return "tox.toml", data["env_list"]
    return None


def tox_envlist(checkout: Checkout) -> Listed | None:
    found = _envlist_source(checkout)
    if found is None:
        return None
    where, value = found
    items = [str(item).strip() for item in value] if isinstance(value, list) else _split_top_level(value)
    names, versions = [], []
    for env in (env for item in items for env in expand_env(item)):
        wanted = tox_env_python(env)
        if wanted is not None and env not in names:
            names.append(env)
            versions.append(wanted)
    if not versions:
        return None
    return Listed(origin=f"{where} envlist", wanted=", ".join(items), names=tuple(names), versions=tuple(versions))


def _travis_entries(data: object) -> list[str]:
    """The `python:` values of a .travis.yml: top level, and in jobs/matrix `include` entries."""
    found: list[object] = []
    if isinstance(data, dict):
        found.append(data.get("python"))
        for key in ("jobs", "matrix"):
            block = data.get(key)
            includes = block.get("include") if isinstance(block, dict) else block
            if isinstance(includes, list):
                found += [entry.get("python") for entry in includes if isinstance(entry, dict)]
    flat = [v for value in found for v in (value if isinstance(value, list) else [value]) if v is not None]
    # YAML reads an unquoted 3.6 as a float; repr keeps "3.6" (3.10 would be read as 3.1: Travis files quote it)
    return [repr(v) if isinstance(v, float) else str(v) for v in flat]


def travis_pythons(checkout: Checkout) -> Listed | None:
    """The Pythons an old project's Travis CI tested on (`.travis.yml` `python:`), CPython only."""
    if ".travis.yml" not in checkout.files:
        return None
    try:
        data = yaml.safe_load(checkout.text(".travis.yml"))
    except yaml.YAMLError:
        return None
    entries = _travis_entries(data)
    parsed = [(e, parse_version_entry(e, cpython_only=True)) for e in entries]
    pairs = [(e, w) for e, w in parsed if w is not None]
    if not pairs:
        return None
    return Listed(origin=".travis.yml python", wanted=", ".join(entries), names=tuple(e for e, _ in pairs),
                  versions=tuple(w for _, w in pairs))


_CLASSIFIER = re.compile(r"Programming Language :: Python :: (\d)\.(\d+)\b")


def classifier_pythons(checkout: Checkout) -> Listed | None:
    """The Python versions the package's trove classifiers name (setup.py, setup.cfg, pyproject.toml)."""
    for path in ("setup.py", "setup.cfg", "pyproject.toml"):
        if path not in checkout.files:
            continue
        found = list(dict.fromkeys(_CLASSIFIER.findall(checkout.text(path))))
        if found:
            names = tuple(f"{major}.{minor}" for major, minor in found)
            return Listed(origin=f"{path} classifiers", wanted=", ".join(names), names=names,
                          versions=tuple((int(major), int(minor)) for major, minor in found))
    return None


def workflow_pythons(checkout: Checkout) -> Listed | None:
    """The Pythons the test jobs of the project's GitHub workflows set up (their python-version values)."""
    for path in sorted(p for p in checkout.files if p.startswith(".github/workflows/") and
                       p.endswith((".yml", ".yaml"))):
        entries = pythons_of_test_jobs(checkout.text(path))
        pairs = [(e, w) for e in entries if (w := parse_version_entry(e, cpython_only=True)) is not None]
        if pairs:
            return Listed(origin=f"{path} python-version", wanted=", ".join(entries),
                          names=tuple(e for e, _ in pairs), versions=tuple(w for _, w in pairs))
    return None
