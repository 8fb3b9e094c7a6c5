"""What the sandbox's job runner (sandbox/runner.py) and fixbot's pytest plugin (bot/inside/probe_variants.py) both
do with the processes they run inside a container: count the kernel's OOM kills, kill a process group, and cap an
output with the sandbox's marker of what was dropped.

One copy, shipped twice: registered as a module by the runner's bootstrap (sandbox/wire.py, runner_source: the
runner starts as `python3 -I -c SOURCE`), and as the file `fixbot_processes.py` beside the probe
(bot/fix/reproduce/testrun.py).
Standard library only, Python 3.9 and newer: it runs on the project's Python."""
from __future__ import annotations

import os
import signal

OOM_COUNTERS = (
    ("/sys/fs/cgroup/memory.events", "oom_kill"),  # cgroup v2
    ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"),  # cgroup v1
)
DROPPED = "\n[... fixbot sandbox: %d bytes of output dropped ...]\n"


def oom_kills() -> int | None:
    """How many processes the kernel's OOM killer has killed in this container's cgroup, or None."""
    for path, key in OOM_COUNTERS:
        try:
            with open(path) as f:
                for line in f:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def killpg(pid: int) -> None:
    """Kill a process group, whatever is left of it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
