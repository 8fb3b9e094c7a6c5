"""The family of errors for user mistakes: the CLI prints them as one line and exits 2, no traceback."""


class UserError(Exception):
    """Bad input or configuration that the user can fix; the message says how."""


class Stopped(BaseException):
    """The run was told to stop: its time budget ran out (`--wall`) or a signal came (SIGTERM, Ctrl-C).

    A BaseException, like KeyboardInterrupt, so that no `except Exception` on the way up (the agent's graph, a
    library) swallows it; the pipeline catches it and writes its report with what was done so far."""

    def __init__(self, reason: str, *, signal_number: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.signal_number = signal_number  # None: the time budget ran out

    @property
    def by_signal(self) -> bool:
        return self.signal_number is not None
