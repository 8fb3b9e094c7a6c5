"""Shared fixtures. A missing Docker engine, sandbox image or shared data fails the run: never a skip."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
FIXBOT = [sys.executable, "-m", "bot.cli.main"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that reaches the Docker engine through a fixture is a `docker` test; modules that reach it
    otherwise (a fixbot subprocess, a sandbox built in the test) say so with `pytestmark`."""
    for item in items:
        if "docker_client" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session")
def docker_client():
    from sandbox.containers import connect
    from sandbox.errors import DockerUnavailable

    try:
        return connect()
    except DockerUnavailable as exc:
        pytest.fail(f"the Docker engine is required for these tests: {exc}")


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    from sandbox.image import default_image, image_exists

    image = default_image()
    if not image_exists(docker_client, image):
        pytest.fail(f"sandbox image {image} is missing: run `make setup` (or `fixbot sandbox build --offline`)")
    return image


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"{SHARED_DATA} is missing: tests read the shared data set beside the repository")
    return SHARED_DATA


@pytest.fixture(scope="module")
def docker_sandbox(docker_client, sandbox_image):
    from sandbox.docker_sandbox import DockerSandbox

    sb = DockerSandbox(image=sandbox_image, pool_size=2, client=docker_client)
    yield sb
    sb.close()
    assert session_containers(docker_client, sb.session) == [], "containers left behind after close()"


def session_containers(client, session: str) -> list[str]:
    from sandbox.containers import LABEL

    # the low-level list: containers.list() inspects each one and fails on a container removed meanwhile
    return [c["Id"] for c in client.api.containers(all=True, filters={"label": f"{LABEL}={session}"})]


def run_fixbot(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*FIXBOT, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=full_env)
