"""The Docker sandbox: a warm pool of hardened containers, each request run in fresh work dirs."""
from __future__ import annotations

import math
import queue
import threading
import uuid
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import docker

from . import containers
from .channel import ChannelClosed, ChannelTimeout
from .containers import Worker
from .errors import SandboxError
from .image import default_image, require_image
from .types import FileContent, Job, Limits, RunResult
from .wire import decode_results, encode_request, lost_result

GRACE_S = 20.0  # extraction, clean-up and the answer, beyond the jobs' own timeouts
PAYLOAD_SHARE = 0.25  # of the work dir's tmpfs, at most, for one request's files: the jobs' own writes need the rest


def _job_bytes(job: Job) -> int:
    return sum(len(path) + len(content) for path, content in job.files.items())


def requests_of(jobs: Sequence[Job], limit_bytes: int) -> list[list[Job]]:
    """The jobs in consecutive requests whose files fit `limit_bytes` together (a job alone may exceed it): a
    batch of whole-checkout jobs of a large project would otherwise fill the work dir before any test ran."""
    parts: list[list[Job]] = []
    size = 0
    for job in jobs:
        cost = _job_bytes(job)
        if not parts or size + cost > limit_bytes:
            parts.append([])
            size = 0
        parts[-1].append(job)
        size += cost
    return parts


def _remove_all(client: docker.DockerClient, workers: dict[str, Worker]) -> None:
    for worker in list(workers.values()):
        worker.channel.close()
        try:
            containers.remove(client, worker.id)
        except Exception:  # best effort at exit; the closed stdin and `fixbot sandbox gc` catch the rest
            pass
        workers.pop(worker.id, None)


class DockerSandbox:
    """The Sandbox protocol over Docker. Containers start lazily, are reused, and are removed on close, at
    interpreter exit (also after Ctrl-C) and, if this process is killed, by Docker itself (StdinOnce)."""

    def __init__(self, image: str | None = None, limits: Limits = Limits(), pool_size: int = 2,
                 client: docker.DockerClient | None = None):
        self.client = client or containers.connect()
        self.image = image or default_image()
        require_image(self.client, self.image)
        self.limits = limits
        self.pool_size = max(1, pool_size)
        self.session = uuid.uuid4().hex[:12]
        self._idle: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        self._workers: dict[str, Worker] = {}
        self._slots = threading.BoundedSemaphore(self.pool_size)
        self._closed = False
        self._finalizer = weakref.finalize(self, _remove_all, self.client, self._workers)

    def _acquire(self) -> Worker:
        self._slots.acquire()
        try:
            if self._closed:
                raise SandboxError("the sandbox is closed")
            try:
                return self._idle.get_nowait()
            except queue.Empty:
                worker = containers.create(self.client, self.image, self.limits, self.session)
                self._workers[worker.id] = worker
                return worker
        except BaseException:
            self._slots.release()
            raise

    def _release(self, worker: Worker, healthy: bool) -> None:
        if healthy and not self._closed:
            self._idle.put(worker)
        else:
            worker.channel.close()
            containers.remove(self.client, worker.id)
            self._workers.pop(worker.id, None)
        self._slots.release()

    def _run_chunk(self, jobs: Sequence[Job]) -> list[RunResult]:
        limit = int(self.limits.workdir_mb * 1024 * 1024 * PAYLOAD_SHARE)
        return [result for part in requests_of(jobs, limit) for result in self._run_request(part)]

    def _run_request(self, jobs: Sequence[Job]) -> list[RunResult]:
        request = encode_request(jobs, self.limits, {"in_container": True, "root": containers.WORKDIR,
                                                     "oom_first": True})
        waves = math.ceil(len(jobs) / max(1, math.ceil(self.limits.cpus)))
        deadline = waves * max(job.timeout for job in jobs) + GRACE_S
        try:
            try:
                return self._ask(request, deadline, len(jobs))
            except ChannelClosed:
                # A runner that went away was mostly killed from outside (a job cannot SIGKILL its namespace's PID
                # 1): by the OOM killer's second pick while a job's memory was being freed, or by hand. Its jobs
                # run once more in a fresh container; a timeout is the jobs' own, and running them again would too.
                if self._closed:
                    raise
                return self._ask(request, deadline, len(jobs))
        except (ChannelTimeout, ChannelClosed) as exc:
            reason = f"the sandbox container stopped answering ({exc}); it was replaced"
            return [lost_result(job, reason) for job in jobs]

    def _ask(self, request: bytes, deadline: float, n_jobs: int) -> list[RunResult]:
        """One request to one pooled container; a container that fails to answer is removed, not pooled again."""
        worker = self._acquire()
        healthy = False
        try:
            answer = worker.channel.request(request, deadline)
            results = decode_results(answer, bytes(worker.channel.stderr), n_jobs)
            healthy = True
            return results
        finally:
            self._release(worker, healthy)

    def run(self, files: Mapping[str, FileContent], command: Sequence[str], timeout: float = 30.0) -> RunResult:
        return self.run_batch([Job(files=files, command=command, timeout=timeout)])[0]

    def run_batch(self, jobs: Sequence[Job]) -> list[RunResult]:
        """Each job in its own process with its own timeout and result; spread over the pool's containers."""
        jobs = list(jobs)
        if not jobs:
            return []
        n_chunks = min(self.pool_size, len(jobs))
        size = math.ceil(len(jobs) / n_chunks)
        chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        if len(chunks) == 1:
            return self._run_chunk(chunks[0])
        with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
            return [result for part in pool.map(self._run_chunk, chunks) for result in part]

    def close(self) -> None:
        self._closed = True
        self._finalizer()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
