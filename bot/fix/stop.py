"""The run's hard time limit: SIGALRM at the deadline raises `Stopped` wherever the main thread is, so `--wall`
holds even inside a model call or a sandbox batch; the pipeline then reports what it has."""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from bot.errors import Stopped


@contextmanager
def alarm_at(deadline: float) -> Iterator[None]:
    """Within the block, reaching `deadline` (time.monotonic()) raises Stopped("time"). Signals reach only the
    main thread: elsewhere (a test's worker thread) the budgets alone bound the run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: object) -> None:
        raise Stopped("time")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline - time.monotonic()))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
