"""Lifecycle of sandbox containers: create one hardened container, remove it, find leftovers."""
from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any

import docker
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from .channel import Channel
from .errors import DockerUnavailable, ImageMissing
from .image import build_command
from .types import Limits
from .wire import runner_source

LABEL = "fixbot.sandbox"
OWNER_LABEL = "fixbot.owner"
SANDBOX_USER = "65534:65534"  # nobody
WORKDIR = "/work"

def owner_tag() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def connect() -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except DockerException as exc:
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        raise DockerUnavailable(
            f"cannot reach the Docker engine at {host}: {exc.__class__.__name__}. Start the daemon (or set "
            "DOCKER_HOST), or run with --sandbox local to opt out of isolation."
        ) from exc


@dataclass
class Worker:
    """A warm container and the channel to its resident runner."""

    id: str
    channel: Channel


def _host_config(client: docker.DockerClient, limits: Limits) -> dict[str, Any]:
    config: dict[str, Any] = client.api.create_host_config(
        auto_remove=True,
        network_mode="none",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        read_only=True,
        tmpfs={WORKDIR: f"rw,exec,nosuid,nodev,size={limits.workdir_mb}m,mode=1777"},
        mem_limit=f"{limits.memory_mb}m",
        memswap_limit=f"{limits.memory_mb}m",
        pids_limit=limits.pids,
        nano_cpus=int(limits.cpus * 1e9),
        ulimits=[docker.types.Ulimit(name="nofile", soft=1024, hard=1024)],
    )
    return config


def create(client: docker.DockerClient, image: str, limits: Limits, session: str) -> Worker:
    """Create, attach, then start: attaching first means StdinOnce ties the container's life to us."""
    api = client.api
    try:
        cid = api.create_container(
            image,
            command=["python3", "-I", "-c", runner_source()],
            name=f"fixbot-sandbox-{uuid.uuid4().hex[:12]}",
            detach=False,
            stdin_open=True,  # with detach=False: StdinOnce, so our disconnect closes the runner's stdin
            tty=False,
            labels={LABEL: session, OWNER_LABEL: owner_tag()},
            environment={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": WORKDIR},
            user=SANDBOX_USER,
            hostname="sandbox",
            host_config=_host_config(client, limits),
        )["Id"]
    except ImageNotFound as exc:
        raise ImageMissing(f"sandbox image {image} is missing: run `{build_command(image)}`") from exc
    try:
        handle = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        api.start(cid)
    except BaseException:
        remove(client, cid)
        raise
    return Worker(cid, Channel(handle))


def remove(client: docker.DockerClient, container_id: str) -> None:
    try:
        client.api.remove_container(container_id, force=True)
    except NotFound:
        pass
    except APIError as exc:
        if exc.status_code != 409:  # 409: removal already in progress (auto-remove)
            raise


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftovers(client: docker.DockerClient, everything: bool = False) -> list[str]:
    """Sandbox containers whose owning process is gone (or all of them with everything=True)."""
    found = []
    me = socket.gethostname()
    for c in client.containers.list(all=True, filters={"label": LABEL}):
        host, _, pid = c.labels.get(OWNER_LABEL, ":").rpartition(":")
        # Another host's containers (a container action sharing this engine) are only removed on request.
        orphan = host == me and (not pid.isdigit() or not _pid_alive(int(pid)))
        if everything or orphan:
            found.append(c.id)
    return found
