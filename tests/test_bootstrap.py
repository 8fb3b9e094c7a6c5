"""Reading the machine's apt sources for the offline images (both file formats), and the image specs."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.bootstrap import mirror_lines, read_apt_sources
from sandbox.errors import ImageBuildFailed, UnknownPython
from sandbox.image import DEFAULT_PYTHON, IMAGE_ENV_VAR, PYTHONS, ImageSpec, build_command, default_image

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
NO_DEBIAN = """\
deb http://other.example/ubuntu jammy main
deb http://vendor.example/apt stable-backports main
deb http://cdrom.example/debian cdrom:bookworm main
deb https://vendor.example/linux/debian bookworm stable
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


def test_other_releases_are_served_by_the_same_mirrors(tmp_path):
    """A bookworm machine's sources name only bookworm: bullseye and trixie come from the same addresses, pocket
    by pocket (bullseye's security suite is `bullseye-security` too)."""
    sources = read_apt_sources(write_apt(tmp_path, deb822=DEB822))
    assert mirror_lines(sources, "bullseye") == [
        "deb http://mirror.example/debian bullseye main contrib",
        "deb http://mirror.example/debian bullseye-updates main contrib",
        "deb http://mirror.example/debian-security bullseye-security main"]
    assert [line.split()[2] for line in mirror_lines(sources, "trixie")] == [
        "trixie", "trixie-updates", "trixie-security"]


def test_a_release_the_machine_names_is_used_as_it_is(tmp_path):
    both = ONE_LINE + "deb http://trixie.example/debian trixie main\n"
    assert mirror_lines(read_apt_sources(write_apt(tmp_path, sources_list=both)), "trixie") == [
        "deb http://trixie.example/debian trixie main"]


def test_no_debian_source_is_a_clear_error(tmp_path):
    sources = read_apt_sources(write_apt(tmp_path, sources_list=NO_DEBIAN))
    with pytest.raises(ImageBuildFailed, match="no apt source for Debian trixie.*--mirror"):
        mirror_lines(sources, "trixie")


@pytest.mark.parametrize("suite", sorted(PYTHONS.values()))
def test_this_machine_has_a_usable_mirror(suite):
    lines = mirror_lines(read_apt_sources(), suite)
    assert [line.split()[2] for line in lines][0] == suite


def test_spec_tag_is_a_content_hash_with_the_python():
    a, b = ImageSpec(), ImageSpec(packages=ImageSpec().packages[::-1])
    assert a.tag() == b.tag() and a.tag().startswith(f"fixbot-sandbox:py{DEFAULT_PYTHON}-")
    assert ImageSpec(packages=("python3",)).tag() != a.tag()
    tags = {python: ImageSpec(python=python).tag() for python in PYTHONS}
    assert len(set(tags.values())) == 3 and all(tag.startswith(f"fixbot-sandbox:py{python}-")
                                                for python, tag in tags.items())
    assert {python: ImageSpec(python=python).suite for python in PYTHONS} == {
        "3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}


def test_an_unknown_python_names_the_known_ones():
    for bad in ("3.10", "3", "py3.11", ""):
        with pytest.raises(UnknownPython, match=r"Python '.*'.*: choose one of 3\.9, 3\.11, 3\.13$"):
            ImageSpec(python=bad)
    with pytest.raises(UnknownPython):
        default_image("2.7")


def test_the_variable_overrides_the_default_pythons_image_only(monkeypatch):
    monkeypatch.delenv(IMAGE_ENV_VAR, raising=False)
    assert default_image() == default_image(DEFAULT_PYTHON) == ImageSpec().tag()
    monkeypatch.setenv(IMAGE_ENV_VAR, "mine:latest")
    assert default_image() == default_image(DEFAULT_PYTHON) == "mine:latest"
    assert default_image("3.9") == ImageSpec(python="3.9").tag()
    assert build_command(default_image("3.13")) == "fixbot sandbox build --offline --python 3.13"
    assert build_command(ImageSpec().tag()) == build_command("mine:latest") == "fixbot sandbox build --offline"
