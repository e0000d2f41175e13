"""Errors that end a command with one clear line instead of a traceback."""


class SshbenchError(Exception):
    """Base class: `str(err)` is the one line shown to the user."""

    exit_code = 1


class UsageError(SshbenchError):
    """The user asked for something impossible or malformed (exit code 2)."""

    exit_code = 2


class RunError(SshbenchError):
    """The run could not go on: target unreachable, sshd died, ... (exit code 1)."""

    exit_code = 1


class Interrupted(BaseException):
    """Raised from our SIGTERM handler so that `finally` blocks clean up.

    A BaseException like KeyboardInterrupt, so that `except Exception` in the
    measured path never swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum
