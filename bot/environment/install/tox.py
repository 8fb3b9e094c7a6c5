"""tox's configuration: the `deps` (and `extras`) of the environment tox would run the tests of a Python 3 in.

Read from tox.ini, else setup.cfg's [tox:tox], else pyproject.toml's [tool.tox] (its legacy_tox_ini string, or the
native [tool.tox.env_run_base]), else tox.toml — the order tox itself looks in. The environment is the envlist's for
the Python the tests run on (py39 or 3.9 for "3.9"); without one, for the newest Python 3 listed (as
`python_choice` prefers the newest listed version), else `py3`; of several for that Python, the one whose factors
add the fewest conditional deps (the plain run, not the one for a service), the first of equals. A
factor-conditional line (`py27: mock`, `!py27,django: x`, `py{35,36}: y`) is kept when that environment's factors
satisfy it.
"""
from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

from bot.checkout.repository import Checkout
from bot.environment.python.sources import expand_env, tox_env_python

_CONDITION = re.compile(r"(?P<cond>[\w{}.!,-]+):\s+(?P<value>.+)")  # tox's own pattern for `factors: value`
_SECTION_REF = re.compile(r"\{\[(?P<section>[^\]]+)\](?P<key>[^}]+)\}")
_ENV_REF = re.compile(r"\{env:[^:}]+(:(?P<default>[^}]*))?\}")
_ROOT_REF = re.compile(r"\{(toxinidir|tox_root)\}")


@dataclass(frozen=True)
class ToxDeps:
    source: str  # "tox.ini", "setup.cfg", "pyproject.toml" or "tox.toml"
    env: str  # the environment whose deps these are
    deps: tuple[str, ...]  # requirements-file lines; paths relative to the repository root
    extras: tuple[str, ...]  # the project's extras tox installs with it
    note: str | None = None  # what could not be read, for the log


def read_tox(checkout: Checkout, *, python: str | None = None) -> ToxDeps | None:
    """None when the repository has no tox configuration. `python`: the version the tests run on ("3.9")."""
    if "tox.ini" in checkout.files:
        return _from_ini(checkout.text("tox.ini"), "tox.ini", prefix="", python=python)
    if "setup.cfg" in checkout.files and "[tox:tox]" in checkout.text("setup.cfg"):
        return _from_ini(checkout.text("setup.cfg"), "setup.cfg", prefix="tox:", python=python)
    for path, table in (("pyproject.toml", ("tool", "tox")), ("tox.toml", ())):
        if path in checkout.files:
            try:
                data: object = tomllib.loads(checkout.text(path))
            except tomllib.TOMLDecodeError as exc:
                return ToxDeps(source=path, env="", deps=(), extras=(), note=f"{path}: not valid TOML ({exc})")
            for key in table:
                data = data.get(key) if isinstance(data, dict) else None
            if isinstance(data, dict) and data:
                if isinstance(data.get("legacy_tox_ini"), str):
                    return _from_ini(data["legacy_tox_ini"], path, prefix="", python=python)
                return _from_toml(data, path)
    return None


def _from_toml(data: Mapping[str, object], source: str) -> ToxDeps:
    base = data.get("env_run_base")
    base = base if isinstance(base, dict) else {}

    def strings(key: str) -> tuple[str, ...]:
        values = base.get(key, [])
        return tuple(_ROOT_REF.sub(".", v) for v in values if isinstance(v, str)) if isinstance(values, list) else ()

    return ToxDeps(source=source, env="env_run_base", deps=strings("deps"), extras=strings("extras"))


def _from_ini(text: str, source: str, *, prefix: str, python: str | None) -> ToxDeps:
    parser = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True,
                                       comment_prefixes=("#", ";"), inline_comment_prefixes=None)
    try:
        parser.read_string(text, source=source)
    except configparser.Error as exc:
        return ToxDeps(source=source, env="", deps=(), extras=(),
                       note=f"{source}: not readable as an ini file ({str(exc).splitlines()[0]})")
    envlist = parser.get(f"{prefix}tox", "envlist", fallback=None) or parser.get(f"{prefix}tox", "env_list",
                                                                                  fallback="")
    raw_deps = _substitute(parser, parser.get("testenv", "deps", fallback=""), depth=0)
    env = min(_python3_envs(envlist or "", python), key=lambda e: _extra_deps(raw_deps, set(e.split("-"))))
    factors = set(env.split("-"))

    def value(key: str) -> list[str]:
        section = f"testenv:{env}" if parser.has_option(f"testenv:{env}", key) else "testenv"
        raw = _substitute(parser, parser.get(section, key, fallback=""), depth=0)
        lines = (re.sub(r"(^|\s)#.*$", "", line).strip() for line in raw.splitlines())  # tox drops ' #' comments
        return [kept for line in lines if line and (kept := _for_factors(line, factors))]

    deps = [_ROOT_REF.sub(".", line) for line in value("deps")]
    unresolved = [line for line in deps if re.search(r"\{[^}]*\}", line)]
    note = f"{source}: deps left out (a tox substitution fixbot cannot make): {', '.join(unresolved)}" \
        if unresolved else None
    extras = [e.strip() for line in value("extras") for e in line.split(",") if e.strip()]
    return ToxDeps(source=source, env=env, deps=tuple(d for d in deps if d not in unresolved),
                   extras=tuple(dict.fromkeys(extras)), note=note)


def _split_top(text: str) -> list[str]:
    """Commas outside braces separate tox's environment names (and condition alternatives)."""
    return [p.strip() for p in re.split(r",(?![^{]*\})|\n", text) if p.strip()]


def _python3_envs(envlist: str, python: str | None) -> list[str]:
    """The envlist's environments for `python` (else for the newest Python 3 listed, else `py3`), in order."""
    envs = [env for part in _split_top(envlist) for env in expand_env(part)]
    versions = {env: wanted for env in envs if (wanted := tox_env_python(env)) and wanted[0] == 3}
    versions = {env: v for env, v in versions.items() if "pypy" not in env} or versions  # CPython's, if any
    exact = [env for env, wanted in versions.items() if python and f"{wanted[0]}.{wanted[1]}" == python]
    if exact:
        return exact
    top = max((v[1] or 0 for v in versions.values()), default=None)
    return [env for env, v in versions.items() if (v[1] or 0) == top] or ["py3"]


def _extra_deps(deps: str, factors: set[str]) -> int:
    """How many factor-conditional deps lines an environment with `factors` adds: of several environments for one
    Python (py37-core, py37-hadoop, py37-postgres), the one with fewest is the plain test run, whose tests need
    no extra service; the first of equals wins."""
    lines = (re.sub(r"(^|\s)#.*$", "", line).strip() for line in deps.splitlines())
    return sum(1 for line in lines if line and _CONDITION.fullmatch(line) and _for_factors(line, factors))


def _for_factors(line: str, factors: set[str]) -> str | None:
    """The line without its condition when `factors` satisfy it (alternatives joined by commas, factors within one
    by dashes, `!` negating); the line as it is when it has none; None when it is for other environments."""
    match = _CONDITION.fullmatch(line)
    if not match:
        return line
    for alternative in (a for part in _split_top(match["cond"]) for a in expand_env(part)):
        wanted = [f for f in alternative.split("-") if f]
        if all((f[1:] not in factors) if f.startswith("!") else (f in factors) for f in wanted):
            return match["value"].strip()
    return None


def _substitute(parser: configparser.ConfigParser, text: str, *, depth: int) -> str:
    """`{[section]key}` replaced by that value (tox's cross-section reference), `{env:NAME:default}` by the default."""
    text = _ENV_REF.sub(lambda m: m["default"] or "", text)
    if depth > 5:  # a reference cycle: what is left stays unresolved and is reported
        return text
    return _SECTION_REF.sub(lambda m: _substitute(parser, parser.get(m["section"], m["key"].strip(), fallback=""),
                                                  depth=depth + 1), text)
