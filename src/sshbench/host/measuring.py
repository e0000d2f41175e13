"""One measurement at a time on this machine. Two sshbench runs side by side each pin their ssh to one core and their
sshd to the other, so each measures the other's load and both store wrong figures as complete (two 2-cipher runs
started 2 s apart: "2 row(s) vary by more than 10%", nothing more). Every command that measures (`run`, `check`,
`crossover`, `latency`, a fleet host's run) holds an exclusive flock on one file for the whole machine while it
measures; a second one waits for it, saying so, or with --no-wait refuses at once (exit 2). The kernel drops the lock
with its holder's last descriptor, so a `kill -9`'d run never leaves it held.

The file: $SSHBENCH_LOCK, else /run/lock/sshbench-measuring.lock (every user's sshbench sees the same one: /run/lock
is world-writable and sticky on Debian), else the same name in /tmp. Its content names the holder (pid, command,
since when) for the line a waiting run prints.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sshbench.errors import RunError, UsageError

LOCK_NAME = "sshbench-measuring.lock"
# A waiting measurement gives up after this long (a run's default budget is a minute, `--full` five; a fleet's host
# runs have their own timeout); Ctrl-C ends the wait at once.
WAIT_LIMIT_S = 3600.0
POLL_S = 0.1  # how often a waiting measurement tries the lock (flock has no timeout of its own)


def lock_path() -> Path:
    if env := os.environ.get("SSHBENCH_LOCK"):
        return Path(env)
    run_lock = Path("/run/lock")
    if run_lock.is_dir() and os.access(run_lock, os.W_OK | os.X_OK):
        return run_lock / LOCK_NAME
    return Path("/tmp") / LOCK_NAME


def _open(path: Path) -> int:
    """The lock file, created readable by everyone (another user's sshbench locks it too); never through a symlink."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except PermissionError:  # another user's file in a sticky directory: locking needs only a read descriptor
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise RunError(f"the measurement lock {path} is a symlink; remove it or set SSHBENCH_LOCK") from None
        raise RunError(f"cannot open the measurement lock {path}: {err.strerror}") from None
    return fd


def holder(path: Path) -> str:
    """Who holds the lock, as its holder wrote it ("pid 123, `sshbench run`, since 14:02:11"), or a plain phrase."""
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        text = ""
    return text.splitlines()[0][:200] if text else "another sshbench measurement"


def _describe(what: str) -> str:
    return f"pid {os.getpid()}, `sshbench {what}`, since {time.strftime('%H:%M:%S')}"


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


@contextlib.contextmanager
def one_measurement(
    what: str,
    wait: bool = True,
    say: Callable[[str], None] = lambda _line: None,
    limit_s: float = WAIT_LIMIT_S,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[None]:
    """Hold the machine's measurement lock while the block runs: at once where it is free; else, with `wait`, after
    one line (`say`) naming its holder, once it is free (UsageError past `limit_s`); else UsageError at once."""
    path = lock_path()
    fd = _open(path)
    try:
        if not _try_lock(fd):
            other = holder(path)
            if not wait:
                raise UsageError(f"another measurement is running on this machine ({other}); --no-wait: not waiting")
            say(f"waiting for another measurement on this machine to end ({other}); --no-wait refuses instead")
            deadline = clock() + limit_s
            while not _try_lock(fd):
                if clock() >= deadline:
                    raise UsageError(f"another measurement ({other}) still ran after {limit_s:.0f} s of waiting")
                time.sleep(POLL_S)  # flock has no timeout: a bounded poll of the lock, not a synchronisation sleep
            say("the other measurement ended: measuring now")
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (_describe(what) + "\n").encode(), 0)
        except OSError:
            pass  # another user's file, opened read-only: the lock holds all the same, unnamed
        yield
    finally:
        os.close(fd)  # the lock goes with the descriptor
