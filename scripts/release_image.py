"""action.yml's image line in a release (.github/workflows/release.yml; docs/action.md, "Releases").

    python3 scripts/release_image.py check vX.Y.Z                 # prints image=... and version=... lines
    python3 scripts/release_image.py pin IMAGE@sha256:DIGEST vX.Y.Z

check: before anything is built, the tag, pyproject.toml's version and action.yml's image agree, and the image
  is this repository owner's (GITHUB_REPOSITORY_OWNER): the tagged commit already names, by version, the image
  the workflow is about to build from it. Its two lines go to $GITHUB_OUTPUT.
pin: rewrites action.yml's image line to the pushed digest, for the release commit the tag then moves to.
Standard library only: it runs on the runner's own python3, before anything is installed.
"""
from __future__ import annotations

import os
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "fixbot"
_OWNER = r"(?P<owner>[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)"
# the two shapes action.yml's `runs.image` may take: a version (the source tree) or a digest (a release commit)
BY_VERSION = re.compile(rf"docker://ghcr\.io/{_OWNER}/{NAME}:(?P<version>\d+\.\d+\.\d+)")
BY_DIGEST = re.compile(rf"docker://ghcr\.io/{_OWNER}/{NAME}@(?P<digest>sha256:[0-9a-f]{{64}})")
_IMAGE_LINE = re.compile(r"^(?P<indent>[ \t]+)image:[ \t]*(?P<value>[^\s#]+)(?P<rest>.*)$", re.M)


class ReleaseError(Exception):
    """The release cannot go on; the message says why, in one line."""


def image_line(action_yml: str) -> re.Match[str]:
    """The `image:` line of the `runs:` block."""
    runs = re.search(r"^runs:[ \t]*\n", action_yml, re.M)
    found = _IMAGE_LINE.search(action_yml, runs.end()) if runs else None
    if found is None:
        raise ReleaseError("action.yml has no `image:` line under `runs:`")
    return found


def version_of(tag: str) -> str:
    match = re.fullmatch(r"v(\d+\.\d+\.\d+)", tag)
    if not match:
        raise ReleaseError(f"tag {tag!r}: a release tag is vMAJOR.MINOR.PATCH, e.g. v0.2.0")
    return match.group(1)


def check(tag: str, owner: str, action_yml: str, pyproject: str) -> dict[str, str]:
    """The image to build and its version, once the tag, pyproject.toml and action.yml agree."""
    version = version_of(tag)
    declared = tomllib.loads(pyproject)["project"]["version"]
    if declared != version:
        raise ReleaseError(f"tag {tag} but pyproject.toml says version {declared}: bump both in one commit")
    value = image_line(action_yml).group("value")
    if BY_DIGEST.fullmatch(value):
        raise ReleaseError(f"action.yml names a digest already ({value}): this commit is a release commit")
    match = BY_VERSION.fullmatch(value)
    image = f"ghcr.io/{owner.lower()}/{NAME}"
    if not match or match.group("version") != version or match.group("owner") != owner.lower():
        raise ReleaseError(f"action.yml's image is {value}, not docker://{image}:{version}: a tag of the Action "
                           "names the image built from it, so set that line in the release's commit")
    return {"image": image, "version": version}


def pin(action_yml: str, reference: str, tag: str) -> str:
    """action.yml with its image line naming `reference` (IMAGE@sha256:...), the version as a comment."""
    value = f"docker://{reference}"
    if not BY_DIGEST.fullmatch(value):
        raise ReleaseError(f"{reference!r} is not ghcr.io/OWNER/{NAME}@sha256:<64 hex digits>")
    line = image_line(action_yml)
    new = f"{line.group('indent')}image: {value} # {tag}"
    return action_yml[:line.start()] + new + action_yml[line.end():]


def main(argv: list[str]) -> int:
    action = ROOT / "action.yml"
    try:
        if len(argv) == 2 and argv[0] == "check":
            found = check(argv[1], os.environ.get("GITHUB_REPOSITORY_OWNER", ""), action.read_text(),
                          (ROOT / "pyproject.toml").read_text())
            print("\n".join(f"{key}={value}" for key, value in found.items()))
        elif len(argv) == 3 and argv[0] == "pin":
            version_of(argv[2])
            action.write_text(pin(action.read_text(), argv[1], argv[2]))
        else:
            print(__doc__.split("\n\n")[1], file=sys.stderr)
            return 2
    except ReleaseError as exc:
        print(f"::error::release: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
