"""Offline image path: bootstrap a Debian base with mmdebstrap from the machine's own apt mirror, then
`docker import` it. Nothing is pulled from a container registry."""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import ImageBuildFailed

Log = Callable[[str], None]
DOC_EXCLUDES = ("/usr/share/man/*", "/usr/share/doc/*", "/usr/share/info/*", "/usr/share/locale/*")
POCKETS = ("", "-updates", "-security")
# the names a Debian archive's suites go by: a source using one is a Debian mirror, which serves the others too
DEBIAN_RELEASES = ("buster", "bullseye", "bookworm", "trixie", "forky", "oldoldstable", "oldstable", "stable",
                   "testing")


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]


def _one_line_entries(text: str) -> Iterable[AptSource]:
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        words = line.split()[1:]
        if words and words[0].startswith("["):  # options: [arch=amd64 signed-by=...]
            while words and not words[0].endswith("]"):
                words.pop(0)
            words = words[1:]
        if len(words) >= 2:
            yield AptSource(words[0], (words[1],), tuple(words[2:]))


def _deb822_entries(text: str) -> Iterable[AptSource]:
    stanzas: list[dict[str, str]] = [{}]
    key = None
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            stanzas.append({})
            key = None
        elif raw[0] in " \t" and key:
            stanzas[-1][key] += " " + raw.strip()
        elif ":" in raw:
            key, _, value = raw.partition(":")
            key = key.strip().lower()
            stanzas[-1][key] = value.strip()
    for s in stanzas:
        if "deb" not in s.get("types", "").split() or s.get("enabled", "yes").lower() == "no":
            continue
        for uri in s.get("uris", "").split():
            yield AptSource(uri, tuple(s.get("suites", "").split()), tuple(s.get("components", "").split()))


def read_apt_sources(apt_dir: Path = Path("/etc/apt")) -> list[AptSource]:
    found: list[AptSource] = []
    files = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in files:
        if path.is_file():
            found.extend(_one_line_entries(path.read_text(errors="replace")))
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        found.extend(_deb822_entries(path.read_text(errors="replace")))
    return found


def _debian_suite(suite: str) -> tuple[str, str] | None:
    """(release, pocket) of a Debian suite name: ("bookworm", "-security"); None for anything else."""
    for pocket in POCKETS[::-1]:  # "" last: it matches every name
        release = suite[:len(suite) - len(pocket)] if pocket else suite
        if suite.endswith(pocket) and release in DEBIAN_RELEASES:
            return release, pocket
    return None


def mirror_lines(sources: Sequence[AptSource], suite: str) -> list[str]:
    """One-line apt entries for `suite`, `suite-updates` and `suite-security`, in the machine's order.

    The entries naming `suite` when the machine has them; otherwise the machine's entries for another Debian
    release, moved to `suite` pocket by pocket (a bookworm machine's mirror serves bullseye and trixie at the same
    addresses, security updates included: `bullseye-security` on the security mirror)."""
    def same(name: str) -> str | None:
        return name if name in {suite + pocket for pocket in POCKETS} else None

    def moved(name: str) -> str | None:
        found = _debian_suite(name)
        return suite + found[1] if found else None

    lines = _lines(sources, same)
    if not any(line.split()[2] == suite for line in lines):
        # a Debian archive always has `main`; a vendor's repository named after the release (`bookworm stable`)
        # need not serve another release
        lines = _lines([s for s in sources if "main" in s.components], moved)
    if not any(line.split()[2] == suite for line in lines):
        raise ImageBuildFailed(
            f"no apt source for Debian {suite} in /etc/apt/sources.list(.d): add one, or pass --mirror URL"
        )
    return lines


def _lines(sources: Sequence[AptSource], to_suite: Callable[[str], str | None]) -> list[str]:
    lines: list[str] = []
    for src in sources:
        if not src.uri.startswith(("http://", "https://", "file:/")):
            continue
        for s in src.suites:
            wanted = to_suite(s)
            line = f"deb {src.uri} {wanted} {' '.join(src.components) or 'main'}"
            if wanted and line not in lines:
                lines.append(line)
    return lines


def run_mmdebstrap(suite: str, packages: Sequence[str], mirrors: Sequence[str], out: Path, log: Log,
                   merged_usr_hook: bool = False) -> None:
    """merged_usr_hook: /usr merged by mmdebstrap's hook, not by the usrmerge package that apt otherwise picks for
    the essential init-system-helpers, and that brings perl (46 MB)."""
    if shutil.which("mmdebstrap") is None:
        raise ImageBuildFailed("mmdebstrap is not installed: run `apt-get install mmdebstrap` (or `make setup`)")
    hooks = ["--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr"] if merged_usr_hook else []
    cmd = ["mmdebstrap", "--variant=essential", *hooks, f"--include={','.join(packages)}",
           *[f"--dpkgopt=path-exclude={p}" for p in DOC_EXCLUDES], suite, str(out), *mirrors]
    log(f"bootstrapping Debian {suite} with {', '.join(packages)} (about a minute)")
    start = time.monotonic()
    tail: list[str] = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-20:]
            if line.startswith("I: "):
                log(f"  [{time.monotonic() - start:5.0f}s] {line[3:].rstrip()}")
    if proc.returncode != 0:
        raise ImageBuildFailed(f"mmdebstrap failed (exit {proc.returncode}):\n" + "\n".join(tail))
