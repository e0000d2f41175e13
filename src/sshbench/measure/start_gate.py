"""The start barrier of `run -P N` (sshbench.measure.parallel): N streams' server-side scripts wait just before their
data phase until every one of them is there, then all are released at once.

Why: started together, N connections still begin moving data up to seconds apart. Their key exchanges,
logins, sessions and login shells (a shell's rc files can take a few hundred ms of CPU) queue for the same
cores, each through the link's delay: measured on `lfn1g`, -P 8's data phases began 0.8-1.7 s apart, and
the common data phase (first start to last end) was mostly that spread. Here everything up to the
stream's reader is outside it, the way a single stream's data clock leaves its own set-up out.

How (FIFOs in a directory the server sees, so for targets that share this machine's filesystem): one
`arrive` FIFO, which this side holds open for reading and writing (no end of file between writers), and
one `go` FIFO per stream, also held open here. A stream's script (tools.remote_report.gate_script) opens
its `go`, writes its number to `arrive` and reads one line from `go`. `wait` reads `arrive` until every
stream has arrived or ended (a stream whose client exited never arrives: its thread reports `done`), or
the deadline. `release` writes one line into every `go`: a stream that arrives later finds it there and
starts at once, so no script waits on a release that already happened. `close` releases anyone left and
removes the directory (an interrupted run: the sshd and its sessions are killed with their whole tree).
What upload clients send while their script waits (up to one channel window) is counted like the bytes
that arrive while a single stream's login shell starts: the reader's clock is scaled by the bytes that
arrived before it (sshbench.measure.clock.reader_data_phase).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import threading
import time
from pathlib import Path

from sshbench.tools.base import GateFiles


class StartGate:
    """The rendezvous of one parallel trial's N streams."""

    def __init__(self, directory: Path, streams: int) -> None:
        directory.mkdir(mode=0o700)
        self.directory = directory
        self.streams = streams
        self.arrive = directory / "arrive"
        self.go = [directory / f"go{k + 1}" for k in range(streams)]
        for fifo in (self.arrive, *self.go):
            os.mkfifo(fifo, 0o600)
        # Read-write opens of a FIFO never block (Linux): this side is reader and writer of `arrive` (so a
        # stream's `echo >arrive` never waits and reading never sees end of file), and holds every `go` open
        # (a release written before its stream opened it stays there until it reads it).
        self._arrive_fd = os.open(self.arrive, os.O_RDWR | os.O_NONBLOCK)
        self._go_fds = [os.open(fifo, os.O_RDWR | os.O_NONBLOCK) for fifo in self.go]
        self.arrived_at: dict[int, float] = {}  # 0-based stream -> unix time it reached the gate
        self._ended: set[int] = set()
        self.released_at: float | None = None
        self._pending = b""
        # A stream's thread may report its end after close() (one stuck past the join bound): its fd number
        # may then be another file's, so writes check under this lock that the FIFOs are still open.
        self._lock = threading.Lock()
        self._closed = False

    def files(self, index: int) -> GateFiles:
        """Stream `index`'s (0-based) FIFOs, for its TrialFiles."""
        return GateFiles(arrive=str(self.arrive), go=str(self.go[index]), stream=index + 1)

    def ended(self, index: int) -> None:
        """Stream `index`'s client has exited (called from its thread): never wait for it any longer."""
        with self._lock, contextlib.suppress(OSError):
            if not self._closed:
                os.write(self._arrive_fd, f"{index + 1} ended\n".encode())

    def wait(self, timeout_s: float) -> bool:
        """Read arrivals until every stream has arrived or ended (True), or `timeout_s` passed (False)."""
        deadline = time.monotonic() + timeout_s
        poller = select.poll()
        poller.register(self._arrive_fd, select.POLLIN)
        while len(self.arrived_at.keys() | self._ended) < self.streams:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                return False
            self._read_arrivals()
        return True

    def _read_arrivals(self) -> None:
        with contextlib.suppress(BlockingIOError):
            self._pending += os.read(self._arrive_fd, 4096)
        *lines, self._pending = self._pending.split(b"\n")
        now = time.time()
        for line in lines:
            words = line.split()
            if not words or not words[0].isdigit() or not 1 <= int(words[0]) <= self.streams:
                continue
            index = int(words[0]) - 1
            if len(words) > 1:
                self._ended.add(index)
            else:
                self.arrived_at.setdefault(index, now)

    def release(self) -> None:
        """Every stream goes: one line into each `go` (at most once)."""
        if self.released_at is not None:
            return
        self.released_at = time.time()
        for fd in self._go_fds:
            with contextlib.suppress(OSError):
                os.write(fd, b"\n")

    def close(self) -> None:
        """Release whoever still waits, close the FIFOs, remove the directory."""
        self.release()
        with self._lock:
            if not self._closed:
                self._closed = True
                for fd in (self._arrive_fd, *self._go_fds):
                    with contextlib.suppress(OSError):
                        os.close(fd)
        shutil.rmtree(self.directory, ignore_errors=True)


__all__ = ["StartGate"]
