"""The install lines of the in-job workflow: the same pip steps fixbot's sandbox runs for the repository
(bot.environment.install.plan: the project with its test extras, dependency groups, requirement files, tox's deps), as
shell lines run from the checkout on the runner's Python, and the test runner itself."""
from __future__ import annotations

import posixpath
import shlex

from bot.checkout.repository import Checkout
from bot.environment.install.plan import BUILD_DIR, InstallStep, install_plan

_FILE_OPTIONS = {"-r", "--requirement", "-c", "--constraint"}


def _requirement_words(text: str) -> list[str]:
    """A requirements file install_plan writes under BUILD_DIR as command-line words; its -r/-c paths point
    from BUILD_DIR (pip reads them relative to the file), so they are made relative to the checkout again."""
    words: list[str] = []
    for line in text.splitlines():
        parts = shlex.split(line, comments=True)
        if not parts or "--hash" in " ".join(parts):  # hashes are a requirements-file feature, not pip's CLI
            continue
        if len(parts) == 2 and parts[0] in _FILE_OPTIONS and not parts[1].startswith("/") and "://" not in parts[1]:
            parts[1] = posixpath.normpath(posixpath.join(BUILD_DIR, parts[1]))
        words += parts
    return words


def _line(step: InstallStep) -> str | None:
    if step.argv[:1] != ("pip",):
        return None  # the user's own setup commands; init never passes any
    if not step.files:
        return shlex.join(("python", "-m", *step.argv))
    words = [w for _, text in step.files for w in _requirement_words(text)]
    return shlex.join(("python", "-m", "pip", "install", *words)) if words else None


def install_lines(checkout: Checkout, *, python: str, pytest: bool) -> tuple[str, ...]:
    """The shell lines that install the repository's test environment; `pytest`: the tests run with pytest,
    installed last in case nothing the project declares brings it."""
    plan = install_plan(checkout, python=python)
    lines = [line for step in plan.steps if (line := _line(step)) is not None]
    if any("--group" in step.argv for step in plan.steps):
        lines.insert(0, "python -m pip install 'pip>=25.1'  # --group needs it")
    if pytest:
        lines.append("python -m pip install pytest")
    return tuple(lines)
