"""The text of the files `fixbot init` writes: the workflow for each trigger, shaped like examples/workflows
(every action pinned by commit, `permissions: {}` at the top and per job only what fixbot needs), and
`.github/fixbot.yml` with the detected test command and every other key at its default, commented out."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import yaml

from bot.config import KEYS, Config

Trigger = Literal["in-job", "workflow_run", "dispatch"]
TRIGGERS: tuple[Trigger, ...] = ("in-job", "workflow_run", "dispatch")


@dataclass(frozen=True)
class Pin:
    action: str
    sha: str
    version: str

    def uses(self) -> str:
        return f"{self.action}@{self.sha} # {self.version}"


# The pins examples/workflows uses (tests/test_init.py checks they agree); fixbot's own is the placeholder the
# user replaces with the release commit they reviewed.
CHECKOUT = Pin("actions/checkout", "11bd71901bbe5b1630ceea73d27597364c9af683", "v4.2.2")
SETUP_PYTHON = Pin("actions/setup-python", "a26af69be951a213d495a4c3e4e4022e16d87065", "v5.6.0")
UPLOAD_ARTIFACT = Pin("actions/upload-artifact", "ea165f8d65b6e75b540449e92b4886f43607fa02", "v4.6.2")
FIXBOT = Pin("fixbot-dev/fixbot", "0123456789abcdef0123456789abcdef01234567", "v0.1.0")
PINS = (CHECKOUT, SETUP_PYTHON, UPLOAD_ARTIFACT, FIXBOT)


@dataclass(frozen=True)
class Grant:
    scope: str
    level: str
    why: str


_ACTIONS = Grant("actions", "read", "read the failed run, its jobs and their logs")
_CONTENTS = Grant("contents", "write", "create the fix branch and its commit (a new branch only: nothing existing is "
                                      "pushed to or rewritten)")
_PULLS = Grant("pull-requests", "write", "open the fix pull request")
_ISSUES = Grant("issues", "write", "label the fix pull request, and comment on the pull request whose run failed")
# No `checks`: fixbot reads runs, jobs and logs through the actions API only.
GRANTS: dict[Trigger, tuple[Grant, ...]] = {
    "in-job": (_CONTENTS, _PULLS, _ISSUES),  # in its own job fixbot runs the tests itself: no run to read
    "workflow_run": (_ACTIONS, _CONTENTS, _PULLS, _ISSUES),
    "dispatch": (_ACTIONS, _CONTENTS, _PULLS, _ISSUES),
}
DISPATCH_RESOLVE = Grant("actions", "read", "the `resolve` job reads which commit the run tested")


def _permissions(grants: tuple[Grant, ...], indent: str) -> str:
    return "".join(f"{indent}{g.scope}: {g.level}\n" for g in grants)


def _comment(text: str) -> str:
    return " ".join(text.split())  # one line, whatever the source said


def _block(lines: tuple[str, ...], indent: str) -> str:
    return "".join(f"{indent}{line}\n" for line in lines)


def _fixbot_step(indent: str, condition: str | None = None, run_id: str | None = None) -> str:
    text = f"{indent}- name: fixbot\n"
    if condition:
        text += f"{indent}  if: {condition}\n"
    text += (f"{indent}  # Pin fixbot to the commit of the release you reviewed.\n"
             f"{indent}  uses: {FIXBOT.uses()}\n"
             f"{indent}  with:\n"
             f"{indent}    github-token: ${{{{ secrets.GITHUB_TOKEN }}}}\n")
    if run_id:
        text += f"{indent}    run-id: {run_id}\n"
    return text


def workflow_test_line(command: str) -> str:
    """The command as the workflow runs it: pytest as `python -m pytest`, which makes the checkout importable
    the way fixbot's sandbox does (a project that is not installed still imports)."""
    return f"python -m {command}" if command == "pytest" or command.startswith("pytest ") else command


@dataclass(frozen=True, kw_only=True)
class InJob:
    """What the in-job workflow needs to know about the repository."""

    test_command: str
    test_source: str
    python: str  # "3.11"
    python_source: str
    install: tuple[str, ...]  # shell lines, may be empty
    branches: tuple[str, ...]  # push branches; empty: every push


def in_job_workflow(job: InJob) -> str:
    branches = ", ".join(json.dumps(b) for b in job.branches)
    push = f"  push:\n    branches: [{branches}]\n" if job.branches else "  push:\n"
    install = (f"      - name: Install\n        run: |\n{_block(job.install, ' ' * 10)}" if job.install else "")
    failed = "failure() && steps.test.outcome == 'failure'"  # the tests failed, not the set-up before them
    return (
        "# Written by `fixbot init`: the tests, and fixbot as the last step of their job when they fail (no\n"
        "# privileged trigger). On a fork's pull request the token is read-only: fixbot then writes the patch and\n"
        "# report to fixbot-out/ instead of opening a pull request, and the last step keeps them as an artifact.\n"
        "name: tests (fixbot)\n"
        f"on:\n{push}  pull_request:\n"
        "permissions: {}\n"
        "jobs:\n"
        "  test:\n"
        "    runs-on: ubuntu-latest\n"
        f"    permissions:\n{_permissions(GRANTS['in-job'], ' ' * 6)}"
        "    steps:\n"
        f"      - uses: {CHECKOUT.uses()}\n"
        "        with:\n"
        "          persist-credentials: false\n"
        f"      - uses: {SETUP_PYTHON.uses()}\n"
        "        with:\n"
        f"          python-version: {json.dumps(job.python)}  # {_comment(job.python_source)}\n"
        f"{install}"
        f"      # the test command comes from {_comment(job.test_source)}\n"
        "      - name: Test\n"
        "        id: test\n"
        f"        run: |\n{_block((workflow_test_line(job.test_command),), ' ' * 10)}"
        f"{_fixbot_step(' ' * 6, failed)}"
        "      - name: Keep the patch when no pull request could be opened\n"
        f"        if: {failed}\n"
        f"        uses: {UPLOAD_ARTIFACT.uses()}\n"
        "        with:\n"
        "          name: fixbot\n"
        "          path: fixbot-out/\n"
        "          if-no-files-found: ignore\n")


def workflow_run_workflow(ci_name: str) -> str:
    return (
        f"# Written by `fixbot init`: runs when the workflow {json.dumps(ci_name)} completes, and acts only on a\n"
        "# failure of a run whose head is this repository (never a fork's code with this workflow's write token).\n"
        "name: fixbot\n"
        "on:\n"
        "  # zizmor: ignore[dangerous-triggers] the failing code only ever runs inside fixbot's network-less Docker "
        "sandbox, which never receives the token; forks are excluded below\n"
        "  workflow_run:\n"
        f"    workflows: [{json.dumps(ci_name)}]\n"
        "    types: [completed]\n"
        "permissions: {}\n"
        "jobs:\n"
        "  fix:\n"
        "    if: github.event.workflow_run.conclusion == 'failure' && "
        "github.event.workflow_run.head_repository.full_name == github.repository\n"
        "    runs-on: ubuntu-latest\n"
        f"    permissions:\n{_permissions(GRANTS['workflow_run'], ' ' * 6)}"
        "    steps:\n"
        f"      - uses: {CHECKOUT.uses()}\n"
        "        with:\n"
        "          ref: ${{ github.event.workflow_run.head_sha }}\n"
        "          persist-credentials: false\n"
        f"{_fixbot_step(' ' * 6)}")


def dispatch_workflow() -> str:
    return (
        "# Written by `fixbot init`: by hand, for any failed run: Actions -> fixbot (manual) -> Run workflow, with\n"
        "# the run's id (the number in the run's address).\n"
        "name: fixbot (manual)\n"
        "on:\n"
        "  workflow_dispatch:\n"
        "    inputs:\n"
        "      run-id:\n"
        "        description: The id of the failed workflow run to fix\n"
        "        required: true\n"
        "        type: string\n"
        "permissions: {}\n"
        "jobs:\n"
        "  resolve:\n"
        "    runs-on: ubuntu-latest\n"
        f"    permissions:\n{_permissions((DISPATCH_RESOLVE,), ' ' * 6)}"
        "    outputs:\n"
        "      sha: ${{ steps.run.outputs.sha }}\n"
        "    steps:\n"
        "      - id: run\n"
        "        env:\n"
        "          GH_TOKEN: ${{ github.token }}\n"
        "          RUN_ID: ${{ inputs.run-id }}\n"
        "        run: echo \"sha=$(gh api \"repos/$GITHUB_REPOSITORY/actions/runs/$RUN_ID\" --jq .head_sha)\" >> "
        "\"$GITHUB_OUTPUT\"\n"
        "  fix:\n"
        "    needs: resolve\n"
        "    runs-on: ubuntu-latest\n"
        f"    permissions:\n{_permissions(GRANTS['dispatch'], ' ' * 6)}"
        "    steps:\n"
        f"      - uses: {CHECKOUT.uses()}\n"
        "        with:\n"
        "          ref: ${{ needs.resolve.outputs.sha }}\n"
        "          persist-credentials: false\n"
        f"{_fixbot_step(' ' * 6, run_id='${{ inputs.run-id }}')}")


# One line per key of bot.config.Config (tests/test_init.py checks that none is missing).
DESCRIPTIONS = {
    "model": "llamacpp:bundled, or openai:MODEL (with the api-base and api-key inputs)",
    "api-base": "an OpenAI-compatible server's URL, for openai: models",
    "test-command": "any pytest or `python -m unittest` command line",
    "iterations": "model calls per function (1-50)",
    "max-targets": "functions tried in all (1-20)",
    "paths": "files a fix may change (tests, conftest.py and .github/ never)",
    "labels": "labels of the fix pull request",
    "draft": "open the fix pull request as a draft",
    "allow-forks": "act on runs whose head is a fork (the token still never enters the sandbox)",
    "dry-run": "find and verify the fix, publish nothing",
    "wall-s": "time budget of one run in seconds: a hard limit, the report is written within it",
    "test-timeout": "per-test limit in seconds; 0: ten times the slowest passing test (5 to 60 s)",
    "search": "one-edit variants of the function tried before and between model calls",
    "agent": "the repair design: reflect, thought-patch or tool-call",
    "samples": "answers per model call of reflect, tested in one batch (1-8)",
    "choose": "of several candidates that pass: first (fewest changed lines) or likeliest (the model's score)",
    "edits": "the model's answers: whole functions, SEARCH/REPLACE blocks, or auto (blocks past 40 lines)",
    "python": "the Python the tests run on (\"3.9\", \"3.11\", \"3.13\"); empty: the failing job's, else inferred",
    "setup": "shell commands that install the test environment, instead of inferring it",
}


def _yaml_value(value: object) -> str:
    plain = list(value) if isinstance(value, tuple) else value
    return yaml.safe_dump(plain, default_flow_style=True, width=10_000).removesuffix("\n...\n").strip()


def config_file(test_command: str, test_source: str) -> str:
    defaults = Config()
    lines = ["# fixbot's settings (docs/action.md), written by `fixbot init`. A set input of the Action overrides",
             "# a key here. The test command was found in: " + _comment(test_source),
             f"test-command: {_yaml_value(test_command)}",
             "# Every other key at its default; uncomment one to change it."]
    for key, field in KEYS.items():
        if key == "test-command":
            continue
        entry = f"# {key}: {_yaml_value(getattr(defaults, field.name))}"
        description = DESCRIPTIONS.get(key)
        lines.append(f"{entry:<34}  # {description}" if description else entry)
    return "\n".join(lines) + "\n"
