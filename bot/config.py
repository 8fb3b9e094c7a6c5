"""fixbot's settings for a repository: `.github/fixbot.yml`, overridden by the Action's inputs.

Every key is documented in docs/action.md. An unknown key or a value of the wrong type is an error that names it:
a typo must not silently fall back to a default."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

import yaml

from bot.agent.options import FIX_REPAIR, MAX_SAMPLES, Choice, EditFormat, RepairOptions
from bot.agent.types import AgentName
from bot.errors import UserError
from bot.fix.options import FixOptions
from bot.llm import DEFAULT_MODEL


class BadConfig(UserError):
    """The configuration file or an input is malformed."""


@dataclass(frozen=True)
class Config:
    model: str = DEFAULT_MODEL
    api_base: str = ""
    test_command: str = "pytest"
    iterations: int = FIX_REPAIR.iterations  # model calls per target
    max_targets: int = FixOptions.max_targets
    paths: tuple[str, ...] = ("**/*.py",)  # glob patterns of files a fix may change (tests never)
    labels: tuple[str, ...] = ("fixbot",)
    draft: bool = True
    allow_forks: bool = False
    dry_run: bool = False
    wall_s: int = int(FixOptions.wall_s)  # time budget of one run, a hard limit
    test_timeout: int = 0  # per-test limit in seconds; 0: ten times the suite's slowest passing test (5 to 60 s)
    search: bool = FIX_REPAIR.search is not None  # the mutation search before and between model calls
    agent: AgentName = FIX_REPAIR.agent  # the repair design
    samples: int = FIX_REPAIR.samples  # answers per model call (thought-patch: plans), tested in one batch
    choose: Choice = FIX_REPAIR.choose  # of several candidates that pass: the first found, or the model's likeliest
    edits: EditFormat = FIX_REPAIR.edits  # the reflect design's answers: whole functions, SEARCH/REPLACE blocks, auto
    python: str = ""  # the Python the tests run on ("3.9"); empty: from the failing job, .python-version, ...
    setup: tuple[str, ...] = ()  # shell commands that install the test environment, instead of inferring it

    def repair(self) -> RepairOptions:
        """The file's repair keys as the agent's options."""
        return dataclasses.replace(FIX_REPAIR, agent=self.agent, samples=self.samples, choose=self.choose,
                                   edits=self.edits,
                                   budgets=dataclasses.replace(FIX_REPAIR.budgets, iterations=self.iterations),
                                   search=FIX_REPAIR.search if self.search else None)


KEYS = {f.name.replace("_", "-"): f for f in dataclasses.fields(Config)}
# field name -> str, int, bool or tuple (for tuple[str, ...]): read off the dataclass, so the two cannot drift
# (a Literal of strings is a str whose allowed values are its arguments)
HINTS = get_type_hints(Config)
CHOICES: dict[str, tuple[str, ...]] = {name: get_args(h) for name, h in HINTS.items() if get_origin(h) is Literal}
TYPES: dict[str, type] = {name: str if name in CHOICES else get_origin(hint) or hint for name, hint in HINTS.items()}
LIMITS = {"iterations": (1, 50), "max_targets": (1, 20), "wall_s": (60, 6 * 3600), "test_timeout": (0, 3600),
          "samples": (1, MAX_SAMPLES)}


def _typed(key: str, name: str, value: Any, where: str) -> Any:
    want = TYPES[name]
    if want is tuple:
        if isinstance(value, str):
            parts = value.splitlines() if key in LINES else value.split(",")
            value = [part.strip() for part in parts if part.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise BadConfig(f"{where}: `{key}` must be a list of strings, not {value!r}")
        return tuple(value)
    if want is bool and not isinstance(value, bool):
        raise BadConfig(f"{where}: `{key}` must be true or false, not {value!r}")
    if want is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise BadConfig(f"{where}: `{key}` must be a whole number, not {value!r}")
    if name == "python" and isinstance(value, float):  # unquoted in YAML: 3.11 reads well, 3.10 reads as 3.1
        value = repr(value)
        if value in ("3.1", "3.2", "3.3", "3.4"):  # never a Python fixbot offers; 3.10 ... 3.40 lost their zero
            raise BadConfig(f"{where}: quote the version, as in `python: \"{value}0\"` "
                            f"(YAML reads {value}0 as {value})")
    if want is str and not isinstance(value, str):
        raise BadConfig(f"{where}: `{key}` must be a string, not {value!r}")
    if name in CHOICES and value not in CHOICES[name]:
        raise BadConfig(f"{where}: `{key}` must be one of {', '.join(CHOICES[name])}, not {value!r}")
    low, high = LIMITS.get(name, (None, None))
    if low is not None and not low <= value <= high:
        raise BadConfig(f"{where}: `{key}` must be between {low} and {high}, not {value}")
    return value


def parse(data: Mapping[str, Any], where: str, base: Config = Config()) -> Config:
    changes = {}
    for key, value in data.items():
        if key not in KEYS:
            raise BadConfig(f"{where}: unknown key `{key}`; the keys are {', '.join(sorted(KEYS))}")
        name = KEYS[key].name
        changes[name] = _typed(key, name, value, where)
    return dataclasses.replace(base, **changes)


def load_file(path: Path) -> Config:
    """The file's settings over the defaults; a missing file is the defaults."""
    if not path.is_file():
        return Config()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise BadConfig(f"{path}: not valid YAML: {exc}".replace("\n", " ")) from None
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise BadConfig(f"{path}: must be a mapping of keys to values, not a {type(data).__name__}")
    return parse(data, str(path))


# Action input name -> config key; inputs arrive as strings (INPUT_<NAME> in the environment, hyphens kept)
INPUTS = {"model": "model", "api-base": "api-base", "test-command": "test-command", "max-iterations": "iterations",
          "labels": "labels", "draft": "draft", "allow-forks": "allow-forks", "dry-run": "dry-run",
          "search": "search", "agent": "agent", "samples": "samples", "choose": "choose", "edits": "edits",
          "test-timeout": "test-timeout", "python": "python", "setup": "setup"}
LINES = {"setup"}  # list keys whose input is one item per line (a shell command may hold commas)


def _from_text(key: str, text: str) -> Any:
    name = KEYS[key].name
    if TYPES[name] is bool:
        if text.lower() not in ("true", "false"):
            raise BadConfig(f"input `{key}` must be true or false, not {text!r}")
        return text.lower() == "true"
    if TYPES[name] is int:
        try:
            return int(text)
        except ValueError:
            raise BadConfig(f"input `{key}` must be a whole number, not {text!r}") from None
    return text


def with_inputs(config: Config, env: Mapping[str, str]) -> Config:
    """Non-empty Action inputs override the file."""
    data = {}
    for input_name, key in INPUTS.items():
        text = env.get(f"INPUT_{input_name.upper()}", "").strip()
        if text:
            data[key] = _from_text(key, text)
    return parse(data, "action inputs", config) if data else config

