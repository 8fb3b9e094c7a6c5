"""Runs code it is given, isolated, and returns typed results. Knows nothing of LLMs or GitHub."""
from __future__ import annotations

from typing import Literal

from .errors import BadJob, DockerUnavailable, ImageBuildFailed, ImageMissing, SandboxError
from .types import FileContent, Job, Limits, RunResult, Sandbox

SandboxKind = Literal["docker", "local"]


def open_sandbox(kind: SandboxKind = "docker", *, image: str | None = None, limits: Limits = Limits(),
                 pool_size: int = 2) -> Sandbox:
    """The one place that picks an implementation; `local` must be asked for by name."""
    if kind == "docker":
        from .docker_sandbox import DockerSandbox

        return DockerSandbox(image=image, limits=limits, pool_size=pool_size)
    if kind == "local":
        from .local import LocalSandbox

        return LocalSandbox(limits=limits)
    raise SandboxError(f"unknown sandbox {kind!r}: choose docker or local")


__all__ = ["BadJob", "DockerUnavailable", "FileContent", "ImageBuildFailed", "ImageMissing", "Job", "Limits",
           "RunResult", "Sandbox", "SandboxError", "SandboxKind", "open_sandbox"]
