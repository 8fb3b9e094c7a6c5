"""The test environment as the project's CI builds it, cached as an image the tests run in (network-less).

Which Python: bot/environment/python/choice.py. What to install: bot/environment/install/plan.py (pip's own
commands). Where: a build container on that Python's sandbox base that reaches the package index and nothing else
(sandbox/builder.py). The project itself is installed with its dependencies, then uninstalled: its code comes
from the checkout, copied into every test run, so a candidate fix is what the tests import.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import docker

from bot.checkout.repository import Checkout
from bot.environment.build import (
    ENV_REPOSITORY,
    FLOORS_LABEL,
    GENERATED_LABEL,
    LOCK_LABEL,
    PINS_LABEL,
    RECIPE,
    DependencyInstallFailed,
    build,
)
from bot.environment.drift import Floor
from bot.environment.install.plan import InstallPlan, install_plan
from bot.environment.pip_settings import PipSettings, pip_settings
from bot.environment.python.choice import PythonChoice, choose_python
from sandbox.image import (
    PYTHONS,
    ImageSpec,
    build_from_dockerfile,
    build_offline,
    default_image,
    image_exists,
    require_image,
    tools_spec,
)

FAILED = "-failed"  # a tag's suffix: the build of that tag failed (a marker image: _mark_failed)
FAILED_COMPILER = "-failed-compiler"  # ... failed for want of a C toolchain


@dataclass(frozen=True, kw_only=True)
class EnvRequest:
    """What the user said about the environment (config, CLI, Action inputs) and what the failing CI job used."""

    python: str | None = None  # "3.9": overrides every other source
    setup: tuple[str, ...] = ()  # shell commands that replace the inferred install steps
    ci_versions: tuple[str, ...] = ()  # the failing job's python-version values
    hold_back: tuple[str, ...] = ()  # `name==version` to install with, from the tests (bot/fix/reproduce/hold_back.py)
    # The failing commit's date (bot/checkout/repository.py): when today's releases do not install, the build resolves
    # again with nothing uploaded after it, as the project's CI resolved on that day
    commit_date: str | None = None
    as_of: str | None = None  # install nothing uploaded after this date (the user's --as-of, or that fallback)


@dataclass(frozen=True, kw_only=True)
class Environment:
    """What the sandbox needs to run a repository's tests: the image and where its code is importable from."""

    image: str
    python: PythonChoice
    plan: InstallPlan
    pythonpath: tuple[str, ...]  # relative to the run's work dir; "" is the repository root
    built: bool  # False when the base image or a cached image was used
    setup_s: float
    lock: tuple[str, ...] = ()  # the image's distributions, `name==version [--hash=...]` (LOCK_LABEL), when known
    pins: tuple[str, ...] = ()  # `name==version` held at the project's lowest declared version (PINS_LABEL)
    floors: tuple[Floor, ...] = ()  # what could still be held back (FLOORS_LABEL); none for the user's `setup`
    as_of: str | None = None  # the releases were those uploaded before this date (EnvRequest.as_of)
    generated: Mapping[str, bytes] = field(default_factory=dict)  # modules the build wrote that the checkout lacks

    def with_generated(self, files: Mapping[str, bytes]) -> dict[str, bytes]:
        """A checkout's files with the modules the build generated (a version module), which its tests import."""
        return {**self.generated, **files}


def python_path(checkout: Checkout) -> tuple[str, ...]:
    """("src",) for a src layout (a package or module right under src/), else the repository root."""
    for path in checkout.files:
        parts = path.split("/")
        if parts[0] == "src" and (len(parts) == 2 and path.endswith(".py") or parts[2:] == ["__init__.py"]):
            return ("src",)
    return ("",)


def cache_tag(base_image_id: str, python: str, plan: InstallPlan, pip: PipSettings,
              hold_back: Sequence[str] = (), as_of: str | None = None) -> str:
    key = "\n".join([RECIPE, base_image_id, python, plan.inputs_digest, pip.digest, *sorted(hold_back),
                     *([f"as of {as_of}"] if as_of else [])])
    return f"{ENV_REPOSITORY}:py{python}-in-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def _label_lines(labels: dict[str, str], key: str) -> tuple[str, ...]:
    return tuple(line for line in labels.get(key, "").splitlines() if line)


def image_lock(client: docker.DockerClient, image: str) -> tuple[str, ...]:
    return _label_lines(client.images.get(image).labels or {}, LOCK_LABEL)


def ensure_base(client: docker.DockerClient, python: str, log: Callable[[str], None], *, tools: bool = False) -> str:
    """The sandbox base of `python` (with a C toolchain when `tools`: sandbox/image.py), built once when missing:
    offline from the machine's apt mirror where mmdebstrap is installed, else from the Dockerfile on
    `python:X.Y-slim` (the Action's runners have a registry)."""
    spec = tools_spec(python) if tools else ImageSpec(python=python)
    base = spec.tag() if tools else default_image(python)
    if image_exists(client, base) or base != spec.tag():  # an image named by FIXBOT_SANDBOX_IMAGE is not ours to build
        require_image(client, base)
        return base
    what = "with a C toolchain" if tools else "sandbox base"
    log(f"environment: the Python {python} {what} is missing; building it once (a few minutes)")
    if shutil.which("mmdebstrap"):
        return build_offline(client, spec, log)
    return build_from_dockerfile(client, spec, log)


def plan_environment(checkout: Checkout, request: EnvRequest) -> tuple[PythonChoice, InstallPlan]:
    """Which Python and which install steps, from the checkout's files and the request; nothing runs."""
    choice = choose_python(checkout, available=tuple(PYTHONS), explicit=request.python,
                           ci_versions=request.ci_versions)
    return choice, install_plan(checkout, setup=request.setup, python=choice.version)


@dataclass(frozen=True)
class _Attempt:
    """One way to build: on the plain base or the one with a C toolchain, with today's releases or as of a date."""

    tools: bool = False
    as_of: str | None = None


def _next_attempt(tried: _Attempt, exc: DependencyInstallFailed, request: EnvRequest,
                  plan: InstallPlan) -> tuple[_Attempt, str] | None:
    """What to try after `tried` failed, and why in words: a C toolchain when a dependency compiles, then the
    failing commit's date when today's releases do not install; None when nothing is left."""
    if exc.needs_compiler and not tried.tools:
        return replace(tried, tools=True), "a dependency compiles from source; building with a C toolchain"
    if tried.as_of is None and request.commit_date and not plan.custom and not request.as_of:
        return replace(tried, as_of=request.commit_date), (f"today's releases do not install ({exc.last_line}); "
                                                           f"resolving again with nothing uploaded after "
                                                           f"{request.commit_date}, the failing commit's date")
    return None


FAILURE_LABEL = "fixbot.failure"  # on a marker: the failure's message and last line, as JSON
# Raised whenever the build learns a new way past a failure (a loosened pin): a marker an older build left is then
# tried again, where a built environment stays reusable.
FAILURE_FORMAT = 4


def _failed_before(client: docker.DockerClient, tag: str) -> tuple[DependencyInstallFailed, str] | None:
    """The failure an earlier run marked on `tag` (a marker image, so that it is not built again) with its own
    message, and the marker's tag."""
    for suffix, compiler in ((FAILED_COMPILER, True), (FAILED, False)):
        if image_exists(client, tag + suffix):
            saved = json.loads((client.images.get(tag + suffix).labels or {}).get(FAILURE_LABEL) or "{}")
            if saved.get("format") != FAILURE_FORMAT:
                continue
            return DependencyInstallFailed(saved.get("message") or f"the build of {tag} failed on an earlier run",
                                           last_line=saved.get("last_line") or "failed on an earlier run",
                                           needs_compiler=compiler), tag + suffix
    return None


def _mark_failed(client: docker.DockerClient, base: str, tag: str, exc: DependencyInstallFailed) -> None:
    """Remember that `tag` does not build: a marker image (the base, never started, committed with the failure in a
    label), so that the next run reports the same failure without building again."""
    marker = tag + (FAILED_COMPILER if exc.needs_compiler else FAILED)
    repository, _, name = marker.rpartition(":")
    container = client.containers.create(base, command=["true"])
    try:
        container.commit(repository=repository, tag=name, conf={"Labels": {
            FAILURE_LABEL: json.dumps({"message": str(exc), "last_line": exc.last_line,
                                       "format": FAILURE_FORMAT})}})
    finally:
        container.remove(force=True)


def prepare_environment(checkout: Checkout, request: EnvRequest, *, client: docker.DockerClient,
                        log: Callable[[str], None]) -> Environment:
    """The image to run this checkout's tests in: the chosen Python's base when nothing is to be installed, else
    a cached `fixbot-env` image with the project's environment (built here when missing). A build that fails is
    tried again the ways `_next_attempt` says (a C toolchain; the failing commit's date, as the project's CI
    resolved then), each failure remembered so that the next run goes straight to what worked."""
    start = time.monotonic()
    choice, plan = plan_environment(checkout, request)
    log(f"environment: Python {choice.version} ({choice.source})")
    base = ensure_base(client, choice.version, lambda line: log(f"  {line}"))
    for note in plan.notes:
        log(f"environment: {note}")

    def done(image: str, built: bool, lock: tuple[str, ...] = (), pins: tuple[str, ...] = (),
             floors: tuple[Floor, ...] = (), as_of: str | None = None,
             generated: Mapping[str, str] | None = None) -> Environment:
        return Environment(image=image, python=choice, plan=plan, pythonpath=python_path(checkout), built=built,
                           setup_s=time.monotonic() - start, lock=lock, pins=pins, floors=floors, as_of=as_of,
                           generated={p: t.encode() for p, t in (generated or {}).items()})

    if not plan.steps:
        log("environment: nothing to install; using the sandbox image as it is")
        return done(base, False)
    pip = pip_settings(plan.index_urls)
    hold_back = () if plan.custom else request.hold_back
    attempt, first = _Attempt(as_of=None if plan.custom else request.as_of), None
    while True:
        if attempt.tools:
            base = ensure_base(client, choice.version, lambda line: log(f"  {line}"), tools=True)
        tag = cache_tag(client.images.get(base).id, choice.version, plan, pip, hold_back, attempt.as_of)
        remembered = _failed_before(client, tag)
        if remembered is not None:
            exc, marker = remembered
            log(f"environment: this build failed on an earlier run; not trying it again (`docker rmi {marker}` "
                "does)")
        else:
            try:
                return _cached_or_built(client, checkout, base, tag, choice.version, plan, pip, hold_back,
                                        attempt.as_of, log, done)
            except DependencyInstallFailed as failure:
                exc = failure
                if exc.transient:  # the index failed: another way to build would fail the same way
                    raise
                if not exc.killed:  # a kill says nothing about the requirements: the next run builds again
                    _mark_failed(client, base, tag, exc)
        first = first or exc
        following = _next_attempt(attempt, exc, request, plan)
        if following is None:
            if exc is first:
                raise exc
            raise DependencyInstallFailed(f"{first}\n  tried again ({_described(attempt)}): {exc.last_line}",
                                          last_line=first.last_line)
        attempt, why = following
        log(f"environment: {why}")


def _described(attempt: _Attempt) -> str:
    parts = (["with a C toolchain"] if attempt.tools else []) + \
        ([f"nothing uploaded after {attempt.as_of}"] if attempt.as_of else [])
    return ", ".join(parts) or "today's releases"


def _cached_or_built(client: docker.DockerClient, checkout: Checkout, base: str, cached: str, python: str,
                     plan: InstallPlan, pip: PipSettings, hold_back: tuple[str, ...], as_of: str | None,
                     log: Callable[[str], None], done: Callable[..., Environment]) -> Environment:
    start = time.monotonic()
    if image_exists(client, cached):
        log(f"environment: reusing {cached}" + (f" (nothing uploaded after {as_of})" if as_of else ""))
        labels = client.images.get(cached).labels or {}
        floors = tuple(f for f in map(Floor.parse, _label_lines(labels, FLOORS_LABEL)) if f)
        return done(cached, False, _label_lines(labels, LOCK_LABEL), _label_lines(labels, PINS_LABEL), floors,
                    as_of, json.loads(labels.get(GENERATED_LABEL) or "{}"))
    log(f"environment: {len(plan.steps)} step(s) from {', '.join(plan.sources)}")
    built = build(client, checkout, base, python, plan, pip, cached, hold_back, log, as_of)
    log(f"environment: {built.tag} ready in {time.monotonic() - start:.1f} s ({len(built.lock)} packages)")
    return done(cached, True, built.lock, built.pins, built.floors, as_of, built.generated)
