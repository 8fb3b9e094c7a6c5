"""Red to pull request, measured: the Action's image on a `workflow_run` event for a failed run of a demo
repository (examples/one-module), against the GitHub double (tests/github_double.py) over real HTTP.

    .venv/bin/python bench/ci_e2e.py [--image TAG] [--input NAME=VALUE ...] [--warm-env] [--no-speed]
        [--out FILE] [--json] [--results-md [FILE]]

1. The image: scripts/build_action_image.py builds it from this checkout (or reuses it; --image names another).
2. The world: the double holds the repository at the failing commit, a failed run and its job's log;
   the workspace holds that commit; the event file says the run completed with a failure (tests/test_ci.py's
   failed_run_world, the same scenario the Action image test runs).
3. The run: `docker run` as the runner starts a Docker action (workspace, event file, file-command directory
   and the Docker socket mounted, INPUT_* and GITHUB_* in the environment, the bundled model), each output
   line stamped as it arrives.
4. The parts (bench/ci_e2e_parts.py): container start, log read, environment, reproduce, repair, verification,
   publish and the rest, from those stamps and fixbot's report.json; the outcome (status, the pull request).

A runner starts with no images, so by default the test environment's cached image is untagged first and fixbot
builds it again (--warm-env keeps it). Pulling the Action's image is not measured (no registry here).
Writes FILE (default ~/.cache/fixbot/bench-ci-e2e.json) and, with --results-md, its section of bench/RESULTS.md.
Exit status: 0 when the run opened its pull request, 1 when not, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests.github_double and tests.test_ci: the double and its failed-run world

from ci_e2e_parts import Line, environment_note, markdown_section, parse_parts, update_results_md  # noqa: E402
from common import speed_line  # noqa: E402

RESULTS_MD = REPO / "bench" / "RESULTS.md"
TARGET_S = 300.0  # issue 24: red to pull request in five minutes on this 2-core machine
RUN_TIMEOUT_S = 1500.0
# The test environment's cache tag, computed by the image itself (its pip settings, the Docker engine it sees),
# so that --warm-env's opposite untags exactly the image fixbot would reuse.
ENV_TAG = """
from bot.checkout.repository import load_checkout
from bot.environment.prepare import EnvRequest, cache_tag, plan_environment
from bot.environment.pip_settings import pip_settings
from sandbox.containers import connect
from sandbox.image import default_image, image_exists
choice, plan = plan_environment(load_checkout("/github/workspace"), EnvRequest())
client, base = connect(), default_image(choice.version)
if plan.steps and image_exists(client, base):
    print(cache_tag(client.images.get(base).id, choice.version, plan, pip_settings(plan.index_urls)))
"""


def say(message: str) -> None:
    print(f"[ci_e2e] {message}", file=sys.stderr, flush=True)


def build_image() -> tuple[str, float]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "build_action_image.py")], stdout=subprocess.PIPE,
                          text=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"ci_e2e.py: scripts/build_action_image.py failed (exit {proc.returncode})")
    return proc.stdout.strip().splitlines()[-1], time.monotonic() - start


def docker_args(world: dict, image: str, name: str) -> list[str]:
    """`docker run` as the runner starts a Docker action; the double listens on the host's loopback."""
    tmp = world["tmp"]
    env = dict(world["env"], GITHUB_WORKSPACE="/github/workspace", GITHUB_EVENT_PATH="/github/workflow/event.json",
               GITHUB_OUTPUT="/github/file_commands/output", GITHUB_STEP_SUMMARY="/github/file_commands/summary")
    (tmp / "commands").mkdir(exist_ok=True)
    world["workspace"].chmod(0o777)
    args = ["docker", "run", "--rm", "--name", name, "--network", "host",
            "-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", f"{world['workspace']}:/github/workspace",
            "-v", f"{tmp}:/github/workflow:ro", "-v", f"{tmp / 'commands'}:/github/file_commands",
            "--workdir", "/github/workspace"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    return args + _pip_ca()


def _pip_ca() -> list[str]:
    """A CA bundle this machine's pip is configured with (an intercepting proxy's), for the test environment's
    build container; a runner needs none."""
    from bot.environment.pip_settings import read_pip_config

    cert = read_pip_config().get("cert")
    return ["-v", f"{cert}:/etc/fixbot-bench/ca.pem:ro", "-e", "PIP_CERT=/etc/fixbot-bench/ca.pem"] if cert else []


def untag_environment(world: dict, image: str) -> tuple[str, str]:
    """Untags the test environment's cached image (the image stays while another tag or container uses it);
    its tag and image id, for `retag` when the run did not build it again."""
    proc = subprocess.run(["docker", "run", "--rm", "-v", "/var/run/docker.sock:/var/run/docker.sock",
                           "-v", f"{world['workspace']}:/github/workspace:ro", "--entrypoint", "python3", image,
                           "-c", ENV_TAG], capture_output=True, text=True, timeout=300)
    tag = proc.stdout.strip()
    if proc.returncode != 0 or not tag:
        return "", ""
    found = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True, text=True)
    removed = subprocess.run(["docker", "image", "rm", tag], capture_output=True, text=True)
    return (tag, found.stdout.strip()) if removed.returncode == 0 else ("", "")


def retag(tag: str, image_id: str) -> None:
    """Gives the cached environment its tag back after a run that stopped before building it again."""
    if tag and subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode != 0:
        subprocess.run(["docker", "tag", image_id, tag], capture_output=True)


def run_stamped(args: list[str], name: str, log: Path) -> tuple[list[Line], float, int]:
    """Runs `args`, stamping each output line with the seconds since the start; the lines, the wall, the exit."""
    lines: list[Line] = []
    timer = threading.Timer(RUN_TIMEOUT_S, lambda: subprocess.run(["docker", "kill", name], capture_output=True))
    start = time.monotonic()
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc, \
            log.open("w", encoding="utf-8", buffering=1) as out:
        timer.start()
        assert proc.stdout is not None
        for text in proc.stdout:
            at = time.monotonic() - start
            lines.append((at, text.rstrip("\n")))
            out.write(f"{at:8.2f} {text}")
        code = proc.wait()
    wall = time.monotonic() - start
    timer.cancel()
    return lines, wall, code


def outcome(double, world: dict) -> dict:
    """What the run left: its status output, the pull request in the double, contract violations."""
    output = world["tmp"] / "commands" / "output"
    status = "none"
    if output.is_file():
        lines = output.read_text().splitlines()
        status = next((lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith("status<<")), "none")
    pulls = double.repo.pulls
    return {"status": status, "pull": pulls[0]["number"] if pulls else None,
            "pull_title": pulls[0]["title"] if pulls else None, "violations": list(double.violations)}


def measure(image: str, *, warm_env: bool, inputs: dict[str, str], log: Path) -> dict:
    from tests.github_double import GitHubDouble
    from tests.test_ci import failed_run_world

    double = GitHubDouble(token="ghs_" + "B3nch" * 8)
    untagged, image_id = "", ""
    try:
        with tempfile.TemporaryDirectory(prefix="fixbot-ci-e2e-") as tmp:
            world = failed_run_world(double, Path(tmp), model=None)
            world["env"].update({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
            untagged, image_id = ("", "") if warm_env else untag_environment(world, image)
            if untagged:
                say(f"untagged the cached test environment {untagged}: fixbot builds it, as on a fresh runner")
            name = f"fixbot-ci-e2e-{int(time.time())}"
            say(f"docker run {image} ci (log: {log})")
            lines, wall, code = run_stamped([*docker_args(world, image, name), image, "ci"], name, log)
            report_path = world["workspace"] / "fixbot-out" / "report.json"
            report = json.loads(report_path.read_text()) if report_path.is_file() else None
            return {"exit": code, **outcome(double, world), "environment": environment_note(lines),
                    "model_calls": sum(len(r["attempts"]) for r in (report or {}).get("repairs", ())),
                    "parts": parse_parts(lines, report, wall).as_dict()}
    finally:
        double.stop()
        if untagged:
            retag(untagged, image_id)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()


def _speed(args: argparse.Namespace) -> dict | None:
    from agents import model_speed
    return model_speed(argparse.Namespace(no_speed=args.no_speed, model="llamacpp:bundled", workers=1))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ci_e2e.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", help="the Action's image to run (default: scripts/build_action_image.py's)")
    parser.add_argument("--warm-env", action="store_true",
                        help="keep the test environment's cached image (default: untag it, as a fresh runner has none)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                        help="an Action input, e.g. search=false (the bundled model then does the repair)")
    parser.add_argument("--no-speed", action="store_true", help="skip measuring the model's speed first")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-ci-e2e.json",
                        help="the JSON result; the stamped log beside it (FILE with .log)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--results-md", nargs="?", type=Path, const=RESULTS_MD, metavar="FILE",
                        help=f"write this run's section of {RESULTS_MD.relative_to(REPO)} (or FILE)")
    args = parser.parse_args(argv)
    pairs = [item.partition("=") for item in args.input]
    if any(not name or not sep for name, sep, _ in pairs):
        parser.error("--input takes NAME=VALUE, e.g. --input search=false")
    args.inputs = {name: value for name, _, value in pairs}
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from docker.errors import ImageNotFound

    from sandbox.containers import connect

    image, build_s = (args.image, 0.0) if args.image else build_image()
    try:
        size = connect().images.get(image).attrs["Size"]
    except ImageNotFound:
        print(f"ci_e2e.py: error: no image {image}", file=sys.stderr)
        return 2
    speed = _speed(args)
    if speed:
        say(speed_line(speed, 1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    commit = _git("rev-parse", "--short", "HEAD") + ("+dirty" if _git("status", "--porcelain", "--", "bot",
                                                                      "sandbox", "Dockerfile") else "")
    result = {"date": time.strftime("%Y-%m-%d"), "commit": commit, "example": "examples/one-module",
              "image": image, "image_gb": size / 1e9, "image_build_s": round(build_s, 1), "target_s": TARGET_S,
              "command": shlex.join([".venv/bin/python", "bench/ci_e2e.py", *(sys.argv[1:] if argv is None else argv)]),
              "model_speed": speed, "speed_line": speed_line(speed, 1) if speed else None,
              "inputs": args.inputs,
              **measure(image, warm_env=args.warm_env, inputs=args.inputs, log=args.out.with_suffix(".log"))}
    result["key"] = " ".join([commit, result["example"], *(f"{k}={v}" for k, v in args.inputs.items())])
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    if args.results_md:
        update_results_md(args.results_md, result["key"], markdown_section(result))
    parts = result["parts"]
    print(json.dumps(result, indent=2) if args.json else
          f"{result['status']}, pull request {result['pull'] or 'none'}: wall {parts['wall']:.0f} s = " +
          ", ".join(f"{k} {v:.1f}" for k, v in parts.items() if v is not None and k not in ("wall", "model")) +
          f" (model calls {parts['model']:.1f} of repair); {args.out}")
    return 0 if result["pull"] and not result["violations"] else 1


if __name__ == "__main__":
    sys.exit(main())
