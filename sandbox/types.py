"""Typed records and the protocol every sandbox implements."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, Self

FileContent = str | bytes


@dataclass(frozen=True)
class Job:
    """One program to run: files to place in a fresh work dir, then a command run there."""

    files: Mapping[str, FileContent]
    command: Sequence[str]
    timeout: float = 30.0
    env: Mapping[str, str] = field(default_factory=dict)  # added to the sandbox's clean environment
    collect: Sequence[str] = ()  # work-dir files to bring back as text (a JUnit report, coverage data)


@dataclass(frozen=True)
class RunResult:
    """What a run did. Output that was not UTF-8 is kept as backslash escapes, never dropped."""

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    oom_killed: bool = False
    truncated: bool = False
    files: Mapping[str, str] = field(default_factory=dict)  # the collected files that existed (and fit)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.oom_killed


@dataclass(frozen=True)
class Limits:
    """Per-container resource limits. Memory counts the tmpfs work dir too."""

    memory_mb: int = 1024
    pids: int = 256
    cpus: float = 1.0
    workdir_mb: int = 256
    output_bytes: int = 64 * 1024  # per stream, per job


class Sandbox(Protocol):
    """Runs code it is given, isolated, and returns typed results."""

    def run(self, files: Mapping[str, FileContent], command: Sequence[str], timeout: float = 30.0) -> RunResult: ...

    def run_batch(self, jobs: Sequence[Job]) -> list[RunResult]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...  # closes it
