"""A requirement no index serves, loosened to its name: an old project may pin a range of a dependency whose
releases in it are gone from the index (deleted, or never mirrored), and nobody can install it as written. The
nearest release that installs is the closest to the environment the bug lived in; a test that needs the old
release then fails, and is classed as the environment's (bot/fix/reproduce/classify.py), not the code's.

In: pip's failed install command and the requirement pip found no release of. Out: the command and a script that
rewrites the lines naming it in the requirement files the command reads, in the build container. Never: a
requirement loosened that has no version range (there is nothing to loosen), or a file outside the checkout."""
from __future__ import annotations

import re
from collections.abc import Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

_FILE_OPTIONS = ("-r", "--requirement")

# Run in the build container (cwd /src) with the canonical name, then the files: each line that requires that name
# keeps its name, extras and marker and loses its version range. Prints the files it changed.
RELAX_SCRIPT = r"""
import re, sys
name, files = sys.argv[1], sys.argv[2:]
line_re = re.compile(r"^(\s*)([A-Za-z0-9][A-Za-z0-9._-]*)(\s*\[[^\]]*\])?\s*[<>=!~][^;#]*(;[^#]*)?(.*)$")
for path in files:
    text = open(path, encoding="utf-8").read()
    out, changed = [], False
    for line in text.splitlines(keepends=True):
        m = line_re.match(line.rstrip("\r\n"))
        if m and re.sub(r"[-_.]+", "-", m.group(2)).lower() == name:
            end = line[len(line.rstrip("\r\n")):]
            marker = (" " + m.group(4).strip()) if m.group(4) else ""
            comment = ("  " + m.group(5).strip()) if m.group(5).strip() else ""
            line = m.group(1) + m.group(2) + (m.group(3) or "").strip() + marker + comment + end
            changed = True
        out.append(line)
    if changed:
        open(path, "w", encoding="utf-8").write("".join(out))
        print(path)
"""


def loosened(requirement: str | None) -> str | None:
    """The requirement's name (with its extras) when it has a version range to drop; else None."""
    try:
        parsed = Requirement(requirement or "")
    except InvalidRequirement:
        return None
    if not parsed.specifier:
        return None
    return parsed.name + (f"[{','.join(sorted(parsed.extras))}]" if parsed.extras else "")


def requirement_files(argv: Sequence[str]) -> list[str]:
    """The requirement files a pip command reads (`-r FILE`, `-rFILE`, `--requirement=FILE`), relative to /src."""
    files: list[str] = []
    for i, arg in enumerate(argv):
        if arg in _FILE_OPTIONS and i + 1 < len(argv):
            files.append(argv[i + 1])
        elif arg.startswith("--requirement="):
            files.append(arg.split("=", 1)[1])
        elif arg.startswith("-r") and len(arg) > 2:
            files.append(arg[2:])
    return [f for f in files if not f.startswith("/") and ".." not in f.split("/")]


def relaxed_argv(argv: Sequence[str], requirement: str) -> tuple[str, ...]:
    """The command with a requirement given on it directly loosened (those in files: RELAX_SCRIPT)."""
    name, loose = canonicalize_name(Requirement(requirement).name), loosened(requirement)
    out = []
    for arg in argv:
        try:
            same = not arg.startswith("-") and canonicalize_name(Requirement(arg).name) == name
        except InvalidRequirement:
            same = False
        out.append(loose if same and loose and re.search(r"[<>=!~]", arg) else arg)
    return tuple(out)
