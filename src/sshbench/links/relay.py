"""The userspace delay relay: `python -m sshbench.links.relay --delay-ms D ... PORT=HOST:PORT ...`, run in
the client namespace where the kernel has no netem. It holds every chunk for the one-way delay in each
direction (order kept under jitter), so SSH's window and round trips see the delay."""

from __future__ import annotations

import random
import socket
import sys
import threading
import time
from collections import deque


class _DelayedPipe:
    """One direction of a relayed connection: a reader thread stamps each chunk with its due time
    (now + delay +- jitter, never earlier than the chunk before, so the byte stream keeps its
    order), a writer thread sends it when due. Buffered bytes are capped so that a fast sender is
    held back by TCP flow control instead of filling memory."""

    def __init__(
        self, src: socket.socket, dst: socket.socket, delay_s: float, jitter_s: float, cap: int, done: threading.Event
    ) -> None:
        self.src, self.dst = src, dst
        self.delay_s, self.jitter_s, self.cap = delay_s, jitter_s, cap
        self.queue: deque[tuple[float, bytes]] = deque()
        self.buffered = 0
        self.cond = threading.Condition()
        self.done = done
        self.last_due = 0.0

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._write, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.src.recv(256 * 1024)
            except OSError:
                data = b""
            with self.cond:
                while self.buffered > self.cap:
                    self.cond.wait()
                jitter = random.uniform(-self.jitter_s, self.jitter_s) if self.jitter_s else 0.0
                due = max(self.last_due, time.monotonic() + self.delay_s + jitter)
                self.last_due = due
                self.queue.append((due, data))
                self.buffered += len(data)
                self.cond.notify_all()
            if not data:
                return

    def _write(self) -> None:
        while True:
            with self.cond:
                while not self.queue:
                    self.cond.wait()
                due, data = self.queue.popleft()
                self.buffered -= len(data)
                self.cond.notify_all()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)  # the emulated propagation delay itself
            try:
                if not data:
                    self.dst.shutdown(socket.SHUT_WR)
                    break
                self.dst.sendall(data)
            except OSError:
                break
        self.done.set()


def _relay_connection(
    client: socket.socket, upstream: tuple[str, int], delay_s: float, jitter_s: float, cap: int
) -> None:
    try:
        server = socket.create_connection(upstream, timeout=10)
    except OSError:
        client.close()
        return
    server.settimeout(None)
    for sock in (client, server):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # chunks leave when due, not later
    up_done, down_done = threading.Event(), threading.Event()
    _DelayedPipe(client, server, delay_s, jitter_s, cap, up_done).start()
    _DelayedPipe(server, client, delay_s, jitter_s, cap, down_done).start()
    up_done.wait()
    down_done.wait()
    client.close()
    server.close()


def relay_main(argv: list[str]) -> int:
    """`python -m sshbench.links.relay --delay-ms D --jitter-ms J --buffer N PORT=HOST:PORT ...`:
    listen on 127.0.0.1:PORT for each route, forward each connection to HOST:PORT with the delay in
    both directions. Prints `ready` once listening; exits when its stdin closes (its owner is gone)."""
    import argparse

    parser = argparse.ArgumentParser(prog="sshbench-relay")
    parser.add_argument("--delay-ms", type=float, required=True)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    parser.add_argument("--buffer", type=int, default=8 * 1024 * 1024)
    parser.add_argument("routes", nargs="+")
    args = parser.parse_args(argv)
    delay_s, jitter_s = args.delay_ms / 1000, args.jitter_ms / 1000
    for route in args.routes:
        port, _, target = route.partition("=")
        host, _, target_port = target.rpartition(":")
        listener = socket.create_server(("127.0.0.1", int(port)), backlog=16)

        def accept_loop(
            listener: socket.socket = listener, upstream: tuple[str, int] = (host, int(target_port))
        ) -> None:
            while True:
                conn, _ = listener.accept()
                threading.Thread(
                    target=_relay_connection, args=(conn, upstream, delay_s, jitter_s, args.buffer), daemon=True
                ).start()

        threading.Thread(target=accept_loop, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.buffer.read()  # blocks until the owner closes our stdin (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(relay_main(sys.argv[1:]))
