"""The Action's metadata, the example workflows and this repository's own workflows (the release) validate
against GitHub's schemas and pass zizmor's audit; the release's edits of action.yml's image line."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.config import INPUTS

from .conftest import REPO

BIN = Path(sys.executable).parent
WORKFLOWS = sorted((REPO / "examples" / "workflows").glob("*.yml"))
OWN_WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
RELEASE = REPO / ".github" / "workflows" / "release.yml"


def run(tool: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / tool), *args], capture_output=True, text=True, cwd=REPO, timeout=120)


def test_three_example_workflows_exist():
    triggers = [set(yaml.safe_load(w.read_text())[True]) for w in WORKFLOWS]  # YAML 1.1 reads `on` as True
    assert {"workflow_run"} in triggers and {"workflow_dispatch"} in triggers
    assert {"push", "pull_request"} in triggers


def test_action_metadata_validates():
    proc = run("check-jsonschema", "--builtin-schema", "vendor.github-actions", "action.yml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    inputs = yaml.safe_load((REPO / "action.yml").read_text())["inputs"]
    assert {"github-token", "model", "api-base", "api-key", "test-command", "max-iterations", "run-id", "config",
            "draft", "labels", "dry-run", "allow-forks", "search", "agent", "samples", "choose", "edits",
            "test-timeout", "python", "setup"} == set(inputs)


def test_inputs_of_config_keys_default_to_empty_so_the_config_file_decides():
    # the runner sets every input that has a default, and a set input overrides .github/fixbot.yml
    inputs = yaml.safe_load((REPO / "action.yml").read_text())["inputs"]
    assert {name: inputs[name].get("default") for name in INPUTS} == {name: "" for name in INPUTS}


def test_workflows_validate():
    assert RELEASE in OWN_WORKFLOWS
    proc = run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS + OWN_WORKFLOWS))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing():
    proc = run("zizmor", "--offline", "action.yml", *map(str, WORKFLOWS + OWN_WORKFLOWS))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_action_is_pinned_by_commit_and_permissions_start_empty():
    for workflow in WORKFLOWS + OWN_WORKFLOWS:
        data = yaml.safe_load(workflow.read_text())
        assert data["permissions"] == {}, workflow.name
        for job in data["jobs"].values():
            for step in job.get("steps", []):
                if "uses" in step:
                    ref = step["uses"].split("@")[1]
                    assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), step["uses"]
                    assert "# v" in _line_of(workflow, step["uses"]), f"{step['uses']}: no version comment"


def _line_of(workflow: Path, uses: str) -> str:
    return next(line for line in workflow.read_text().splitlines() if f"uses: {uses}" in line)


def _release_image():
    spec = importlib.util.spec_from_file_location("release_image", REPO / "scripts" / "release_image.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_action_runs_the_published_image_of_this_version():
    # the source tree names the image by the version it will be released as; a release commit by digest
    release = _release_image()
    image = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["image"]
    match = release.BY_VERSION.fullmatch(image)
    assert match, f"action.yml's image {image!r} is not docker://ghcr.io/OWNER/fixbot:X.Y.Z"
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert match.group("version") == version, "bump action.yml's image and pyproject.toml's version together"


def test_the_release_publishes_on_a_version_tag_with_least_privilege():
    data = yaml.safe_load(RELEASE.read_text())
    assert data[True] == {"push": {"tags": ["v*"]}} and data["permissions"] == {}
    image, pin = data["jobs"]["image"], data["jobs"]["pin"]
    assert image["permissions"] == {"contents": "read", "packages": "write", "id-token": "write",
                                    "attestations": "write"}
    assert pin["permissions"] == {"contents": "write"} and pin["needs"] == "image"
    uses = {step["uses"].split("@")[0]: step for step in image["steps"] if "uses" in step}
    assert {"docker/metadata-action", "docker/build-push-action", "docker/login-action",
            "actions/attest-build-provenance"} <= set(uses)
    assert uses["docker/login-action"]["with"]["password"] == "${{ secrets.GITHUB_TOKEN }}"
    build = uses["docker/build-push-action"]["with"]
    assert build["push"] is True and build["cache-from"].startswith("type=registry,")
    assert build["cache-to"].startswith("type=registry,")
    assert uses["actions/attest-build-provenance"]["with"]["subject-digest"] == "${{ steps.push.outputs.digest }}"
    for job in (image, pin):  # the token never stays in .git/config for later steps
        checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
        assert checkout["with"]["persist-credentials"] is False


PYPROJECT = '[project]\nname = "fixbot"\nversion = "0.3.1"\n'
DIGEST = "sha256:" + "ab12" * 16


def test_release_check_and_pin_of_action_yml():
    release = _release_image()
    action = (REPO / "action.yml").read_text()
    ours = release.image_line(action).group("value")
    source = action.replace(ours, "docker://ghcr.io/octo-org/fixbot:0.3.1")
    assert release.check("v0.3.1", "Octo-Org", source, PYPROJECT) == {"image": "ghcr.io/octo-org/fixbot",
                                                                      "version": "0.3.1"}
    pinned = release.pin(source, f"ghcr.io/octo-org/fixbot@{DIGEST}", "v0.3.1")
    before, after = yaml.safe_load(source), yaml.safe_load(pinned)
    assert after["runs"]["image"] == f"docker://ghcr.io/octo-org/fixbot@{DIGEST}"
    assert {**after, "runs": before["runs"]} == before  # nothing else changes
    assert [a for a, b in zip(source.splitlines(), pinned.splitlines()) if a != b] == \
        ["  image: docker://ghcr.io/octo-org/fixbot:0.3.1"]
    assert pinned.count(" # v0.3.1") == 1
    refused = {
        "a release tag is vMAJOR": ("v0.3", "octo-org", source, PYPROJECT),
        "pyproject.toml says version 0.3.1": ("v0.3.2", "octo-org", source.replace("0.3.1", "0.3.2"), PYPROJECT),
        "not docker://ghcr.io/octo-org/fixbot:0.3.1": ("v0.3.1", "octo-org", action.replace(ours, "Dockerfile"),
                                                      PYPROJECT),
        "not docker://ghcr.io/mallory/fixbot:0.3.1": ("v0.3.1", "mallory", source, PYPROJECT),
        "this commit is a release commit": ("v0.3.1", "octo-org", pinned, PYPROJECT),
    }
    for message, args in refused.items():
        with pytest.raises(release.ReleaseError, match=message):
            release.check(*args)
    with pytest.raises(release.ReleaseError, match="sha256:<64 hex digits>"):
        release.pin(source, "ghcr.io/octo-org/fixbot:0.3.1", "v0.3.1")


def test_release_script_runs_as_the_workflow_runs_it(tmp_path):
    # `check` writes the two step outputs; a mismatch is one ::error:: line and exit 1, never a traceback
    env = {"GITHUB_REPOSITORY_OWNER": "fixbot-dev", "PATH": "/usr/bin:/bin"}
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    script = str(REPO / "scripts" / "release_image.py")
    proc = subprocess.run([sys.executable, script, "check", f"v{version}"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and proc.stdout == f"image=ghcr.io/fixbot-dev/fixbot\nversion={version}\n"
    proc = subprocess.run([sys.executable, script, "check", "v99.0.0"], capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and proc.stderr.startswith("::error::release: tag v99.0.0")
    assert "Traceback" not in proc.stderr and proc.stdout == ""
