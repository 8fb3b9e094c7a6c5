"""The sandbox images: one Debian base per supported Python, each from one spec with a content-hash tag, and two
ways to build it (Dockerfile or offline)."""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import docker
from docker.errors import APIError, BuildError, ImageNotFound

from .bootstrap import mirror_lines, read_apt_sources, run_mmdebstrap
from .errors import ImageBuildFailed, ImageMissing, UnknownPython

RECIPE_VERSION = 1
REPOSITORY = "fixbot-sandbox"
IMAGE_ENV_VAR = "FIXBOT_SANDBOX_IMAGE"
# The Debian release whose own python3 is that version: its python3-pytest and python3-coverage come with it.
PYTHONS = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
DEFAULT_PYTHON = "3.11"


def _version_key(python: str) -> tuple[int, ...]:
    return tuple(int(part) for part in python.split("."))


def check_python(python: str) -> str:
    """`python` when fixbot has a base for it; otherwise UnknownPython naming the ones it has."""
    if python not in PYTHONS:
        known = ", ".join(sorted(PYTHONS, key=_version_key))
        raise UnknownPython(f"no sandbox base for Python {python!r}: choose one of {known}")
    return python


BASE_PACKAGES = ("python3", "python3-pytest", "python3-coverage", "python3-pip", "python3-venv")
# What a project's dependencies need to compile from source (an sdist with C code and no wheel for this Python):
# the C toolchain, Python's headers, and the development files of the system libraries that PyPI's C extensions
# most often link against: libffi and OpenSSL (cffi, cryptography), PostgreSQL's and MySQL's client libraries
# (psycopg2, mysqlclient), libxml2 and libxslt (lxml), zlib and libjpeg (Pillow), libyaml (PyYAML's C loader).
# A CI runner has them; the build container gets them only when a build needs them (tools_spec).
BUILD_TOOLS = ("build-essential", "python3-dev", "pkg-config", "libffi-dev", "libssl-dev", "libpq-dev",
               "default-libmysqlclient-dev", "libxml2-dev", "libxslt1-dev", "zlib1g-dev", "libjpeg-dev",
               "libyaml-dev")


@dataclass(frozen=True)
class ImageSpec:
    """What the image must hold. Both build paths produce the same tag for the same spec."""

    python: str = DEFAULT_PYTHON
    packages: tuple[str, ...] = BASE_PACKAGES
    repository: str = REPOSITORY  # the Action's base image is another spec in another repository
    no_perl: bool = False  # offline: /usr merged by mmdebstrap's hook, not by usrmerge, which needs perl

    def __post_init__(self) -> None:
        check_python(self.python)

    @property
    def suite(self) -> str:
        return PYTHONS[self.python]

    def digest(self) -> str:
        recipe = {"v": RECIPE_VERSION, "python": self.python, "suite": self.suite, "packages": sorted(self.packages)}
        if self.no_perl:  # only when set: the sandbox bases keep their tags
            recipe["no_perl"] = True
        return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]

    def tag(self) -> str:
        return f"{self.repository}:py{self.python}-{self.digest()}"


def tools_spec(python: str) -> ImageSpec:
    """The sandbox base of `python` with a C toolchain (BUILD_TOOLS): the build container of a project whose
    dependencies compile from source."""
    return ImageSpec(python=python, packages=(*BASE_PACKAGES, *BUILD_TOOLS))


def default_image(python: str | None = None) -> str:
    """The sandbox image for `python` (the default Python when None); $FIXBOT_SANDBOX_IMAGE replaces the default
    Python's image only, so an override never hides that another version's base is missing."""
    python = check_python(python or DEFAULT_PYTHON)
    override = os.environ.get(IMAGE_ENV_VAR) if python == DEFAULT_PYTHON else None
    return override or ImageSpec(python=python).tag()


def available_pythons(client: docker.DockerClient) -> tuple[str, ...]:
    """The Python versions whose sandbox image is present here, ascending."""
    return tuple(v for v in sorted(PYTHONS, key=_version_key) if image_exists(client, default_image(v)))


def image_exists(client: docker.DockerClient, image: str) -> bool:
    try:
        client.images.get(image)
        return True
    except ImageNotFound:
        return False


def build_command(image: str) -> str:
    """The command that builds `image` when it is one of the sandbox bases."""
    python = next((v for v in PYTHONS if ImageSpec(python=v).tag() == image), None)
    return "fixbot sandbox build --offline" + (f" --python {python}" if python and python != DEFAULT_PYTHON else "")


def require_image(client: docker.DockerClient, image: str) -> None:
    if not image_exists(client, image):
        raise ImageMissing(
            f"sandbox image {image} is missing: run `{build_command(image)}` (no registry needed) "
            "or the same without --offline where a registry is reachable"
        )


def _labels(spec: ImageSpec, builder: str) -> dict[str, str]:
    return {"fixbot.sandbox.spec": spec.digest(), "fixbot.sandbox.builder": builder,
            "fixbot.sandbox.python": spec.python}


def build_offline(client: docker.DockerClient, spec: ImageSpec, log: Callable[[str], None],
                  mirror: str | None = None) -> str:
    if mirror:
        mirrors = [f"deb {mirror} {spec.suite} main"]
    else:
        mirrors = mirror_lines(read_apt_sources(), spec.suite)
    with tempfile.TemporaryDirectory(prefix="fixbot-image-") as tmp:
        tarball = Path(tmp) / "rootfs.tar"
        run_mmdebstrap(spec.suite, spec.packages, mirrors, tarball, log, merged_usr_hook=spec.no_perl)
        log(f"importing {tarball.stat().st_size / 1e6:.0f} MB into Docker as {spec.tag()}")
        changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "ENV LANG=C.UTF-8",
                   *[f"LABEL {k}={v}" for k, v in _labels(spec, "offline").items()]]
        try:
            client.api.import_image(src=str(tarball), repository=spec.repository, tag=spec.tag().partition(":")[2],
                                    changes=changes)
        except APIError as exc:
            raise ImageBuildFailed(f"docker import failed: {exc.explanation or exc}") from exc
    require_image(client, spec.tag())
    return spec.tag()


def build_from_dockerfile(client: docker.DockerClient, spec: ImageSpec, log: Callable[[str], None],
                          base: str | None = None, tag: str | None = None) -> str:
    dockerfile = resources.files("sandbox").joinpath("assets/Dockerfile").read_bytes()
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
    context.seek(0)
    tag = tag or spec.tag()
    base = base or f"python:{spec.python}-slim"  # the official image of that Python; pytest comes from pip
    log(f"building {tag} from the Dockerfile on {base}")
    try:
        # python:X.Y-slim carries its own headers; the rest of the spec's extra packages come from apt
        extra = " ".join(p for p in spec.packages if p not in BASE_PACKAGES and p != "python3-dev")
        client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True,
                            buildargs={"BASE": base, "APT_PACKAGES": extra}, labels=_labels(spec, "dockerfile"))
    except (BuildError, APIError) as exc:
        raise ImageBuildFailed(
            f"docker build failed: {exc}. Without a registry, use `fixbot sandbox build --offline`"
        ) from exc
    return tag
