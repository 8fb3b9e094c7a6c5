"""The sandbox image: one spec, a content-hash tag, two ways to build it (Dockerfile or offline)."""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

import docker
from docker.errors import APIError, BuildError, ImageNotFound

from .bootstrap import mirror_lines, read_apt_sources, run_mmdebstrap
from .errors import ImageBuildFailed, ImageMissing

RECIPE_VERSION = 1
REPOSITORY = "fixbot-sandbox"
IMAGE_ENV_VAR = "FIXBOT_SANDBOX_IMAGE"


@dataclass(frozen=True)
class ImageSpec:
    """What the image must hold. Both build paths produce the same tag for the same spec."""

    suite: str = "bookworm"
    packages: tuple[str, ...] = ("python3", "python3-pytest", "python3-coverage", "python3-pip", "python3-venv")
    repository: str = REPOSITORY  # the Action's base image is another spec in another repository

    def digest(self) -> str:
        recipe = {"v": RECIPE_VERSION, "suite": self.suite, "packages": sorted(self.packages)}
        return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]

    def tag(self) -> str:
        return f"{self.repository}:{self.digest()}"


def default_image() -> str:
    return os.environ.get(IMAGE_ENV_VAR) or ImageSpec().tag()


def image_exists(client: docker.DockerClient, image: str) -> bool:
    try:
        client.images.get(image)
        return True
    except ImageNotFound:
        return False


def require_image(client: docker.DockerClient, image: str) -> None:
    if not image_exists(client, image):
        raise ImageMissing(
            f"sandbox image {image} is missing: run `fixbot sandbox build --offline` (no registry needed) "
            "or `fixbot sandbox build` where a registry is reachable"
        )


def _labels(spec: ImageSpec, builder: str) -> dict[str, str]:
    return {"fixbot.sandbox.spec": spec.digest(), "fixbot.sandbox.builder": builder}


def build_offline(client: docker.DockerClient, spec: ImageSpec, log: Callable[[str], None],
                  mirror: str | None = None) -> str:
    if mirror:
        mirrors = [f"deb {mirror} {spec.suite} main"]
    else:
        mirrors = mirror_lines(read_apt_sources(), spec.suite)
    with tempfile.TemporaryDirectory(prefix="fixbot-image-") as tmp:
        tarball = Path(tmp) / "rootfs.tar"
        run_mmdebstrap(spec.suite, spec.packages, mirrors, tarball, log)
        log(f"importing {tarball.stat().st_size / 1e6:.0f} MB into Docker as {spec.tag()}")
        changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "ENV LANG=C.UTF-8",
                   *[f"LABEL {k}={v}" for k, v in _labels(spec, "offline").items()]]
        try:
            client.api.import_image(src=str(tarball), repository=spec.repository, tag=spec.digest(), changes=changes)
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
    log(f"building {tag} from the Dockerfile" + (f" on {base}" if base else ""))
    try:
        client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True,
                            buildargs={"BASE": base} if base else None, labels=_labels(spec, "dockerfile"))
    except (BuildError, APIError) as exc:
        raise ImageBuildFailed(
            f"docker build failed: {exc}. Without a registry, use `fixbot sandbox build --offline`"
        ) from exc
    return tag
