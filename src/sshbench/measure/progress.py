"""A trial's progress while it runs: the kernel's byte counters of the client's TCP connection, sampled.

The client process tree (ssh, or scp/sftp/rsync and the ssh they start, or the AsyncSSH client) owns one
TCP socket per connection. Every `interval_s` a thread asks the kernel for that socket's TCP_INFO
through sock_diag netlink (what `ss -ti` reads): `bytes_acked` (what the server's kernel has taken,
uploads) and `bytes_received` (downloads). Nothing is injected into the client or its socket, so the
measured path is unchanged; one sample costs a netlink round trip (~30 us).

The samples feed the steady-state clock (sshbench.measure.steady). Where no socket is found (a namespace we
cannot enter, a kernel without sock_diag), the sampler returns no samples and the trial keeps the
earlier clock, labelled so (clock.py).
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
INET_DIAG_INFO = 2
_TCP_STATES_NOT_LISTEN = 0xFFFFFFFF & ~(1 << 10)
# struct tcp_info: 8 one-byte fields, 24 u32, then u64 pacing_rate, max_pacing_rate, bytes_acked, bytes_received
_BYTES_ACKED_AT = 8 + 24 * 4 + 16
_NLMSG = struct.Struct("=IHHII")
_REQ = struct.Struct("=BBBBI")  # family, protocol, ext, pad, states (then the 48-byte sockid)
_MSG_HEAD = struct.Struct("=BBBB")  # family, state, timer, retrans (then sockid, then 5 u32)

# Every 20 ms: the transient lasts ~0.1-0.3 s on loopback (docs/clock.md), 50 ms would leave it 2-6 points.
DEFAULT_INTERVAL_S = 0.02


@dataclass(frozen=True)
class Sample:
    """One reading: seconds since the client started, and the connections' summed counters."""

    t: float
    acked: int  # bytes_acked: sent and acknowledged by the peer's kernel
    received: int  # bytes_received
    # On-CPU nanoseconds of the client's processes (/proc/PID/schedstat, summed over the tree the connection
    # was found in); None where one of them was gone. Over the steady window it is the client's CPU per byte
    # without the connection's set-up (summary: a 12 MiB trial behind a 100 Mbit/s link spent ~20 ms of CPU
    # on its data and 84-120 ms on its handshake, which left nothing after the handshake was taken off).
    client_cpu_ns: int | None = None


@dataclass
class _Sock:
    family: int
    sockid: bytes  # the 48-byte inet_diag_sockid as the kernel returned it (ports, addresses, cookie)


@dataclass
class Progress:
    """What the sampler saw: its samples and how many connections they sum."""

    samples: list[Sample] = field(default_factory=list)
    connections: int = 0
    error: str | None = None  # why there are no samples (no socket found, no sock_diag)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            pass
    return out


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (/proc/PID/task/*/children)."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo.extend(_children(p))
    return seen


def tree_cpu_ns(pids: list[int]) -> int | None:
    """On-CPU nanoseconds of `pids` together (schedstat's first field), None if one is gone or unreadable."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
    return total


def socket_inodes(pids: list[int]) -> dict[int, tuple[int, set[int]]]:
    """The socket inodes `pids` hold, by the inode of their network namespace (with one pid in it)."""
    inodes: dict[int, tuple[int, set[int]]] = {}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            netns = os.stat(f"/proc/{pid}/ns/net").st_ino
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.setdefault(netns, (pid, set()))[1].add(int(link[8:-1]))
    return inodes


_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def _enter_netns_of(pid: int) -> None:
    """Put this thread in `pid`'s network namespace (threads have their own: the process is unaffected)."""
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns")
    finally:
        os.close(fd)


class _Diag:
    """One sock_diag netlink socket (opened in the client's network namespace)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)
        self.seq = 0

    def close(self) -> None:
        self.sock.close()

    def _ask(self, family: int, sockid: bytes, dump: bool) -> list[tuple[int, bytes, int, bytes | None]]:
        """Send one request; (family, sockid, inode, tcp_info) of each answer."""
        self.seq += 1
        body = _REQ.pack(family, socket.IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1), 0, _TCP_STATES_NOT_LISTEN) + sockid
        flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else 0)
        self.sock.send(_NLMSG.pack(_NLMSG.size + len(body), SOCK_DIAG_BY_FAMILY, flags, self.seq, 0) + body)
        answers: list[tuple[int, bytes, int, bytes | None]] = []
        while True:
            data = self.sock.recv(1 << 20)
            offset = 0
            while offset + _NLMSG.size <= len(data):
                length, kind, _, _, _ = _NLMSG.unpack_from(data, offset)
                if length < _NLMSG.size:
                    return answers
                if kind in (NLMSG_DONE, NLMSG_ERROR):
                    return answers
                msg = data[offset + _NLMSG.size : offset + length]
                fam = msg[0]
                sid = msg[4:52]
                inode = struct.unpack_from("=I", msg, 52 + 16)[0]
                info = None
                at = 72
                while at + 4 <= len(msg):
                    alen, atype = struct.unpack_from("=HH", msg, at)
                    if alen < 4:
                        break
                    if atype == INET_DIAG_INFO:
                        info = msg[at + 4 : at + alen]
                    at += (alen + 3) & ~3
                answers.append((fam, sid, inode, info))
                offset += (length + 3) & ~3
            if not dump:
                return answers

    def find(self, inodes: set[int]) -> list[_Sock]:
        found: list[_Sock] = []
        for family in (socket.AF_INET, socket.AF_INET6):
            for fam, sid, inode, _ in self._ask(family, bytes(48), dump=True):
                if inode in inodes:
                    found.append(_Sock(fam, sid))
        return found

    def counters(self, sock: _Sock) -> tuple[int, int] | None:
        answers = self._ask(sock.family, sock.sockid, dump=False)
        for _, _, _, info in answers:
            if info is not None and len(info) >= _BYTES_ACKED_AT + 16:
                acked, received = struct.unpack_from("=QQ", info, _BYTES_ACKED_AT)
                return acked, received
        return None


class Sampler:
    """Samples the TCP counters of `pid`'s process tree from a thread, from start() to stop().
    `connections`: how many sockets to wait for (the tool's connections). A client in another network
    namespace (`ip netns exec`, emulated links): the thread enters it to ask its kernel."""

    def __init__(self, pid: int, started: float, interval_s: float = DEFAULT_INTERVAL_S, connections: int = 1) -> None:
        self.pid, self.started, self.interval_s = pid, started, interval_s
        self.wanted = connections
        self.progress = Progress()
        self._stop = threading.Event()
        self.first_scan = threading.Event()  # set after the first look for the client's sockets (tests wait on it)
        self.sampled = threading.Event()  # set with the first sample
        self._thread = threading.Thread(target=self._run, name=f"progress-{pid}", daemon=True)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> Progress:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.progress

    def _run(self) -> None:
        own_netns = os.stat("/proc/thread-self/ns/net").st_ino
        diag: _Diag | None = None
        diag_netns = own_netns
        socks: list[_Sock] = []
        last: dict[int, tuple[int, int]] = {}
        cpu_pids: list[int] = []  # the client's processes when its connection was found
        try:
            while not self._stop.is_set():
                now = time.perf_counter()
                if len(socks) < self.wanted:
                    tree = process_tree(self.pid)
                    held = socket_inodes(tree)
                    netns = next((ns for ns in held if ns != own_netns), own_netns)
                    # `ip netns exec` holds netlink sockets in our namespace before it enters the client's and
                    # execs the client: a diag opened on those asked our kernel for a socket that lives in the
                    # client's, and the trial had no samples (the first trial of a --link run, now and then).
                    # So the diag follows the client into its namespace.
                    if held and (diag is None or (netns != own_netns and netns != diag_netns)):
                        if diag is not None:
                            diag.close()
                            diag, socks, last = None, [], {}
                        if netns != own_netns:  # the client runs in a namespace of its own (emulated links)
                            _enter_netns_of(held[netns][0])
                        diag, diag_netns = _Diag(), netns
                    if diag is not None:
                        known = {s.sockid for s in socks}
                        socks += [
                            s for s in diag.find(held[netns][1] if netns in held else set()) if s.sockid not in known
                        ]
                        self.progress.connections = len(socks)
                        if socks:
                            cpu_pids = tree
                    self.first_scan.set()
                if socks and diag is not None:
                    # the reading's time: the middle of the kernel requests (discovery and the loop's start
                    # would skew it by milliseconds, ~1% of a 0.3 s window)
                    asked = time.perf_counter()
                    for i, s in enumerate(socks):
                        got = diag.counters(s)
                        if got is not None:  # a closed socket keeps its last reading
                            last[i] = got
                    self.progress.samples.append(
                        Sample(
                            round((asked + time.perf_counter()) / 2 - self.started, 6),
                            sum(a for a, _ in last.values()),
                            sum(r for _, r in last.values()),
                            tree_cpu_ns(cpu_pids) if cpu_pids else None,
                        )
                    )
                    self.sampled.set()
                self._stop.wait(max(0.0, self.interval_s - (time.perf_counter() - now)))
        except OSError as error:
            self.progress.error = f"sock_diag: {error}"
        finally:
            if diag is not None:
                diag.close()
        if not self.progress.samples and self.progress.error is None:
            self.progress.error = "no TCP connection of the client was found"
