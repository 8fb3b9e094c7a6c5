"""Helpers the benches share: slices of a selection (--part K/N), the model's speed line, their sections of
bench/RESULTS.md, and fixbot runs that end with their bench."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T")


def part_slice(items: Sequence[T], part: str) -> list[T]:
    """The K-th of N consecutive slices of `items` (--part K/N); the N slices cover `items` once, in order.
    A malformed part raises ValueError with a one-line message for the bench to prefix with its name."""
    k, _, n = part.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise ValueError(f"--part {part!r}: use K/N with 1 <= K <= N, e.g. 1/2")
    size = len(items)
    return list(items[round(size * (int(k) - 1) / int(n)):round(size * int(k) / int(n))])


def speed_line(speed: dict, workers: int) -> str:
    """bench/agents.py's `model_speed` record as the one line a results table carries."""
    return (f"model speed here: {speed['prompt_tok_s']:.0f} prompt / {speed['gen_tok_s']:.1f} generated tok/s per "
            f"process ({speed['threads']} thread(s) each, {workers} worker(s))")


def replace_section(path: Path, bench: str, key: str, section: str, header: str = "# Benchmark results\n") -> None:
    """Replaces the section `<!-- BENCH: KEY -->` ... `<!-- /BENCH: KEY -->` in `path`, or appends `section`
    (the file made, with `header`, when missing); written to a temporary file first, so a stop loses nothing."""
    text = path.read_text(encoding="utf-8") if path.exists() else header
    pattern = re.compile(rf"<!-- {bench}: {re.escape(key)} -->\n.*?<!-- /{bench}: {re.escape(key)} -->\n", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _m: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """A console table: the first column left-aligned, the others right-aligned, two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
            for r in rows]


class Interrupted(Exception):
    """SIGTERM reached the bench (Ctrl-C arrives as KeyboardInterrupt)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _on_signal(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within: SIGTERM raises Interrupted, so that the bench unwinds (and stops its fixbot) instead of dying."""
    previous = signal.signal(signal.SIGTERM, _on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_child(proc: subprocess.Popen, wait_s: float) -> None:
    """SIGTERM, so that fixbot writes what it has; a kill if it has not ended after `wait_s` seconds."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            try:  # its own session (start_new_session): the kill takes its children (a model server) with it
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.wait()


def run_child(cmd: Sequence[str], *, cwd: Path, stdout: int | IO[bytes] | None = subprocess.DEVNULL,
              wait_s: float = 60.0) -> int:
    """`cmd`'s exit code. It runs in its own session, so a Ctrl-C or SIGTERM reaches the bench alone, which
    stops `cmd` once (stop_child) before it unwinds: no fixbot keeps the cores after its bench has gone."""
    proc = subprocess.Popen(list(cmd), cwd=cwd, stdout=stdout, stdin=subprocess.DEVNULL, start_new_session=True)
    with sigterm_raises():
        try:
            return proc.wait()
        except BaseException:
            stop_child(proc, wait_s)
            raise


def signal_of(exc: BaseException) -> int:
    """The number of the signal that raised `exc`: a Ctrl-C arrives as KeyboardInterrupt, a SIGTERM as Interrupted."""
    return exc.signum if isinstance(exc, Interrupted) else signal.SIGINT


def until_stopped(main: Callable[[], int], name: str) -> int:
    """main's exit code; when a Ctrl-C or SIGTERM stopped it, one line instead of a traceback, and 128 + the
    signal's number."""
    try:
        return main()
    except (KeyboardInterrupt, Interrupted) as exc:
        print(f"{name}: interrupted; the same command resumes where it stopped", file=sys.stderr, flush=True)
        return 128 + signal_of(exc)
