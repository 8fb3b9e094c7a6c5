"""The job runner. Standard library only: the host starts it as `python3 -I -c <source>`.

In the Docker sandbox it is PID 1 of a warm container whose stdin stays attached to the host; for the local
fallback it is a host subprocess that serves one request. Requests and answers on stdin/stdout:
  request: one JSON line (the header, with "tar_size"), then that many bytes of an uncompressed tar whose
           members are "<job index>/<path>";
  answer:  one JSON line, {"results": [...]}, in job order.
The loop ends at EOF: when the host process goes away, Docker closes the stdin (StdinOnce), the runner exits and
auto-remove deletes the container, even if the host was killed.

Why a resident runner instead of `docker exec` per run: an exec costs ~100 ms here, files cannot go in with
put_archive (tmpfs, read-only root), and one request can run a whole batch of candidates in parallel.
"""
from __future__ import annotations

import ctypes
import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TypedDict

try:  # in the sandbox the bootstrap (sandbox/wire.py, runner_source) registered it; on the host it is a file here
    from fixbot_processes import DROPPED, killpg, oom_kills
except ImportError:
    from sandbox.assets.fixbot_processes import DROPPED, killpg, oom_kills

CHUNK = 65536
WRITABLE = ("/work", "/dev/shm")
RLIMITS = {"as_mb": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC, "cpu_s": resource.RLIMIT_CPU}


# The request and answer records (sandbox/wire.py writes and reads them). A base class holds the keys that are
# always there, as Required/NotRequired are 3.11+.
class _JobBase(TypedDict):
    command: list[str]
    timeout: float


class JobSpec(_JobBase, total=False):
    env: dict[str, str]
    collect: list[str]


class _OptionsBase(TypedDict):
    output_bytes: int
    env: dict[str, str]


class Options(_OptionsBase, total=False):
    collect_bytes: int
    parallel: int
    in_container: bool
    root: str | None
    oom_first: bool
    rlimits: dict[str, int]  # keys of RLIMITS


class Header(TypedDict):
    tar_size: int
    jobs: list[JobSpec]
    options: Options


class _ResultBase(TypedDict):
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool
    oom_killed: bool
    truncated: bool


class Result(_ResultBase, total=False):
    files: dict[str, str]


class CappedBuffer:
    """Keeps the head and the tail of a stream (the end of a test log matters most), at most `cap` bytes."""

    def __init__(self, cap: int) -> None:
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        head = bytes(self.head).decode("utf-8", "backslashreplace")
        tail = bytes(self.tail).decode("utf-8", "backslashreplace")
        if not self.dropped:
            return head + tail
        return head + str(DROPPED % self.dropped) + tail


def _drain(fd: int, buf: CappedBuffer) -> None:
    try:
        while True:
            data = os.read(fd, CHUNK)
            if not data:
                return
            buf.feed(data)
    except OSError:
        return
    finally:
        os.close(fd)


def _harden(pid: int, options: Options) -> None:
    """Applied from the parent right after spawn: preexec_fn is unsafe with threads."""
    if options.get("oom_first"):
        try:  # the OOM killer then picks the job, never the runner
            with open("/proc/%d/oom_score_adj" % pid, "w") as f:
                f.write("1000")
        except OSError:
            pass
    for key, res in RLIMITS.items():
        value = options.get("rlimits", {}).get(key)
        if value:
            value = value * 1024 * 1024 if key == "as_mb" else value
            try:
                resource.prlimit(pid, res, (value, value))
            except (OSError, ValueError):
                pass


def run_job(job: JobSpec, workdir: str, env: dict[str, str], options: Options) -> Result:
    cap = options["output_bytes"]
    tmp = os.path.join(workdir, ".tmp")
    os.makedirs(tmp, exist_ok=True)
    job_env = job.get("env", {})
    child_env = dict(env)
    if any(name == "LANG" or name.startswith("LC_") for name in job_env):
        child_env.pop("LC_ALL", None)  # the default's LC_ALL would override the locale the job asks for
    child_env.update(job_env)
    child_env.update(HOME=workdir, TMPDIR=tmp)
    out, err = CappedBuffer(cap), CappedBuffer(cap)
    oom_before = oom_kills()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            job["command"], cwd=workdir, env=child_env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, bufsize=0,
        )
    except OSError as exc:
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        message = "fixbot sandbox: cannot run %r: %s\n" % (job["command"][0], exc.strerror or exc)
        return {"exit_code": code, "stdout": "", "stderr": message, "duration_s": time.monotonic() - start,
                "timed_out": False, "oom_killed": False, "truncated": False}
    _harden(proc.pid, options)
    readers = []
    for pipe, buf in ((proc.stdout, out), (proc.stderr, err)):
        assert pipe is not None  # both are PIPE
        fd = os.dup(pipe.fileno())
        pipe.close()
        reader = threading.Thread(target=_drain, args=(fd, buf), daemon=True)
        reader.start()
        readers.append(reader)
    timed_out = False
    try:
        code = proc.wait(timeout=job["timeout"])
    except subprocess.TimeoutExpired:
        timed_out = True
    duration = time.monotonic() - start
    killpg(proc.pid)  # background children of the run end with it
    code = proc.wait()
    for reader in readers:
        # A process that left the group may hold a pipe open; the sweep after the batch ends it.
        reader.join(timeout=2.0)
    oom_after = oom_kills()
    oom = (not timed_out and code == -signal.SIGKILL and oom_before is not None
           and oom_after is not None and oom_after > oom_before)
    return {"exit_code": code, "stdout": out.text(), "stderr": err.text(), "duration_s": duration,
            "timed_out": timed_out, "oom_killed": oom, "truncated": bool(out.dropped or err.dropped),
            "files": collect(workdir, job.get("collect", ()), options.get("collect_bytes", 0))}


def collect(workdir: str, names: Iterable[str], cap: int) -> dict[str, str]:
    """The requested files the job left in its work dir, as text. A symlink out of the work dir, a FIFO or
    a file over `cap` bytes is left out (the host sees it missing), never followed or cut."""
    root = os.path.realpath(workdir)
    files: dict[str, str] = {}
    for name in names:
        path = os.path.realpath(os.path.join(workdir, name))
        if not path.startswith(root + os.sep) or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as f:
                data = f.read(cap + 1)
        except OSError:
            continue
        if len(data) <= cap:
            files[name] = data.decode("utf-8", "backslashreplace")
    return files


def _check_member(member: tarfile.TarInfo) -> None:
    name = member.name
    if name.startswith("/") or ".." in name.split("/") or not (member.isfile() or member.isdir()):
        raise ValueError("refusing tar member %r" % name)


def extract(stream: IO[bytes], root: str, n_jobs: int) -> None:
    for i in range(n_jobs):
        os.makedirs(os.path.join(root, str(i)), exist_ok=True)
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            _check_member(member)
            tar.extract(member, root, set_attrs=member.isfile())


def sweep() -> None:
    """After a request: kill every other process of the container, then reap them (we are PID 1)."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.005)


def _clear_dir(path: str) -> None:
    try:
        for name in os.listdir(path):
            full = os.path.join(path, name)
            shutil.rmtree(full, ignore_errors=True) if os.path.isdir(full) else os.unlink(full)
    except OSError:
        pass


def _not_dumpable() -> None:
    """Jobs run as our uid; without this they could open /proc/<runner>/fd/1 and forge answers."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


def handle(header: Header, payload: bytes) -> list[Result]:
    options = header["options"]
    jobs = header["jobs"]
    in_container = options.get("in_container", False)
    root = tempfile.mkdtemp(prefix="run-", dir=options.get("root") or None)
    try:
        extract(io.BytesIO(payload), root, len(jobs))
        env = options["env"]
        with ThreadPoolExecutor(max_workers=max(1, options.get("parallel", 1))) as pool:
            futures = [pool.submit(run_job, job, os.path.join(root, str(i)), env, options)
                       for i, job in enumerate(jobs)]
            return [f.result() for f in futures]
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if in_container and os.getpid() == 1:  # never sweep a machine we do not own
            sweep()
            # The only writable places of the container: whatever a job left there must not reach the next
            # (a planted conftest.py in /work would change every later pytest run).
            for path in WRITABLE:
                _clear_dir(path)


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    _not_dumpable()
    while True:
        line = stdin.readline()
        if not line:
            return
        header: Header = json.loads(line)
        payload = stdin.read(header["tar_size"])
        answer: dict[str, object]
        try:
            answer = {"results": handle(header, payload)}
        except Exception as exc:  # a bad request must not end a warm container
            answer = {"error": "%s: %s" % (exc.__class__.__name__, exc)}
        stdout.write(json.dumps(answer).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
