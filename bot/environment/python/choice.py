"""Which Python a repository's tests run on: the first source that says something (an explicit choice, the failing
CI job, `.python-version`, requires-python, poetry, tox's envlist, .travis.yml, the package's classifiers) mapped
to an available version. A requires-python that is only a floor (">=2.6") says what the project can still run on,
not what its CI tested: the versions tox, Travis or the classifiers name outrank it where one of them fits it.

Nearness matters: a project tested on 3.7 gets 3.9 rather than 3.11 when both are available, because Python
removes things (`collections.Mapping` went in 3.10) and old projects break on the newest one."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from bot.checkout.repository import Checkout
from bot.environment.python.sources import (
    Listed,
    Specified,
    Wanted,
    classifier_pythons,
    parse_version_entry,
    poetry_python,
    python_version_file,
    requires_python,
    tox_envlist,
    travis_pythons,
    workflow_pythons,
)
from bot.environment.python.workflow import job_python_versions
from bot.errors import UserError

__all__ = ["NoSuitablePython", "PythonChoice", "choose_python", "job_python_versions"]

# Patch releases tried against a specifier: an available "3.9" stands for its whole 3.9.x line, so ">3.9" or
# "==3.9.1" hold for it as they would for the image's real patch release.
_PATCHES = range(0, 40)
_LOWER_BOUNDS = (">=", ">", "~=", "==", "===")


@dataclass(frozen=True, kw_only=True)
class PythonChoice:
    version: str  # "3.9": one of `available`
    source: str  # where it came from, for the log: "tox.ini envlist (py27, py36)", "--python", "default"
    wanted: str  # what that source asked for, as written


class NoSuitablePython(UserError):
    """The project needs a Python that is not available; the message says what it needs and what is."""


def _minor(text: str) -> tuple[int, int]:
    release = Version(text).release
    return release[0], release[1] if len(release) > 1 else 0


class _Available:
    """The available versions, compared as versions ("3.10" > "3.9"), each kept as the caller wrote it."""

    def __init__(self, available: Sequence[str]):
        if not available:
            raise NoSuitablePython("no Python versions are available to run the tests on")
        try:
            pairs = sorted((_minor(text), text) for text in available)
        except InvalidVersion as exc:
            raise ValueError(f"available Python versions must look like '3.11': {exc}") from None
        self.by_minor = dict(pairs)
        self.ordered = [minor for minor, _ in pairs]

    def text(self, minor: tuple[int, int]) -> str:
        return self.by_minor[minor]

    def listing(self) -> str:
        return ", ".join(self.by_minor.values())


def choose_python(checkout: Checkout, *, available: Sequence[str], explicit: str | None = None,
                  ci_versions: Sequence[str] = (), default: str = "3.11") -> PythonChoice:
    """The Python to run `checkout`'s tests on, from the first source that says something (see the module doc);
    NoSuitablePython when that source wants nothing that is available."""
    pythons = _Available(available)
    if explicit is not None and explicit.strip():
        return _explicit(explicit.strip(), pythons)
    default_minor = _default(default, pythons)
    if ci_versions:
        listed = _listed_ci(ci_versions)
        if listed is not None:
            return _from_list(listed, pythons, default_minor)
    listed = python_version_file(checkout)
    if listed is not None:
        return _from_list(listed, pythons, default_minor)
    for read in (requires_python, poetry_python):
        specified = read(checkout)
        if specified is not None:
            tested = _tested_on(checkout, pythons, default_minor) if _floor_only(specified) else None
            if tested is not None and _holds(specified, tested.version):
                return replace(tested, source=f"{tested.source}; {specified.label} {specified.wanted} is only a "
                                              "floor")
            return _from_specifier(specified, pythons, default_minor)
    return _tested_on(checkout, pythons, default_minor) or PythonChoice(
        version=pythons.text(default_minor), source="default", wanted=default)


def _tested_on(checkout: Checkout, pythons: _Available, default_minor: tuple[int, int]) -> PythonChoice | None:
    """The Pythons the project's CI and package metadata name: tox's envlist, .travis.yml, the classifiers."""
    for read_list in (workflow_pythons, tox_envlist, travis_pythons, classifier_pythons):
        listed = read_list(checkout)
        if listed is not None:
            return _from_list(listed, pythons, default_minor)
    return None


def _floor_only(specified: Specified) -> bool:
    """A specifier that only bounds from below (">=2.6", ">=3.5, !=3.6.*"): it says what the project can still
    run on, not what it was tested on, so a list of tested versions outranks it."""
    try:
        return all(spec.operator in (">=", ">", "!=") for alternative in specified.alternatives
                   for spec in SpecifierSet(alternative))
    except InvalidSpecifier:
        return False


def _holds(specified: Specified, version: str) -> bool:
    try:
        return any(SpecifierSet(alternative).contains(f"{version}.{patch}", prereleases=True)
                   for alternative in specified.alternatives for patch in _PATCHES)
    except InvalidSpecifier:
        return False


def _explicit(explicit: str, pythons: _Available) -> PythonChoice:
    wanted = parse_version_entry(explicit, cpython_only=True)
    if wanted is None or wanted[1] is None or (wanted[0], wanted[1]) not in pythons.by_minor:
        raise NoSuitablePython(f"--python {explicit}: not an available Python (available: {pythons.listing()})")
    return PythonChoice(version=pythons.text((wanted[0], wanted[1])), source="--python", wanted=explicit)


def _default(default: str, pythons: _Available) -> tuple[int, int]:
    try:
        minor = _minor(default)
    except InvalidVersion:
        minor = None
    if minor not in pythons.by_minor:
        raise NoSuitablePython(f"the default Python {default} is not available (available: {pythons.listing()})")
    return minor


def _listed_ci(ci_versions: Sequence[str]) -> Listed | None:
    names, versions = [], []
    for text in ci_versions:
        wanted = parse_version_entry(str(text))
        if wanted is not None:
            names.append(str(text).strip())
            versions.append(wanted)
    if not versions:  # e.g. only unresolved expressions: the job says nothing we can use
        return None
    return Listed(origin="CI job python-version", wanted=", ".join(str(text) for text in ci_versions),
                  names=tuple(names), versions=tuple(versions))


def _from_list(listed: Listed, pythons: _Available, default: tuple[int, int]) -> PythonChoice:
    """An exact available match (the highest listed one), else the nearest available above the highest listed,
    else the highest available. Entries naming only a major ("py3", "3.x") take the default when it has that
    major, as they leave the minor to whatever Python is at hand."""
    source = f"{listed.origin} ({', '.join(listed.names)})"
    minors = sorted({(major, minor) for major, minor in listed.versions if minor is not None})
    if not minors:
        majors = {major for major, _ in listed.versions}
        picked = default if default[0] in majors else max(
            (m for m in pythons.ordered if m[0] in majors), default=None)
        if picked is None:
            picked = pythons.ordered[0]
            return _listed_choice(listed, pythons, picked, f"{source}: no Python {max(majors)} is available, "
                                                           "the lowest available")
        return _listed_choice(listed, pythons, picked, source)
    exact = [minor for minor in minors if minor in pythons.by_minor]
    if exact:
        return _listed_choice(listed, pythons, exact[-1], source)
    highest = minors[-1]
    newer = [minor for minor in pythons.ordered if minor > highest]
    if all(major == 2 for major, _ in listed.versions):
        note = "Python 2 only, the lowest available"
    elif newer:
        note = f"{_dotted(highest)} is not available, the nearest newer"
    else:
        note = "all newer than what is available, the highest available"
    picked = newer[0] if newer else pythons.ordered[-1]
    return _listed_choice(listed, pythons, picked, f"{source}: {note}")


def _listed_choice(listed: Listed, pythons: _Available, picked: tuple[int, int], source: str) -> PythonChoice:
    return PythonChoice(version=pythons.text(picked), source=source, wanted=listed.wanted)


def _dotted(minor: Wanted) -> str:
    return ".".join(str(part) for part in minor if part is not None)


def _from_specifier(specified: Specified, pythons: _Available, default: tuple[int, int]) -> PythonChoice:
    """The default when it satisfies the specifier; else the lowest satisfying version when the specifier has a
    lower bound, the highest satisfying one when it has none ("<3.10")."""
    where = f"{specified.label} {specified.wanted} ({specified.path})"
    try:
        sets = [SpecifierSet(alternative) for alternative in specified.alternatives]
    except InvalidSpecifier:
        raise UserError(f"{specified.path}: {specified.label} {specified.wanted!r} is not a valid version "
                        "specifier") from None

    def holds(minor: tuple[int, int]) -> bool:
        return any(spec.contains(f"{minor[0]}.{minor[1]}.{patch}", prereleases=True)
                   for spec in sets for patch in _PATCHES)

    satisfying = [minor for minor in pythons.ordered if holds(minor)]
    if not satisfying:
        raise NoSuitablePython(f"the project needs Python {specified.wanted} ({specified.label} in "
                               f"{specified.path}); available: {pythons.listing()}")
    if default in satisfying:
        picked = default
    elif all(any(spec.operator in _LOWER_BOUNDS for spec in specs) for specs in sets):
        picked = satisfying[0]
    else:
        picked = satisfying[-1]
    return PythonChoice(version=pythons.text(picked), source=where, wanted=specified.wanted)
