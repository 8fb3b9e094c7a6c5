"""Several versions of the project tested by one pytest process: `fixbot_probe_variants`, shipped beside fixbot's
pytest plugin (probe.py) and loaded by it; idle unless $FIXBOT_VARIANTS names a manifest.

Run as a whole pytest process each, a repair's candidates (a mutant, a model's sample) would spend most of their
time on what every candidate repeats: the interpreter, pytest, the project's imports and the collection. With a
manifest, the process collects once (recording which functions run meanwhile, fixbot_probe_swap.CallWatch); then,
before any test runs, for each variant it writes the variant's files into the work dir and forks. The child sends
its stdout and stderr, its probe JSON and its JUnit XML to the variant's own directory, swaps the variant's
functions in (fixbot_probe_swap), prints pytest's header again and runs the tests as the session would have, then
exits as pytest does. The parent waits for it within the variant's time limit (past it, SIGKILL: the variant
timed out), puts the base's files back and records how the child ended (`status.json`: its exit code, duration,
whether it timed out or the kernel's OOM killer ended it). A variant the swap cannot give exactly is recorded as
needing a process of its own (`status.json` says why) and the host runs it the old way. The base's own tests run
last, in the parent, which no variant's test has touched.

The children share the file system: what a variant's tests write into the work dir (other than the variant's own
files, which are put back) is there for the next ones, as it is for the later tests of one run.

Manifest: {"child_timeout_s": seconds, "output_bytes": the cap of each output file (as the sandbox caps a job's
stdout and stderr), "variants": [{"dir": "...", "files": {path: the variant's bytes as latin-1 text}}]}.

Standard library and pytest only: this file runs inside the sandbox's Python (3.9+), never on the host.
"""
import json
import os
import select
import signal
import sys
import time
import warnings

import fixbot_probe as probe
import fixbot_probe_swap as swap
import fixbot_processes as processes
import pytest

POLL_S = 0.02  # waiting for a child where pidfd_open is missing
_state = {"manifest": None, "watch": None, "std": None, "root": None}


def pytest_addoption(parser):
    # called as soon as fixbot_probe registers this plugin (-p fixbot_probe): before any conftest.py or project
    # import, the earliest point to start recording what runs while the process imports and collects
    name = os.environ.get("FIXBOT_VARIANTS")
    if not name or _state["manifest"] is not None:
        return
    with open(name, encoding="utf-8") as f:
        _state["manifest"] = json.load(f)
    _state["root"] = os.getcwd()  # the job's work dir: the manifest's paths are relative to it
    _state["std"] = (_identity(1), _identity(2))  # the job's stdout and stderr, before pytest captures them
    _state["watch"] = swap.CallWatch()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    manifest, watch = _state["manifest"], _state["watch"]
    if manifest is None:
        return None
    _state["manifest"] = _state["watch"] = None
    ran = watch.stop()
    if session.config.option.collectonly or session.config.pluginmanager.has_plugin("dsession"):
        return None  # nothing to run here (xdist's workers run the tests): each variant runs the old way
    paths = sorted({_path(path) for variant in manifest["variants"] for path in variant["files"]})
    base = {}
    try:
        index = swap.Index(paths, watch.before, ran)
        base.update((path, _read(path)) for path in paths)
        for variant in manifest["variants"]:
            if _run(session, manifest, variant, index, base):
                return None  # the child: pytest's own loop runs the tests, with the variant's code
    except Exception as exc:  # the variants left without a status run the old way; the base's run goes on
        sys.stderr.write("fixbot: running the variants stopped: %s: %s\n" % (exc.__class__.__name__, exc))
        _write_files(base)
    return None  # the parent: the base's tests


def _run(session, manifest, variant, index, base):
    """One variant in a forked child; True in the child, False in the parent once the child has ended."""
    out = _path(variant["dir"])
    os.makedirs(out, exist_ok=True)
    files = {_path(path): text.encode("latin-1") for path, text in variant["files"].items()}
    _write_files(files)
    sys.stdout.flush()
    sys.stderr.flush()
    oom_before = processes.oom_kills()
    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 3.12+ warns that fork() copies no thread but the caller
        pid = os.fork()
    if pid == 0:
        _child(session, out, files, index, base)
        return True
    try:
        os.setpgid(pid, pid)  # the child does the same: whichever runs first, its group is its own
    except OSError:
        pass
    code, timed_out = _wait(pid, float(manifest["child_timeout_s"]))
    duration = time.monotonic() - started
    processes.killpg(pid)  # what the variant's tests left running in the background ends with it
    _write_files({path: base[path] for path in files})
    junit = _junit(session.config)
    if junit is not None and os.path.exists(junit.logfile):
        os.replace(junit.logfile, os.path.join(out, "junit.xml"))
    _json(os.path.join(out, "status.json"), _status(out, manifest, code, timed_out, duration, oom_before))
    return False


def _status(out, manifest, code, timed_out, duration, oom_before):
    if not os.path.exists(os.path.join(out, "started")):
        reason = _read(os.path.join(out, "fallback")) if os.path.exists(os.path.join(out, "fallback")) else b""
        return {"fallback": reason.decode("utf-8", "replace") or "the child ended before its tests (exit %s)" % code}
    oom_after = processes.oom_kills()
    oom = (not timed_out and code == -signal.SIGKILL and oom_before is not None and oom_after is not None
           and oom_after > oom_before)
    cap = int(manifest["output_bytes"])
    truncated = [_cap(os.path.join(out, name), cap) for name in ("stdout", "stderr")]
    return {"exit_code": code, "duration_s": round(duration, 4), "timed_out": timed_out, "oom_killed": oom,
            "truncated": any(truncated)}


def _child(session, out, files, index, base):
    """In the child: the variant's code in, its outputs to its own files; any failure before the tests run
    records that the variant needs a process of its own, and ends the child."""
    try:
        os.setpgid(0, 0)
        for path, data in files.items():
            swap.apply(index, path, base[path], data)
    except swap.NeedsProcess as exc:
        _leave(out, str(exc))
    except BaseException as exc:
        _leave(out, "swapping the variant in failed: %s: %s" % (exc.__class__.__name__, exc))
    try:
        _redirect(out)
        probe.after_fork(os.path.join(out, "probe.json"))
        junit = _junit(session.config)
        if junit is not None:  # it writes where the job's own goes (pytest prints the path), the parent moves it
            junit.pytest_sessionstart()  # the suite's start time
        _header(session)
        with open(os.path.join(out, "started"), "w"):
            pass
    except BaseException as exc:
        _leave(out, "preparing the variant's run failed: %s: %s" % (exc.__class__.__name__, exc))


def _leave(out, reason):
    with open(os.path.join(out, "fallback"), "w", encoding="utf-8") as f:
        f.write(reason)
    os._exit(0)


def _redirect(out):
    """The job's stdout and stderr, and every copy of them the process holds (pytest's capture keeps one to restore
    after each test, faulthandler one to dump a crash, fixbot_probe's watchdog one), become the variant's files."""
    targets = {}
    for identity, name in zip(_state["std"], ("stdout", "stderr")):
        if identity is not None and identity not in targets:
            targets[identity] = os.open(os.path.join(out, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd == 0 or fd in targets.values():
            continue
        identity = _identity(fd)
        if identity in targets:
            os.dup2(targets[identity], fd)


def _identity(fd):
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _junit(config):
    """pytest's JUnit XML writer (--junitxml), if any."""
    return next((p for p in config.pluginmanager.get_plugins()
                 if type(p).__name__ == "LogXML" and isinstance(getattr(p, "logfile", None), str)), None)


def _header(session):
    """pytest's header and collection line, as a run of its own starts with (the crash report reads the rootdir)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.pytest_sessionstart(session)
        reporter.pytest_collection_finish(session)


def _wait(pid, limit):
    """(the child's exit code, as subprocess gives it; whether it ran past `limit` seconds and was killed)."""
    deadline = time.monotonic() + limit
    try:
        waker = os.pidfd_open(pid)
    except (AttributeError, OSError):
        waker = None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status), False
            left = deadline - time.monotonic()
            if left <= 0:
                processes.killpg(pid)
                return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), True
            if waker is not None:
                select.select([waker], [], [], left)
            else:
                time.sleep(min(POLL_S, left))
    finally:
        if waker is not None:
            os.close(waker)


def _cap(path, cap):
    """Keeps the first and last halves of `cap` bytes, with the sandbox's marker (sandbox/runner.py)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    if size <= cap:
        return False
    head, tail = cap // 2, cap - cap // 2
    with open(path, "rb") as f:
        first = f.read(head)
        f.seek(size - tail)
        last = f.read(tail)
    with open(path, "wb") as f:
        f.write(first + (processes.DROPPED % (size - head - tail)).encode() + last)
    return True


def _path(relative):
    return os.path.join(_state["root"], relative)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write_files(files):
    for path, data in files.items():
        with open(path, "wb") as f:
            f.write(data)


def _json(path, payload):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(payload, f)
    os.replace(path + ".tmp", path)
