"""Build the GitHub Action's image on a machine without a container registry.

    .venv/bin/python scripts/build_action_image.py [--tag fixbot-action:dev]

1. The base: Debian bookworm with python3, pip, venv and git, bootstrapped from the machine's apt mirror
   (the sandbox's offline recipe, another package list), unless it exists already.
2. fixbot and every dependency as wheels, built on the host (`pip wheel`, which reuses pip's cache), so the
   image build needs no network at all.
3. `docker build` of the repository's Dockerfile with BASE set to that image, the network off.
On GitHub none of this is needed: the runner builds the Dockerfile from python:3.11-slim-bookworm.
"""
from __future__ import annotations

import argparse
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

BASE_SPEC = ImageSpec(packages=("python3", "python3-pip", "python3-venv", "git", "ca-certificates"),
                      repository="fixbot-action-base")
SOURCES = ("pyproject.toml", "README.md", "action.yml", "Dockerfile", "bot", "sandbox", "eval")
DEFAULT_TAG = "fixbot-action:dev"


def say(message: str) -> None:
    print(f"[action-image] {message}", flush=True)


def build(tag: str = DEFAULT_TAG) -> str:
    client = connect()
    base = BASE_SPEC.tag()
    if not image_exists(client, base):
        build_offline(client, BASE_SPEC, say)
    with tempfile.TemporaryDirectory(prefix="fixbot-action-") as tmp:
        context = Path(tmp)
        for name in SOURCES:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, context / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, context / name)
        start = time.monotonic()
        say("building wheels on the host (pip wheel .[local]; cached after the first time)")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(context / "wheels"),
                        f"{context}[local]"], check=True)
        say(f"wheels ready in {time.monotonic() - start:.0f} s; docker build {tag} on {base} (network off)")
        client.images.build(path=str(context), tag=tag, buildargs={"BASE": base}, network_mode="none", rm=True,
                            forcerm=True)
    say(f"built {tag}")
    return tag


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default=DEFAULT_TAG)
    args = parser.parse_args()
    build(args.tag)
    return 0


if __name__ == "__main__":
    sys.exit(main())
