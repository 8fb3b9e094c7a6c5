"""`fixbot init`: what to write into a repository (the workflow for a trigger, `.github/fixbot.yml`) from what
the repository says, and writing it without ever overwriting a file unless told."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.environment.python.choice import PythonChoice, choose_python
from bot.errors import UserError
from bot.fix.reproduce.command import TestCommand
from bot.init.ci import CiWorkflow, ci_workflows
from bot.init.install import install_lines
from bot.init.repo import InitError, Repo, read_repo
from bot.init.templates import (
    GRANTS,
    Grant,
    InJob,
    Trigger,
    config_file,
    dispatch_workflow,
    in_job_workflow,
    workflow_run_workflow,
)
from bot.init.test_command import DetectedTests, detect_tests
from sandbox.image import DEFAULT_PYTHON, PYTHONS

WORKFLOW_PATH = ".github/workflows/fixbot.yml"
CONFIG_PATH = ".github/fixbot.yml"


@dataclass(frozen=True, kw_only=True)
class InitFile:
    path: str  # relative to the repository's root
    text: str
    exists: bool  # a file is there already (written only with force)


@dataclass(frozen=True, kw_only=True)
class InitPlan:
    root: Path
    trigger: Trigger
    files: tuple[InitFile, ...]
    tests: DetectedTests
    python: PythonChoice
    python_source: str  # choice.source, with the workflow it was read from
    ci: CiWorkflow | None  # the CI workflow the test step and Python were read from
    reacts_to: str | None  # the workflow name a workflow_run trigger waits for
    grants: tuple[Grant, ...]  # what the job running fixbot is granted
    notes: tuple[str, ...]
    git: bool


def _matches(workflow: CiWorkflow, wanted: str) -> bool:
    base = posixpath.basename(workflow.path)
    return wanted in (workflow.name, workflow.path, base, posixpath.splitext(base)[0])


def _listing(workflows: tuple[CiWorkflow, ...]) -> str:
    return ", ".join(f"{w.name!r} ({w.path})" for w in workflows)


def _named(repo: Repo, wanted: str) -> bool:
    """Some workflow in .github/workflows is called `wanted` (its name or its file), tests found in it or not."""
    for path in repo.workflow_files():
        base = posixpath.basename(path)
        try:
            data = yaml.safe_load(repo.checkout.text(path))
        except yaml.YAMLError:
            data = None
        name = data.get("name") if isinstance(data, dict) else None
        if wanted in (path, base, posixpath.splitext(base)[0], name):
            return True
    return False


def _pick_ci(repo: Repo, trigger: Trigger, wanted: str | None,
             notes: list[str]) -> tuple[CiWorkflow | None, str | None]:
    """The CI workflow to read (and, for workflow_run, its name to react to)."""
    workflows = ci_workflows(repo, skip=(WORKFLOW_PATH,))
    if wanted:
        chosen = [w for w in workflows if _matches(w, wanted)]
        if chosen:
            return chosen[0], chosen[0].name
        if trigger != "workflow_run" or _named(repo, wanted):
            notes.append(f"found no test step in a workflow called {wanted!r}; the test command and Python come "
                         "from the repository's files")
        else:
            notes.append(f"no workflow in .github/workflows is called {wanted!r}; the trigger waits for one that is")
        return None, wanted
    if trigger == "workflow_run" and not workflows:
        raise InitError("found no workflow in .github/workflows that runs the tests (a `run:` line with pytest, "
                        "python -m unittest or tox): pass --workflow NAME, the `name:` of your CI workflow, or use "
                        "the default trigger (fixbot as the last step of a test job)")
    if trigger == "workflow_run" and len(workflows) > 1:
        raise InitError(f"several workflows run the tests: {_listing(workflows)}; pass --workflow NAME to say "
                        "which one fixbot reacts to")
    if len(workflows) > 1:
        notes.append(f"several workflows run the tests: {_listing(workflows)}; read {workflows[0].path} (pass "
                     "--workflow NAME to read another)")
    ci = workflows[0] if workflows else None
    if ci is not None and not ci.named and trigger == "workflow_run":
        notes.append(f"{ci.path} has no `name:`; the trigger names it by its path, as GitHub does: give it a name "
                     "and pass --workflow NAME to be sure they match")
    return ci, ci.name if ci else None


def _python(repo: Repo, ci: CiWorkflow | None, notes: list[str]) -> tuple[PythonChoice, str]:
    """The sandbox Python nearest to what the CI (else the project) uses: the in-job workflow sets up that one,
    so the job's tests and fixbot's reproduction of them run on the same version."""
    versions = ci.pythons if ci else ()
    try:
        choice = choose_python(repo.checkout, available=tuple(PYTHONS), ci_versions=versions)
    except UserError as exc:
        notes.append(f"Python {DEFAULT_PYTHON}, the default: {exc}")
        return PythonChoice(version=DEFAULT_PYTHON, source="default", wanted=""), "default"
    if ci is not None and versions and choice.wanted == ", ".join(versions):
        return choice, f"{choice.source} in {ci.path}"
    return choice, choice.source


def _workflow_text(repo: Repo, trigger: Trigger, tests: DetectedTests, python: PythonChoice, python_source: str,
                   ci: CiWorkflow | None, reacts_to: str | None) -> str:
    if trigger == "workflow_run":
        assert reacts_to is not None  # _pick_ci refused otherwise
        return workflow_run_workflow(reacts_to)
    if trigger == "dispatch":
        return dispatch_workflow()
    pytest = TestCommand.parse(tests.command).kind == "pytest"
    branches = ci.push_branches if ci and ci.push_branches else ((repo.branch,) if repo.branch else ("main",))
    return in_job_workflow(InJob(
        test_command=tests.command, test_source=tests.source, python=python.version, python_source=python_source,
        install=install_lines(repo.checkout, python=python.version, pytest=pytest), branches=branches))


def plan_init(path: str | Path, *, trigger: Trigger = "in-job", workflow: str | None = None) -> InitPlan:
    """What `fixbot init` writes into the repository at `path`; nothing is written. InitError (a UserError) when
    `path` cannot be set up, or when a workflow_run trigger has no single CI workflow to react to."""
    repo = read_repo(path)
    notes: list[str] = []
    if not repo.git:
        notes.append(f"{repo.root} is not a git repository (no .git): the files are written all the same; commit "
                     "them once it is one")
    ci, reacts_to = _pick_ci(repo, trigger, workflow, notes)
    tests = detect_tests(repo, ci)
    python, python_source = _python(repo, ci, notes if trigger == "in-job" else [])  # only in-job sets one up
    if trigger == "in-job" and ci is not None:
        notes.append(f"{ci.path} already runs the tests; this workflow runs them again. To run them once, copy its "
                     "fixbot step (and the job's permissions) into that job, or use --trigger workflow_run")
    text = _workflow_text(repo, trigger, tests, python, python_source, ci, reacts_to)
    files = tuple(InitFile(path=p, text=t, exists=(repo.root / p).exists())
                  for p, t in ((WORKFLOW_PATH, text), (CONFIG_PATH, config_file(tests.command, tests.source))))
    return InitPlan(root=repo.root, trigger=trigger, files=files, tests=tests, python=python,
                    python_source=python_source, ci=ci, reacts_to=reacts_to if trigger == "workflow_run" else None,
                    grants=GRANTS[trigger], notes=(*notes, *tests.notes), git=repo.git)


def write_plan(plan: InitPlan, *, force: bool = False) -> None:
    """Write the plan's files; InitError, before anything is written, when one exists and `force` is not set."""
    existing = [f.path for f in plan.files if (plan.root / f.path).exists()]
    if existing and not force:
        raise InitError(f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''} in {plan.root}: "
                        "pass --force to overwrite, or --dry-run to see what would be written")
    for file in plan.files:
        target = plan.root / file.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(file.text, encoding="utf-8")
        except OSError as exc:
            raise InitError(f"cannot write {target}: {exc.strerror or exc}") from None
