"""Emulated links: a client and a server network namespace joined by a veth pair, shaped with tc.

Layout (one pair per server implementation of a run; names carry the owner's pid and start time so
that the next run can tell a leftover of a `kill -9`'d run from a live one):

    sshbench-<pid>-<start>-<index>c  (client ns)            sshbench-<pid>-<start>-<index>s  (server ns)
    ssh, scp, sftp, rsync, raw TCP sender                   private sshd, raw TCP sink, echo server
    [delay relay on 127.0.0.1, when delay is needed         veth sbs 10.254.0.2/24 <- tbf/netem egress
     and the kernel has no netem]
    veth sbc 10.254.0.1/24  <- tbf/netem egress

The addresses exist only inside these two namespaces (no route leaves them), so no traffic can
leave the machine. Both veth ends are shaped with the same profile (a symmetric link): uploads are
shaped on the client end's egress, downloads on the server end's.

Rate: tbf (always there). Delay, jitter, loss: netem where the kernel has it (detected on our own
veth); else delay and jitter come from a userspace relay in the client namespace (this module's
`relay` command) that holds every chunk for the one-way delay in each direction, and loss cannot be
emulated (one clear line). The relay delays data at the application layer: SSH's window and
round trips see the delay; the kernel's TCP over the veth does not (its RTT stays ~0), so TCP slow
start and loss recovery on long paths are not reproduced. Reports say which method was used.

Nothing here is mocked in tests: real namespaces, real tc, real sockets.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from sshbench.errors import RunError, UsageError
from sshbench.links import LinkProfile

PREFIX = "sshbench-"
_NAME = re.compile(r"^sshbench-(\d+)-(\d+)-(\d+)([cs])$")
NETNS_DIR = "/run/netns"
CLIENT_IF, SERVER_IF = "sbc", "sbs"
CLIENT_ADDR, SERVER_ADDR = "10.254.0.1", "10.254.0.2"
PREFIX_LEN = 24
RAW_TCP_PORT = 5201  # the raw TCP sink in the server namespace (iperf3's port; nothing else is there)
ECHO_PORT = 7  # the RTT probe's echo server in the server namespace
RELAY_BASE_PORT = 20000  # relay listeners on the client namespace's 127.0.0.1: base + 10 * link index
RTT_PROBES = 11
OPENSSH_CHANNEL_WINDOW = 2 * 1024 * 1024  # CHAN_SES_WINDOW_DEFAULT: 64 x 32 KiB packets
TC_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 10.0
CLONE_NEWNET = 0x40000000
CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21

METHOD_LOOPBACK = "unshaped veth (no rate, no delay)"
METHOD_TBF = "tc tbf (rate)"
METHOD_NETEM = "tc netem (rate, delay, jitter, loss)"
METHOD_RELAY = "tc tbf (rate) + userspace delay relay (delay, jitter)"
METHOD_RELAY_ONLY = "userspace delay relay (delay, jitter), unshaped veth"


# --- requirements ---------------------------------------------------------------------------------

def _find_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for directory in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        if os.access(f"{directory}/{name}", os.X_OK):
            return f"{directory}/{name}"
    return None


def _has_capabilities(*caps: int) -> bool:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("CapEff:"):
                effective = int(line.split()[1], 16)
                return all(effective & (1 << cap) for cap in caps)
    except OSError:
        pass
    return False


def missing_requirement(links: list[LinkProfile]) -> str | None:
    """One line saying what an emulated link lacks here (None: it can run)."""
    names = ",".join(p.name for p in links if p.emulated)
    if not _has_capabilities(CAP_NET_ADMIN, CAP_SYS_ADMIN):  # root normally has both; a container may not
        who = "root" if os.geteuid() == 0 else "this user"
        return (f"--link {names} needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) to create network namespaces and "
                f"shape them with tc, and {who} lacks them; run as root or use --link loopback")
    missing = [tool for tool in ("ip", "tc") if _find_tool(tool) is None]
    if missing:
        return f"--link {names} needs iproute2 ({' and '.join(missing)} not found): apt-get install iproute2"
    return None


def require_support(links: list[LinkProfile]) -> None:
    reason = missing_requirement(links)
    if reason:
        raise UsageError(reason)


# --- running commands -----------------------------------------------------------------------------

def _run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    tool = _find_tool(argv[0]) or argv[0]
    try:
        done = subprocess.run([tool, *argv[1:]], capture_output=True, text=True, timeout=TC_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RunError(f"{' '.join(argv)} did not finish within {TC_TIMEOUT_S:.0f} s") from None
    if check and done.returncode != 0:
        raise RunError(f"{' '.join(argv)} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:] or '?'}")
    return done


def list_namespaces() -> list[str]:
    """Every named network namespace (`ip netns list`), names only."""
    if _find_tool("ip") is None:
        return []
    done = _run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def own_namespaces() -> list[str]:
    """Namespaces sshbench created (any owner)."""
    return [n for n in list_namespaces() if _NAME.match(n)]


def _owner_alive(pid: int, start: int) -> bool:
    from sshbench.cleanup import process_start_time

    return process_start_time(pid) == start


def remove_stale_namespaces() -> list[str]:
    """The kill -9 step of cleanup.clean_leftovers: delete sshbench's namespaces whose owner is gone
    (dead, or its pid reused by another process). Their processes were killed from the run record
    already; deleting the namespace removes its veth end, and with it the peer and the qdiscs."""
    if not _has_capabilities(CAP_NET_ADMIN, CAP_SYS_ADMIN):
        return []
    removed = []
    for name in own_namespaces():
        m = _NAME.match(name)
        assert m is not None
        if not _owner_alive(int(m.group(1)), int(m.group(2))):
            _kill_processes_in(name)
            if _run(["ip", "netns", "delete", name], check=False).returncode == 0:
                removed.append(f"network namespace {name}")
    return removed


def _kill_processes_in(name: str) -> None:
    """Processes still inside a namespace keep it (and its veth) alive after `ip netns delete`."""
    done = _run(["ip", "netns", "pids", name], check=False)
    for pid in (int(p) for p in done.stdout.split() if p.isdigit()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# --- entering a namespace from this thread ----------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise RunError(f"setns failed: {os.strerror(err)}")


@contextlib.contextmanager
def inside(namespace: str | None) -> Iterator[None]:
    """Run the body with this thread in `namespace` (None: stay). Sockets created in the body belong
    to that namespace for their whole life, so a listener made here keeps serving after we return.
    Network namespaces are per thread: the rest of the process is unaffected."""
    if namespace is None:
        yield
        return
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"{NETNS_DIR}/{namespace}", os.O_RDONLY)
        try:
            _setns(target)
            try:
                yield
            finally:
                _setns(own)
        finally:
            os.close(target)
    finally:
        os.close(own)


# --- the namespace pair ---------------------------------------------------------------------------

@dataclass
class Endpoint:
    """Where a client in the client namespace connects for one service, on one link."""

    host: str
    port: int


@dataclass
class LinkState:
    """One profile as applied here: how, what it achieved, and the shaper's counters."""

    profile: LinkProfile
    method: str
    relay_port: int | None = None  # base port of its delay relay (ssh, +1 raw TCP, +2 echo)
    rtt_ms: float | None = None  # measured (median of RTT_PROBES TCP round trips)
    rtt_probe_ms: list[float] = field(default_factory=list)
    tc: dict = field(default_factory=lambda: {"sent_bytes": 0, "sent_packets": 0, "drops": 0, "overlimits": 0})

    def describe(self) -> dict:
        return {**self.profile.describe(), "method": self.method, "rtt_measured_ms": self.rtt_ms,
                "window_bytes": OPENSSH_CHANNEL_WINDOW,
                # For the `window` verdict: only where the profile has a delay (an unshaped veth's
                # ~0.02 ms would make window/RTT meaningless).
                "rtt_s": None if self.profile.delay_ms <= 0 else
                (self.rtt_ms or self.profile.rtt_ms) / 1000,
                "tc_counters": dict(self.tc)}


def _tc_rate(bits: int) -> str:
    return f"{bits}bit"


def tbf_args(rate_bit_s: int) -> list[str]:
    """tbf with a burst of ~1 ms of the rate (at least 32 KiB: veth hands over GSO super-packets) and
    a queue of ~100 ms. Measured here: with a 20 ms queue, bursts from the delay relay overflowed it
    and one transfer in three stalled on a retransmission timeout (20 instead of 23 Mbit/s at 24);
    with 100 ms there were no drops and every transfer ran at 96% of the rate. The queue is in the
    direction of the data; the RTT probe runs on an idle link, so it does not see it."""
    rate_bytes = rate_bit_s // 8
    burst = max(32 * 1024, rate_bytes // 1000)
    limit = max(2 * burst, rate_bytes // 10)
    return ["tbf", "rate", _tc_rate(rate_bit_s), "burst", str(burst), "limit", str(limit)]


def netem_args(profile: LinkProfile) -> list[str]:
    args = ["netem", "limit", "100000"]
    if profile.delay_ms:
        args += ["delay", f"{profile.delay_ms}ms"]
        if profile.jitter_ms:
            args += [f"{profile.jitter_ms}ms"]
    if profile.loss_pct:
        args += ["loss", f"{profile.loss_pct}%"]
    if profile.rate_bit_s:
        args += ["rate", _tc_rate(profile.rate_bit_s)]
    return args


class LinkPath:
    """The namespace pair, its shaping per profile, relays and probes. `create()` registers every
    undo action with the run's Cleanup; `switch()` applies a profile right before a trial."""

    def __init__(self, profiles: list[LinkProfile], index: int = 0) -> None:
        from sshbench.cleanup import process_start_time

        self.profiles = {p.name: p for p in profiles}
        owner = f"{os.getpid()}-{process_start_time(os.getpid()) or 0}-{index}"
        self.client_ns = f"{PREFIX}{owner}c"
        self.server_ns = f"{PREFIX}{owner}s"
        self.netem = False
        self.states: dict[str, LinkState] = {}
        self.current: str | None = None
        self._echo: socket.socket | None = None
        self._relays: dict[str, subprocess.Popen[bytes]] = {}
        # Counters of each veth end's root qdisc when the current link was applied: `tc qdisc replace`
        # with the same kind changes the qdisc in place and keeps counting, so totals are deltas.
        self._counters_at_switch: dict[str, dict[str, int]] = {}

    # set-up ---------------------------------------------------------------------------------------

    def create(self, cleanup) -> None:
        cleanup.push(self.destroy)  # first pushed, last undone: after sshd and the relays are gone
        for ns in (self.client_ns, self.server_ns):
            _run(["ip", "netns", "add", ns])
        _run(["ip", "-n", self.client_ns, "link", "add", CLIENT_IF, "type", "veth",
              "peer", "name", SERVER_IF, "netns", self.server_ns])
        for ns, dev, addr in ((self.client_ns, CLIENT_IF, CLIENT_ADDR), (self.server_ns, SERVER_IF, SERVER_ADDR)):
            _run(["ip", "-n", ns, "addr", "add", f"{addr}/{PREFIX_LEN}", "dev", dev])
            _run(["ip", "-n", ns, "link", "set", dev, "up"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        self.netem = self._detect_netem()
        for profile in self.profiles.values():
            self.states[profile.name] = LinkState(profile, self._method(profile))
            if profile.loss_pct and not self.netem:
                raise UsageError(f"link {profile.name}: loss needs tc netem (sch_netem), which this kernel lacks; "
                                 "drop loss=... (rate and delay work without it)")
        self._start_echo_server()
        cleanup.push(self.collect_counters)  # runs before the namespaces go: the last link's counters

    def _detect_netem(self) -> bool:
        probe = _run(["tc", "-n", self.client_ns, "qdisc", "replace", "dev", CLIENT_IF, "root", "netem",
                      "delay", "1ms"], check=False)
        if probe.returncode != 0:
            return False
        _run(["tc", "-n", self.client_ns, "qdisc", "del", "dev", CLIENT_IF, "root"], check=False)
        return True

    def _method(self, profile: LinkProfile) -> str:
        needs_delay = profile.delay_ms > 0 or profile.jitter_ms > 0
        if not profile.emulated or (profile.rate_bit_s is None and not needs_delay and not profile.loss_pct):
            return METHOD_LOOPBACK
        if self.netem and (needs_delay or profile.loss_pct):
            return METHOD_NETEM
        if needs_delay:
            return METHOD_RELAY if profile.rate_bit_s else METHOD_RELAY_ONLY
        return METHOD_TBF

    def start_relays(self, sshd_port: int, cleanup) -> None:
        """One relay process per profile that needs one (no netem, delay > 0)."""
        for index, state in enumerate(self.states.values()):
            if state.method not in (METHOD_RELAY, METHOD_RELAY_ONLY):
                continue
            base = RELAY_BASE_PORT + 10 * index
            routes = [f"{base}={SERVER_ADDR}:{sshd_port}", f"{base + 1}={SERVER_ADDR}:{RAW_TCP_PORT}",
                      f"{base + 2}={SERVER_ADDR}:{ECHO_PORT}"]
            argv = [_find_tool("ip") or "ip", "netns", "exec", self.client_ns, sys.executable, "-m", "sshbench.netns",
                    "relay", "--delay-ms", str(state.profile.delay_ms), "--jitter-ms", str(state.profile.jitter_ms),
                    "--buffer", str(self._relay_buffer(state.profile)), *routes]
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
            cleanup.track_process(proc.pid)
            self._relays[state.profile.name] = proc
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], READY_TIMEOUT_S)
            line = proc.stdout.readline().decode(errors="replace").strip() if ready else ""
            if line != "ready":
                err = proc.stderr.read1(4000).decode(errors="replace").strip() if proc.poll() is not None else ""
                raise RunError(f"the delay relay for link {state.profile.name} did not start: {err or line or 'timeout'}")
            state.relay_port = base

    @staticmethod
    def _relay_buffer(profile: LinkProfile) -> int:
        """Per direction: enough to keep the shaped link busy through the delay (4 x its BDP), at least 8 MiB."""
        bdp = profile.bdp_bytes() or 0
        return max(8 * 1024 * 1024, 4 * bdp)

    def _start_echo_server(self) -> None:
        """A one-byte echo server in the server namespace for the RTT probe (a thread of ours)."""
        with inside(self.server_ns):
            self._echo = socket.create_server((SERVER_ADDR, ECHO_PORT), backlog=8)
        self._echo.settimeout(None)
        threading.Thread(target=self._serve_echo, args=(self._echo,), name="sshbench-echo", daemon=True).start()

    @staticmethod
    def _serve_echo(listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed by destroy()
            with conn:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.settimeout(30)
                with contextlib.suppress(OSError):
                    while data := conn.recv(64):
                        conn.sendall(data)

    # per trial ------------------------------------------------------------------------------------

    def _dev_commands(self) -> list[tuple[str, str]]:
        return [(self.client_ns, CLIENT_IF), (self.server_ns, SERVER_IF)]

    def switch(self, name: str) -> None:
        """Apply profile `name` on both veth ends (a no-op when it is already in place)."""
        if name == self.current:
            return
        self.collect_counters()
        state = self.states[name]
        for ns, dev in self._dev_commands():
            if state.method == METHOD_NETEM:
                _run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", *netem_args(state.profile)])
            elif state.profile.rate_bit_s and state.method in (METHOD_TBF, METHOD_RELAY):
                _run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", *tbf_args(state.profile.rate_bit_s)])
            else:
                _run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "root"], check=False)  # back to the default
        self._verify(state)
        self._counters_at_switch = {dev: self._counters(ns, dev) for ns, dev in self._dev_commands()}
        self.current = name

    def _qdisc(self, ns: str, dev: str) -> dict | None:
        done = _run(["tc", "-j", "-s", "-n", ns, "qdisc", "show", "dev", dev, "root"], check=False)
        try:
            found = json.loads(done.stdout or "[]")
        except ValueError:
            return None
        return next((q for q in found if q.get("root")), found[0] if found else None)

    def _verify(self, state: LinkState) -> None:
        """Read the qdiscs back: a trial must never run over a link other than the one it is labelled with."""
        want = {METHOD_NETEM: "netem", METHOD_TBF: "tbf", METHOD_RELAY: "tbf"}.get(state.method)
        for ns, dev in self._dev_commands():
            qdisc = self._qdisc(ns, dev)
            kind = qdisc.get("kind") if qdisc else None
            if want is not None and kind != want:
                raise RunError(f"link {state.profile.name}: {dev} has qdisc {kind!r}, not {want} (tc did not apply it)")
            if want is None and kind in ("tbf", "netem", "htb"):
                raise RunError(f"link {state.profile.name}: {dev} is still shaped ({kind}) after removing the shaper")

    _COUNTERS = {"sent_bytes": "bytes", "sent_packets": "packets", "drops": "drops", "overlimits": "overlimits"}

    def _counters(self, ns: str, dev: str) -> dict[str, int]:
        qdisc = self._qdisc(ns, dev) or {}
        return {ours: int(qdisc.get(theirs, 0) or 0) for ours, theirs in self._COUNTERS.items()}

    def collect_counters(self) -> None:
        """Add what the qdiscs counted since the current link was applied to that link's totals."""
        if self.current is None:
            return
        state = self.states[self.current]
        if state.method in (METHOD_LOOPBACK, METHOD_RELAY_ONLY):
            return
        for ns, dev in self._dev_commands():
            now = self._counters(ns, dev)
            before = self._counters_at_switch.get(dev, {})
            for key, value in now.items():
                delta = value - before.get(key, 0)
                state.tc[key] += delta if delta >= 0 else value  # negative: a new qdisc, counting from 0
        self._counters_at_switch = {dev: self._counters(ns, dev) for ns, dev in self._dev_commands()}

    def endpoint(self, name: str, server_port: int, service: str = "ssh") -> Endpoint:
        """Where the client connects for `service` (ssh, raw, echo) over link `name`."""
        state = self.states[name]
        if state.relay_port is not None:
            return Endpoint("127.0.0.1", state.relay_port + {"ssh": 0, "raw": 1, "echo": 2}[service])
        return Endpoint(SERVER_ADDR, {"ssh": server_port, "raw": RAW_TCP_PORT, "echo": ECHO_PORT}[service])

    def measure_rtt(self, name: str, server_port: int, timeout_s: float = 10.0) -> float | None:
        """Median of RTT_PROBES one-byte TCP round trips over link `name` (ms), through the same path
        as ssh (relay included). Applies the link first."""
        self.switch(name)
        end = self.endpoint(name, server_port, "echo")
        samples = []
        try:
            with inside(self.client_ns):
                sock = socket.create_connection((end.host, end.port), timeout=timeout_s)
            with sock:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for _ in range(RTT_PROBES):
                    start = time.perf_counter()
                    sock.sendall(b"x")
                    if sock.recv(1) != b"x":
                        break
                    samples.append((time.perf_counter() - start) * 1000)
        except OSError:
            return None
        state = self.states[name]
        state.rtt_probe_ms = [round(s, 3) for s in samples]
        state.rtt_ms = round(statistics.median(samples[1:] or samples), 3) if samples else None
        return state.rtt_ms

    # tear-down ------------------------------------------------------------------------------------

    def destroy(self) -> None:
        if self._echo is not None:
            with contextlib.suppress(OSError):
                self._echo.shutdown(socket.SHUT_RDWR)
            self._echo.close()
        for ns in (self.client_ns, self.server_ns):
            if ns in list_namespaces():
                _kill_processes_in(ns)
                _run(["ip", "netns", "delete", ns], check=False)

    def describe(self) -> dict:
        return {"client_namespace": self.client_ns, "server_namespace": self.server_ns,
                "client_address": CLIENT_ADDR, "server_address": SERVER_ADDR, "netem_available": self.netem}


# --- the userspace delay relay ----------------------------------------------------------------------

class _DelayedPipe:
    """One direction of a relayed connection: a reader thread stamps each chunk with its due time
    (now + delay +- jitter, never earlier than the chunk before, so the byte stream keeps its
    order), a writer thread sends it when due. Buffered bytes are capped so that a fast sender is
    held back by TCP flow control instead of filling memory."""

    def __init__(self, src: socket.socket, dst: socket.socket, delay_s: float, jitter_s: float, cap: int,
                 done: threading.Event) -> None:
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


def _relay_connection(client: socket.socket, upstream: tuple[str, int], delay_s: float, jitter_s: float,
                      cap: int) -> None:
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
    """`python -m sshbench.netns relay --delay-ms D --jitter-ms J --buffer N PORT=HOST:PORT ...`:
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

        def accept_loop(listener: socket.socket = listener, upstream: tuple[str, int] = (host, int(target_port))
                        ) -> None:
            while True:
                conn, _ = listener.accept()
                threading.Thread(target=_relay_connection, args=(conn, upstream, delay_s, jitter_s, args.buffer),
                                 daemon=True).start()

        threading.Thread(target=accept_loop, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.buffer.read()  # blocks until the owner closes our stdin (or dies)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "relay":
        sys.exit(relay_main(sys.argv[2:]))
    sys.exit("usage: python -m sshbench.netns relay ...")
