"""`fixbot fix` over every demo repository under examples/, as a user runs it (one process per repository).

    python bench/examples.py [--model llamacpp:bundled] [--iterations K] [--only one-module,two-bugs] [--json]

Prints per repository: fixed or not, wall time split into setup (dependencies, sandbox) / test runs / model,
and changed lines; then the totals. --json prints one JSON line instead. Each repository is copied to a
temporary directory first, so examples/ is never modified.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bot.agent import FIX_REPAIR

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def run_one(name: str, model: str, iterations: int, work: Path) -> dict:
    root = work / name
    shutil.copytree(EXAMPLES / name, root)
    out = work / f"{name}-out"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "bot.cli.main", "fix", str(root), "--model", model,
                           "--iterations", str(iterations), "--out", str(out)], capture_output=True, text=True,
                          cwd=REPO)
    wall = time.monotonic() - start
    try:
        report = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return {"repo": name, "fixed": False, "status": f"error (exit {proc.returncode})", "wall_s": round(wall, 1),
                "error": proc.stderr.strip()[-300:]}
    t = report["timings"]
    return {"repo": name, "fixed": report["status"] == "fixed", "status": report["status"], "wall_s": round(wall, 1),
            "setup_s": t["setup_s"], "tests_s": t["tests_s"], "model_s": t["model_s"],
            "changed_lines": report["changed_lines"], "model_calls": sum(len(r["attempts"]) for r in report["repairs"]),
            "exit_code": proc.returncode}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llamacpp:bundled")
    parser.add_argument("--iterations", type=int, default=FIX_REPAIR.iterations,
                        help=f"model calls per target (default {FIX_REPAIR.iterations}, as `fixbot fix`)")
    parser.add_argument("--only", help="comma-separated example names (default: all)")
    parser.add_argument("--json", action="store_true", help="one JSON line instead of the table")
    args = parser.parse_args()
    names = sorted(p.name for p in EXAMPLES.iterdir() if (p / "pyproject.toml").is_file())
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            parser.error(f"unknown example(s): {', '.join(unknown)}; choose from {', '.join(names)}")
        names = [n for n in names if n in wanted]
    rows = []
    with tempfile.TemporaryDirectory(prefix="fixbot-bench-") as tmp:
        for name in names:
            if not args.json:
                print(f"{name}...", file=sys.stderr, flush=True)
            rows.append(run_one(name, args.model, args.iterations, Path(tmp)))
    summary = {"model": args.model, "iterations": args.iterations, "fixed": sum(r["fixed"] for r in rows),
               "total": len(rows), "wall_s": round(sum(r["wall_s"] for r in rows), 1),
               "median_wall_s": round(statistics.median(r["wall_s"] for r in rows), 1) if rows else 0.0,
               "repos": rows}
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"{'repository':<18} {'status':<12} {'wall s':>7} {'setup s':>8} {'tests s':>8} {'model s':>8} "
          f"{'calls':>5} {'lines':>5}")
    for r in rows:
        print(f"{r['repo']:<18} {r['status']:<12} {r['wall_s']:>7.1f} {r.get('setup_s', 0):>8.1f} "
              f"{r.get('tests_s', 0):>8.1f} {r.get('model_s', 0):>8.1f} {r.get('model_calls', 0):>5} "
              f"{r.get('changed_lines', 0):>5}")
    print(f"fixed {summary['fixed']}/{summary['total']} · total {summary['wall_s']} s · median per repository "
          f"{summary['median_wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
