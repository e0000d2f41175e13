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
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace

from sshbench.errors import RunError, UsageError
from sshbench.host.cleanup import held_stop, process_start_time
from sshbench.links.namespaces import (
    PREFIX,
    _find_tool,
    _kill_processes_in,
    _run,
    inside,
    list_namespaces,
)
from sshbench.links.profiles import LinkProfile
from sshbench.links.shaping import (
    METHOD_LOOPBACK,
    METHOD_NETEM,
    METHOD_RELAY,
    METHOD_RELAY_ONLY,
    METHOD_TBF,
    LinkState,
    netem_args,
    receive_buffer,
    root_tcp_rmem,
    tbf_args,
)

CLIENT_IF, SERVER_IF = "sbc", "sbs"
CLIENT_ADDR, SERVER_ADDR = "10.254.0.1", "10.254.0.2"
PREFIX_LEN = 24
RAW_TCP_PORT = 5201  # the raw TCP sink in the server namespace (iperf3's port; nothing else is there)
ECHO_PORT = 7  # the RTT probe's echo server in the server namespace
RELAY_BASE_PORT = 20000  # relay listeners on the client namespace's 127.0.0.1: base + 10 * link index
RTT_PROBES = 11
READY_TIMEOUT_S = 10.0


# --- the namespace pair ---------------------------------------------------------------------------


@dataclass
class Endpoint:
    """Where a client in the client namespace connects for one service, on one link."""

    host: str
    port: int


class LinkPath:
    """The namespace pair, its shaping per profile, relays and probes. `create()` registers every
    undo action with the run's Cleanup; `switch()` applies a profile right before a trial."""

    def __init__(self, profiles: list[LinkProfile], index: int = 0) -> None:

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
        _run(
            [
                "ip",
                "-n",
                self.client_ns,
                "link",
                "add",
                CLIENT_IF,
                "type",
                "veth",
                "peer",
                "name",
                SERVER_IF,
                "netns",
                self.server_ns,
            ]
        )
        for ns, dev, addr in ((self.client_ns, CLIENT_IF, CLIENT_ADDR), (self.server_ns, SERVER_IF, SERVER_ADDR)):
            _run(["ip", "-n", ns, "addr", "add", f"{addr}/{PREFIX_LEN}", "dev", dev])
            _run(["ip", "-n", ns, "link", "set", dev, "up"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        self.netem = self._detect_netem()
        self._set_listener_buffers()
        for profile in self.profiles.values():
            self.states[profile.name] = LinkState(profile, self._method(profile))
            if profile.loss_pct and not self.netem:
                raise UsageError(
                    f"link {profile.name}: loss needs tc netem (sch_netem), which this kernel lacks; "
                    "drop loss=... (rate and delay work without it)"
                )
        self._start_echo_server()
        cleanup.push(self.collect_counters)  # runs before the namespaces go: the last link's counters

    def _set_listener_buffers(self) -> None:
        """Before sshd and the relays listen: an accepted socket keeps its listener's receive buffer, taken from
        tcp_rmem when the listener was made (measured: a listener made at 128 KiB hands out 128 KiB sockets after
        tcp_rmem says 16 MiB), so the buffer a profile wants must be in place before anything listens. The largest of
        the profiles' (receive_buffer): a larger buffer than a profile needs only lets its window grow sooner."""
        root = root_tcp_rmem()
        wanted = [b for p in self.profiles.values() if (b := receive_buffer(p, root))]
        if wanted:
            self._set_tcp_rmem(root, max(wanted))

    def _set_tcp_rmem(self, root: tuple[int, int, int], initial: int | None) -> None:
        low, default, high = root
        value = f"net.ipv4.tcp_rmem={low} {initial or default} {high}"
        for ns in (self.client_ns, self.server_ns):
            _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", value])

    def _detect_netem(self) -> bool:
        probe = _run(
            ["tc", "-n", self.client_ns, "qdisc", "replace", "dev", CLIENT_IF, "root", "netem", "delay", "1ms"],
            check=False,
        )
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
            routes = [
                f"{base}={SERVER_ADDR}:{sshd_port}",
                f"{base + 1}={SERVER_ADDR}:{RAW_TCP_PORT}",
                f"{base + 2}={SERVER_ADDR}:{ECHO_PORT}",
            ]
            argv = [
                _find_tool("ip") or "ip",
                "netns",
                "exec",
                self.client_ns,
                sys.executable,
                "-m",
                "sshbench.links.relay",
                "--delay-ms",
                str(state.profile.delay_ms),
                "--jitter-ms",
                str(state.profile.jitter_ms),
                "--buffer",
                str(self._relay_buffer(state.profile)),
                *routes,
            ]
            with held_stop():  # started and recorded for its cleanup as one step
                proc = subprocess.Popen(
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
                )
                cleanup.track_process(proc.pid)
            self._relays[state.profile.name] = proc
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], READY_TIMEOUT_S)
            line = proc.stdout.readline().decode(errors="replace").strip() if ready else ""
            if line != "ready":
                stderr = proc.stderr
                err = stderr.read(4000).decode(errors="replace").strip() if stderr and proc.poll() is not None else ""
                raise RunError(
                    f"the delay relay for link {state.profile.name} did not start: {err or line or 'timeout'}"
                )
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
        self._apply_receive_buffer(state)
        self._verify(state)
        self._counters_at_switch = {dev: self._counters(ns, dev) for ns, dev in self._dev_commands()}
        self.current = name

    def _apply_receive_buffer(self, state: LinkState) -> None:
        """Every new socket of both namespaces starts with the receive buffer a real path of this profile's
        round trip would grow it to (shaping.receive_buffer): its connections are opened after this, per trial."""
        root = root_tcp_rmem()
        initial = receive_buffer(state.profile, root)
        self._set_tcp_rmem(root, initial)  # a profile without one: the default back
        state.tcp_rmem_initial, state.tcp_rmem_max = initial, root[2]

    def throttle_rate(self, rate_bit_s: int) -> str:
        """Shape the current link to `rate_bit_s` on both veth ends for one trial of the `--why`
        experiments (sshbench.why), its delay kept; the next switch() puts the profile back (its
        counters do not count the throttled trial). Returns what was applied, for the record."""
        if self.current is None:
            raise RunError("no link applied to throttle")
        self.collect_counters()
        state = self.states[self.current]
        if state.method == METHOD_NETEM:
            args, want = netem_args(replace(state.profile, rate_bit_s=rate_bit_s)), "netem"
        else:  # tbf, or an unshaped veth (loopback, relay-only delay): a tbf under the relay's delay
            args, want = tbf_args(rate_bit_s), "tbf"
        self.current = None  # whatever happens next, the next switch() re-applies the profile
        for ns, dev in self._dev_commands():
            _run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", *args])
            qdisc = self._qdisc(ns, dev)
            if not qdisc or qdisc.get("kind") != want:
                raise RunError(f"link {state.profile.name}: the {want} throttle did not apply on {dev}")
        return f"tc {' '.join(args[:3])} on both veth ends"

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
        return {
            "client_namespace": self.client_ns,
            "server_namespace": self.server_ns,
            "client_address": CLIENT_ADDR,
            "server_address": SERVER_ADDR,
            "netem_available": self.netem,
        }
