"""`fixbot ci` end to end against the GitHub double over real HTTP: a failed run of a demo repository in, one
pull request out (and not a second one on a re-run). Scripted model here; the bundled model and the Action's
container image in the tests marked `model`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.github_double import GitHubDouble, github_double  # noqa: F401  (the fixture)

from .conftest import REPO, run_fixbot
from .fix_examples import EXAMPLES, FIXES

pytestmark = pytest.mark.timeout(900)
TEST_ID = "tests/test_gradebook.py::test_letter_grade_at_band_boundaries"
LOG = ("2026-11-21T10:00:00.0000000Z ##[group]Run python -m pytest\n"
       f"2026-11-21T10:00:02.0000000Z \x1b[31mFAILED\x1b[0m {TEST_ID} - "
       "AssertionError: assert ['B', 'B'] == ['A', 'B']\n"
       "2026-11-21T10:00:02.0000000Z \x1b[31m========= 1 failed, 4 passed in 0.11s =========\x1b[0m\n")


def example_files(name: str) -> dict[str, bytes]:
    root = EXAMPLES / name
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def failed_run_world(d: GitHubDouble, tmp_path: Path, *, model: str | None) -> dict:
    """A red run of examples/one-module on main, its job log, the workspace checked out at that commit, and the
    environment the runner gives a `workflow_run` job."""
    head = d.seed(example_files("one-module"))
    run_id = d.add_run(head, head_branch="main")
    d.add_job(run_id, "test", "failure", LOG)
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLES / "one-module", workspace)
    event = {"action": "completed", "repository": {"full_name": d.repo.full_name},
             "workflow_run": {"id": run_id, "conclusion": "failure", "head_sha": head, "head_branch": "main",
                              "head_repository": {"full_name": d.repo.full_name}, "pull_requests": []}}
    (tmp_path / "event.json").write_text(json.dumps(event))
    env = {"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
           "GITHUB_REPOSITORY": d.repo.full_name, "GITHUB_WORKSPACE": str(workspace), "GITHUB_API_URL": d.base_url,
           "GITHUB_SERVER_URL": "https://github.com", "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "INPUT_GITHUB-TOKEN": d.token, "INPUT_LABELS": "fixbot",
           "INPUT_DRAFT": "true", "INPUT_CONFIG": ".github/fixbot.yml"}
    if model:
        env["INPUT_MODEL"] = model
    return {"head": head, "run_id": run_id, "workspace": workspace, "env": env, "tmp": tmp_path}


def scripted_model(tmp_path: Path) -> str:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([f"```python\n{FIXES['one-module'][0].fixed}```"] * 2))
    return f"scripted:{answers}"


def outputs(world: dict) -> dict[str, str]:
    lines = (world["tmp"] / "output").read_text().splitlines()
    found, i = {}, 0
    while i < len(lines):  # name<<DELIMITER / value / DELIMITER
        name, _, delimiter = lines[i].partition("<<")
        found[name] = lines[i + 1] if lines[i + 2] == delimiter else None
        i += 3
    return found


def assert_one_fix_pr(d: GitHubDouble, world: dict) -> dict:
    assert d.repo.refs["heads/main"] == world["head"] and d.ref_updates == []  # the base branch is never written
    branches = [r for r in d.repo.refs if r.startswith("heads/fixbot/")]
    assert len(branches) == 1 and len(d.repo.pulls) == 1
    pull = d.repo.pulls[0]
    assert pull["head"] == branches[0][len("heads/"):] and pull["base"] == "main" and pull["draft"] is True
    commit = d.repo.refs[branches[0]]
    assert d.commits[commit]["parents"] == [world["head"]]
    before, after = d.files(world["head"]), d.files(commit)
    changed = [p for p in after if after[p] != before.get(p)]
    assert changed == ["gradebook.py"]
    diff = [(a, b) for a, b in zip(before["gradebook.py"].decode().splitlines(),
                                   after["gradebook.py"].decode().splitlines())
            if a != b]
    assert diff == [("    if score > 90:", "    if score >= 90:")]
    assert d.repo.issue_labels[pull["number"]] == ["fixbot"]
    assert d.token not in json.dumps(d.repo.pulls) and "letter_grade" in pull["title"]
    return pull


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_ci_turns_a_failed_run_into_one_pull_request(github_double, tmp_path):
    d = github_double
    world = failed_run_world(d, tmp_path, model=scripted_model(tmp_path))
    proc = run_fixbot("ci", env=world["env"])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    pull = assert_one_fix_pr(d, world)
    out = outputs(world)
    assert out["status"] == "fixed" and out["pr-url"].endswith(f"/pull/{pull['number']}")
    assert out["patch-path"].endswith("fixbot-out/fix.patch") and Path(out["patch-path"]).is_file()
    assert "::group::fixing" in proc.stdout and "::notice file=gradebook.py" in proc.stdout
    assert "# fixbot: fixed" in (tmp_path / "summary").read_text()
    assert d.token not in proc.stdout + proc.stderr
    # the log's failure was read through the redirect, without the token reaching the log host
    assert d.log_seen and all(s.authorization is None for s in d.log_seen)
    # the same failure again: the open PR is found, no second one
    proc = run_fixbot("ci", env=world["env"])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert_one_fix_pr(d, world)
    assert "existing" in proc.stdout


def test_ci_skips_a_successful_run_and_a_forks_run(github_double, tmp_path):
    d = github_double
    world = failed_run_world(d, tmp_path, model=scripted_model(tmp_path))
    event = json.loads((tmp_path / "event.json").read_text())
    event["workflow_run"]["conclusion"] = "success"
    (tmp_path / "event.json").write_text(json.dumps(event))
    proc = run_fixbot("ci", env=world["env"])
    assert proc.returncode == 0 and "nothing to fix" in proc.stdout
    assert outputs(world)["status"] == "skipped" and d.writes() == []
    event["workflow_run"].update(conclusion="failure", head_repository={"full_name": "mallory/gradebook"})
    (tmp_path / "event.json").write_text(json.dumps(event))
    proc = run_fixbot("ci", env=world["env"])
    assert proc.returncode == 0 and "allow-forks" in proc.stdout and d.writes() == []


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_ci_dry_run_publishes_nothing_and_a_bad_config_names_the_key(github_double, tmp_path):
    d = github_double
    world = failed_run_world(d, tmp_path, model=scripted_model(tmp_path))
    proc = run_fixbot("ci", env={**world["env"], "INPUT_DRY-RUN": "true"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert outputs(world)["status"] == "fixed" and d.writes() == [] and d.repo.pulls == []
    assert "design: reflect, 3 answer(s) per model call" in proc.stdout
    (world["workspace"] / ".github").mkdir()
    (world["workspace"] / ".github" / "fixbot.yml").write_text("iteratons: 3\n")
    proc = run_fixbot("ci", env=world["env"])
    assert proc.returncode == 2 and "iteratons" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.model
def test_ci_with_the_bundled_model(github_double, tmp_path):
    world = failed_run_world(github_double, tmp_path, model=None)
    proc = run_fixbot("ci", env=world["env"], timeout=800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert_one_fix_pr(github_double, world)


@pytest.fixture(scope="session")
def action_image(docker_client, sandbox_image) -> str:
    """The Action's image, built from this checkout's sources (once; reused while they do not change)."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "build_action_image.py")], capture_output=True,
                          text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.model
def test_the_action_image_runs_the_same_scenario_as_a_container(github_double, tmp_path, action_image):
    """As the runner starts a Docker action: workspace at /github/workspace, the event under /github/workflow,
    the Docker socket mounted, INPUT_* in the environment. The double listens on the host's loopback."""
    world = failed_run_world(github_double, tmp_path, model=None)
    env = dict(world["env"], GITHUB_WORKSPACE="/github/workspace", GITHUB_EVENT_PATH="/github/workflow/event.json",
               GITHUB_OUTPUT="/github/file_commands/output", GITHUB_STEP_SUMMARY="/github/file_commands/summary")
    (tmp_path / "commands").mkdir()
    os.chmod(world["workspace"], 0o777)
    args = ["docker", "run", "--rm", "--network", "host", "-v", "/var/run/docker.sock:/var/run/docker.sock",
            "-v", f"{world['workspace']}:/github/workspace", "-v", f"{tmp_path}:/github/workflow:ro",
            "-v", f"{tmp_path / 'commands'}:/github/file_commands", "--workdir", "/github/workspace"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    proc = subprocess.run([*args, action_image, "ci"], capture_output=True, text=True, timeout=800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert_one_fix_pr(github_double, world)
    assert "status<<" in (tmp_path / "commands" / "output").read_text()


def test_ci_tool_call_design_needs_a_model_with_tools(github_double, tmp_path):
    world = failed_run_world(github_double, tmp_path, model="transformers:Qwen/Qwen2.5-Coder-0.5B-Instruct")
    (world["workspace"] / ".github").mkdir()
    (world["workspace"] / ".github" / "fixbot.yml").write_text("agent: tool-call\n")
    proc = run_fixbot("ci", env=world["env"])
    assert proc.returncode == 2 and "cannot call tools" in proc.stderr and "Traceback" not in proc.stderr
    assert github_double.writes() == []


def test_ci_passes_the_configured_design_and_samples_to_the_pipeline():
    from bot.agent import FIX_REPAIR
    from bot.cli.ci_cmd import _design_line, _options
    from bot.config import Config
    repair = _options(Config(samples=3, search=False, iterations=5), ()).repair
    assert (repair.agent, repair.samples, repair.search, repair.iterations) == ("reflect", 3, None, 5)
    ci_env = (("LANG", "C.UTF-8"), ("DJANGO_SETTINGS_MODULE", "site.settings"))
    command = _options(Config(test_command="LANG=C pytest -x"), (), ci_env).test_command
    assert command.env == (("DJANGO_SETTINGS_MODULE", "site.settings"), ("LANG", "C")) and command.args == ("-x",)
    assert _options(Config(), ()).repair == FIX_REPAIR  # the default: reflect, three answers per call, the search
    assert _options(Config(agent="thought-patch"), ()).repair.samples == 3  # three plans per thought
    assert _design_line(Config(agent="tool-call", samples=4)) == "design: tool-call, 4 answer(s) per model call"
    assert _design_line(Config(samples=2)) == "design: reflect, 2 answer(s) per model call"


def test_the_failing_jobs_python_reaches_the_environment(tmp_path):
    from bot.cli.ci_cmd import _env_request, _job_pythons, _workflow_text
    from bot.config import Config
    from bot.github.client import _workflow_file
    from bot.github.types import JobInfo

    # in the failing job itself: actions/setup-python leaves pythonLocation in the job's environment
    assert _job_pythons({"pythonLocation": "/opt/hostedtoolcache/Python/3.9.18/x64"}, "", []) == ("3.9",)
    # a run read afterwards: its workflow file in the workspace and the failed jobs' matrix values
    workflow = tmp_path / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n"
                        "        python-version: ['3.9', '3.13']\n    steps:\n      - uses: actions/setup-python@v5\n"
                        "        with:\n          python-version: ${{ matrix.python-version }}\n")
    failed = [JobInfo(1, "test (3.13)", "failure", None)]
    assert _job_pythons({}, _workflow_text(tmp_path, ".github/workflows/ci.yml"), failed) == ("3.13",)
    assert _workflow_text(tmp_path, ".github/workflows/gone.yml") == "" and _job_pythons({}, "", failed) == ()
    assert _workflow_file("octocat/octo-repo/.github/workflows/ci.yml@main") == ".github/workflows/ci.yml"
    request = _env_request(Config(python="", setup=("make deps",)), ("3.13",), ".")
    assert (request.python, request.setup, request.ci_versions) == (None, ("make deps",), ("3.13",))
    assert _env_request(Config(python="3.9"), ("3.13",), ".").python == "3.9"  # an explicit setting wins
