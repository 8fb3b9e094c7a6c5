"""Which events fixbot acts on, and how it talks back to the runner (outputs, summary, annotations)."""
from __future__ import annotations

import json

import pytest

from bot.action.event import BadEvent, plan, read_event
from bot.action.runner_io import RunnerIO

ENV = {"GITHUB_REPOSITORY": "acme/shop", "GITHUB_RUN_ID": "77", "GITHUB_SHA": "a" * 40, "GITHUB_REF_NAME": "main"}


def workflow_run(conclusion="failure", head="acme/shop", prs=()):
    return {"repository": {"full_name": "acme/shop"},
            "workflow_run": {"id": 42, "conclusion": conclusion, "head_sha": "b" * 40, "head_branch": "feature",
                             "head_repository": {"full_name": head},
                             "pull_requests": [{"number": n} for n in prs]}}


def test_workflow_run_acts_only_on_failure_of_this_repository():
    p = plan("workflow_run", workflow_run(prs=(5,)), ENV)
    assert p.act and (p.run_id, p.head_sha, p.base_branch, p.source_pr) == (42, "b" * 40, "feature", 5)
    assert not plan("workflow_run", workflow_run("success"), ENV).act
    fork = plan("workflow_run", workflow_run(head="mallory/shop"), ENV)
    assert not fork.act and "allow-forks" in fork.reason
    assert plan("workflow_run", workflow_run(head="mallory/shop"), ENV, allow_forks=True).act


def test_a_failed_workflow_run_without_its_id_is_a_bad_event():
    event = workflow_run()
    del event["workflow_run"]["id"]
    with pytest.raises(BadEvent, match="no run id"):
        plan("workflow_run", event, ENV)
    event["workflow_run"]["conclusion"] = "success"  # nothing to act on: no id needed
    assert not plan("workflow_run", event, ENV).act


def test_dispatch_needs_a_run_id():
    assert plan("workflow_dispatch", {"inputs": {"run-id": "99"}}, ENV).run_id == 99
    assert plan("workflow_dispatch", {}, ENV, run_id_input="12").run_id == 12
    with pytest.raises(BadEvent, match="run-id"):
        plan("workflow_dispatch", {}, ENV)
    with pytest.raises(BadEvent, match="number"):
        plan("workflow_dispatch", {}, ENV, run_id_input="latest")


def test_in_job_push_and_pull_requests_from_forks_do_not_publish():
    push = plan("push", {}, ENV)
    assert push.act and push.mode == "in-job" and (push.run_id, push.base_branch) == (77, "main")
    pr = {"pull_request": {"number": 3, "head": {"sha": "c" * 40, "ref": "topic", "repo": {"full_name": "acme/shop"}}}}
    same = plan("pull_request", pr, ENV)
    assert same.act and same.can_publish and (same.base_branch, same.source_pr) == ("topic", 3)
    pr["pull_request"]["head"]["repo"]["full_name"] = "mallory/shop"
    forked = plan("pull_request", pr, ENV)
    assert forked.act and not forked.can_publish


def test_other_events_are_skipped_and_missing_environment_is_an_error(tmp_path):
    assert not plan("issues", {}, ENV).act
    with pytest.raises(BadEvent, match="GITHUB_EVENT_NAME"):
        read_event({})
    bad = tmp_path / "event.json"
    bad.write_text("[1]")
    with pytest.raises(BadEvent, match="JSON object"):
        read_event({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(bad)})
    bad.write_text(json.dumps({"ref": "x"}))
    assert read_event({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(bad)}) == ("push", {"ref": "x"})


def test_runner_io_redacts_and_cannot_be_forged(tmp_path):
    out, summary = tmp_path / "out", tmp_path / "summary"
    lines: list[str] = []
    io = RunnerIO({"GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)},
                  redact=lambda s: s.replace("sekret", "***"), write=lines.append)
    io.set_outputs({"status": "fixed", "pr-url": "x\nstatus=hacked sekret"})
    text = out.read_text()
    assert "sekret" not in text and text.count("status<<") == 1 and "\nstatus=hacked ***\n" in text
    io.notice("fixed here\n::error::forged sekret", file="a,b.py", line=3)
    assert lines[-1] == "::notice file=a%2Cb.py,line=3,title=fixbot::fixed here%0A::error::forged ***"
    with io.group("repairing"):
        io.say("token sekret")
    assert lines[-3:] == ["::group::repairing", "token ***", "::endgroup::"]
    io.summary("# fixbot sekret")
    assert summary.read_text() == "# fixbot ***\n"
