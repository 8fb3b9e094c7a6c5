"""Run inside the build container (any Python >= 3.9, nothing but the standard library and pip): import the
checkout's package modules and test files, and report each import that failed inside an installed distribution
(`cannot import name 'is_windows' from 'requests.compat'`) with the lowest version of that distribution the
installed project declares, and how many imports failed for any reason. Writes
`{"drift": [...], "floors": [...], "failed": N, "modules": M, "finished": true}` to the file named by its second
argument, not to stdout: the modules' own output goes there and to stderr, which the container's log may
interleave with it. The floors need no import and are written first, with `"finished": false`, so that a module
that ends the process does not lose them. The
further arguments name the project's own installed distributions (the lock script found them), whose requirements
give the lowest versions; `floors` lists every declared dependency installed above its lowest declared version,
with its top-level modules (a test that fails inside one of them may need the older release).

Kept free of fixbot imports: bot/environment/prepare.py sends this file's text to the container.
"""
import importlib
import json
import os
import signal
import sys
from importlib import metadata

SRC = sys.argv[1] if len(sys.argv) > 1 else "/src"
OUT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/fixbot-imports.json"
PROJECT = sys.argv[3:]  # the project's own distributions, installed from SRC
SKIP_DIRS = {".git", ".tox", ".nox", ".venv", "venv", "build", "dist", "docs", "doc", "node_modules",
             ".fixbot-build", "__pycache__"}
PER_MODULE_S = 5
SITE_DIRS = ("/site-packages/", "/dist-packages/")


class _Slow(BaseException):  # not an Exception: a module's own `except Exception` must not swallow its limit
    pass


_ARMED = False  # True only while an import runs: an alarm delivered a moment late ends nothing else


def _on_alarm(signum, frame):
    if _ARMED:
        raise _Slow()


def _is_test(name):
    return name.startswith("test") or name.endswith("_test.py") or name == "conftest.py"


def _modules():
    """(root on sys.path, dotted name) for every package module and test file, in a stable order."""
    for here, dirs, files in os.walk(SRC):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        in_package = "__init__.py" in files
        for name in sorted(files):
            if not name.endswith(".py") or name in ("setup.py", "__main__.py"):
                continue
            if not in_package and not _is_test(name):
                continue
            root, parts = here, [] if name == "__init__.py" else [name[:-3]]
            while os.path.isfile(os.path.join(root, "__init__.py")):
                root, parts = os.path.dirname(root), [os.path.basename(root)] + parts
            if parts:
                yield root, ".".join(parts)


_OWNERS: dict = {}  # top-level name -> (distribution, version), filled once


def _top(path):
    """The top-level name a distribution's file lies under ("requests" for requests/utils.py, "six" for six.py)
    and whether it is code one imports by that name (a package's file or a top-level module)."""
    parts = str(path).replace("\\", "/").split("/")
    if len(parts) == 1 and parts[0].endswith(".py"):
        return parts[0][:-3], True
    return parts[0], len(parts) > 1


def _tops(dist):
    """The top-level modules and packages a distribution installs."""
    tops = {top for top, importable in map(_top, dist.files or ()) if importable and top.isidentifier()}
    return sorted(tops)


def _floors(lowests):
    """Each declared dependency installed at a version above the lowest the project declares for it."""
    floors = []
    for dist in metadata.distributions():
        name = dist.metadata.get("Name")
        if not name:  # a broken install's leftover dist-info without metadata
            continue
        lowest = _lowest(lowests, name)
        if lowest and lowest != dist.version and name not in PROJECT:
            floors.append({"dist": name, "lowest": lowest, "version": dist.version, "modules": _tops(dist)})
    return sorted(floors, key=lambda floor: floor["dist"].lower())


def _owner(top):
    """The installed distribution that provides top-level package or module `top`."""
    if not _OWNERS:
        for dist in metadata.distributions():
            name = dist.metadata.get("Name")  # each `metadata` or `version` reads METADATA again: once per dist
            if not name:
                continue
            owner = (name, dist.version)
            for path in dist.files or ():
                _OWNERS.setdefault(_top(path)[0], owner)
    return _OWNERS.get(top)


def _requires(name):
    try:
        return metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return []


def _lowests(requires):
    """Canonical distribution name -> the lowest version `requires` allows for it (from >=, ~=, ==), parsed once."""
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name
    from pip._vendor.packaging.version import Version
    lowests = {}
    for text in requires:
        try:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
        except Exception:
            continue
        name = canonicalize_name(req.name)
        for spec in req.specifier:
            if spec.operator in (">=", "~=", "==") and "*" not in spec.version:
                version = Version(spec.version)
                lowests[name] = max(version, lowests.get(name, version))
    return lowests


def _lowest(lowests, dist_name):
    """The lowest version the project declares for dist_name, if it names one."""
    from pip._vendor.packaging.utils import canonicalize_name
    lowest = lowests.get(canonicalize_name(dist_name))
    return str(lowest) if lowest is not None else None


def _drift(error):
    """(installed module asked, name it lacks) when an import failed inside an installed distribution; else None."""
    if isinstance(error, ModuleNotFoundError):  # a submodule the installed version no longer has
        name = error.name or ""
        return (name.rpartition(".")[0], name.rpartition(".")[2]) if "." in name else None
    if isinstance(error, ImportError) and error.path and any(s in error.path for s in SITE_DIRS):
        missing = str(error).partition("cannot import name ")[2].split(" ")[0].strip("'\"")
        return error.name or "", missing
    return None


def _import(module):
    """The error importing `module` raised, or None. The alarm covers the import alone: what classifies the
    error afterwards (reading every installed distribution's file list once) may take longer than one module's
    limit, and an alarm there would end the whole check."""
    global _ARMED
    signal.signal(signal.SIGALRM, _on_alarm)  # again each time: a module may have set its own handler
    try:
        try:
            _ARMED = True
            signal.alarm(PER_MODULE_S)
            importlib.import_module(module)
        finally:
            _ARMED = False
            signal.alarm(0)
    except BaseException as error:  # a module may sys.exit() or raise anything at import
        return error
    return None


def _write(report):
    with open(OUT + ".tmp", "w") as out:
        json.dump(report, out)
    os.replace(OUT + ".tmp", OUT)


def main():
    lowests = _lowests([text for name in PROJECT for text in _requires(name)])
    floors = _floors(lowests)
    # the floors first: they need no import, and a module that ends the process keeps them
    _write({"drift": [], "floors": floors, "failed": 0, "modules": 0, "finished": False})
    found, seen, failed, modules = [], set(), 0, 0
    for root in (os.path.join(SRC, "src"), SRC):  # where the test runs import the project from
        if os.path.isdir(root):
            sys.path.insert(0, root)
    for root, module in _modules():
        if root not in sys.path:
            sys.path.insert(0, root)
        modules += 1
        error = _import(module)
        if error is None:
            continue
        failed += 1
        drift = _drift(error)
        if drift and drift[0]:
            owner = _owner(drift[0].partition(".")[0])
            if owner and owner[0] not in PROJECT and (module, drift) not in seen:
                seen.add((module, drift))
                found.append({"module": module, "name": drift[1], "from": drift[0], "dist": owner[0],
                              "version": owner[1], "lowest": _lowest(lowests, owner[0])})
    _write({"drift": found, "floors": floors, "failed": failed, "modules": modules, "finished": True})


if __name__ == "__main__":
    main()
