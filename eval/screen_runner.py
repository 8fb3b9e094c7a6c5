"""Runs inside the sandbox (standard library only): many small test programs, one after another, in a forked
worker process.

A pytest run per candidate costs ~0.3 s and a fork per candidate ~3 ms; running candidates one after another in
one forked worker costs well under 1 ms each. Each program gets a fresh global namespace and a timer; a program
that hangs in C code or kills the worker costs only that worker: it is replaced and the next program goes on.
The screen is a filter: survivors are confirmed by the real tests, each in its own process.

Input: `screen.json` in the work dir, {"programs": [source, ...], "timeout": seconds}. Output in
`screen-results.jsonl` (a file: stdout is capped): one JSON line per program, in order,
{"passed": bool, "timed_out": bool, "error": "AssertionError: ...", "seconds": float}, plus "result": the string a
program that ran to its end left in its global `__fixbot_result__` (what a behaviour probe computed), if any.
"""
import json
import os
import resource
import select
import signal
import time
import traceback

MEMORY_BYTES = 512 * 1024 * 1024
ERROR_CHARS = 300
RESULT_CHARS = 2000
RESULTS = "screen-results.jsonl"
GRACE_S = 1.0  # past a program's own timer: the worker is stuck where the timer cannot reach


class Timeout(BaseException):
    """Not an Exception: a candidate's own `except Exception` must not swallow it."""


def _on_alarm(signum, frame):
    raise Timeout()


def _run(program, timeout):
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    namespace = {"__name__": "__main__"}
    try:
        exec(compile(program, "candidate.py", "exec"), namespace)
        status = {"passed": True, "timed_out": False, "error": ""}
        result = namespace.get("__fixbot_result__")
        if isinstance(result, str):
            status["result"] = result[:RESULT_CHARS]
    except Timeout:
        status = {"passed": False, "timed_out": True, "error": f"timed out after {timeout:g} s"}
    except BaseException as exc:  # the program's failure is the answer, whatever it is
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" (line {last[0].lineno}: {last[0].line})" if last and last[0].filename == "candidate.py" else ""
        status = {"passed": False, "timed_out": False, "error": f"{type(exc).__name__}: {exc}"[:ERROR_CHARS] + where}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    status["seconds"] = round(time.monotonic() - started, 4)
    return status


def _worker(programs, start, timeout, write_fd):
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    signal.signal(signal.SIGALRM, _on_alarm)
    for i in range(start, len(programs)):
        line = json.dumps(_run(programs[i], timeout)) + "\n"
        os.write(write_fd, line.encode())


def _start(programs, start, timeout):
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            _worker(programs, start, timeout, write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    return pid, read_fd


def _stop(pid, read_fd):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    os.close(read_fd)


def screen(programs, timeout):
    results = []
    pending = b""
    pid, read_fd = _start(programs, 0, timeout)
    deadline = time.monotonic() + timeout + GRACE_S
    while len(results) < len(programs):
        ready, _, _ = select.select([read_fd], [], [], max(deadline - time.monotonic(), 0))
        chunk = os.read(read_fd, 65536) if ready else b""
        if chunk:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                results.append(json.loads(line))
            if lines:
                deadline = time.monotonic() + timeout + GRACE_S
            continue
        # the worker is stuck (no answer in time) or gone (EOF): the current program is to blame
        stuck = not ready
        _stop(pid, read_fd)
        results.append({"passed": False, "timed_out": stuck, "seconds": timeout + GRACE_S if stuck else 0.0,
                        "error": "timed out" if stuck else "the program killed its process"})
        pending = b""
        if len(results) < len(programs):
            pid, read_fd = _start(programs, len(results), timeout)
            deadline = time.monotonic() + timeout + GRACE_S
            continue
        return results
    _stop(pid, read_fd)
    return results


def main():
    with open("screen.json") as f:
        spec = json.load(f)
    results = screen(spec["programs"], float(spec["timeout"]))
    with open(RESULTS, "w") as out:
        for status in results:
            out.write(json.dumps(status) + "\n")


if __name__ == "__main__":
    main()
