"""The family of errors for user mistakes: the CLI prints them as one line and exits 2, no traceback."""


class UserError(Exception):
    """Bad input or configuration that the user can fix; the message says how."""
