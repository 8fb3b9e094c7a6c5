"""How a repository's declared dependencies reach the sandbox: read them, then bake them into a cached image.

Tests run with the network off, so dependencies are installed beforehand: the host downloads (or builds) the
wheels with pip, and an offline `docker build` installs them on top of the sandbox image. The image is tagged by
a hash of the base image and the requirements, so the next run of the same repository reuses it.
"""
from __future__ import annotations

import hashlib
import posixpath
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import docker
from docker.errors import APIError, BuildError
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from bot.errors import UserError
from bot.fix.types import Checkout
from sandbox.image import image_exists, require_image

ENV_REPOSITORY = "fixbot-env"
TEST_GROUPS = ("test", "tests", "testing", "dev")
REQUIREMENT_FILES = ("requirements.txt", "requirements-dev.txt", "requirements-test.txt")
PIP_TIMEOUT_S = 900
QUOTED_LINES = 15
# Two stages: the wheels are copied into a throw-away stage, so they never become a layer of the final image
# (a `rm` after `COPY` would still ship them); the stage's image is pruned after the build by its label.
# Debian's pip run as root installs everything under /usr/local, which the final stage copies. pip compiles the
# modules: the sandbox's root is read-only, so a module without its .pyc would be compiled again on every run.
# The build runs as root: the base image sets no USER; the sandbox drops to 65534 only when it starts a container.
STAGE_LABEL = "fixbot.env.stage"
DOCKERFILE = """\
FROM {base} AS install
LABEL {stage_label}={stage}
COPY wheels /tmp/fixbot-wheels
RUN python3 -m pip install --no-index --find-links /tmp/fixbot-wheels --break-system-packages --no-cache-dir \\
    --root-user-action=ignore --disable-pip-version-check -r /tmp/fixbot-wheels/requirements.txt
FROM {base}
COPY --from=install /usr/local /usr/local
"""


class DependencyInstallFailed(UserError):
    """The declared dependencies could not be downloaded, built or installed; the message quotes pip."""


@dataclass(frozen=True)
class Requirements:
    """The requirement strings a repository declares for its tests, and the files they came from."""

    lines: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        # Sorted: the same set of requirements in another order or file installs the same thing.
        return hashlib.sha256("\n".join(sorted(self.lines)).encode()).hexdigest()


@dataclass(frozen=True)
class Environment:
    """What the sandbox needs to run a repository's tests: the image and where its code is importable from."""

    image: str
    requirements: Requirements
    pythonpath: tuple[str, ...]  # relative to /work; "" is the repository root
    built: bool  # False when the base image or a cached image was used
    setup_s: float


def _normalise(text: str, where: str) -> str:
    """One requirement specifier, canonical; anything pip would fetch from a URL or a path is refused."""
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0]  # packaging adds the text and a caret on lines of their own
        raise UserError(f"{where}: {text!r} is not a requirement specifier ({reason}); local paths, URLs and "
                        "pip options other than -r are not supported") from None
    if req.url:
        raise UserError(f"{where}: {text!r} points at a URL; only requirements from PyPI are supported")
    req.name = canonicalize_name(req.name)
    return str(req)


_PROJECT_ITSELF = re.compile(r"(-e\s+|--editable[=\s]+)?\.(/)?(\[(?P<extras>[^\]]*)\])?")


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """pip's reading of a requirements file: comments ('#' at the start or after a space) and blank lines
    dropped, lines ending in a backslash joined to the next; each with the number of its first line."""
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        start = start if pending else number
        if line.endswith("\\"):
            pending += line[:-1] + " "
        elif (pending + line).strip():
            yield start, (pending + line).strip()
            pending = ""
    if pending.strip():
        yield start, pending.strip()


class _Reader:
    """Collects requirement lines in order, without duplicates, and the files that gave at least one."""

    def __init__(self, checkout: Checkout):
        self.checkout = checkout
        self.lines: dict[str, None] = {}
        self.sources: dict[str, None] = {}
        self.seen: set[str] = set()
        self.extras: set[str] = set(TEST_GROUPS)  # `.[docs]` in a requirements file asks for that group too

    def add(self, text: str, where: str, source: str) -> None:
        self.lines.setdefault(_normalise(text, where), None)
        self.sources.setdefault(source, None)

    def requirements_file(self, path: str) -> None:
        if path in self.seen:  # included twice, or an include cycle
            return
        self.seen.add(path)
        for number, line in _logical_lines(self.checkout.text(path)):
            where = f"{path} line {number}"
            include = re.fullmatch(r"(-r|--requirement)(\s+|=)(?P<file>\S+)", line)
            if project := _PROJECT_ITSELF.fullmatch(line):  # its code is copied into /work for every run
                self.extras.update(e.strip() for e in (project.group("extras") or "").split(",") if e.strip())
            elif include:
                self.requirements_file(self._resolve(path, include.group("file"), where))
            elif line.startswith("-"):
                raise UserError(f"{where}: the option {line.split()[0]!r} is not supported; only requirement "
                                "specifiers and -r includes are (editable installs and pip options are refused)")
            else:
                self.add(line, where, path)

    def _resolve(self, including: str, target: str, where: str) -> str:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(including), target))
        if target.startswith("/") or joined == ".." or joined.startswith("../"):
            raise UserError(f"{where}: -r {target} points outside the repository")
        if joined not in self.checkout.files:
            raise UserError(f"{where}: -r {target}: no such file in the repository")
        return joined

    def pyproject(self) -> None:
        if "pyproject.toml" not in self.checkout.files:
            return
        try:
            data = tomllib.loads(self.checkout.text("pyproject.toml"))
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"pyproject.toml is not valid TOML: {exc}") from None
        project, groups = data.get("project", {}), data.get("dependency-groups", {})
        optional = project.get("optional-dependencies", {}) if isinstance(project, dict) else None
        if not all(isinstance(table, dict) for table in (project, optional, groups)):
            raise UserError("pyproject.toml: [project], [project.optional-dependencies] and [dependency-groups] "
                            "must be tables")
        itself = canonicalize_name(str(project.get("name", "")))
        wanted = sorted(self.extras)
        self._pyproject_list("[project].dependencies", project.get("dependencies", []), itself, wanted)
        done: set[str] = set()
        while wanted:
            name = wanted.pop(0)
            if name not in done:
                done.add(name)
                for key, table in (("project.optional-dependencies", optional), ("dependency-groups", groups)):
                    if name in table:
                        self._pyproject_list(f"[{key}].{name}", table[name], itself, wanted)

    def _pyproject_list(self, key: str, values: object, itself: str, wanted: list[str]) -> None:
        if not isinstance(values, list):
            raise UserError(f"pyproject.toml: {key} must be a list of requirement strings")
        for value in values:
            if not isinstance(value, str):  # PEP 735 {include-group = ...} tables are skipped
                continue
            where = f"pyproject.toml {key}"
            requirement = Requirement(_normalise(value, where))
            if itself and requirement.name == itself:  # `demo[test]` inside demo: its own groups, not PyPI's
                wanted.extend(sorted(requirement.extras))
            else:
                self.add(value, where, "pyproject.toml")


def declared_requirements(checkout: Checkout) -> Requirements:
    """The dependencies a repository declares for its tests, from pyproject.toml and requirements files.

    A malformed file, a local path, a URL or an editable install (other than the project itself) is a
    UserError that names the file and line."""
    reader = _Reader(checkout)
    roots = [p for p in REQUIREMENT_FILES if p in checkout.files]
    roots += sorted(p for p in checkout.files if re.fullmatch(r"requirements/[^/]+\.txt", p))
    for path in roots:
        reader.requirements_file(path)
    reader.pyproject()  # last: `.[extras]` lines in requirements files name more groups to read
    return Requirements(lines=tuple(reader.lines), sources=tuple(reader.sources))


def python_path(checkout: Checkout) -> tuple[str, ...]:
    """("src",) for a src layout (a package or module right under src/), else the repository root."""
    for path in checkout.files:
        parts = path.split("/")
        if parts[0] == "src" and (len(parts) == 2 and path.endswith(".py") or parts[2:] == ["__init__.py"]):
            return ("src",)
    return ("",)


def env_image_tag(base_image_id: str, requirements: Requirements) -> str:
    # The recipe is hashed too, so a change to it never reuses an image built by the old one.
    key = f"{base_image_id}\n{requirements.digest}\n{DOCKERFILE}"
    return f"{ENV_REPOSITORY}:{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def _failure(requirements: Requirements, what: str, output: str) -> DependencyInstallFailed:
    tail = [line for line in output.splitlines() if line.strip()][-QUOTED_LINES:]
    quoted = "\n".join(f"    {line}" for line in tail) or "    (no output)"
    return DependencyInstallFailed(
        f"installing the dependencies declared in {', '.join(requirements.sources)} failed: {what}:\n{quoted}")


def _download_wheels(requirements: Requirements, wheels: Path) -> None:
    """On the host, which reaches PyPI: its CPython 3.11 on Debian 12 builds wheels the sandbox can install."""
    wheels.mkdir()
    (wheels / "requirements.txt").write_text("".join(f"{line}\n" for line in requirements.lines))
    command = [sys.executable, "-m", "pip", "wheel", "--wheel-dir", str(wheels), "--disable-pip-version-check",
               "--no-input", "--progress-bar", "off", "-r", str(wheels / "requirements.txt")]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:  # its output is bytes even with text=True (POSIX)
        output = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(errors="replace")
        raise _failure(requirements, f"pip wheel took more than {PIP_TIMEOUT_S} s", output) from None
    if done.returncode != 0:
        raise _failure(requirements, f"pip wheel exited with {done.returncode}", done.stdout + done.stderr)


def _build(client: docker.DockerClient, base: str, tag: str, requirements: Requirements, context: Path) -> None:
    stage = tag.partition(":")[2]
    (context / "Dockerfile").write_text(DOCKERFILE.format(base=base, stage_label=STAGE_LABEL, stage=stage))
    try:
        client.images.build(path=str(context), tag=tag, network_mode="none", rm=True, forcerm=True, pull=False,
                            labels={"fixbot.env": requirements.digest})
    except BuildError as exc:
        log = "".join(str(part.get("stream") or part.get("error") or "") for part in exc.build_log)
        raise _failure(requirements, f"docker build: {exc.msg}", log) from None
    except APIError as exc:
        raise _failure(requirements, "docker build", str(exc.explanation or exc)) from None
    finally:  # the untagged image of the install stage holds the wheels and the installed files once more
        try:
            client.images.prune(filters={"dangling": True, "label": f"{STAGE_LABEL}={stage}"})
        except APIError:  # e.g. another prune is running; a leftover costs disk space, nothing else
            pass


def prepare_environment(checkout: Checkout, *, base_image: str, client: docker.DockerClient,
                        log: Callable[[str], None]) -> Environment:
    """The image to run this checkout's tests in: the base image when nothing is declared, else a cached
    `fixbot-env:<hash>` image with the declared dependencies installed (built here when missing)."""
    start = time.monotonic()
    requirements = declared_requirements(checkout)
    pythonpath = python_path(checkout)

    def done(image: str, built: bool) -> Environment:
        return Environment(image, requirements, pythonpath, built, time.monotonic() - start)

    if not requirements.lines:
        log("dependencies: none declared; using the sandbox image as it is")
        return done(base_image, False)
    require_image(client, base_image)
    tag = env_image_tag(client.images.get(base_image).id, requirements)
    log(f"dependencies: {len(requirements.lines)} requirement(s) from {', '.join(requirements.sources)}")
    if image_exists(client, tag):
        log(f"dependencies: reusing the cached image {tag}")
        return done(tag, False)
    with tempfile.TemporaryDirectory(prefix="fixbot-env-") as tmp:
        log("dependencies: downloading wheels on the host (pip wheel)")
        _download_wheels(requirements, Path(tmp) / "wheels")
        log(f"dependencies: installing them offline into {tag} (docker build)")
        _build(client, base_image, tag, requirements, Path(tmp))
    log(f"dependencies: built {tag} in {time.monotonic() - start:.1f} s")
    return done(tag, True)
