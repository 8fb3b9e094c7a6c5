"""Reading the machine's apt sources for the offline image (both file formats), and the image spec."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.bootstrap import mirror_lines, read_apt_sources
from sandbox.errors import ImageBuildFailed
from sandbox.image import ImageSpec

DEB822 = """\
Types: deb
# a comment inside the stanza
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
Enabled: no
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
"""
ONE_LINE = """\
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] http://one.example/debian bookworm main
deb-src http://one.example/debian bookworm main
deb http://other.example/ubuntu jammy main
"""


def write_apt(tmp_path: Path, sources_list: str = "", deb822: str = "") -> Path:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(sources_list)
    if deb822:
        (tmp_path / "sources.list.d" / "debian.sources").write_text(deb822)
    (tmp_path / "sources.list.d" / "vendor.list.disabled").write_text("deb http://vendor.example/apt stable main\n")
    return tmp_path


def test_deb822_sources(tmp_path):
    lines = mirror_lines(read_apt_sources(write_apt(tmp_path, deb822=DEB822)), "bookworm")
    assert lines == ["deb http://mirror.example/debian bookworm main contrib",
                     "deb http://mirror.example/debian bookworm-updates main contrib",
                     "deb http://mirror.example/debian-security bookworm-security main"]


def test_one_line_sources_with_options(tmp_path):
    lines = mirror_lines(read_apt_sources(write_apt(tmp_path, sources_list=ONE_LINE)), "bookworm")
    assert lines == ["deb http://one.example/debian bookworm main"]


def test_no_matching_suite_is_a_clear_error(tmp_path):
    sources = read_apt_sources(write_apt(tmp_path, sources_list=ONE_LINE))
    with pytest.raises(ImageBuildFailed, match="no apt source for Debian trixie.*--mirror"):
        mirror_lines(sources, "trixie")


def test_this_machine_has_a_usable_mirror():
    assert mirror_lines(read_apt_sources(), "bookworm")


def test_spec_tag_is_a_content_hash():
    a, b = ImageSpec(), ImageSpec(packages=ImageSpec().packages[::-1])
    assert a.tag() == b.tag() and a.tag().startswith("fixbot-sandbox:")
    assert ImageSpec(packages=("python3",)).tag() != a.tag()
