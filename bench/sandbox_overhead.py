"""Sandbox overhead, measured side by side in one run.

The same small test program (a function and 3 asserts) runs N times through
  (a) a bare `python3 -I` subprocess on the host,
  (b) `docker run --rm` per run (a fresh hardened container each time),
  (c) the warm pool, one run at a time,
  (d) the batch API, N candidates in one call.
Prints the median seconds per program for each and the ratios c/a, d/a, b/c.
Targets: batch within 1.5x of bare; one warm run at least 5x faster than `docker run --rm`.

    .venv/bin/python bench/sandbox_overhead.py --runs 50 [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sandbox import Job, Limits
from sandbox.containers import connect
from sandbox.docker_sandbox import DockerSandbox
from sandbox.image import default_image, require_image

PROGRAM = """\
def add(a, b):
    return a + b

assert add(1, 2) == 3
assert add(-1, 1) == 0
assert add(0, 0) == 0
"""
BATCH_REPEATS = 3


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bare(runs: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prog.py"
        path.write_text(PROGRAM)
        return [timed(lambda: subprocess.run([sys.executable, "-I", str(path)], check=True, cwd=tmp))
                for _ in range(runs)]


def docker_run(client, image: str, runs: int) -> list[float]:
    limits = Limits()

    def once() -> None:
        out = client.containers.run(image, ["python3", "-I", "-c", PROGRAM], remove=True, network_mode="none",
                                    user="65534:65534", cap_drop=["ALL"], security_opt=["no-new-privileges"],
                                    read_only=True, mem_limit=f"{limits.memory_mb}m", pids_limit=limits.pids,
                                    nano_cpus=int(limits.cpus * 1e9))
        assert out == b""

    return [timed(once) for _ in range(runs)]


def warm(sb: DockerSandbox, runs: int) -> list[float]:
    def once() -> None:
        assert sb.run({"prog.py": PROGRAM}, ["python3", "-I", "prog.py"]).ok

    once()  # the pool starts its container outside the measurement
    return [timed(once) for _ in range(runs)]


def batch(sb: DockerSandbox, runs: int) -> list[float]:
    jobs = [Job({"prog.py": PROGRAM}, ["python3", "-I", "prog.py"], 30)] * runs

    def once() -> None:
        assert all(r.ok for r in sb.run_batch(jobs))

    sb.run_batch(jobs[: sb.pool_size])  # start every container of the pool first
    return [timed(once) / runs for _ in range(BATCH_REPEATS)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="programs per way (default 50)")
    parser.add_argument("--pool", type=int, default=2, help="warm containers for the batch (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()

    client = connect()
    image = default_image()
    require_image(client, image)
    medians: dict[str, float] = {}
    for name, measure in (("bare_s", lambda: bare(args.runs)),
                          ("docker_run_s", lambda: docker_run(client, image, args.runs))):
        print(f"measuring {name[:-2]} x{args.runs}...", file=sys.stderr, flush=True)
        medians[name] = statistics.median(measure())
    with DockerSandbox(image=image, pool_size=args.pool, client=client) as sb:
        print(f"measuring warm x{args.runs}...", file=sys.stderr, flush=True)
        medians["warm_s"] = statistics.median(warm(sb, args.runs))
        print(f"measuring batch of {args.runs} x{BATCH_REPEATS}...", file=sys.stderr, flush=True)
        medians["batch_s"] = statistics.median(batch(sb, args.runs))
    report = {
        **{k: round(v, 4) for k, v in medians.items()},
        "warm_over_bare": round(medians["warm_s"] / medians["bare_s"], 2),
        "batch_over_bare": round(medians["batch_s"] / medians["bare_s"], 2),
        "docker_run_over_warm": round(medians["docker_run_s"] / medians["warm_s"], 2),
        "runs": args.runs,
        "pool": args.pool,
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{'way':<28}{'median s/program':>18}")
    for label, key in (("(a) bare python3 -I", "bare_s"), ("(b) docker run --rm", "docker_run_s"),
                       ("(c) warm pool, one run", "warm_s"), (f"(d) batch of {args.runs}", "batch_s")):
        print(f"{label:<28}{report[key]:>18.4f}")
    print(f"c/a = {report['warm_over_bare']}   d/a = {report['batch_over_bare']} (target <= 1.5)   "
          f"b/c = {report['docker_run_over_warm']} (target >= 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
