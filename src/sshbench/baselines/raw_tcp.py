"""The raw TCP control: the same payload file through a plain TCP connection, no SSH, no encryption.

It answers "how fast is the path itself?" (seed 001's netcat control). For the private target both
ends are on this machine: a listener thread bound to 127.0.0.1 reads into a reused buffer and
discards (as the ssh trials' `dd of=/dev/null`), and this thread sends the payload file with
sendfile(2) (as ssh reads it from a file on stdin). The receiver's own clock times the data phase
(accept to end of data) and it counts the bytes: a trial is valid only if every byte arrived.

sshbench's control reaches iperf3's single-stream loopback rate (bench/control.py measures the ratio).
Remote targets: not yet (it needs a listener started over ssh on the remote); skipped with a note.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sshbench.results import IMPLICIT_MAC, Combination, Trial

KIND = "raw-tcp"
# A pseudo-combination so that the control is planned, sized and summarised like the ssh trials.
RAW_TCP = Combination(cipher="raw-tcp", mac=IMPLICIT_MAC, kex="none", tool="raw-tcp")
RECV_BUFFER = 1 << 20  # as the ssh trials' reader (dd bs=1M)
LOOPBACK = "127.0.0.1"
DATA_CLOCK = "receiver"
REMOTE_SKIP_NOTE = ("raw TCP control skipped: it runs only against the private sshd for now "
                    "(a remote target needs a listener started on the remote)")


@dataclass
class SinkResult:
    received_bytes: int = 0
    data_s: float | None = None
    cpu_s: float | None = None  # the receiving thread's own user+sys time
    error: str | None = None


class TcpSink:
    """A one-connection listener on loopback that counts and discards what it receives.

    Every wait is bounded by `timeout_s`; `close()` always stops the thread and the sockets."""

    def __init__(self, timeout_s: float, host: str = LOOPBACK) -> None:
        self.timeout_s = timeout_s
        self.result = SinkResult()
        self._listener = socket.create_server((host, 0), backlog=1)
        self._listener.settimeout(timeout_s)
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self._thread = threading.Thread(target=self._serve, name="sshbench-raw-tcp-sink", daemon=True)

    def start(self) -> TcpSink:
        self._thread.start()
        return self

    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError as err:  # timeout, or close() woke us
            self.result.error = f"no connection to the raw TCP sink: {err}"
            return
        with conn:
            conn.settimeout(self.timeout_s)
            buffer = memoryview(bytearray(RECV_BUFFER))
            received = 0
            start, cpu_start = time.perf_counter(), time.thread_time()
            try:
                while n := conn.recv_into(buffer):
                    received += n
            except OSError as err:
                self.result.error = f"raw TCP sink: {err}"
            self.result.data_s = time.perf_counter() - start
            self.result.cpu_s = time.thread_time() - cpu_start
            self.result.received_bytes = received

    def wait(self) -> SinkResult:
        self._thread.join(timeout=self.timeout_s)
        if self._thread.is_alive():
            self.result.error = f"raw TCP sink still reading after {self.timeout_s:.0f} s"
        return self.result

    def close(self) -> None:
        # shutdown() wakes a thread blocked in accept(); close() alone would not on Linux.
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=5)


def send_file(path: Path, address: tuple[str, int], timeout_s: float) -> tuple[int, float]:
    """Send the whole file; (bytes sent, this thread's CPU seconds).

    The socket is blocking during the transfer: with a timeout set, Python's sendfile polls
    between short non-blocking sends, which cost a third of the rate here. A watchdog timer
    shuts the socket down instead, so the wait is still bounded."""
    cpu_start = time.thread_time()
    with open(path, "rb") as source, socket.create_connection(address, timeout=timeout_s) as sock:
        sock.settimeout(None)
        watchdog = threading.Timer(timeout_s, _shutdown, args=(sock,))
        watchdog.daemon = True
        watchdog.start()
        try:
            sent = sock.sendfile(source)
            sock.shutdown(socket.SHUT_WR)
            # Wait for the sink to close its end: the data is then all read, not merely buffered.
            sock.recv(1)
        finally:
            watchdog.cancel()
    return sent, time.thread_time() - cpu_start


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def run_raw_tcp_trial(*, payload: Path, payload_bytes: int, repetition: int, warmup: bool,
                      timeout_s: float) -> Trial:
    """One raw TCP transfer of `payload`, shaped as a Trial (kind "raw-tcp") so it is summarised as one."""
    trial = Trial(combination=RAW_TCP, kind=KIND, repetition=repetition, warmup=warmup,
                  payload_bytes=payload_bytes, started_at=time.time())
    sink = TcpSink(timeout_s).start()
    send_error = None
    start = time.perf_counter()
    try:
        trial.sent_bytes, trial.client_cpu_s = send_file(payload, sink.address, timeout_s)
    except OSError as err:
        send_error = f"raw TCP sender: {err}"
    finally:
        if send_error is None:
            sink.wait()
        sink.close()  # also wakes a sink still waiting for a sender that failed
        result = sink.result
    trial.wall_s = time.perf_counter() - start
    trial.received_bytes_at_sink = result.received_bytes
    # The receiving thread is both the "server" and its sink here: no sshd in between.
    trial.server_cpu_s = trial.server_sink_cpu_s = result.cpu_s
    trial.exit_status = 0 if send_error is None and result.error is None else 1
    if result.data_s and result.data_s > 0:
        trial.data_s, trial.data_clock = result.data_s, DATA_CLOCK
    if send_error or result.error:
        trial.invalid_reason = send_error or result.error
    elif result.received_bytes != payload_bytes:
        trial.invalid_reason = f"sink received {result.received_bytes} of {payload_bytes} bytes"
    trial.valid = trial.invalid_reason is None
    return trial


def supported(target: object) -> bool:
    """Both ends local: only the private sshd on loopback for now."""
    from sshbench.targets.private_openssh import PrivateOpenSSH

    return isinstance(target, PrivateOpenSSH)
