"""The raw TCP control's receiving end, run as its own process: `python -I tcp_sink.py TIMEOUT_S [HOST PORT [MODE]]`.

Standard library only, run by path (not `-m`), so it starts in a few milliseconds without
importing sshbench. Protocol on stdout, one line each: `PORT <n>` once listening on HOST (default 127.0.0.1),
then a JSON object {"received_bytes", "data_s", "cpu_s", "error"} after the connection ends.
Once it has accepted the connection and started its clock, it sends one byte ("G") to the sender,
which waits for it before sending: the data phase is timed from its first byte to its last.

Run on a remote host through raw_tcp_remote's bootstrap, which hands it `SINK_TOKEN` (read from the ssh connection's
stdin, so no other user there sees it in ps), it takes only a connection from this ssh connection's client address
(SSH_CONNECTION) that sends `TOKEN <token>` first; any other is closed unanswered, and the sink goes on waiting for the
client's. After its one connection it listens no more. Started locally (127.0.0.1, or our own namespaces), it checks
neither.

It stops by itself whatever happens to its parent: when its stdin (a pipe from the parent) reaches
end of file, when no sender connects within TIMEOUT_S, or when the sender goes quiet that long.

MODE (a remote host's control in the download direction, where the server sends and the client
receives, over a connection the client opens so that only the server's port must be reachable):
`connect [EXPECTED]` receives the same way over a connection to HOST:PORT (the client's end; no `PORT`
line), up to EXPECTED bytes when given (the far end may be `nc`, which keeps its end open);
`send PATH` listens like the sink (the server's end), waits for the receiver's "go", sends the file
in 1 MiB writes and prints {"sent_bytes", "cpu_s", "error"}.
"""

from __future__ import annotations

import json
import mmap
import os
import select
import socket
import sys
import threading
import time

RECV_BUFFER = 1 << 20  # as the ssh trials' reader (dd bs=1M)
SEND_CHUNK = 1 << 20  # as the local sender (raw_tcp.send_file)
GO = b"G"
CONNECT_TIMEOUT_S = 10.0  # a port a firewall drops must not hold a trial for its whole timeout
TOKEN_TIMEOUT_S = 10.0  # a connection that sends no token line within this is closed
TOKEN_PREFIX = b"TOKEN "
# Set by raw_tcp_remote's bootstrap (the token line it reads after this script on stdin); None when run by path.
SINK_TOKEN: str | None = globals().get("SINK_TOKEN")


def allowed_peer() -> str | None:
    """The address the remote control's client connects from: this ssh connection's client (SSH_CONNECTION)."""
    fields = os.environ.get("SSH_CONNECTION", "").split()
    return fields[0] if fields else None


def _same_address(a: str, b: str) -> bool:
    return a.removeprefix("::ffff:") == b.removeprefix("::ffff:")


def _read_token(conn: socket.socket) -> bytes:
    """The first line a connection sends (at most 100 bytes, within TOKEN_TIMEOUT_S)."""
    conn.settimeout(TOKEN_TIMEOUT_S)
    line = b""
    try:
        while not line.endswith(b"\n") and len(line) < 100:
            chunk = conn.recv(1)
            if not chunk:
                break
            line += chunk
    except OSError:
        pass
    return line.strip()


def accept_ours(listener: socket.socket, timeout_s: float, refused: list[str]) -> socket.socket | None:
    """The next connection that is ours: with SINK_TOKEN set, from allowed_peer() and sending the token (any other is
    closed, its address kept in `refused`); else the first. None when none came within `timeout_s`, or the parent went
    away (its stdin ended)."""
    deadline = time.monotonic() + timeout_s
    peer = allowed_peer() if SINK_TOKEN is not None else None
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], max(deadline - time.monotonic(), 0.0))
        if listener not in ready:
            return None
        conn, address = listener.accept()
        if SINK_TOKEN is None:
            return conn
        if peer is not None and not _same_address(address[0], peer):
            refused.append(f"{address[0]} (not the client's address {peer})")
            conn.close()
            continue
        if _read_token(conn) != TOKEN_PREFIX + SINK_TOKEN.encode():
            refused.append(f"{address[0]} (no valid token)")
            conn.close()
            continue
        return conn


def serve(timeout_s: float, host: str = "127.0.0.1", port: int = 0) -> dict:
    listener = socket.create_server((host, port), backlog=1)
    refused: list[str] = []
    with listener:
        print(f"PORT {listener.getsockname()[1]}", flush=True)
        conn = accept_ours(listener, timeout_s, refused)
        if conn is None:
            gone = select.select([sys.stdin], [], [], 0)[0]
            return {
                "received_bytes": 0,
                "data_s": None,
                "cpu_s": None,
                "error": "parent went away" if gone else f"no sender within {timeout_s:.0f} s",
                "refused": refused,
            }
    return {**receive(conn, timeout_s), "refused": refused}


def receive(conn: socket.socket, timeout_s: float, expected: int | None = None) -> dict:
    """Start the clock, say "go", count what arrives until the sender closes (or, `expected` given,
    until that many bytes arrived: a remote `nc` may keep its end open after its input ended)."""
    with conn:
        conn.settimeout(timeout_s)
        buffer = memoryview(bytearray(RECV_BUFFER))
        received, error = 0, None
        start, cpu_start = time.perf_counter(), time.process_time()
        try:
            # "Go": the sender starts only now, so no byte reaches the socket before the clock starts.
            conn.sendall(GO)
            while (expected is None or received < expected) and (n := conn.recv_into(buffer)):
                received += n
        except OSError as err:
            error = f"raw TCP sink: {err}"
        data_s = time.perf_counter() - start
        cpu_s = time.process_time() - cpu_start
    # ended_at: this machine's wall clock at the end, so that parallel streams line up (sshbench.measure.streams)
    return {"received_bytes": received, "data_s": data_s, "cpu_s": cpu_s, "error": error, "ended_at": time.time()}


def _receive(conn: socket.socket, timeout_s: float, out: dict) -> None:
    """One stream of serve_many: its own clock from "go" to end of data, its bytes, its end time."""
    with conn:
        conn.settimeout(timeout_s)
        buffer = memoryview(bytearray(RECV_BUFFER))
        received, error = 0, None
        start = time.perf_counter()
        try:
            conn.sendall(GO)
            while n := conn.recv_into(buffer):
                received += n
        except OSError as err:
            error = f"raw TCP sink: {err}"
        out.update(received_bytes=received, data_s=time.perf_counter() - start, error=error, ended_at=time.time())


def serve_many(timeout_s: float, host: str, port: int, connections: int) -> dict:
    """`connections` streams on one listening port (an emulated link forwards one fixed port): accept them
    all, then receive each on its own thread; the report adds `streams`, one entry per connection."""

    listener = socket.create_server((host, port), backlog=connections)
    conns: list[socket.socket] = []
    with listener:
        print(f"PORT {listener.getsockname()[1]}", flush=True)
        for _ in range(connections):
            ready, _, _ = select.select([listener, sys.stdin], [], [], timeout_s)
            if listener not in ready:
                for conn in conns:
                    conn.close()
                why = "parent went away" if ready else f"{len(conns)} of {connections} senders within {timeout_s:.0f} s"
                return {"received_bytes": 0, "data_s": None, "cpu_s": None, "error": why, "ended_at": time.time()}
            conns.append(listener.accept()[0])
    cpu_start = time.process_time()
    streams: list[dict] = [{} for _ in conns]
    threads = [threading.Thread(target=_receive, args=(c, timeout_s, out)) for c, out in zip(conns, streams)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()  # each ends with its connection, or after timeout_s of silence
    errors = [s["error"] for s in streams if s.get("error")]
    return {
        "received_bytes": sum(s.get("received_bytes", 0) for s in streams),
        "data_s": max((s.get("data_s") or 0.0) for s in streams),
        "cpu_s": time.process_time() - cpu_start,
        "error": errors[0] if errors else None,
        "ended_at": time.time(),
        "streams": streams,
    }


def _connect_failed(err: OSError) -> dict:
    return {"received_bytes": 0, "data_s": None, "cpu_s": None, "error": f"connect: {err}", "connect_failed": True}


def connect_and_receive(
    timeout_s: float, host: str, port: int, expected: int | None = None, token: str | None = None
) -> dict:
    deadline = time.monotonic() + min(CONNECT_TIMEOUT_S, timeout_s)
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=min(CONNECT_TIMEOUT_S, timeout_s))
            break
        except ConnectionRefusedError as err:
            # A remote `nc` prints no line once it listens: refused while it starts, bounded.
            if expected is None or time.monotonic() > deadline:
                return _connect_failed(err)
            time.sleep(0.02)
        except OSError as err:
            return _connect_failed(err)
    if token is not None:  # the remote sender's check (accept_ours) before its "go"
        try:
            conn.sendall(TOKEN_PREFIX + token.encode() + b"\n")
        except OSError as err:
            conn.close()
            return _connect_failed(err)
    return receive(conn, timeout_s, expected)


def serve_file(timeout_s: float, host: str, port: int, path: str) -> dict:
    """The sending end on the server: listen, accept, wait for "go", send the file, wait for the close."""
    failed: dict = {"sent_bytes": 0, "cpu_s": None}
    with open(path, "rb") as source, socket.create_server((host, port), backlog=1) as listener:
        print(f"PORT {listener.getsockname()[1]}", flush=True)
        refused: list[str] = []
        failed["refused"] = refused
        found = accept_ours(listener, timeout_s, refused)
        if found is None:
            gone = select.select([sys.stdin], [], [], 0)[0]
            return {**failed, "error": "parent went away" if gone else f"no receiver within {timeout_s:.0f} s"}
        conn = found
        size = os.fstat(source.fileno()).st_size
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        mapped = mmap.mmap(source.fileno(), 0, flags=flags, prot=mmap.PROT_READ) if size else None
    view = memoryview(mapped) if mapped is not None else memoryview(b"")
    sent, error = 0, None
    cpu_start = time.process_time()
    with conn:
        conn.settimeout(timeout_s)
        try:
            if conn.recv(1) != GO:
                raise OSError("the receiver closed before the transfer")
            for offset in range(0, len(view), SEND_CHUNK):
                conn.sendall(view[offset : offset + SEND_CHUNK])
                sent = min(offset + SEND_CHUNK, len(view))
            conn.shutdown(socket.SHUT_WR)
            conn.recv(1)  # the receiver's close: every byte was read, not merely buffered
        except OSError as err:
            error = f"raw TCP sender: {err}"
    view.release()
    if mapped is not None:
        mapped.close()
    return {"sent_bytes": sent, "cpu_s": time.process_time() - cpu_start, "error": error, "refused": refused}


def main(argv: list[str]) -> int:
    timeout_s = float(argv[1]) if len(argv) > 1 else 300.0
    host = argv[2] if len(argv) > 2 else "127.0.0.1"
    port = int(argv[3]) if len(argv) > 3 else 0
    mode = argv[4] if len(argv) > 4 else "listen"
    if mode == "connect":  # connect [EXPECTED [token]]: stop once that many bytes arrived; the token line on stdin
        token = sys.stdin.readline().strip() if len(argv) > 6 and argv[6] == "token" else None
        report = connect_and_receive(timeout_s, host, port, int(argv[5]) if len(argv) > 5 else None, token)
    elif mode == "send":
        try:
            report = serve_file(timeout_s, host, port, argv[5])
        except (OSError, IndexError) as err:
            report = {"sent_bytes": 0, "cpu_s": None, "error": f"raw TCP sender: {err}"}
    else:  # listen [N]: `-P N` (raw_tcp_streams) accepts N connections
        connections = int(argv[5]) if len(argv) > 5 else 1
        report = serve(timeout_s, host, port) if connections <= 1 else serve_many(timeout_s, host, port, connections)
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
