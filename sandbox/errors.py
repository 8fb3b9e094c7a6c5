"""One family of errors for problems a user can fix; each message says what to do."""


class SandboxError(Exception):
    """Base of every sandbox error meant for a user (the CLI prints it as one line)."""


class DockerUnavailable(SandboxError):
    pass


class ImageMissing(SandboxError):
    pass


class ImageBuildFailed(SandboxError):
    pass


class BadJob(SandboxError):
    """A job the sandbox refuses: unsafe file names, an empty command, a bad timeout."""


class UnknownPython(SandboxError):
    """A Python version fixbot has no sandbox base for."""
