"""The memory guard of fixbot's pytest plugin (probe.py), shipped beside it as `fixbot_probe_memory`.

When the container has a memory limit (its cgroup's), a thread polls the process's resident memory while a test
phase runs and, past `MEMORY_SHARE` of the limit, interrupts the main thread (SIGUSR1) with `TestMemoryLimit`, a
BaseException: a loop that keeps growing a list fails its test with the traceback of where it was growing, before
the kernel's OOM killer ends the whole run without a word on which test or line.

Standard library only: this file runs inside the sandbox's Python (3.9+), never on the host.
"""
import gc
import os
import signal
import threading
from typing import Any

# a list-growing loop takes ~500 MB/s: the rest of the limit is the margin for a poll, the runner and the work dir
MEMORY_SHARE = 0.8
MEMORY_POLL_S = 0.05
MEMORY_GROWTH = 0.05  # share of the limit a phase must have grown by to be blamed (not memory it inherited)
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")  # v2, v1
# its threshold (bytes, 0: no guard), the phase it watches, the tests it stopped
_state: dict[str, Any] = {"threshold": 0, "growth": 0, "statm": -1, "phase": None, "fired": set(), "collect": False,
          "old_handler": None, "lock": threading.Lock(), "busy": threading.Event(), "stop": threading.Event(),
          "on_stop": None}


class TestMemoryLimit(BaseException):
    """Raised in the test by the memory guard."""

    __test__ = False


def fired():
    return _state["fired"]


def threshold_mb():
    return _state["threshold"] // 2 ** 20


def stop():
    _state["stop"].set()
    _state["busy"].set()  # wakes the guard's thread to end


def _memory_limit():
    """The container's memory limit in bytes (its cgroup's), 0 when there is none."""
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for path in CGROUP_LIMITS:
        try:
            with open(path, encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        if not text.isdigit():
            return 0  # v2's "max"
        return int(text) if int(text) < physical else 0  # v1 writes "no limit" as a huge number
    return 0


def _rss():
    return int(os.pread(_state["statm"], 64, 0).split()[1]) * os.sysconf("SC_PAGE_SIZE")


def start(on_stop):
    """Starts the guard when the container has a memory limit; `on_stop(nodeid, frame)` is told where a test was."""
    _state["on_stop"] = on_stop
    limit = _memory_limit()
    if not limit or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGUSR1"):
        return
    try:  # kept open: opening it costs ~60 us in the sandbox, a read ~1 us
        _state["statm"] = os.open("/proc/self/statm", os.O_RDONLY)
        _rss()
    except (OSError, ValueError, IndexError):
        return
    _state["threshold"] = int(limit * MEMORY_SHARE)
    _state["growth"] = int(limit * MEMORY_GROWTH)
    threading.Thread(target=_guard_memory, args=(threading.main_thread().ident,), name="fixbot-memory",
                     daemon=True).start()


def after_fork():
    """In a forked child (fixbot_probe_variants): the guard's thread is not copied, its lock may be, and the open
    /proc/self/statm still reads the parent's memory: all anew."""
    if _state["statm"] >= 0:
        os.close(_state["statm"])
    _state.update(threshold=0, statm=-1, phase=None, lock=threading.Lock(), busy=threading.Event(),
                  stop=threading.Event())
    start(_state["on_stop"])


def watch(nodeid):
    """Watches one phase; False when there is no guard (or a phase is already watched)."""
    if not _state["threshold"] or _state["phase"] is not None:
        return False
    if _state["collect"]:
        # a stopped test's frames (the list it grew) sit in reference cycles with its traceback
        gc.collect()
        _state["collect"] = _rss() > _state["threshold"]
    # installed at each phase, like SIGALRM: the code under test may have taken SIGUSR1 meanwhile
    _state["old_handler"] = signal.signal(signal.SIGUSR1, _on_memory)
    _state["phase"] = {"id": nodeid, "floor": max(_state["threshold"], _rss() + _state["growth"])}
    _state["busy"].set()
    return True


def unwatch():
    _state["phase"] = None  # first: a signal on its way now is ignored by the handler
    _state["busy"].clear()
    with _state["lock"]:  # waits out a signal being sent: none arrives once SIGUSR1 is restored
        signal.signal(signal.SIGUSR1, _state["old_handler"] or signal.SIG_DFL)


def _guard_memory(main):
    """Idle between phases; during one, polls the resident memory and signals the main thread once it is over
    the phase's floor (raised after each signal: a test that swallows the exception and grows on is signalled
    again; one that unwinds is not)."""
    while True:
        _state["busy"].wait()
        if _state["stop"].wait(MEMORY_POLL_S):
            return
        phase = _state["phase"]
        if phase is None:
            continue
        rss = _rss()
        if rss <= phase["floor"]:
            continue
        with _state["lock"]:
            if _state["phase"] is phase:
                phase["floor"] = rss + _state["growth"]
                signal.pthread_kill(main, signal.SIGUSR1)


def _on_memory(signum, frame):
    __tracebackhide__ = True
    phase = _state["phase"]
    if phase is None:
        return
    nodeid = phase["id"]
    _state["fired"].add(nodeid)
    _state["collect"] = True
    _state["on_stop"](nodeid, frame)
    what = "the test" if "::" in nodeid else "importing the module"
    raise TestMemoryLimit("fixbot: %s used more than %d MB (the traceback shows where it was growing)"
                          % (what, _state["threshold"] // 2 ** 20))
