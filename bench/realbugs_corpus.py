"""The real-bug corpus (../shared/data/realbugs): its manifest, the selection a bench run takes, and the
project bundles checked out at a bug's tags (`bug-N`: before the developers' fix, `fix-N`: their fix)."""
from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import yaml
from common import part_slice

from bot.checkout.repository import commit_date, load_checkout
from bot.environment.prepare import EnvRequest
from bot.errors import UserError
from bot.fix.reproduce.command import TestCommand
from bot.init.test_command import detect_checkout_tests

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "realbugs"
SETTINGS = REPO / "bench" / "realbugs_settings.yml"  # a user's `setup` for the bugs that need one


class BenchError(UserError):
    """A bad argument or input of the bench: one line, exit 2."""


@dataclass(frozen=True)
class Bug:
    id: str  # "youtube-dl-7"
    project: str
    number: int
    test_files: tuple[str, ...]  # the exposing tests' files: the test command runs all of them
    pytest_ids: tuple[str, ...]  # the exposing tests
    fix_files: tuple[str, ...]  # the non-test files the developers' fix changed
    split: str = "dev"  # "dev" (debug and tune on it) or "holdout" (measured only as a whole, by a bench run)
    setup: tuple[str, ...] = ()  # a user's set-up commands for its environment (SETTINGS), passed as --setup
    test_commands: tuple[str, ...] = ()  # BugsInPy's own commands for the exposing tests

    @property
    def bug_tag(self) -> str:
        return f"bug-{self.number}"

    @property
    def fix_tag(self) -> str:
        return f"fix-{self.number}"

    @property
    def test_cmd(self) -> str:
        return " ".join(["pytest", *self.test_files])

    def resolved(self, files: Mapping[str, bytes]) -> Bug:
        """This bug with its exposing tests named as pytest names them in the checkout's `files`: BugsInPy's own
        `python -m unittest dotted.names` resolved by fixbot's translation (the manifest's ids of dotted names can
        split a package path wrongly); other commands keep the manifest's ids."""
        ids: list[str] = []
        for command in self.test_commands:
            words = command.split()
            if words[:3] != ["python", "-m", "unittest"]:
                return self
            try:
                args = TestCommand.parse(command).pytest_args(files)
            except UserError:
                return self
            ids += [a for a in args if not a.startswith("-") and ("::" in a or a in files)]
        return replace(self, pytest_ids=tuple(dict.fromkeys(ids))) if ids else self

    def env_request(self, root: str | Path) -> EnvRequest:
        """What `fixbot fix` knows of the environment of the checkout at `root`: the bug's `setup` (what a user of
        the project tells it), and the checked-out commit's date."""
        return EnvRequest(setup=self.setup, commit_date=commit_date(root))


@dataclass(frozen=True)
class SuiteCommand:
    """The project's whole suite as its CI runs it, found the way `fixbot init` finds it."""

    command: str  # as fixbot's --test-cmd
    source: str  # where it came from: "tox.ini [testenv] commands"


def suite_command(root: Path) -> SuiteCommand:
    """The whole-suite command of the checkout at `root` (bot/init/test_command.py)."""
    found = detect_checkout_tests(load_checkout(root))
    return SuiteCommand(found.command, found.source)


def load_manifest(data: Path, settings_file: Path = SETTINGS) -> list[Bug]:
    path = data / "manifest.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BenchError(f"--data {data}: {exc.strerror or exc} (the realbugs directory holds manifest.jsonl)") \
            from None
    settings = user_settings(settings_file)
    bugs = []
    for line in filter(str.strip, lines):
        d = json.loads(line)
        bugs.append(Bug(d["id"], d["project"], int(d["bug"]), tuple(d["test_files"]), tuple(d["pytest_ids"]),
                        tuple(d["fix_files"]), d.get("split", "dev"),
                        tuple(settings.get(d["id"], {}).get("setup", ())), tuple(d.get("test_commands", ()))))
    return bugs  # settings for ids another manifest does not hold apply to nothing (the reports list those used)


def user_settings(path: Path = SETTINGS) -> dict[str, dict]:
    """The bugs' user settings by id: each a `setup` list of shell commands and a `why`."""
    try:
        settings = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BenchError(f"{path.name}: {exc}".splitlines()[0]) from None
    if not isinstance(settings, dict):
        raise BenchError(f"{path.name}: map each bug id to its settings (`httpie-1: {{setup: [...]}}`)")
    bad = [i for i, s in settings.items() if not isinstance(s, dict) or not isinstance(s.get("setup"), list)
           or not all(isinstance(c, str) for c in s["setup"])]
    if bad:
        raise BenchError(f"{path.name}: {', '.join(bad)}: each bug needs a `setup` list of shell commands")
    return settings


def select(bugs: list[Bug], *, ids: str | None = None, project: str | None = None, split: str | None = None,
           part: str | None = None) -> list[Bug]:
    """The bugs a run takes, in manifest order: --bugs (comma-separated dev ids: the holdout is measured only as
    a whole) or all, narrowed to --project and --split, then the K-th of N consecutive slices (--part K/N)."""
    chosen = bugs
    if ids:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        known = {b.id: b for b in bugs}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise BenchError(f"--bugs: unknown bug id(s) {', '.join(unknown)} (ids look like youtube-dl-7)")
        if any(known[i].split != "dev" for i in wanted):
            raise BenchError("--bugs names a holdout bug: the holdout split is measured only as a whole "
                             "(--split holdout, or no selection)")
        chosen = [b for b in bugs if b.id in set(wanted)]
    if split:
        chosen = [b for b in chosen if b.split == split]
    if project:
        projects = sorted({b.project for b in bugs})
        if project not in projects:
            raise BenchError(f"--project {project!r}: choose from {', '.join(projects)}")
        chosen = [b for b in chosen if b.project == project]
    if part:
        try:
            chosen = part_slice(chosen, part)
        except ValueError as exc:
            raise BenchError(str(exc)) from None
    if not chosen:
        raise BenchError("no bug selected (--bugs and --project exclude each other's bugs?)")
    return chosen


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "advice.detachedHead=false", *args], cwd=cwd, capture_output=True,
                          text=True, check=True)


class Bundles:
    """One clone per project under `cache` (made once from its bundle) and throw-away worktrees of its tags."""

    def __init__(self, data: Path, cache: Path) -> None:
        self.data = data
        self.cache = cache

    def clone(self, project: str) -> Path:
        dest = self.cache / project
        if not (dest / ".git").is_dir():
            self.cache.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(dest, ignore_errors=True)  # a clone cut short by an interruption
            _git("-c", "init.defaultBranch=main", "clone", "-q", "--no-checkout",
                 str(self.data / f"{project}.bundle"), str(dest))
        return dest

    def checkout(self, project: str, tag: str, dest: Path) -> Path:
        """A fresh worktree of `tag` at `dest` (an older one there is replaced)."""
        clone = self.clone(project)
        self.remove(project, dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git("worktree", "add", "-q", "--force", "--detach", str(dest), tag, cwd=clone)
        return dest

    def remove(self, project: str, dest: Path) -> None:
        shutil.rmtree(dest, ignore_errors=True)
        _git("worktree", "prune", cwd=self.clone(project))

    def diff(self, project: str, old: str, new: str) -> str:
        return _git("diff", old, new, cwd=self.clone(project)).stdout
