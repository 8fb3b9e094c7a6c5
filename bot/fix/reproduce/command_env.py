"""The `NAME=value` words before a test command (`LANG=C pytest`, `env DJANGO_SETTINGS_MODULE=site.settings
pytest`): the environment the project's CI gives its tests, read as a shell reads it and set in every run."""
from __future__ import annotations

import re
from collections.abc import Sequence

from bot.errors import UserError


class BadTestCommand(UserError):
    """--test-cmd is not a pytest command, or pytest refused its arguments."""


_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_OWN_PREFIX = "FIXBOT_"  # the probe's settings: a user's value would silently change what fixbot measures


def split_assignments(words: Sequence[str]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(the assignments, the command's words after them). `env` may come first, as in a shell. ValueError for a
    name fixbot sets itself."""
    rest = tuple(words)
    if rest[:1] == ("env",):
        rest = rest[1:]
    env: dict[str, str] = {}
    while rest and (found := _ASSIGNMENT.fullmatch(rest[0])) is not None:
        name, value = found.groups()
        if name.startswith(_OWN_PREFIX):
            raise ValueError(f"{name} is fixbot's own setting, not the tests' environment")
        env[name] = value
        rest = rest[1:]
    return tuple(env.items()), rest


def pythonpath_entries(env: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The directories a `PYTHONPATH=src:lib` assignment adds, relative to the checkout (after fixbot's own)."""
    return tuple(part for name, value in env if name == "PYTHONPATH" for part in value.split(":") if part)
