"""Leave nothing behind: process trees, temp dirs, and records that let the next run clean up after kill -9.

Every resource a run starts is registered in a `Cleanup` stack (undone in reverse order on normal exit,
Ctrl-C and SIGTERM) and, for what would outlive a `kill -9` (a daemon in its own session, a temp dir),
described in a JSON record in the runtime dir. The next run reads the records whose owner is dead and
removes what they describe.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from sshbench.errors import Interrupted
from sshbench.host.osfiles import atomic_write, process_start_time

__all__ = ["process_start_time"]  # re-exported: the run records' identity (sshbench.host.osfiles)

TEMP_PREFIX = "sshbench-"


class Made:
    """Something made by `create()` and undone by `destroy()`, which copes with a half-made one: as a
    context manager, a `create()` that fails is destroyed before its error goes on (namespace hosts,
    their LAN, CPU quota groups)."""

    def create(self) -> Self:
        raise NotImplementedError

    def destroy(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.create()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()


def runtime_dir() -> Path:
    """Where run records live: $SSHBENCH_RUNTIME_DIR, else $XDG_RUNTIME_DIR/sshbench, else /tmp/sshbench-runtime-UID."""
    if env := os.environ.get("SSHBENCH_RUNTIME_DIR"):
        path = Path(env)
    elif xdg := os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(xdg) / "sshbench"
    else:
        path = Path(tempfile.gettempdir()) / f"sshbench-runtime-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def shm_dir() -> str:
    """Memory-backed temp space: $SSHBENCH_SHM_DIR (tests), else /dev/shm."""
    return os.environ.get("SSHBENCH_SHM_DIR") or "/dev/shm"


def disk_dir() -> str | None:
    """Disk-backed temp space for disk sinks: $SSHBENCH_DISK_DIR (tests), else /var/tmp (often not a
    tmpfs, unlike /tmp on some systems), else the system temp dir."""
    path = os.environ.get("SSHBENCH_DISK_DIR") or "/var/tmp"
    return path if os.path.isdir(path) and os.access(path, os.W_OK) else None


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    children = _children_map()
    out, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def kill_tree(pid: int, timeout_s: float = 5.0) -> None:
    """SIGTERM a process and all its descendants (sshd's session children call setsid, so a process
    group kill would miss them), then SIGKILL whatever is still there after `timeout_s`.

    The tree is stopped (SIGSTOP) before it is terminated, and looked at again until no new process appears:
    a process that is still running can fork after the tree was listed (sshd's listener accepting a connection
    still queued when its client was killed by the same Ctrl-C), and once its parent is gone that child is
    init's and out of reach: it then outlived sshbench by up to 4 s (issue 55)."""
    pids = _stopped_tree(pid)
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGTERM)
            # a stopped process (stopped here, or a warm session's ssh between bursts: sshbench.measure.warm) acts on the
            # SIGTERM only once continued; without this it sat out the whole timeout before its SIGKILL
            os.kill(p, signal.SIGCONT)
    deadline = time.monotonic() + timeout_s
    remaining = list(pids)
    while remaining and time.monotonic() < deadline:
        remaining = [p for p in remaining if _alive(p)]
        if remaining:
            time.sleep(0.02)  # bounded poll: a killed process needs its parent to reap it
    for p in remaining:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)


# Rounds of stop-and-look: a tree grows by at most one generation a round (a stopped process forks no more),
# and sshbench's deepest trees are four deep (listener, session, shell, dd).
_STOP_ROUNDS = 8


def _stopped_tree(pid: int) -> list[int]:
    """`pid` and its descendants, each sent SIGSTOP, listed until a look finds no process not stopped yet."""
    stopped: list[int] = []
    seen: set[int] = set()
    for _ in range(_STOP_ROUNDS):
        new = [p for p in (pid, *descendants(pid)) if p not in seen]
        if not new:
            break
        for p in new:
            seen.add(p)
            stopped.append(p)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGSTOP)
    return stopped


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie. Reaps it if it is our own child."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@dataclass
class RunRecord:
    """What a kill -9'd run would leave behind, written before it is created."""

    owner_pid: int
    owner_start: int | None
    processes: list[tuple[int, int | None]] = field(default_factory=list)  # (pid, start time)
    paths: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return runtime_dir() / f"run-{self.owner_pid}.json"

    def save(self) -> None:
        atomic_write(self.path, json.dumps(self.__dict__))

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def remove_dead_run_records() -> list[str]:
    """Remove what runs that died without cleaning up (kill -9, power loss) left behind, from their run records.

    Returns a description of what was removed, for a one-line notice.
    """
    removed: list[str] = []
    for record_path in sorted(runtime_dir().glob("run-*.json")):
        try:
            data = json.loads(record_path.read_text())
            record = RunRecord(**data)
        except (OSError, ValueError, TypeError):
            with contextlib.suppress(OSError):
                record_path.unlink()
            continue
        if process_start_time(record.owner_pid) == record.owner_start and _alive(record.owner_pid):
            continue  # that run is still going
        for pid, start in record.processes:
            if start is not None and process_start_time(pid) == start:
                kill_tree(pid)
                removed.append(f"process {pid}")
        for path in record.paths:
            if Path(path).exists() and Path(path).name.startswith(TEMP_PREFIX):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        with contextlib.suppress(OSError):
            record_path.unlink()
    return removed


class Cleanup:
    """A stack of undo actions plus the on-disk record that mirrors it."""

    def __init__(self) -> None:
        self._actions: list[Callable[[], None]] = []
        self.record = RunRecord(owner_pid=os.getpid(), owner_start=process_start_time(os.getpid()))

    def make_temp_dir(self, prefer_shm: bool = False, min_free_bytes: int = 0, base_dir: str | None = None) -> Path:
        """A private (0700) temp dir, on /dev/shm when asked and it has room (payloads stay off disk),
        else in `base_dir` or the system temp dir."""
        base = base_dir
        shm = shm_dir()
        if prefer_shm and os.path.isdir(shm) and os.access(shm, os.W_OK):
            if shutil.disk_usage(shm).free >= min_free_bytes:
                base = shm
        path = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=base))
        self.record.paths.append(str(path))
        self.record.save()
        self.push(lambda: shutil.rmtree(path, ignore_errors=True))
        return path

    def track_process(self, pid: int) -> None:
        self.record.processes.append((pid, process_start_time(pid)))
        self.record.save()
        self.push(lambda: kill_tree(pid))

    def push(self, action: Callable[[], None]) -> None:
        self._actions.append(action)

    def close(self) -> None:
        # Signals during cleanup must not leave it half done.
        with deferred_signals():
            while self._actions:
                action = self._actions.pop()
                with contextlib.suppress(Exception):
                    action()
            self.record.remove()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    old = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


class _Stopping:
    """The first stop signal (Ctrl-C, SIGTERM, SIGHUP) raises, so that every `finally` runs the cleanup;
    every later one is only acknowledged (one line), so that nothing can interrupt that cleanup half-way
    (a held-down Ctrl-C repeats every ~20 ms)."""

    signum: int | None = None
    told = False
    holding = 0  # inside held_stop() blocks: the first signal waits for the outermost one's end
    held: int | None = None
    resent: int | None = None  # the first signal, held by a worker thread's block and sent again to the main thread


def _raise_for(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(signum)


def _first_signal_raises(signum: int, _frame: object) -> None:
    if _Stopping.resent is not None:  # the first signal (whichever signal woke us now): raised here, in the main thread
        signum, _Stopping.resent = _Stopping.resent, None
        if _Stopping.holding:
            _Stopping.held = signum
            return
        _raise_for(signum)
    if _Stopping.signum is not None:
        if not _Stopping.told:
            _Stopping.told = True
            with contextlib.suppress(OSError):
                os.write(2, b"sshbench: cleaning up, please wait\n")
        return
    _Stopping.signum = signum
    # Python's exit puts its own handlers back to the default before the process ends: a second Ctrl-C there
    # (after everything was cleaned up and main returned 130) killed the process by SIGINT, with stdout unflushed
    # (1 of 6 tries of tests/cli/test_exit_means_done.py). Ignored from the exit on, as ignored signals stay so.
    atexit.register(_ignore_stop_signals)
    if _Stopping.holding:
        _Stopping.held = signum  # raised where the held_stop() block ends
        return
    _raise_for(signum)


@contextlib.contextmanager
def held_stop() -> Iterator[None]:
    """Hold the first stop signal until the block ends: a child process is started and recorded for its cleanup
    (RunningProcess, Cleanup.track_process) as one step. Raised inside Popen, while it waits for the child's exec,
    the interrupt left a child started and known to nobody: an ssh client that outlived sshbench (1 of 17 tries of
    tests/cli/test_exit_means_done.py, the Ctrl-C landing as a handshake trial started). Outside signals_raise()
    Python's own handler raises at once, as before."""
    _Stopping.holding += 1
    try:
        yield
    finally:
        _Stopping.holding -= 1
        if not _Stopping.holding and _Stopping.held is not None:
            signum, _Stopping.held = _Stopping.held, None
            if threading.current_thread() is threading.main_thread():
                _raise_for(signum)
            else:
                # A worker thread's block (a -P N stream starting its ssh): raised here, the interrupt ended that
                # thread only and the run went on to its end, exit 0 (1 of 3 Ctrl-Cs in a -P 4 trial). The main
                # thread must stop: the signal again, to it, as the first one (a blocked join wakes on a real signal).
                # `signum` stays recorded: a second signal landing before it (SIGTERM then Ctrl-C) raises the first,
                # SIGTERM, where clearing it had made the Ctrl-C the first (exit 130 for 143).
                _Stopping.resent = signum
                signal.pthread_kill(threading.main_thread().ident or 0, signum)


def _ignore_stop_signals() -> None:
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def stopping() -> int | None:
    """The stop signal received in signals_raise, if any."""
    return _Stopping.signum


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Turn the first SIGINT, SIGTERM or SIGHUP into an exception, so that every `finally` runs; later
    signals are ignored with one line. After a stop signal the ignoring handler stays in place for the rest
    of the process (saving what was measured, the exit message) instead of the previous handlers."""
    old = {s: signal.signal(s, _first_signal_raises) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        if _Stopping.signum is None:
            for s, handler in old.items():
                signal.signal(s, handler)
