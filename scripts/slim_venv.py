"""Slims the Action image's virtualenv, in the image's build stage (Dockerfile), so that only what `fixbot ci` runs
reaches the published image.

    /opt/venv/bin/python scripts/slim_venv.py      # run by the venv's own interpreter

1. Distributions that nothing the Action runs requires are uninstalled. Kept: what fixbot needs, llama-cpp-python
   without its [server] extra (the Action loads the model in its own process; the server is for tests and
   benches), and pip (`fixbot ci` reads pip's configuration with `python -m pip config list`).
2. llama.cpp's libraries: its CMake install leaves a second copy in site-packages/lib, unused, and a wheel holds
   each library three times (libX.so, .so.0, .so.0.N: a wheel has no symlinks); one file each, the rest symlinks.
3. tests/ directories.
4. Symbols and debug info of native code (strip --strip-unneeded), except the libraries auditwheel grafted into
   *.libs/ (stripping a patchelf-rewritten library breaks it). An extension that imported before stripping and
   not after gets its original file back.
5. Bytecode only for the modules the Action imports; anything else compiles the first time it is imported.
Needs only the standard library and `packaging` (a fixbot dependency); stdout says what each step saved.
"""
from __future__ import annotations

import importlib.machinery
import importlib.metadata as md
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def say(message: str) -> None:
    print(f"[slim-venv] {message}", flush=True)  # scripts/build_action_image.py shows these lines of the build


ROOTS = (("fixbot", ()), ("llama-cpp-python", ()), ("pip", ()))
RUNTIME_PACKAGES = ("bot", "sandbox")  # every module of these is imported once to write its bytecode


def needed() -> set[str]:
    """The requirement closure of ROOTS, by canonical name, with markers evaluated (extras only where asked)."""
    seen: set[str] = set()
    todo = [(canonicalize_name(name), tuple(extras)) for name, extras in ROOTS]
    while todo:
        name, extras = todo.pop()
        key = f"{name}{list(extras)}"
        if key in seen:
            continue
        seen.add(key)
        for text in md.distribution(name).requires or ():
            req = Requirement(text)
            if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (*extras, "")):
                continue
            todo.append((canonicalize_name(req.name), tuple(sorted(req.extras))))
    return {key.partition("[")[0] for key in seen}


def uninstall_unneeded() -> None:
    keep = needed()
    extra = sorted({canonicalize_name(d.metadata["Name"]) for d in md.distributions()} - keep)
    if extra:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", *extra], check=True)
    say(f"uninstalled {len(extra)} distribution(s) nothing needs: {', '.join(extra) or 'none'}")


def size(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def one_copy_of_llama_libraries(site: Path) -> int:
    saved = 0
    stray = site / "lib"  # CMake's install of llama.cpp, listed in llama-cpp-python's RECORD; never loaded
    record = {f.as_posix() for f in md.distribution("llama-cpp-python").files or ()}
    if stray.is_dir() and all(p.relative_to(site).as_posix() in record for p in stray.rglob("*") if p.is_file()):
        saved += size(stray)
        shutil.rmtree(stray)
    by_content: dict[bytes, Path] = {}
    # libX.so first: the name llama_cpp opens; libX.so.0 (the SONAME the others need) becomes a link to it
    for lib in sorted((site / "llama_cpp" / "lib").glob("*.so*"), key=lambda p: (len(p.name), p.name)):
        if lib.is_symlink():
            continue
        first = by_content.setdefault(lib.read_bytes(), lib)
        if first != lib:
            saved += lib.stat().st_size
            lib.unlink()
            lib.symlink_to(first.name)
    return saved


def remove_tests(site: Path) -> int:
    saved = 0
    for tests in sorted(site.rglob("tests"), reverse=True):
        if tests.is_dir() and (tests.parent / "__init__.py").exists():
            saved += size(tests)
            shutil.rmtree(tests)
    return saved


def extension_name(site: Path, path: Path) -> str | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if path.name.endswith(suffix):
            return ".".join((*path.relative_to(site).parts[:-1], path.name[:-len(suffix)]))
    return None


def importable(names: list[str]) -> set[str]:
    """Which of `names` import, in a fresh interpreter (llama_cpp loads its plain libraries as it imports)."""
    script = ("import importlib, json, sys\nok = []\nfor n in json.loads(sys.argv[1]):\n"
              "    try:\n        importlib.import_module(n); ok.append(n)\n    except Exception:\n        pass\n"
              "print(json.dumps(ok))")
    proc = subprocess.run([sys.executable, "-B", "-c", script, json.dumps(names)], capture_output=True, text=True,
                          check=True)
    return set(json.loads(proc.stdout.splitlines()[-1]))


def strip_native(site: Path, backup: Path) -> int:
    if shutil.which("strip") is None:
        say("strip is not installed: native code left as it is")
        return 0
    files = [p for p in site.rglob("*.so*") if p.is_file() and not p.is_symlink()
             and not any(part.endswith(".libs") for part in p.relative_to(site).parts)]
    modules = {p: extension_name(site, p) or "llama_cpp" for p in files}
    before = importable(sorted(set(modules.values())))
    sizes = {p: p.stat().st_size for p in files}
    for i, p in enumerate(files):
        shutil.copy2(p, backup / str(i))
        subprocess.run(["strip", "--strip-unneeded", str(p)], check=True)
    broken = before - importable(sorted(before))
    for i, p in enumerate(files):
        if modules[p] in broken:
            shutil.copy2(backup / str(i), p)
            say(f"kept {p.relative_to(site)} unstripped: {modules[p]} does not import stripped")
    return sum(sizes[p] - p.stat().st_size for p in files)


def bytecode_for_the_runtime(site: Path) -> int:
    saved = 0
    for cache in list(site.rglob("__pycache__")):
        saved += size(cache)
        shutil.rmtree(cache)
    script = ("import importlib, pkgutil, llama_cpp\nfor pkg in %r:\n    root = importlib.import_module(pkg)\n"
              "    for m in pkgutil.walk_packages(root.__path__, pkg + '.'):\n        try:\n"
              "            importlib.import_module(m.name)\n        except Exception:\n            pass\n"
              % (RUNTIME_PACKAGES,))
    subprocess.run([sys.executable, "-c", script], check=True)
    subprocess.run([sys.executable, "-m", "pip", "config", "list"], check=True, capture_output=True)
    return saved - sum(size(c) for c in site.rglob("__pycache__"))


def main() -> int:
    if sys.prefix == sys.base_prefix:
        raise SystemExit("slim_venv.py: run it with the virtualenv's python, not the system's")
    venv, site = Path(sys.prefix), Path(sysconfig.get_path("purelib"))
    start = size(venv)
    uninstall_unneeded()
    say(f"llama.cpp libraries, one copy each: {one_copy_of_llama_libraries(site) / 1e6:.1f} MB saved")
    say(f"tests/ directories: {remove_tests(site) / 1e6:.1f} MB saved")
    backup = Path(tempfile.mkdtemp(prefix="slim-venv-"))  # the originals, until the stripped files import
    try:
        say(f"strip --strip-unneeded: {strip_native(site, backup) / 1e6:.1f} MB saved")
    finally:
        shutil.rmtree(backup)
    say(f"bytecode for the imported modules only: {bytecode_for_the_runtime(site) / 1e6:.1f} MB saved")
    say(f"{venv}: {start / 1e6:.0f} MB -> {size(venv) / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
