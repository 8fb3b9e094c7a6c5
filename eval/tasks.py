"""HumanEvalFix tasks: loaded through `datasets` (the hub by default, a local JSONL with --data), checked,
and selected (--tasks, stratified subsets by bug type, --limit)."""
from __future__ import annotations

import random
import re
import socket
import urllib.parse
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, fields
from pathlib import Path

from bot.errors import UserError

HUB_DATASET, HUB_CONFIG, HUB_SPLIT = "bigcode/humanevalpack", "python", "test"


@dataclass(frozen=True)
class Task:
    task_id: str
    prompt: str
    buggy_solution: str
    canonical_solution: str
    test: str
    example_test: str
    entry_point: str
    bug_type: str

    @property
    def number(self) -> int:
        return int(self.task_id.rsplit("/", 1)[-1])

    @property
    def buggy_module(self) -> str:
        return self.prompt + self.buggy_solution

    @property
    def canonical_module(self) -> str:
        return self.prompt + self.canonical_solution


REQUIRED = tuple(f.name for f in fields(Task))


def load_tasks(data: Path | None = None) -> list[Task]:
    try:
        import datasets  # heavy: imported only when an eval runs, and not in the Action's image
    except ImportError:
        raise UserError("fixbot eval needs the eval extra: pip install 'fixbot[eval]' (the datasets package)") from None

    from huggingface_hub.utils import logging as hub_logging  # installed with datasets

    # Both libraries' own handlers would print each retry a second time beside ours; the outcome is our error.
    datasets.logging.set_verbosity_error()
    hub_logging.set_verbosity_error()
    datasets.disable_progress_bars()
    if data is not None:
        if not data.is_file():
            raise UserError(f"--data {data}: no such file")
        try:
            rows = datasets.load_dataset("json", data_files=str(data), split="train")
        except Exception as exc:  # datasets raises many types for a bad file
            raise UserError(f"--data {data}: not a readable JSONL file ({exc.__class__.__name__}: {exc})") from exc
        source = str(data)
    else:
        if not _hub_resolves():  # the hub's client would retry for half a minute before saying the same
            raise UserError(f"could not load {HUB_DATASET} from the Hugging Face hub (its address does not resolve: "
                            "offline?); pass --data FILE with a local JSONL copy")
        try:
            rows = datasets.load_dataset(HUB_DATASET, HUB_CONFIG, split=HUB_SPLIT)
        except Exception as exc:
            raise UserError(f"could not load {HUB_DATASET} ({HUB_CONFIG}/{HUB_SPLIT}) from the Hugging Face hub "
                            f"({exc.__class__.__name__}); offline, pass --data FILE with a local JSONL copy") from exc
        source = f"{HUB_DATASET}/{HUB_CONFIG}/{HUB_SPLIT}"
    missing = [name for name in REQUIRED if name not in rows.column_names]
    if missing:
        raise UserError(f"{source}: records lack the field(s) {', '.join(missing)}")
    tasks = [_task_of({name: str(row[name] or "") for name in REQUIRED}) for row in rows]
    if not tasks:
        raise UserError(f"{source}: no records")
    return tasks


def _task_of(fields_: dict[str, str]) -> Task:
    return Task(**{**fields_, "test": parsable_tail(fields_["test"]),
                   "example_test": parsable_tail(fields_["example_test"])})


def parsable_tail(code: str) -> str:
    """The code from its first top-level line on which the rest parses; the code itself when it parses or no
    tail does. The data's Python/119 holds a stray copy of the canonical body before its `def check(`: as given,
    its example tests cannot run, and the prompt would show the model the answer."""
    if _parses(code):
        return code
    lines = code.splitlines(keepends=True)
    tails = ("".join(lines[i:]) for i, line in enumerate(lines) if line.strip() and not line[0].isspace())
    return next((tail for tail in tails if _parses(tail)), code)


def _parses(code: str) -> bool:
    try:
        compile(code, "<test>", "exec")
    except SyntaxError:
        return False
    return True


def _hub_resolves() -> bool:
    """Whether the hub's host name resolves here; True in offline mode (the cache answers) and behind a proxy
    (which resolves it)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or urllib.request.getproxies().get("https"):
        return True
    url = urllib.parse.urlsplit(constants.ENDPOINT)
    try:
        socket.getaddrinfo(url.hostname, url.port or 443)
    except (OSError, UnicodeError):
        return False
    return True


def parse_task_list(text: str) -> list[int]:
    try:
        return [int(part.strip().rsplit("/", 1)[-1]) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise UserError(f"--tasks {text!r}: give task numbers such as 0,5,7 (or Python/5)") from exc


def stratified(tasks: list[Task], fraction: float, seed: int) -> list[Task]:
    """The same fraction of every bug type (at least one each), drawn with a seeded generator."""
    groups: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        groups[task.bug_type].append(task)
    rng = random.Random(seed)
    chosen = [t for bug in sorted(groups) for t in rng.sample(groups[bug], max(1, round(len(groups[bug]) * fraction)))]
    return sorted(chosen, key=lambda t: t.number)


def select(tasks: list[Task], numbers: list[int] | None = None, subset: str | None = None, seed: int = 0,
           limit: int | None = None) -> list[Task]:
    if numbers:
        known = {t.number: t for t in tasks}
        unknown = [n for n in numbers if n not in known]
        if unknown:
            raise UserError(f"--tasks: no task number(s) {', '.join(map(str, unknown))} (0..{max(known)})")
        tasks = [known[n] for n in numbers]
    if subset:
        match = re.fullmatch(r"stratified:(0?\.\d+|1(?:\.0*)?)", subset)
        if not match:
            raise UserError(f"--subset {subset!r}: use stratified:FRACTION, e.g. stratified:0.35")
        tasks = stratified(tasks, float(match.group(1)), seed)
    if limit is not None:
        if limit < 1:
            raise UserError("--limit must be at least 1")
        tasks = tasks[:limit]
    return tasks
