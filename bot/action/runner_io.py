"""Talking back to the Actions runner: outputs, the step summary, log groups and annotations — every line
passed through `redact` first, so a secret never reaches the log or the page."""
from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path


def _escape_data(text: str) -> str:
    # workflow-command escaping: a value cannot end the command or start a new one
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


class RunnerIO:
    def __init__(self, env: Mapping[str, str], redact: Callable[[str], str], write: Callable[[str], None] = print):
        self.env = env
        self.redact = redact
        self._write = write

    def say(self, message: str) -> None:
        self._write(self.redact(message))

    @contextlib.contextmanager
    def group(self, title: str) -> Iterator[None]:
        self._write(f"::group::{_escape_data(self.redact(title))}")
        try:
            yield
        finally:
            self._write("::endgroup::")

    def notice(self, message: str, *, file: str, line: int, title: str = "fixbot") -> None:
        props = f"file={_escape_property(file)},line={line},title={_escape_property(title)}"
        self._write(f"::notice {props}::{_escape_data(self.redact(message))}")

    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        path = self.env.get("GITHUB_OUTPUT")
        if not path:
            return
        with open(path, "a", encoding="utf-8") as f:
            for key, value in outputs.items():
                value = self.redact(value)
                delimiter = f"fixbot_{uuid.uuid4().hex}"  # a value cannot forge another output
                f.write(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")

    def summary(self, markdown: str) -> None:
        path = self.env.get("GITHUB_STEP_SUMMARY")
        if path:
            with Path(path).open("a", encoding="utf-8") as f:
                f.write(self.redact(markdown) + "\n")
