"""Environment or code: why each failing test fails, read from its traceback before anything is repaired.

A test fails in the project's code (the default: it is repaired), or because of the environment it runs in, which
no change of the project's code should paper over:
  removed-stdlib   a name or module this Python's standard library no longer has (`collections.Mapping`, `imp`):
                   the project was written for an older Python;
  python-version   another name the standard library lacks, or a module a newer Python added (`tomllib`);
  python-syntax    code that older Pythons parsed (`async` as a name, a print statement);
  missing-module   an import of a module the environment does not have and the checkout does not define;
  dependency-api   a name today's release of a dependency no longer has (`cannot import name X from dep`);
  dependency-error an error raised inside an installed package, called from the tests' own code with no project
                   frame between (a test helper or fixture broken by a newer release);
  system-library   a shared library the sandbox lacks;
  missing-test-file a file the tests' own code reads from a test folder of the checkout that holds files like it,
                   and the checkout lacks (a test input never committed), with no project frame on the way;
  tool             a pytest plugin the environment has that does not load on this Python (fixbot's probe leaves
                   it out: bot/inside/probe_others.py), read from the run's output.
The network and missing programs are set aside elsewhere (bot/fix/reproduce/runs.py) by what the test tried to do.

In: the failures of one run, the checkout's files, the Python the tests ran on. Out: one `EnvCause` per cause,
with its tests, a line saying what it is, and the remedy a user can apply. Never: a test whose traceback passes
through the project's code is classed as the environment's unless the error itself names the environment (a
removed standard name, a module that is not installed)."""
from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.checkout.paths import is_test_path
from bot.failures import Failure
from bot.fix.types import CauseKind, EnvCause

SITE_DIRS = ("/site-packages/", "/dist-packages/")
# modules the standard library dropped, by the first Python without them (PEPs 594, 632 and the 3.12 removals)
REMOVED_MODULES = {**{m: "3.12" for m in ("distutils", "imp", "asynchat", "asyncore", "smtpd")},
                   **{m: "3.13" for m in ("cgi", "cgitb", "crypt", "imghdr", "mailcap", "msilib", "nis", "nntplib",
                                          "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau", "telnetlib", "uu",
                                          "xdrlib", "audioop", "chunk", "lib2to3")}}
# names the standard library dropped, by module (the ones old projects use): anything else a stdlib module lacks may
# as well be a name a newer Python added (typing.ParamSpec on 3.9)
REMOVED_NAMES = {"collections": frozenset({"Mapping", "MutableMapping", "Sequence", "MutableSequence", "Set",
                                           "MutableSet", "Iterable", "Iterator", "Callable", "Hashable", "Sized",
                                           "Container", "Awaitable", "Coroutine", "Generator",
                                           "KeysView", "ItemsView", "ValuesView", "MappingView", "ByteString"}),
                 "inspect": frozenset({"getargspec", "formatargspec", "getmoduleinfo"}),
                 "time": frozenset({"clock"}), "cgi": frozenset({"escape", "parse_qs", "parse_qsl"}),
                 "base64": frozenset({"encodestring", "decodestring"}),
                 "platform": frozenset({"linux_distribution", "dist", "popen"}),
                 "asyncio": frozenset({"async", "coroutine"}), "gettext": frozenset({"lgettext", "ldgettext"}),
                 "configparser": frozenset({"SafeConfigParser", "readfp"}),
                 "ssl": frozenset({"wrap_socket", "match_hostname", "RAND_pseudo_bytes"}),
                 "unittest": frozenset({"makeSuite", "findTestCases", "getTestCaseNames", "_TextTestResult"}),
                 "pkgutil": frozenset({"ImpImporter", "ImpLoader"}), "locale": frozenset({"format"}),
                 "sys": frozenset({"setcheckinterval", "getcheckinterval"}), "os": frozenset({"getcwdu"}),
                 "string": frozenset({"maketrans", "letters", "lowercase", "uppercase"}),
                 "html.parser": frozenset({"HTMLParseError"}), "array": frozenset({"tostring", "fromstring"})}
# modules the standard library added, by the first Python with them
ADDED_MODULES = {"tomllib": "3.11", "graphlib": "3.9", "zoneinfo": "3.9"}
# distributions whose import name differs from the name to install
DISTRIBUTIONS = {"pkg_resources": "setuptools<81", "yaml": "pyyaml", "dateutil": "python-dateutil",
                 "bs4": "beautifulsoup4", "PIL": "pillow", "sklearn": "scikit-learn", "attr": "attrs"}
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
_NO_NAME = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_NO_ATTRIBUTE = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")
_SHARED_LIBRARY = re.compile(r"cannot open shared object file|library not found|Library not loaded")
_NO_FILE = re.compile(r"\[Errno 2\] No such file or directory: '([^']+)'")
_SANDBOX_COPY = re.compile(r"/run-[^/]+/\d+/")  # the checkout's copy in a sandbox run (sandbox/runner.py's layout)
_OLD_SYNTAX = re.compile(r"Missing parentheses in call to '(?:print|exec)'")
_BROKEN_PLUGIN = re.compile(r"^fixbot: the pytest plugin (\S+) does not load here \((.*)\); the tests run without it$",
                            re.MULTILINE)


@dataclass(frozen=True)
class Setting:
    """What the classification needs to know of the run: the files, the Python, the older ones available."""

    files: Mapping[str, bytes]
    python: str  # "3.11"
    older: tuple[str, ...] = ()  # Pythons older than `python` that fixbot has a sandbox base for, newest first

    def project_module(self, name: str) -> bool:
        """`name`'s top-level package or module is the checkout's own (or a sibling of the tests)."""
        top = name.split(".")[0]
        return any(p.rsplit("/", 1)[-1] == f"{top}.py" or f"/{top}/" in f"/{p}" for p in self.files)

    def older_python(self, before: str | None = None) -> str:
        """The remedy of code written for an older Python: the newest available one before `before` (else before
        this one), or what to say when there is none."""
        limit = _version(before) if before else _version(self.python)
        fits = [v for v in self.older if _version(v) < limit]
        return f"--python {fits[0]}" if fits else (f"it needs a Python older than {before or self.python}, which "
                                                   "fixbot has no sandbox for")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:2])


def _stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names or name.split(".")[0] in REMOVED_MODULES


def _installed(frame_path: str) -> str | None:
    """The top-level package of an installed distribution's file, else None."""
    site = next((s for s in SITE_DIRS if s in frame_path), None)
    if site is None:
        return None
    first = frame_path.split(site, 1)[1].split("/")[0]
    return first[:-3] if first.endswith(".py") else first


def _import_cause(message: str, s: Setting) -> tuple[CauseKind, str, str] | None:
    if (m := _NO_MODULE.search(message)) is not None:
        module = m[1]
        if s.project_module(module):
            return None
        top = module.split(".")[0]
        if top in ADDED_MODULES and _version(s.python) < _version(ADDED_MODULES[top]):
            return ("python-version", f"Python {s.python} has no module {top} (added in {ADDED_MODULES[top]})",
                    f"--python {ADDED_MODULES[top]} or newer")
        if top in REMOVED_MODULES and _version(s.python) >= _version(REMOVED_MODULES[top]):
            return ("removed-stdlib", f"Python {s.python} has no module {top} (removed in {REMOVED_MODULES[top]})",
                    s.older_python(REMOVED_MODULES[top]))
        dist = DISTRIBUTIONS.get(top, top)
        return ("missing-module", f"the test environment has no module {module}",
                f"declare it in the project's test requirements, or --setup 'pip install {dist}'")
    if (m := _NO_NAME.search(message)) is not None:
        return _missing_name(m[2], m[1], s)
    return None


def _missing_name(module: str, name: str, s: Setting) -> tuple[CauseKind, str, str] | None:
    if s.project_module(module):
        return None  # the project lacks it (its own package, even one named like a stdlib module): the code's
    if name in REMOVED_NAMES.get(module, ()):
        return ("removed-stdlib", f"the standard library of Python {s.python} has no {module}.{name}",
                s.older_python())
    if _stdlib(module):
        return ("python-version", f"the standard library of Python {s.python} has no {module}.{name}",
                "--python the version the project's CI used")
    return ("dependency-api", f"today's release of {module.split('.')[0]} has no {module}.{name}",
            "--as-of the failing commit's date, or pin an older release with --setup")


def classify_one(failure: Failure, s: Setting) -> tuple[CauseKind, str, str] | None:
    """The environment cause of one failure, or None: the code's."""
    message = failure.message or ""
    kind = (failure.error_type or "").rpartition(".")[2]
    if _SHARED_LIBRARY.search(message):
        return ("system-library", f"a shared library is missing ({message[:120]})",
                "install it with --setup, or run fixbot where it is")
    if kind in ("ModuleNotFoundError", "ImportError"):
        return _import_cause(message, s)
    if kind == "AttributeError" and (m := _NO_ATTRIBUTE.search(message)) is not None:
        return _missing_name(m[1], m[2], s)
    if kind == "SyntaxError" and _OLD_SYNTAX.search(message):
        return "python-syntax", f"Python {s.python} does not parse this code ({message})", s.older_python()
    if kind in ("FileNotFoundError", "OSError", "IOError") and (path := _missing_test_file(failure, s)):
        return ("missing-test-file", f"the tests read {path}, which the checkout does not hold",
                "commit that file, or correct the path the test reads it from")
    return _dependency_error(failure, kind)


def _missing_test_file(failure: Failure, s: Setting) -> str | None:
    """The checkout path of a file that the tests' own code failed to open, with no project frame on the way, in a
    test folder of the checkout that holds other files with its extension (`tests/data/*.py`): a test input never
    committed. The path is read relative to the checkout, or absolute inside a sandbox run's copy of it; a file
    missing anywhere else (a temporary folder the code should have written to, a folder of the project's own) stays
    the code's."""
    if (m := _NO_FILE.search(failure.message or "")) is None or not _only_tests(failure):
        return None
    path = m[1].replace("\\", "/")
    if path.startswith("/"):
        inside = _SANDBOX_COPY.search(path)
        if inside is None:
            return None
        path = path[inside.end():]
    path = "/".join(p for p in path.split("/") if p not in ("", "."))
    folder, _, name = path.rpartition("/")
    extension = name.rpartition(".")[2] if "." in name else ""
    if ".." in path.split("/") or not folder or not extension or path in s.files or not is_test_path(path):
        return None
    holds = any(f.rpartition("/")[0] == folder and f.endswith(f".{extension}") for f in s.files)
    return path if holds else None


def _only_tests(failure: Failure) -> bool:
    """The traceback holds checkout frames and all of them are the tests' own (no project code on the way)."""
    ours = [f for f in failure.traceback if not f.path.startswith("/")]
    return bool(ours) and all(_is_test_file(f.path) for f in ours)


def _dependency_error(failure: Failure, kind: str) -> tuple[CauseKind, str, str] | None:
    """Raised inside an installed package that the test's own code called, no project frame on the way."""
    if kind in ("", "AssertionError") or not failure.traceback:
        return None
    package = _installed(failure.traceback[-1].path)
    if package is None:
        return None
    if not _only_tests(failure):
        return None  # the project's code is on the way: it may be the project's misuse of the package
    return ("dependency-error", f"the tests' own code fails inside {package} ({kind})",
            "--as-of the failing commit's date, or pin the release the project was tested with")


def _is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name == "conftest.py" or name.startswith("test") or name.endswith("_test.py") or "/tests/" in f"/{path}" \
        or "/test/" in f"/{path}"


def classify(failures: Sequence[Failure], failing: frozenset[str], setting: Setting) -> tuple[EnvCause, ...]:
    """The environment's causes among the `failing` tests' failures, each with its tests, in a stable order."""
    found: dict[tuple[CauseKind, str, str], list[str]] = {}
    for failure in failures:
        if failure.test_id not in failing:
            continue
        cause = classify_one(failure, setting)
        if cause is not None:
            found.setdefault(cause, []).append(failure.test_id)
    return tuple(EnvCause(kind, what, remedy, tuple(sorted(tests)))
                 for (kind, what, remedy), tests in sorted(found.items()))


def broken_plugins(output: str, setting: Setting) -> tuple[EnvCause, ...]:
    """The pytest plugins the run left out because they do not load (bot/inside/probe_others.py)."""
    found = dict.fromkeys(_BROKEN_PLUGIN.findall(output))
    return tuple(EnvCause("tool", f"the pytest plugin {name} does not load on Python {setting.python} ({error})",
                          f"{setting.older_python()}, or a release of it that supports this Python", ())
                 for name, error in found)
