"""The raw TCP control's receiving end as a process of its own (tcp_sink.py, in its own session, as sshd is
for the ssh trials) and what it reports: shared by the control on this machine (raw_tcp.py, which runs a
trial to either end) and a remote host's (raw_tcp_remote.py, whose sink is the same script started over ssh).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sshbench.host.cleanup import held_stop

SINK_SCRIPT = Path(__file__).with_name("tcp_sink.py")
STARTUP_TIMEOUT_S = 15.0
LOOPBACK = "127.0.0.1"
DATA_CLOCK = "receiver"
# How a failed connect to the control's port starts its invalid reason (blocked_note reads it).
CONNECT_FAILED = "raw TCP connect to "


@dataclass
class SinkResult:
    received_bytes: int = 0
    data_s: float | None = None
    cpu_s: float | None = None  # the receiving process's own user+sys time
    error: str | None = None
    ended_at: float | None = None  # the sink's wall clock (unix s) at the end: parallel streams line up on it
    streams: list[dict] | None = None  # a sink of several connections (raw_tcp_streams): one entry each
    refused: list[str] | None = None  # a remote sink: the connections it closed (not our address, or no token)


class TcpSink:
    """The receiving end (tcp_sink.py) as its own process in its own session, as sshd is for the ssh
    trials: with the kernel's autogroup scheduling, a sink thread inside sshbench would share one CPU
    share with the sender, and on a busy machine read 25% slower than iperf3's two processes.

    Every wait is bounded by `timeout_s`; `close()` always ends the process."""

    def __init__(
        self, timeout_s: float, host: str = LOOPBACK, port: int = 0, netns: str | None = None, connections: int = 1
    ) -> None:
        self.timeout_s = timeout_s
        self.connections = connections  # > 1: one sink for several streams on one port (raw_tcp_streams)
        self.result = SinkResult()
        self.host, self.port, self.netns = host, port, netns
        self.address: tuple[str, int] = (host, port)
        self.process: subprocess.Popen[str] | None = None
        self.via = "python3"  # what counts the bytes: tcp_sink.py; a remote without python3 "nc" (its own clock)
        self._pending = ""  # read from its stdout, not yet returned as a line

    def _spawn(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """The sink (or the ssh that runs it remotely) in its own session, its pipes read as text; held: started
        and known to close() as one step."""
        with held_stop():
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                text=True,
                env=env,
            )
        return self.process

    def start(self) -> TcpSink:
        """Start the sink process (inside `netns` when given: an emulated link's server namespace)."""
        argv = [sys.executable, "-I", str(SINK_SCRIPT), str(self.timeout_s), self.host, str(self.port)]
        if self.connections > 1:
            argv += ["listen", str(self.connections)]
        if self.netns is not None:
            argv = ["ip", "netns", "exec", self.netns, *argv]
        self._spawn(argv)
        line = self._line(STARTUP_TIMEOUT_S)
        if not line.startswith("PORT "):
            reason = line.strip() or self._stderr() or "no output"
            self.close()
            raise OSError(f"raw TCP sink did not start: {reason}")
        self.address = (self.host, int(line.split()[1]))
        return self

    def _line(self, timeout_s: float) -> str:
        """The next line of its stdout ("" after timeout_s or at its end), read from the pipe itself:
        select() on the text wrapper misses a line it already buffered with the one before (a remote
        nc fallback prints ADDR and PORT together and then nothing)."""
        assert self.process is not None and self.process.stdout is not None
        fd, deadline = self.process.stdout.fileno(), time.monotonic() + timeout_s
        while "\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return ""  # timed out (what was read stays for the next call)
            chunk = os.read(fd, 65536)
            if not chunk:  # its end: the last piece, if any
                line, self._pending = self._pending, ""
                return line
            self._pending += chunk.decode(errors="replace")
        line, _, self._pending = self._pending.partition("\n")
        return line + "\n"

    def _stderr(self) -> str:
        assert self.process is not None
        try:
            _, err = self.process.communicate(timeout=2)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            return ""
        lines = (err or "").strip().splitlines()
        return lines[-1] if lines else ""

    def wait(self) -> SinkResult:
        line = self._line(self.timeout_s)
        try:
            report = json.loads(line)
            self.result = SinkResult(
                received_bytes=int(report.get("received_bytes") or 0),
                data_s=report.get("data_s"),
                cpu_s=report.get("cpu_s"),
                error=report.get("error"),
                ended_at=report.get("ended_at"),
                streams=report.get("streams"),
                refused=report.get("refused") or None,
            )
        except ValueError:
            self.result.error = f"raw TCP sink gave no report: {line.strip() or self._stderr() or 'no output'}"
        return self.result

    def close(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
