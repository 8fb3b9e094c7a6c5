"""The Action's metadata and the example workflows validate against GitHub's schemas and pass zizmor's audit."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from bot.config import INPUTS

from .conftest import REPO

BIN = Path(sys.executable).parent
WORKFLOWS = sorted((REPO / "examples" / "workflows").glob("*.yml"))


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
            "draft", "labels", "dry-run", "allow-forks", "search", "agent", "samples", "test-timeout", "python", "setup"} == set(inputs)


def test_inputs_of_config_keys_default_to_empty_so_the_config_file_decides():
    # the runner sets every input that has a default, and a set input overrides .github/fixbot.yml
    inputs = yaml.safe_load((REPO / "action.yml").read_text())["inputs"]
    assert {name: inputs[name].get("default") for name in INPUTS} == {name: "" for name in INPUTS}


def test_workflows_validate():
    proc = run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing():
    proc = run("zizmor", "--offline", "action.yml", *map(str, WORKFLOWS))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_action_is_pinned_by_commit_and_permissions_start_empty():
    for workflow in WORKFLOWS:
        data = yaml.safe_load(workflow.read_text())
        assert data["permissions"] == {}, workflow.name
        for job in data["jobs"].values():
            for step in job.get("steps", []):
                if "uses" in step:
                    ref = step["uses"].split("@")[1]
                    assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), step["uses"]
