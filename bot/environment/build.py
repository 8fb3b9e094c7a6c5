"""One build of a test environment image: the install plan's steps run in a build container on the chosen Python's
sandbox base (sandbox/builder.py), the checkout's imports checked (bot/environment/drift.py, a second build with older
pins when more of them import), the project's own copy uninstalled, the container committed under its cache tag
with the lock as a label.

In: the checkout, the base image, the plan, pip's settings, the constraints (held-back pins, a date). Out: the
committed image's lock, pins and floors (`Built`), or DependencyInstallFailed quoting pip. Never: a build that
reaches any host but the package index, or the project's code left installed in the image.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace

import docker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from bot.checkout.repository import Checkout
from bot.environment.dated import TRANSIENT, install_dated, unmatched
from bot.environment.drift import Floor, ImportCheck, check_imports, pins_for
from bot.environment.generated import KNOWN_FILE, generated_modules
from bot.environment.install.plan import BUILD_DIR, InstallPlan, InstallStep
from bot.environment.install.relax import RELAX_SCRIPT, loosened, relaxed_argv, requirement_files
from bot.environment.pip_settings import PipSettings
from bot.errors import UserError
from sandbox.builder import SRC, BuildBox, BuildSpec, CommandResult, build_box

ENV_REPOSITORY = "fixbot-env"
RECIPE = "7"  # part of the cache key: a change to how environments are built never reuses an old one
LOCK_LABEL = "fixbot.env.lock"  # every distribution the image's Python has, one `name==version [--hash=...]` per line
PINS_LABEL = "fixbot.env.pins"  # distributions held at the project's lowest declared version (bot/environment/drift.py)
AS_OF_LABEL = "fixbot.env.as-of"  # the date no release installed is newer than, when the build was cut
GENERATED_LABEL = "fixbot.env.generated"  # {path: text} of modules the build wrote into the tree (generated.py)
FLOORS_LABEL = "fixbot.env.floors"  # declared dependencies installed above their lowest declared version (Floor.line)
PINS_FILE = f"{BUILD_DIR}/fixbot-pins.txt"
STEP_TIMEOUT_S = 900
QUOTED_LINES = 15
SHOWN_DRIFTS = 5
PIP = ("python3", "-m", "pip")
PIP_ENV = {"PIP_NO_INPUT": "1", "PIP_PROGRESS_BAR": "off", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PIP_ROOT_USER_ACTION": "ignore", "PIP_BREAK_SYSTEM_PACKAGES": "1"}
# pip 25.1 brought --group (PEP 735); `pip inspect` and `--report` are older. Debian bullseye ships pip 20.3.
PIP_UPGRADE = (*PIP, "install", "pip>=25.1")  # no --upgrade: trixie's own pip 25.1 cannot be uninstalled
# --uploaded-prior-to came with pip 26; beside a Debian pip that cannot be uninstalled, into /usr/local
PIP_DATED = (*PIP, "install", "--ignore-installed", "pip>=26")


def lock_tag(python: str, lock: Sequence[str]) -> str:
    digest = hashlib.sha256("\n".join([RECIPE, python, *sorted(lock)]).encode()).hexdigest()[:12]
    return f"{ENV_REPOSITORY}:py{python}-{digest}"



class DependencyInstallFailed(UserError):
    """The project or its declared dependencies could not be installed; the message quotes pip."""

    def __init__(self, message: str, last_line: str = "", needs_compiler: bool = False,
                 transient: bool = False, killed: bool = False, timed_out: bool = False) -> None:
        super().__init__(message)
        self.last_line = last_line
        # a dependency compiles from source and the build lacked the C toolchain or a library's development files
        self.needs_compiler = needs_compiler
        self.transient = transient  # the index failed, not the requirements: another way would fail the same way
        # the step was killed from outside or ended without a status: another way may build, but this failure says
        # nothing about the requirements and is not remembered
        self.killed = killed
        self.timed_out = timed_out  # past STEP_TIMEOUT_S (counted as transient too)


# what a build without a C toolchain says when a dependency compiles from source: no compiler, no Python headers,
# or no development files of a system library it links against (a missing header; the library's `-config` program
# that the build asks: psycopg2's pg_config, mysqlclient's mysql_config, lxml's xml2-config)
NO_COMPILER = re.compile(r"command '[\w./-]*(?:gcc|cc|g\+\+)' failed|unable to execute '[\w./-]*(?:gcc|cc)'|"
                         r"Python\.h: No such file|No working compiler found|gcc: (?:error|not found)|"
                         r"error: Microsoft Visual C\+\+|compiler (?:cc|gcc) not found|"
                         r"fatal error: [\w/.+-]+\.h: No such file or directory|"
                         r"\b(?:pg|mysql|mariadb|xml2|xslt|curl|pkg)[-_]config\b(?::| executable)?"
                         r"(?: command)? not found|"
                         r"No such file or directory: '(?:pg|mysql|mariadb)_config'")


def _killed(result: CommandResult) -> str | None:
    """How the step ended when it did not exit by itself: killed by a signal (128+N: Ctrl-C, `docker kill`, the
    kernel's OOM killer), or without an exit status (the sandbox reports -1 when Docker gave none)."""
    if result.exit_code < 0:
        return "ended without an exit status"
    if 128 < result.exit_code <= 128 + 64:
        return f"was killed by signal {result.exit_code - 128} (exit {result.exit_code})"
    return None


def _failure(what: str, result: CommandResult) -> DependencyInstallFailed:
    tail = [line for line in result.output.splitlines() if line.strip()][-QUOTED_LINES:]
    quoted = "\n".join(f"    {line}" for line in tail) or "    (no output)"
    killed = _killed(result)
    why = f"took more than {STEP_TIMEOUT_S} s" if result.timed_out else killed or f"exited with {result.exit_code}"
    hint = ""
    if re.search(r"\b(401|403)\b.*(Unauthorized|Forbidden)|credentials", result.output, re.I):
        hint = ("\n  the index asked for credentials: give them in the index URL of pip's configuration "
                "(PIP_INDEX_URL=https://USER:TOKEN@HOST/simple) or install with the `setup` commands")
    return DependencyInstallFailed(f"setting up the test environment failed: {what} {why}:\n{quoted}{hint}",
                                   last_line=tail[-1].strip() if tail else why,
                                   needs_compiler=bool(NO_COMPILER.search(result.output)),
                                   transient=result.timed_out or bool(TRANSIENT.search(result.output)),
                                   killed=killed is not None, timed_out=result.timed_out)


def _step_argv(step: InstallStep, index: int, pinned: bool = False) -> tuple[str, ...]:
    if step.argv[:1] != ("pip",):
        return step.argv
    argv = (*PIP, *step.argv[1:])
    if step.argv[1:2] != ("install",):
        return argv
    # The report lists what this step installed, with the archives' hashes: the lock.
    return (*argv, *(("-c", PINS_FILE) if pinned else ()), "--report", f"/tmp/fixbot-report-{index}.json")


def _run_step(box: BuildBox, argv: Sequence[str], what: str, as_of: str | None, log: Callable[[str], None]) -> None:
    """A step, as of a date when given (pip's installs only: bot/environment/dated.py); a pinned range that no
    release on the index satisfies is loosened once (bot/environment/install/relax.py). A step that still fails
    raises with pip's last failure (the loosened command's, when it got past the missing release)."""
    result = _step_result(box, argv, as_of, log)
    if result.ok:
        return
    missing = unmatched(result.output)
    relaxed = _relaxed(box, argv, missing, log)
    if relaxed is None:
        raise _failure(what, result)
    again = _step_result(box, relaxed, as_of, log)
    if again.ok:
        return
    if _same_name(unmatched(again.output), missing):  # no release of it at all: pip's first word says so best
        raise _failure(what, result)
    # it got past the missing release: its failure (a compiler, another pin) says what to try next
    raise _failure(f"{what}, {missing} loosened to its name (no release of it is on the index),", again)


def _same_name(requirement: str | None, other: str | None) -> bool:
    try:
        names = {canonicalize_name(Requirement(r or "").name) for r in (requirement, other)}
    except InvalidRequirement:
        return False
    return len(names) == 1


def _step_result(box: BuildBox, argv: Sequence[str], as_of: str | None, log: Callable[[str], None]) -> CommandResult:
    if as_of and tuple(argv[:4]) == (*PIP, "install"):
        return install_dated(lambda a: box.run(a, timeout_s=STEP_TIMEOUT_S, echo=True), argv, as_of, log)[0]
    return box.run(argv, timeout_s=STEP_TIMEOUT_S, echo=True)


def _relaxed(box: BuildBox, argv: Sequence[str], requirement: str | None,
             log: Callable[[str], None]) -> tuple[str, ...] | None:
    """The pip command again with `requirement` loosened to its name, in the command and in the requirement files
    it reads; None when there is nothing to loosen."""
    loose = loosened(requirement)
    if requirement is None or loose is None or tuple(argv[:4]) != (*PIP, "install"):
        return None
    again = relaxed_argv(argv, requirement)
    files = requirement_files(argv)
    name = canonicalize_name(Requirement(requirement).name)
    changed = box.run(("python3", "-c", RELAX_SCRIPT, name, *files), timeout_s=60, echo=False).output.split() \
        if files else []
    if again == tuple(argv) and not changed:
        return None
    log(f"environment: no release of {requirement} is on the index; installing {loose} instead, the nearest that "
        "installs (a test that needs the old release then fails as the environment's, not the code's)")
    return again


def _run(box: BuildBox, argv: Sequence[str], what: str, echo: bool = True) -> CommandResult:
    result = box.run(argv, timeout_s=STEP_TIMEOUT_S, echo=echo)
    if not result.ok:
        raise _failure(what, result)
    return result


# Run in the build container after the plan: what is installed (pip inspect), which of it is the project itself
# (installed from /src), and the archives' hashes from the steps' --report files; one JSON line at the end.
LOCK_SCRIPT = """
import glob, json, subprocess, sys
out = subprocess.run([sys.executable, "-m", "pip", "inspect"], capture_output=True, text=True, check=True).stdout
dists = json.loads(out)["installed"]
hashes = {}
for path in sorted(glob.glob("/tmp/fixbot-report-*.json")):
    for item in json.load(open(path)).get("install", []):
        archive = (item.get("download_info") or {}).get("archive_info") or {}
        if archive.get("hash"):
            hashes[item["metadata"]["name"].lower()] = archive["hash"].replace("=", ":", 1)
itself = [d["metadata"]["name"] for d in dists if (d.get("direct_url") or {}).get("url", "").startswith("file://SRC")]
lock = [d["metadata"]["name"] + "==" + d["metadata"]["version"] for d in dists
        if d["metadata"]["name"] not in itself and d["metadata"]["name"].lower() != "pip"]
lock = [line + (" --hash=" + hashes[line.split("==")[0].lower()] if line.split("==")[0].lower() in hashes else "")
        for line in lock]
print("FIXBOT-LOCK " + json.dumps({"itself": itself, "lock": sorted(lock)}))
""".replace("SRC", SRC)


# Run in the build container with the project's names: its own copy uninstalled, and its metadata put back without
# the record of its files, so that code reading its own version (importlib.metadata) or entry points finds them.
UNINSTALL_SCRIPT = """
import json, os, shutil, subprocess, sys, tempfile
names = sys.argv[1:]
out = subprocess.run([sys.executable, "-m", "pip", "inspect"], capture_output=True, text=True, check=True).stdout
kept = [d["metadata_location"] for d in json.loads(out)["installed"]
        if d["metadata"]["name"] in names and d.get("metadata_location", "").endswith(".dist-info")]
aside = tempfile.mkdtemp()
for path in kept:
    shutil.copytree(path, os.path.join(aside, os.path.basename(path)))
subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", *names], check=True)
for path in kept:
    shutil.copytree(os.path.join(aside, os.path.basename(path)), path)
    for name in ("RECORD", "direct_url.json"):
        if os.path.exists(os.path.join(path, name)):
            os.remove(os.path.join(path, name))
"""


def _install(box: BuildBox, plan: InstallPlan, log: Callable[[str], None],
             pinned: bool = False, as_of: str | None = None) -> tuple[tuple[str, ...], ImportCheck]:
    """Run the plan (with PINS_FILE as constraints when pinned, nothing newer than `as_of` when given), check the
    checkout's imports, uninstall the project itself; return the lock of what stays installed and the imports
    that failed inside it."""
    log("environment: upgrading pip in the build container")
    _run(box, PIP_DATED if as_of else PIP_UPGRADE, "upgrading pip")
    for index, step in enumerate(plan.steps):
        log(f"environment: installing {step.what}")
        argv = _step_argv(step, index, pinned)
        try:
            _run_step(box, argv, f"installing {step.what}", as_of, log)
        except DependencyInstallFailed as exc:
            if step.optional:
                _optional_again(box, argv, step.what, as_of, exc, log)
                continue
            if step.fallback is None:
                raise
            log(f"environment: the project does not install as a package; installing {step.fallback.what}")
            try:
                _run_step(box, _step_argv(step.fallback, index, pinned), f"installing {step.fallback.what}", as_of,
                          log)
            except DependencyInstallFailed:
                raise exc from None
    result = _run(box, ("python3", "-c", LOCK_SCRIPT), "listing what was installed (pip inspect)", echo=False)
    found = json.loads(result.output.rpartition("FIXBOT-LOCK ")[2].splitlines()[0])
    imports = check_imports(box, found["itself"])  # before the uninstall: it reads the project's requirements
    _own_coverage(box, log)
    if found["itself"]:  # its code comes from the checkout in every test run
        _run(box, ("python3", "-c", UNINSTALL_SCRIPT, *found["itself"]), "uninstalling the project's own copy")
    return tuple(found["lock"]), imports


def _optional_again(box: BuildBox, argv: Sequence[str], what: str, as_of: str | None,
                    failure: DependencyInstallFailed, log: Callable[[str], None]) -> None:
    """After an optional step (building the project itself) failed: where it compiles from source in a build
    container with no C compiler, raise, so that the base with the C toolchain is tried (its dependencies would
    be missing otherwise); where the index failed, not the build, run it once more, since the environment built
    without it is cached and reused by later runs; a step that still fails, or failed for any other reason, is
    left out and said."""
    if failure.needs_compiler and not box.run(("sh", "-c", "command -v cc"), timeout_s=30, echo=False).ok:
        raise failure
    if failure.transient and not failure.timed_out:
        log(f"environment: installing {what} failed as the package index does ({failure.last_line}); trying it "
            "once more")
        try:
            _run_step(box, argv, f"installing {what}", as_of, log)
            return
        except DependencyInstallFailed as again:
            failure = again
    log(f"environment: the project does not build as a package ({failure.last_line}); its tests run from the "
        "checkout without it")


# fixbot's per-test coverage needs coverage.py 5 or newer (contexts); a project may pin an older one
COVERAGE_CHECK = "import sys, coverage; sys.exit(0 if coverage.version_info >= (5,) else 1)"
TOOLS_DIR = "/opt/fixbot-tools"  # fixbot's own instruments, apart from the project's packages (bot/inside/probe.py)


def _own_coverage(box: BuildBox, log: Callable[[str], None]) -> None:
    """Where the project's packages leave no coverage.py that fixbot's probe can use (an old pin), fixbot's own in
    TOOLS_DIR, which only the probe puts on its path: no pin of the project's breaks fixbot's instruments."""
    if box.run(("python3", "-c", COVERAGE_CHECK), timeout_s=60, echo=False).ok:
        return
    log(f"environment: the project's coverage.py is older than fixbot's probe needs; fixbot's own goes to {TOOLS_DIR}")
    result = box.run((*PIP, "install", "--no-deps", "--target", TOOLS_DIR, "coverage>=5"), timeout_s=STEP_TIMEOUT_S)
    if not result.ok:
        log("environment: fixbot's own coverage.py did not install; the tests run without per-test coverage")


def _pinned(client: docker.DockerClient, spec: BuildSpec, plan: InstallPlan, pins: tuple[str, ...],
            newest: ImportCheck, boxes: ExitStack, log: Callable[[str], None], as_of: str | None
            ) -> tuple[BuildBox, tuple[str, ...], ImportCheck] | None:
    """A second build with `pins` as constraints, when it installs and more of the checkout's modules import than
    with the newest versions (an old release may not import at all on a new Python); else None."""
    log(f"environment: building again with {', '.join(pins)}, the lowest the project declares")
    spec = replace(spec, files={**spec.files, PINS_FILE: "".join(f"{pin}\n" for pin in pins).encode()})
    box = boxes.enter_context(build_box(client, spec, lambda line: log(f"  | {line}")))
    try:
        lock, left = _install(box, plan, log, pinned=True, as_of=as_of)
    except DependencyInstallFailed as exc:
        log(f"environment: that does not install ({exc.last_line}); keeping the newest versions")
        return None
    if left.unfinished:
        log(f"environment: the import check did not finish with them ({left.unfinished}); keeping the newest "
            "versions")
        return None
    if left.failed >= newest.failed:
        log(f"environment: {left.failed} module(s) still do not import with them (against {newest.failed}); "
            "keeping the newest versions")
        return None
    log(f"environment: with {', '.join(pins)}, {newest.failed - left.failed} more module(s) import; using them")
    return box, lock, left


def _report_drift(imports: ImportCheck, log: Callable[[str], None]) -> tuple[str, ...]:
    if imports.unfinished:
        log(f"environment: the import check of the checkout's modules did not finish in {imports.seconds:.1f} s "
            f"({imports.unfinished}); no dependency is held back for the checkout's imports")
        return ()
    log(f"environment: imported the checkout's {imports.modules} package module(s) and test file(s) in "
        f"{imports.seconds:.1f} s: {imports.failed} did not import")
    for drift in imports.drifts[:SHOWN_DRIFTS]:
        log(f"environment: {drift.describe()}")
    pins = pins_for(imports.drifts)
    if imports.drifts and not pins:
        log("environment: the project declares no older version to go back to; pin one with the `setup` commands")
    return pins


@dataclass(frozen=True)
class Built:
    tag: str  # the lock's tag (lock_tag)
    lock: tuple[str, ...]
    pins: tuple[str, ...]
    floors: tuple[Floor, ...]
    generated: Mapping[str, str]  # GENERATED_LABEL's files


def build(client: docker.DockerClient, checkout: Checkout, base: str, python: str, plan: InstallPlan,
           pip: PipSettings, cached: str, hold_back: tuple[str, ...], log: Callable[[str], None],
           as_of: str | None = None) -> Built:
    """Build and commit the environment as `cached`, with `hold_back` as constraints from the start and nothing
    uploaded after `as_of`."""
    files = dict(checkout.files)
    for step in (*plan.steps, *(s.fallback for s in plan.steps if s.fallback)):
        files.update({f"{BUILD_DIR}/{name}": text.encode() for name, text in step.files})
    if hold_back:
        files[PINS_FILE] = "".join(f"{pin}\n" for pin in hold_back).encode()
    files[KNOWN_FILE] = json.dumps(sorted(checkout.files)).encode()
    spec = BuildSpec(base=base, files=files, extra_files=pip.files, allow_hosts=pip.hosts,
                     env={**PIP_ENV, **pip.env, **dict(plan.env)})
    log(f"environment: building on {base}; the build reaches only {', '.join(pip.hosts)}"
        + (f"; holding back {', '.join(hold_back)}" if hold_back else "")
        + (f"; nothing uploaded after {as_of}" if as_of else ""))
    with ExitStack() as boxes:
        box = boxes.enter_context(build_box(client, spec, lambda line: log(f"  | {line}")))
        lock, imports = _install(box, plan, log, pinned=bool(hold_back), as_of=as_of)
        pins = _report_drift(imports, log)
        pins = () if plan.custom or hold_back else pins  # the user's `setup` commands choose the versions
        better = _pinned(client, spec, plan, pins, imports, boxes, log, as_of) if pins else None
        if better:
            box, lock, imports = better
        else:
            pins = hold_back
        floors = () if plan.custom else imports.floors
        generated = generated_modules(box, log)
        labels = {"fixbot.env.python": python, LOCK_LABEL: "\n".join(lock), PINS_LABEL: "\n".join(pins),
                  FLOORS_LABEL: "\n".join(floor.line() for floor in floors), AS_OF_LABEL: as_of or "",
                  GENERATED_LABEL: json.dumps(generated)}
        # Always this build's own image, never another project's with the same lock: the project's setup.py ran
        # in this build and may have written anywhere (a sitecustomize.py would run in the other's tests).
        repository, tag = cached.split(":")
        box.commit(repository, tag, labels)
    tag = lock_tag(python, lock)  # the newest build of this lock, for people; runs reuse by the inputs' tag
    client.images.get(cached).tag(*tag.split(":"))
    return Built(tag, lock, pins, floors, generated)


