"""Build the GitHub Action's image on a machine without a container registry.

    .venv/bin/python scripts/build_action_image.py [--tag NAME:TAG]   # prints the tag

1. Two bases, Debian bookworm bootstrapped from the machine's apt mirror (the sandbox's offline recipe, other
   package lists), unless they exist already: the build stage's with venv, git and binutils, and the image's
   own with python3 and llama.cpp's runtime libraries only (the git binary comes from the build stage: the git
   package would bring perl, 90 MB).
2. fixbot and every dependency as wheels, built on the host (`pip wheel`, which reuses pip's cache), so the
   image build needs no network at all.
3. `docker build` of the repository's Dockerfile with BASE and BUILD_BASE set to those images, the network off.
On GitHub none of this is needed: the runner builds the Dockerfile from python:3.11-slim-bookworm.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox.containers import connect  # noqa: E402
from sandbox.image import ImageSpec, build_offline, image_exists  # noqa: E402

# libstdc++6 and libgomp1: llama.cpp's native library needs them at run time
BASE_SPEC = ImageSpec(packages=("python3", "ca-certificates", "libstdc++6", "libgomp1"),
                      repository="fixbot-action-base", no_perl=True)
# venv makes /opt/venv, git is copied from here, binutils strips native code (scripts/slim_venv.py)
BUILD_SPEC = ImageSpec(packages=("python3", "python3-venv", "git", "binutils", "libstdc++6", "libgomp1"),
                       repository="fixbot-action-build")
SOURCES = ("pyproject.toml", "requirements/action.lock", "README.md", "action.yml", "Dockerfile", "bot", "sandbox",
           "eval", "scripts/slim_venv.py")
CMAKE_ARGS_FILE = ROOT / "scripts" / "llama-cmake-args"  # how llama-cpp-python is compiled: see setup.sh
REPOSITORY = "fixbot-action"


def source_digest() -> str:
    """A hash of everything the image is built from: a change to any of it means a new tag."""
    h = hashlib.sha256()
    for name in SOURCES:
        if name == "README.md":
            continue  # prose; the image does not change with it
        path = ROOT / name
        files = sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts) \
            if path.is_dir() else [path]
        for f in files:
            h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(CMAKE_ARGS_FILE.read_bytes())
    return h.hexdigest()[:12]


def default_tag() -> str:
    return f"{REPOSITORY}:{source_digest()}"


def say(message: str) -> None:
    print(f"[action-image] {message}", flush=True)


def build(tag: str | None = None) -> str:
    """Builds the image unless one built from the same sources exists; returns its tag."""
    tag = tag or default_tag()
    client = connect()
    if image_exists(client, tag):
        say(f"{tag} exists (same sources)")
        return tag
    base, build_base = BASE_SPEC.tag(), BUILD_SPEC.tag()
    for spec in (BASE_SPEC, BUILD_SPEC):
        if not image_exists(client, spec.tag()):
            build_offline(client, spec, say)
    with tempfile.TemporaryDirectory(prefix="fixbot-action-") as tmp:
        context = Path(tmp)
        for name in SOURCES:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, context / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                (context / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, context / name)
        start = time.monotonic()
        say("building wheels on the host (requirements/action.lock, hashes checked, and fixbot; cached after the "
            "first time)")
        env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS_FILE.read_text().strip()}
        wheel = [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(context / "wheels")]
        subprocess.run([*wheel, "--require-hashes", "-r", str(context / "requirements" / "action.lock")], check=True,
                       env=env)
        subprocess.run([*wheel, "--no-deps", str(context)], check=True, env=env)
        say(f"wheels ready in {time.monotonic() - start:.0f} s; docker build {tag} on {base} (network off)")
        _image, logs = client.images.build(path=str(context), tag=tag, network_mode="none", rm=True, forcerm=True,
                                           buildargs={"BASE": base, "BUILD_BASE": build_base})
        for line in "".join(chunk.get("stream", "") for chunk in logs).splitlines():
            if line.startswith("[slim-venv] "):
                say(line)  # what the slimming of the virtualenv saved, step by step
    # the build stage's image is left behind untagged by the classic builder; it holds 1 GB of wheels
    client.images.prune(filters={"dangling": True, "label": "fixbot.action.stage=build"})
    say(f"built {tag}")
    return tag


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", help="default fixbot-action:<hash of the sources>")
    args = parser.parse_args()
    print(build(args.tag))
    return 0


if __name__ == "__main__":
    sys.exit(main())
