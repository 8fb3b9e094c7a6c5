"""Requirements files: which ones install the test environment, what they include, which package indexes they name.

pip parses these files for real in the build container; this module reads only what the plan needs around them:
the `-r`/`-c` files they pull in (so a change there invalidates the cached environment) and the index URLs (so the
build container's egress filter can let those hosts through). Every other option passes through untouched.
"""
from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

from bot.checkout.repository import Checkout

# Top-level files installed as they are: requirements.txt and the ones named for tests or development.
_TOP_LEVEL = re.compile(r"requirements\.txt"
                        r"|requirements[-_](dev|devel|development|test|tests|testing)\.txt"
                        r"|(dev|test|tests|testing)[-_]requirements\.txt")
# In requirements/: the files with a test or development word in their name (test.txt, dev-py3.txt, ci_tests.txt);
# base.txt and its kind are reached through the `-r base.txt` such files start with.
_FOLDER_WORDS = frozenset({"dev", "devel", "development", "test", "tests", "testing"})
# Files whose content can change what gets installed, read for the digest whether or not a step installs them.
DECLARATION_FILE = re.compile(r"[^/]*requirements[^/]*\.(txt|in)|constraints?[^/]*\.txt|requirements/.+\.(txt|in)")
_VALUE_OPTIONS = {"-r": "requirement", "--requirement": "requirement", "-c": "constraint", "--constraint": "constraint",
                  "-i": "index", "--index-url": "index", "--extra-index-url": "index", "-f": "find_links",
                  "--find-links": "find_links"}
_COMMENT = re.compile(r"(^|\s+)#.*$")


@dataclass(frozen=True)
class RequirementsFile:
    path: str
    requirements: tuple[str, ...]  # the `-r` files it names, as paths in the repository (present or not)
    constraints: tuple[str, ...]  # the `-c` files, likewise
    index_urls: tuple[str, ...]  # --index-url/-i, --extra-index-url and URL --find-links values, as written
    empty: bool  # no line but blanks and comments


def chosen_requirement_files(checkout: Checkout) -> tuple[str, ...]:
    """requirements.txt first, then the other top-level ones, then those in requirements/, each group sorted."""
    top = sorted(p for p in checkout.files if _TOP_LEVEL.fullmatch(p))
    top.sort(key=lambda p: p != "requirements.txt")
    folder = sorted(p for p in checkout.files if re.fullmatch(r"requirements/[^/]+\.txt", p)
                    and _FOLDER_WORDS & set(re.split(r"[-_.]", posixpath.basename(p)[:-4].lower())))
    return (*top, *folder)


def logical_lines(text: str) -> Iterator[str]:
    """pip's reading of a requirements file: lines ending in a backslash joined to the next, then comments ('#' at
    the start or after a space) and blank lines dropped."""
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            pending += raw[:-1]
            continue
        line, pending = _COMMENT.sub("", pending + raw).strip(), ""
        if line:
            yield line
    if line := _COMMENT.sub("", pending).strip():
        yield line


def line_options(line: str) -> list[tuple[str, str, str]]:
    """The options of one logical line that this module cares about: (kind, option as written, value)."""
    try:
        tokens = shlex.split(line)
    except ValueError:  # an unbalanced quote: pip will say so
        tokens = line.split()
    found = []
    for i, token in enumerate(tokens):
        name, eq, value = token.partition("=")
        if token in _VALUE_OPTIONS and i + 1 < len(tokens):
            found.append((_VALUE_OPTIONS[token], token, tokens[i + 1]))
        elif eq and name.startswith("--") and name in _VALUE_OPTIONS:
            found.append((_VALUE_OPTIONS[name], name, value))
        elif len(token) > 2 and token[:2] in _VALUE_OPTIONS and token[1] != "-":  # -rfile, -ihttps://...
            found.append((_VALUE_OPTIONS[token[:2]], token[:2], token[2:]))
    return found


def resolve_include(including: str, target: str) -> str | None:
    """A `-r`/`-c` target as a path in the repository (pip reads it relative to the including file); None for a
    URL, an absolute path or one outside the repository."""
    if "://" in target or target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(including), target))
    return None if joined == ".." or joined.startswith("../") else joined


def scan_lines(path: str, lines: list[str]) -> RequirementsFile:
    includes: dict[str, list[str]] = {"requirement": [], "constraint": []}
    urls: list[str] = []
    for line in lines:
        for kind, _, value in line_options(line):
            if kind in includes and (resolved := resolve_include(path, value)):
                includes[kind].append(resolved)
            elif kind == "index" or (kind == "find_links" and "://" in value):
                urls.append(value)
    return RequirementsFile(path=path, requirements=tuple(includes["requirement"]),
                            constraints=tuple(includes["constraint"]), index_urls=tuple(urls), empty=not lines)


def read_closure(checkout: Checkout, roots: tuple[str, ...]) -> dict[str, RequirementsFile]:
    """Every file present in the checkout that the roots reach through -r and -c, the roots included, in the
    order found; a missing include is left out (pip reports it when it matters)."""
    found: dict[str, RequirementsFile] = {}
    queue = list(roots)
    while queue:
        path = queue.pop(0)
        if path in found or path not in checkout.files:
            continue
        found[path] = scan_lines(path, list(logical_lines(checkout.text(path))))
        queue += [*found[path].requirements, *found[path].constraints]
    return found


def _reached(files: dict[str, RequirementsFile], start: str) -> set[str]:
    """The files `pip install -r start` installs from besides start itself (through -r only, not -c)."""
    seen: set[str] = set()
    queue = list(files[start].requirements) if start in files else []
    while queue:
        path = queue.pop()
        if path not in seen and path in files:
            seen.add(path)
            queue += files[path].requirements
    return seen - {start}


def install_roots(chosen: tuple[str, ...], files: dict[str, RequirementsFile]) -> tuple[str, ...]:
    """The chosen files that need their own `pip install -r`: not empty, and not already installed by another
    chosen file's `-r` (of two that include each other, the first is kept)."""
    reached = {path: _reached(files, path) for path in chosen}
    kept = []
    for i, path in enumerate(chosen):
        covered = any(path in reached[other] and (other not in reached[path] or j < i)
                      for j, other in enumerate(chosen) if other != path)
        if path in files and not files[path].empty and not covered:
            kept.append(path)
    return tuple(kept)


def relocate(line: str, prefix: str) -> str:
    """A line of a requirements file written under `prefix/`, with its relative -r/-c targets still pointing at
    the same files (pip reads those relative to the file; other paths stay relative to the working directory)."""
    options = line_options(line)
    if len(options) != 1 or options[0][0] not in ("requirement", "constraint"):
        return line
    _, option, target = options[0]
    if "://" in target or target.startswith("/"):
        return line
    return f"{option} {posixpath.normpath(posixpath.join(prefix, target))}"
