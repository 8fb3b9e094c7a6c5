"""The local fallback: the same runner as a host subprocess with rlimits and a clean environment.
Only on explicit opt-in, and it says so: it is not isolation (network, files and processes are shared)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence

from .types import FileContent, Job, Limits, RunResult
from .wire import decode_results, encode_request, lost_result, runner_source

log = logging.getLogger("fixbot.sandbox")
WARNING = "the local sandbox runs code on this machine WITHOUT isolation (network, files, processes are shared)"
GRACE_S = 10.0


class LocalSandbox:
    def __init__(self, limits: Limits = Limits()):
        self.limits = limits
        log.warning(WARNING)

    def run(self, files: Mapping[str, FileContent], command: Sequence[str], timeout: float = 30.0) -> RunResult:
        return self.run_batch([Job(files=files, command=command, timeout=timeout)])[0]

    def run_batch(self, jobs: Sequence[Job]) -> list[RunResult]:
        jobs = list(jobs)
        if not jobs:
            return []
        rlimits = {"as_mb": self.limits.memory_mb, "cpu_s": int(max(j.timeout for j in jobs)) + 1}
        request = encode_request(jobs, self.limits, {"in_container": False, "rlimits": rlimits,
                                                     "root": tempfile.gettempdir()})
        budget = sum(j.timeout for j in jobs) + GRACE_S
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        try:
            proc = subprocess.run([sys.executable, "-I", "-c", runner_source()], input=request,
                                  capture_output=True, timeout=budget, env=env)
        except subprocess.TimeoutExpired:
            return [lost_result(job, "the local runner did not answer in time") for job in jobs]
        return decode_results(proc.stdout, proc.stderr, len(jobs))

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
