"""The host's half of the runner protocol: validate jobs, pack them, read the results back."""
from __future__ import annotations

import functools
import io
import json
import math
import re
import tarfile
from collections.abc import Sequence
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from .errors import BadJob, SandboxError
from .types import Job, Limits, RunResult

CHILD_PATH = "/usr/local/bin:/usr/bin:/bin"
MAX_TIMEOUT_S = 24 * 3600
COLLECT_BYTES = 8 * 1024 * 1024  # per collected file; a bigger one is left out, never cut
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@functools.cache
def runner_source() -> str:
    """The runner as `python3 -I -c` gets it: a bootstrap that registers the helpers it shares with fixbot's probe
    as the module `fixbot_processes`, then runs the runner's own source as __main__."""
    package = resources.files("sandbox")
    helpers = package.joinpath("assets/fixbot_processes.py").read_text(encoding="utf-8")
    runner = package.joinpath("runner.py").read_text(encoding="utf-8")
    return ("import sys, types\n"
            "m = types.ModuleType('fixbot_processes')\n"
            f"exec(compile({helpers!r}, 'fixbot_processes.py', 'exec'), m.__dict__)\n"
            "sys.modules['fixbot_processes'] = m\n"
            f"exec(compile({runner!r}, 'runner.py', 'exec'), {{'__name__': '__main__'}})\n")


def check_path(name: str) -> str:
    """A file name must stay inside the work dir; any other character is fine (spaces, unicode, quotes)."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise BadJob(f"bad file name {name!r}: must be a non-empty string without NUL")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or str(path) in ("", "."):
        raise BadJob(f"bad file name {name!r}: must be a relative path inside the work dir")
    return str(path)


def check_job(job: Job) -> None:
    if isinstance(job.command, str):
        raise BadJob(f"bad command {job.command!r}: pass a list of arguments, e.g. ['python3', 'test.py']")
    if not job.command or not all(isinstance(part, str) for part in job.command):
        raise BadJob(f"bad command {job.command!r}: must be a non-empty list of strings")
    if not (isinstance(job.timeout, (int, float)) and 0 < job.timeout <= MAX_TIMEOUT_S):
        raise BadJob(f"bad timeout {job.timeout!r}: must be a number of seconds in (0, {MAX_TIMEOUT_S}]")
    for name in job.files:
        check_path(name)
    for name in job.collect:
        check_path(name)
    for key, value in job.env.items():
        if not (isinstance(key, str) and ENV_NAME.match(key) and isinstance(value, str) and "\x00" not in value):
            raise BadJob(f"bad environment variable {key!r}={value!r}: a name like FOO_BAR and a string value")


def _tar(jobs: Sequence[Job]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for i, job in enumerate(jobs):
            for name, content in job.files.items():
                data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
                info = tarfile.TarInfo(f"{i}/{check_path(name)}")
                info.size = len(data)
                info.mode = 0o755 if data.startswith(b"#!") else 0o644
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def encode_request(jobs: Sequence[Job], limits: Limits, options: dict[str, Any]) -> bytes:
    for job in jobs:
        check_job(job)
    payload = _tar(jobs)
    header = {
        "tar_size": len(payload),
        "jobs": [{"command": list(job.command), "timeout": float(job.timeout), "env": dict(job.env),
                  "collect": list(job.collect)} for job in jobs],
        "options": {
            "output_bytes": limits.output_bytes,
            "collect_bytes": COLLECT_BYTES,
            "parallel": max(1, math.ceil(limits.cpus)),
            "env": {"PATH": CHILD_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"},
            **options,
        },
    }
    return json.dumps(header).encode("utf-8") + b"\n" + payload


def decode_results(answer: bytes, stderr: bytes, n_jobs: int) -> list[RunResult]:
    """`answer` is the runner's one JSON line; `stderr` is only for the error message."""
    try:
        payload = json.loads(answer.decode("utf-8"))
        if "error" in payload:
            raise SandboxError(f"the sandbox runner refused the request: {payload['error']}")
        results = [RunResult(**record) for record in payload["results"]]
    except (ValueError, KeyError, TypeError) as exc:
        detail = stderr.decode("utf-8", "backslashreplace").strip()[-2000:]
        raise SandboxError(f"the sandbox runner failed ({exc.__class__.__name__}): {detail or 'no output'}") from exc
    if len(results) != n_jobs:
        raise SandboxError(f"the sandbox runner answered {len(results)} results for {n_jobs} jobs")
    return results


def lost_result(job: Job, reason: str) -> RunResult:
    """The result reported for a job whose container stopped answering (killed from outside)."""
    return RunResult(exit_code=-9, stdout="", stderr=f"fixbot sandbox: {reason}\n", duration_s=float(job.timeout),
                     timed_out=True)
