"""The raw TCP control: the same payload file through a plain TCP connection, no SSH, no encryption.

It answers "how fast is the path itself?" (seed 001's netcat control). For the private target both
ends are on this machine: a sink process (tcp_sink.py, in its own session like sshd) bound to
127.0.0.1 reads into a reused buffer and discards (as the ssh trials' `dd of=/dev/null`), and this
thread writes the payload file (mapped, 1 MiB writes; ssh reads it from a file on stdin). The
receiver's own clock times the data phase (first byte to end of data: the sender waits for its
"go") and it counts the bytes: a trial is valid only if every byte arrived.

sshbench's control reaches iperf3's single-stream loopback rate (bench/control.py measures the ratio).
Remote hosts (raw_tcp_remote.py: RemoteTcpSink): the same tcp_sink.py runs on the remote, started over the ssh connection
with the remote's `python3 -I`, listening on an ephemeral port of the address ssh connected to
($SSH_CONNECTION, or --raw-tcp-port N); the sender connects to it directly. The script is fed on
stdin by a one-line bootstrap that reads exactly its length, so stdin stays open and its end of file
(ssh gone) still stops the sink, as the local one does. The download direction (RemoteTcpSource):
the same script on the remote in `send` mode listens the same way and sends the payload copy the
download trials read there; a local tcp_sink.py in `connect` mode opens the connection, says "go"
and times what arrives (the receiver's clock, as in the upload direction). Both directions thus
need only the server's port to be reachable, as ssh does. No python3 there: nc and dd instead
(raw_tcp_remote.nc_fallback); neither: a note. A port that
cannot be reached (a firewall) or listened on: one invalid trial and one note naming host and port
(`blocked_note`); the runner leaves the control out for the rest of the run, which goes on.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sshbench import capabilities
from sshbench.baselines.raw_tcp_remote import RemoteTcpSink, remote_download, sink_notes
from sshbench.baselines.sink_process import CONNECT_FAILED, DATA_CLOCK, SinkResult, TcpSink
from sshbench.baselines.tcp_sink import CONNECT_TIMEOUT_S, GO, TOKEN_PREFIX
from sshbench.links.namespaces import inside
from sshbench.results import IMPLICIT_MAC, Combination, Trial, TrialKind

# A pseudo-combination so that the control is planned, sized and summarised like the ssh trials.
RAW_TCP = Combination(cipher="raw-tcp", mac=IMPLICIT_MAC, kex="none", tool="raw-tcp")
SEND_CHUNK = 1 << 20
# A remote sink without python3 (nc and dd): the sender's clock, first byte sent to the sink's close
SENDER_CLOCK = "sender"
REMOTE_SKIP_NOTE = capabilities.REMOTE_SKIP_NOTE


@dataclass
class Sent:
    sent_bytes: int
    cpu_s: float  # this thread's CPU seconds
    elapsed_s: float  # from the first byte sent until the sink closed its end (the sender's clock)


def send_file(
    path: Path,
    address: tuple[str, int],
    timeout_s: float,
    netns: str | None = None,
    go: bool = True,
    total_bytes: int | None = None,
    token: str | None = None,
) -> Sent:
    """Send the whole file; `total_bytes`: that many bytes, the file over and over (the control's sink only
    counts, and a 1 GiB payload file cost 0.5-3 s to write on this VM where a 64 MiB one is there already).

    The file is mapped (pages populated before the sink's clock starts, as a sender's buffer would
    be) and written in SEND_CHUNK blocks: on loopback that ran ~40% faster than sendfile(2) here,
    which splices page by page. The socket is blocking during the transfer (with a timeout set,
    Python polls between short non-blocking sends); a watchdog timer shuts it down instead, so
    the wait is still bounded. `go` False: the sink is a remote `nc`, which says no "go" and prints
    nothing once it listens, so a refused connect is retried (bounded) while it starts."""
    cpu_start = time.thread_time()
    with open(path, "rb") as source, _mapped(source) as view:
        with inside(netns):  # an emulated link: the sender lives in the client namespace
            connected = _connect(address, timeout_s, retry_refused=not go)
        with connected as sock:
            sock.settimeout(timeout_s)
            if token is not None:  # a remote sink takes only the connection that brings the run's token
                sock.sendall(TOKEN_PREFIX + token.encode() + b"\n")
            if go and sock.recv(1) != GO:  # the sink's clock is running
                raise OSError("raw TCP sink closed before the transfer")
            sock.settimeout(None)
            watchdog = threading.Timer(timeout_s, _shutdown, args=(sock,))
            watchdog.daemon = True
            watchdog.start()
            start = time.perf_counter()
            total = len(view) if total_bytes is None or not len(view) else total_bytes
            try:
                offset = 0
                while offset < total:
                    at = offset % len(view)
                    chunk = min(SEND_CHUNK, total - offset, len(view) - at)
                    sock.sendall(view[at : at + chunk])
                    offset += chunk
                sock.shutdown(socket.SHUT_WR)
                # Wait for the sink to close its end: the data is then all read, not merely buffered.
                sock.recv(1)
            finally:
                watchdog.cancel()
            elapsed = time.perf_counter() - start
        sent = total
    return Sent(sent, time.thread_time() - cpu_start, elapsed)


def _connect(address: tuple[str, int], timeout_s: float, retry_refused: bool) -> socket.socket:
    """A connection to the sink; a port a firewall drops must not hold the trial for its whole timeout."""
    deadline = time.monotonic() + min(CONNECT_TIMEOUT_S, timeout_s)
    while True:
        try:
            return socket.create_connection(address, timeout=min(CONNECT_TIMEOUT_S, timeout_s))
        except ConnectionRefusedError as err:
            if not retry_refused or time.monotonic() > deadline:
                raise OSError(f"{CONNECT_FAILED}{address[0]}:{address[1]}: {err}") from None
            time.sleep(0.02)  # bounded poll: the remote nc is not listening yet
        except OSError as err:
            raise OSError(f"{CONNECT_FAILED}{address[0]}:{address[1]}: {err}") from None


@contextlib.contextmanager
def _mapped(source: BinaryIO) -> Iterator[memoryview]:
    """The whole file as a read-only memoryview (empty for an empty file)."""
    if os.fstat(source.fileno()).st_size == 0:
        yield memoryview(b"")
        return
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    with mmap.mmap(source.fileno(), 0, flags=flags, prot=mmap.PROT_READ) as mapped:
        view = memoryview(mapped)
        try:
            yield view
        finally:
            view.release()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def run_raw_tcp_trial(
    *,
    payload: Path,
    payload_bytes: int,
    repetition: int,
    warmup: bool,
    timeout_s: float,
    combination: Combination = RAW_TCP,
    path: dict | None = None,
) -> Trial:
    """One raw TCP transfer of `payload`, shaped as a Trial (kind "raw-tcp") so it is summarised as one.
    `path`: over an emulated link (the target's raw_tcp_path(): sink address and namespace, where the
    sender connects and its namespace); `combination` then carries that link's name. A remote host's
    path ("remote_ssh") in the "down" direction also names "source", the payload's copy there."""
    trial = Trial(
        combination=combination,
        kind=TrialKind.RAW_TCP,
        repetition=repetition,
        warmup=warmup,
        payload_bytes=payload_bytes,
        started_at=time.time(),
    )
    sink: TcpSink
    if path is not None and "remote_ssh" in path:
        if combination.direction == "down":
            return remote_download(trial, path, timeout_s)
        # a remote host: the sink runs there
        sink = RemoteTcpSink(timeout_s, path["remote_ssh"], env=path.get("env"), port=path.get("port", 0))
    elif path is not None:
        sink = TcpSink(timeout_s, host=path["sink"][0], port=path["sink"][1], netns=path["sink_netns"])
    else:
        sink = TcpSink(timeout_s)
    try:
        sink.start()
    except OSError as err:
        trial.exit_status, trial.invalid_reason = 1, str(err)
        return trial
    if path is not None and "remote_ssh" in path:
        connect_to, sender_netns = sink.address, None
    elif path is not None:
        connect_to, sender_netns = path["connect"], path["sender_netns"]
    else:
        connect_to, sender_netns = sink.address, None
    send_error = None
    sent = False
    via_nc = sink.via == "nc"  # a remote without python3: its nc counts, our clock times
    sender_clock: float | None = None
    start = time.perf_counter()
    try:
        token = None if via_nc else getattr(sink, "token", None)  # a remote python3 sink's (raw_tcp_remote)
        done = send_file(
            payload, connect_to, timeout_s, netns=sender_netns, go=not via_nc, total_bytes=payload_bytes, token=token
        )
        trial.sent_bytes, trial.client_cpu_s, sender_clock = done.sent_bytes, done.cpu_s, done.elapsed_s
        sent = True
    except OSError as err:
        text = str(err)
        send_error = (
            text if text.startswith(CONNECT_FAILED) else f"raw TCP sender to {connect_to[0]}:{connect_to[1]}: {err}"
        )
    finally:
        # Wait for the sink only after a complete send: after a failure or an interrupt (Ctrl-C,
        # SIGTERM) it may still sit in accept(), and close() wakes it at once.
        try:
            if sent:
                sink.wait()
        finally:
            sink.close()
    result = sink.result
    if path is not None and "remote_ssh" in path:  # what its remote end refused, or cannot check (nc)
        path.setdefault("notes", []).extend(sink_notes(sink.via, result.refused))
    trial.wall_s = time.perf_counter() - start
    trial.received_bytes_at_sink = result.received_bytes
    # The receiving process is both the "server" and its sink here: no sshd in between.
    trial.server_cpu_s = trial.server_sink_cpu_s = result.cpu_s
    trial.exit_status = 0 if send_error is None and result.error is None else 1
    if result.data_s and result.data_s > 0:
        trial.data_s, trial.data_clock = result.data_s, DATA_CLOCK
        trial.reader_ended_at = result.ended_at
    elif via_nc and sender_clock and sender_clock > 0:
        trial.data_s, trial.data_clock = sender_clock, SENDER_CLOCK
    judge(trial, result, send_error)
    return trial


def judge(trial: Trial, result: SinkResult, send_error: str | None) -> None:
    """Valid when the send and the sink succeeded and the sink counted every byte of the trial's payload."""
    if send_error or result.error:
        trial.invalid_reason = send_error or result.error
    elif result.received_bytes != trial.payload_bytes:
        trial.invalid_reason = f"sink received {result.received_bytes} of {trial.payload_bytes} bytes"
    trial.valid = trial.invalid_reason is None


def supported(target: capabilities.TargetCapabilities) -> bool:
    """Both ends on this machine (a private server: OpenSSH, Dropbear, AsyncSSH, or OpenSSH behind an
    emulated link), or a remote host that can run the sink (python3, or nc and dd)."""
    return target.raw_tcp().runs
