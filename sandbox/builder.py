"""Build an image by running commands in a container whose only way out is a proxy to named hosts.

Building a project runs its code (setup.py, build backends). That code gets a container with no host mounts, no
Docker socket, none of the host's environment and no network interface but loopback. Its one way out is a Unix
socket on a volume shared with the egress proxy's container (sandbox/assets/egress_proxy.py), which tunnels
CONNECT requests to the allowed host names and refuses everything else: the host, other containers, the internet.
(An `internal` Docker network would not do: a container on one still reaches the host's own addresses.)
"""
from __future__ import annotations

import io
import tarfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources

import docker
from docker.errors import APIError, ImageNotFound, NotFound

from .containers import LABEL, OWNER_LABEL, owner_tag
from .errors import ImageMissing, SandboxError
from .image import build_command

SRC = "/src"
PROXY_PORT = 3128
EGRESS_DIR = "/run/fixbot-egress"
SOCKET = f"{EGRESS_DIR}/proxy.sock"
PROXY_READY_S = 30.0
OUTPUT_TAIL = 200  # lines of a command's output kept for its result


class BuildError(SandboxError):
    """The build machinery itself failed (network, proxy, commit); a failing command is a CommandResult instead."""


@dataclass(frozen=True, kw_only=True)
class BuildSpec:
    """A build container: its base, the files it starts with, and where it may connect to."""

    base: str
    files: Mapping[str, bytes]  # relative paths, placed under /src
    extra_files: Mapping[str, bytes] = field(default_factory=dict)  # absolute paths (a CA bundle); removed at commit
    allow_hosts: Sequence[str] = ()  # "host" (ports 443 and 80) or "host:port"
    env: Mapping[str, str] = field(default_factory=dict)  # for every command; the proxy's variables are added
    memory_mb: int = 4096
    pids: int = 1024


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    argv: tuple[str, ...]
    exit_code: int
    output: str  # the last OUTPUT_TAIL lines, stdout and stderr interleaved
    duration_s: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def _tar(files: Mapping[str, bytes], prefix: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{prefix.strip('/')}/{name.lstrip('/')}".lstrip("/"))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class BuildBox:
    """A running build container: run commands in /src, then commit the result as an image."""

    def __init__(self, client: docker.DockerClient, container_id: str, spec: BuildSpec, env: Mapping[str, str],
                 log: Callable[[str], None]):
        self.client, self.id, self.spec, self.env, self.log = client, container_id, spec, dict(env), log

    def run(self, argv: Sequence[str], *, timeout_s: float, echo: bool = True) -> CommandResult:
        """Run one command in /src as root; its output is logged line by line as it comes (with `echo`)."""
        api, start = self.client.api, time.monotonic()
        exec_id = api.exec_create(self.id, list(argv), environment=self.env, workdir=SRC)["Id"]
        stream = api.exec_start(exec_id, stream=True)
        expired = threading.Event()

        def stop() -> None:  # an exec cannot be killed through the API; `kill -1` spares only init (sleep) and itself
            expired.set()
            api.exec_start(api.exec_create(self.id, ["sh", "-c", "kill -9 -1"])["Id"])

        timer = threading.Timer(timeout_s, stop)
        timer.start()
        lines: list[str] = []
        pending = ""
        try:
            for chunk in stream:
                pending += chunk.decode(errors="replace")
                *done, pending = pending.split("\n")
                for line in done:
                    lines.append(line)
                    if echo:
                        self.log(line)
                del lines[:-OUTPUT_TAIL]
        finally:
            timer.cancel()
        if pending:
            lines.append(pending)
        exit_code = api.exec_inspect(exec_id).get("ExitCode")
        return CommandResult(argv=tuple(argv), exit_code=-1 if exit_code is None else exit_code,
                             output="\n".join(lines[-OUTPUT_TAIL:]), duration_s=time.monotonic() - start,
                             timed_out=expired.is_set())

    def commit(self, repository: str, tag: str, labels: Mapping[str, str]) -> str:
        """The container's file system, without /src and the extra files, as an image with the base's config."""
        leftovers = [SRC, "/root/.cache", *self.spec.extra_files]
        self.run(["sh", "-c", 'rm -rf "$@"; rm -rf /tmp/* /tmp/.[!.]*', "sh", *leftovers], timeout_s=120,
                 echo=False)
        base = self.client.api.inspect_image(self.spec.base)["Config"] or {}
        conf = {"Env": base.get("Env"), "Cmd": base.get("Cmd"), "Entrypoint": base.get("Entrypoint"),
                "WorkingDir": base.get("WorkingDir") or "", "Labels": {**(base.get("Labels") or {}), **labels}}
        try:
            image_id: str = self.client.api.commit(self.id, repository=repository, tag=tag, conf=conf)["Id"]
        except APIError as exc:
            raise BuildError(f"docker commit failed: {exc.explanation or exc}") from None
        return image_id


def _remove(client: docker.DockerClient, container_id: str | None) -> None:
    if container_id:
        try:
            client.api.remove_container(container_id, force=True)
        except NotFound:
            pass


def _proxy_source() -> str:
    return resources.files("sandbox").joinpath("assets/egress_proxy.py").read_text()


def _wait_ready(client: docker.DockerClient, cid: str, what: str) -> None:
    api, deadline = client.api, time.monotonic() + PROXY_READY_S
    while b"ready" not in api.logs(cid):
        if time.monotonic() > deadline or api.inspect_container(cid)["State"]["Status"] == "exited":
            raise BuildError(f"the build's {what} did not start: {api.logs(cid).decode(errors='replace')[-500:]}")
        time.sleep(0.2)


def _start_proxy(client: docker.DockerClient, spec: BuildSpec, volume: str, labels: dict[str, str]) -> str:
    """The egress proxy: on the default bridge, serving the Unix socket on the shared volume."""
    api = client.api
    cid: str = api.create_container(
        spec.base, command=["python3", "-I", "-c", _proxy_source(), "serve", SOCKET, *spec.allow_hosts],
        name=f"fixbot-egress-{uuid.uuid4().hex[:12]}", labels=labels, user="0:0",
        environment={"PATH": "/usr/local/bin:/usr/bin:/bin"},
        host_config=api.create_host_config(network_mode="bridge", cap_drop=["ALL"], read_only=True,
                                           security_opt=["no-new-privileges"], mem_limit="256m", pids_limit=256,
                                           binds={volume: {"bind": EGRESS_DIR, "mode": "rw"}}))["Id"]
    api.start(cid)
    _wait_ready(client, cid, "egress proxy")
    return cid


def _create_box(client: docker.DockerClient, spec: BuildSpec, volume: str, labels: dict[str, str]) -> str:
    """The build container: root (pip installs into the image), no network; its init forwards the proxy port."""
    api = client.api
    cid: str = api.create_container(
        spec.base, command=["python3", "-I", "-c", _proxy_source(), "forward", str(PROXY_PORT), SOCKET],
        name=f"fixbot-build-{uuid.uuid4().hex[:12]}", labels=labels, user="0:0", hostname="build",
        environment={"PATH": "/usr/local/bin:/usr/bin:/bin"},
        host_config=api.create_host_config(network_mode="none", cap_drop=["ALL"],
                                           cap_add=["CHOWN", "DAC_OVERRIDE", "FOWNER"],
                                           security_opt=["no-new-privileges"], mem_limit=f"{spec.memory_mb}m",
                                           memswap_limit=f"{spec.memory_mb}m", pids_limit=spec.pids,
                                           binds={volume: {"bind": EGRESS_DIR, "mode": "ro"}}))["Id"]
    api.put_archive(cid, "/", _tar(spec.files, SRC))
    if spec.extra_files:
        api.put_archive(cid, "/", _tar(spec.extra_files, "/"))
    api.start(cid)
    _wait_ready(client, cid, "proxy forwarder")
    return cid


@contextmanager
def build_box(client: docker.DockerClient, spec: BuildSpec, log: Callable[[str], None]) -> Iterator[BuildBox]:
    """A build container ready for commands; it, the proxy and their volume are removed on the way out."""
    try:
        client.images.get(spec.base)
    except ImageNotFound:
        raise ImageMissing(f"base image {spec.base} is missing: run `{build_command(spec.base)}`") from None
    session = uuid.uuid4().hex[:12]
    labels = {LABEL: f"build-{session}", OWNER_LABEL: owner_tag()}
    volume = client.api.create_volume(f"fixbot-egress-{session}", labels=labels)["Name"]
    proxy_id = box_id = None
    try:
        proxy_id = _start_proxy(client, spec, volume, labels)
        box_id = _create_box(client, spec, volume, labels)
        proxy = f"http://127.0.0.1:{PROXY_PORT}"
        env = {"HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy, "https_proxy": proxy,
               "HOME": "/root", "LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin", **spec.env}
        yield BuildBox(client, box_id, spec, env, log)
    finally:
        _remove(client, box_id)
        _remove(client, proxy_id)
        try:
            client.api.remove_volume(volume, force=True)
        except (NotFound, APIError):
            pass
