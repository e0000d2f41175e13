"""The bottleneck verdict: per combination, one word for what bound it, with its evidence.

A pure function of measured figures (tests/test_bottleneck.py feeds it constructed ones).
Checks in order, the first that holds wins:

1. `network`      throughput >= NETWORK_FRACTION (90%) of the raw TCP control on the same path:
                  ssh moves data as fast as the path itself, nothing in SSH to change.
2. `disk`         a disk source or sink is used and throughput >= DISK_FRACTION (90%) of its rate.
3. `window`       an emulated link with a known RTT: throughput >= WINDOW_FRACTION (80%) of
                  channel window / RTT (SSH's flow control caps one channel at that).
4. `crypto`       throughput >= CRYPTO_FRACTION (80%) of the single-core crypto ceiling of the
                  cipher (+ MAC), or the crypto alone needs >= 80% of the CPU time per byte that
                  the ssh client or the sshd session spent (throughput / ceiling / cores used; this
                  form still holds when a busy machine gives neither process a whole core):
                  the algorithm itself is the limit; pick a faster one.
5. `shared-cpu`   client and server run on one machine (private sshd, Dropbear, AsyncSSH, namespaces)
                  and together (ssh + sshd session + the server-side reader) kept >= SHARED_BUSY_FRACTION
                  (85%) of its cores busy during the data phase: neither process alone is full, the
                  machine is (measured on a 2-core VM: ssh 0.85 + sshd 0.76 of a core at 945 MiB/s).
                  On two machines each side would have its own cores; judged per side below.
6. `client-cpu` / `server-cpu`
                  that process used >= CPU_BUSY_CORES (0.9) of a core during the data phase
                  (CPU seconds / data-phase seconds; ssh is single-threaded per connection).
                  Where both are, the busier one.
7. `ssh-overhead` none of the above: the time goes to SSH itself (buffering, window, copies,
                  scheduling), not to a resource that is full.

Two machines (a remote host): each side is judged on its own figures, in cores of its own machine.
Steps 1-3 are the same (the raw TCP control runs between the two machines, in the same direction as
the combination; the RTT is measured on the path ssh uses). Step 4 becomes `client-crypto` /
`server-crypto`: the same two tests against that side's own ceiling (`openssl speed` on the client,
and on the remote over ssh); where both hold, the side whose crypto takes the larger share. Step 5
does not apply (no shared cores). Step 6 judges each side against its own core: a process that
used >= 0.9 of a core. Under `--server-cpu FRACTION` (a CPU quota on the private sshd) the server's
threshold is 0.8 x FRACTION of a core (QUOTA_BUSY_FRACTION; at most 0.9), met by the sshd session and the server-side reader together (the
quota limits them as a group): the quota is its whole machine. A server at its quota is the limit,
so step 4's CPU-share form then weighs the server's share only (the client's idle time says nothing).

Crypto comes before CPU because a saturated core that runs at the crypto ceiling is explained
by the cipher; a saturated core well below it is explained by the rest of ssh's work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sshbench.openssh.builds import is_hpn
from sshbench.results import Combination

NETWORK_FRACTION = 0.90
DISK_FRACTION = 0.90
WINDOW_FRACTION = 0.80
CRYPTO_FRACTION = 0.80
MAX_PLAUSIBLE_SHARE = 1.5  # crypto_cpu_share above this: the CPU figure is too short to read (see there)
CPU_BUSY_CORES = 0.90
# --server-cpu F: the session and its reader at >= 0.8 x F have used the quota. Lower than a free core's
# 0.9: the group also holds processes no trial measures (the waiting login shell, sshd's listener), the
# reader's CPU comes in 10 ms ticks (0 in most short windows), and on a busy machine a group that waits
# longer than one 10 ms period for a CPU loses that period's quota. Measured at 0.1 core, load 3-5:
# the session alone 0.084-0.099 of a core over the reader's clock.
QUOTA_BUSY_FRACTION = 0.80
SHARED_BUSY_FRACTION = 0.85

VERDICTS = (
    "network",
    "disk",
    "window",
    "crypto",
    "client-crypto",
    "server-crypto",
    "shared-cpu",
    "client-cpu",
    "server-cpu",
    "both-cpu",
    "ssh-overhead",
)

EXPLANATIONS = {
    "network": "ssh moved data about as fast as a plain TCP connection on the same path, so the path is the limit.",
    "disk": "the payload's disk source or sink is about this fast on its own, so the disk is the limit.",
    "window": "throughput is near the SSH channel window divided by the round-trip time; a larger window would help.",
    "crypto": "encrypting and MACing take most of the CPU time per byte (near one core's crypto ceiling); a "
    "faster cipher/MAC would help.",
    "client-crypto": "the client's cipher/MAC work is near its one-core crypto ceiling; a faster cipher/MAC (or "
    "client CPU) would help.",
    "server-crypto": "the server's cipher/MAC work is near its own one-core crypto ceiling (openssl speed on the "
    "server); a faster cipher/MAC (or server CPU) would help.",
    "shared-cpu": "ssh and sshd share this machine's cores and together kept them busy in the data phase; "
    "between two machines each side has its own, so expect more there.",
    "client-cpu": "the ssh client used a full core during the data phase; a faster client CPU or cheaper "
    "algorithms would help.",
    "server-cpu": "the sshd session process used a full core during the data phase; a faster server CPU or "
    "cheaper algorithms would help.",
    "both-cpu": "the ssh client and the sshd session each kept a core of its own busy during the data phase; "
    "faster CPUs on both sides or cheaper algorithms would help (`--why` tells which costs more when slowed).",
    "ssh-overhead": "no resource measured here was full; the time went to ssh itself (buffering, flow control, "
    "copies, scheduling).",
}

# "limited by: <what>" for each bottleneck verdict (the order and thresholds are above).
LIMITS = {
    "network": "the network path (ssh is about as fast as plain TCP here)",
    "disk": "the disk",
    "window": "the SSH channel window over this round-trip time",
    "crypto": "the cipher itself",
    "shared-cpu": "CPU - ssh and sshd share this machine's cores",
    "client-cpu": "CPU - the ssh client's core",
    "server-cpu": "CPU - the sshd session's core",
    "both-cpu": "CPU - the ssh client's core and the sshd session's, each full",
    "ssh-overhead": "ssh itself (no resource measured here was full)",
}


@dataclass(frozen=True)
class Measurements:
    """What one combination's verdict is drawn from (None: not measured)."""

    mib_s: float | None
    client_cpu_cores: float | None = None  # client CPU seconds / data-phase seconds
    server_cpu_cores: float | None = None  # sshd session CPU seconds / data-phase seconds
    raw_tcp_mib_s: float | None = None
    crypto_ceiling_mib_s: float | None = None
    disk_mib_s: float | None = None  # None when no disk source or sink is in the path
    # With compression, the SSH bytes on the wire per second (the payload's rate times the wire ratio): the
    # network check compares these with raw TCP. None: the payload's rate is what crosses the wire.
    wire_mib_s: float | None = None
    window_bytes: int | None = None
    rtt_s: float | None = None  # None on loopback (no emulated link)
    # Client and server on one machine: its core count, and the server-side reader's cores (dd); None: two machines
    machine_cores: int | None = None
    sink_cpu_cores: float | None = None
    # Two machines (a remote host): the server's own one-core ceiling (crypto_ceiling_mib_s is then the
    # client's), and each side's core count for the evidence. None: one machine, or not measured.
    server_crypto_ceiling_mib_s: float | None = None
    two_machines: bool = False
    client_machine_cores: int | None = None
    server_machine_cores: int | None = None
    server_cpu_limit_cores: float | None = None  # --server-cpu: the quota, in cores (None: no quota)
    # --pin (sshbench.host.placement): the CPUs the server side (sshd session and reader) was pinned to, the
    # client having its own; each side is then judged on its own, as on two machines. None: not pinned.
    server_pinned_cpus: int | None = None


@dataclass(frozen=True)
class Verdict:
    bound_by: str
    evidence: str

    @property
    def explanation(self) -> str:
        return EXPLANATIONS[self.bound_by]


def _pct(value: float) -> str:
    return f"{value:.0%}"


def crypto_cpu_share(m: Measurements) -> tuple[float, str] | None:
    """(share, side): of the CPU time a side spent per byte, the share the crypto alone needs at
    its one-core ceiling, for the side where it is larger. Unlike throughput / ceiling, it holds on
    a busy machine, where neither process gets a whole core."""
    if not (m.mib_s and m.crypto_ceiling_mib_s):
        return None
    sides: list[tuple[float | None, str]] = [(m.client_cpu_cores, "client"), (m.server_cpu_cores, "server")]
    if server_at_quota(m):
        # The quota is the limit: what the client does with its idle time (3des-cbc at 0.1 core: its
        # 0.06 core was all cipher work) explains nothing; the server's own share still can.
        sides = sides[1:]
    shares = [
        ((m.mib_s / m.crypto_ceiling_mib_s) / cores, side) for cores, side in sides if cores is not None and cores > 0
    ]
    # The crypto cannot need more CPU than the process spent: a share far above 1 says the CPU figure missed
    # most of the time (a 2 MiB trial's ~15 ms of CPU read as 0.01 core: "the cipher alone takes 1786%"), not
    # that the cipher is the limit. Such a share is no evidence (the 1.5 leaves room for the ceiling's own noise).
    shares = [(share, side) for share, side in shares if share <= MAX_PLAUSIBLE_SHARE]
    return max(shares) if shares else None


def shared_cores_busy(m: Measurements) -> float | None:
    """Cores kept busy by ssh, the sshd session and the reader together, when they share one machine."""
    if not m.machine_cores or m.client_cpu_cores is None or m.server_cpu_cores is None:
        return None
    return m.client_cpu_cores + m.server_cpu_cores + (m.sink_cpu_cores or 0.0)


def verdict(m: Measurements) -> Verdict | None:
    """One word and its evidence; None where there is no throughput to judge."""
    if m.mib_s is None or m.mib_s <= 0:
        return None
    rate = m.mib_s
    # Compressed, the payload's rate was read as 316% of raw TCP ("network") whether or not the wire was full:
    # zlib's CPU could hold the wire at half the link and still pass. The wire's own rate is what the link carries.
    on_wire = m.wire_mib_s if m.wire_mib_s is not None else rate
    if m.raw_tcp_mib_s and on_wire >= NETWORK_FRACTION * m.raw_tcp_mib_s:
        what = (
            f"{rate:.0f} MiB/s" if m.wire_mib_s is None else f"{on_wire:.1f} MiB/s on the wire ({rate:.0f} of payload)"
        )
        return Verdict(
            "network",
            f"{what} is {_pct(on_wire / m.raw_tcp_mib_s)} of raw TCP "
            f"({m.raw_tcp_mib_s:.0f} MiB/s; threshold {_pct(NETWORK_FRACTION)})",
        )
    if m.disk_mib_s and rate >= DISK_FRACTION * m.disk_mib_s:
        return Verdict(
            "disk",
            f"{rate:.0f} MiB/s is {_pct(rate / m.disk_mib_s)} of the disk's "
            f"{m.disk_mib_s:.0f} MiB/s (threshold {_pct(DISK_FRACTION)})",
        )
    if m.window_bytes and m.rtt_s and m.rtt_s > 0:
        window_mib_s = m.window_bytes / (1024 * 1024) / m.rtt_s
        if rate >= WINDOW_FRACTION * window_mib_s:
            return Verdict(
                "window",
                f"{rate:.0f} MiB/s is {_pct(rate / window_mib_s)} of window/RTT "
                f"({window_mib_s:.0f} MiB/s; threshold {_pct(WINDOW_FRACTION)})",
            )
    if m.two_machines:
        return _crypto_per_side(m) or _cpu_per_side(m) or _overhead(m)
    if m.crypto_ceiling_mib_s and rate >= CRYPTO_FRACTION * m.crypto_ceiling_mib_s:
        return Verdict(
            "crypto",
            f"{rate:.0f} MiB/s is {_pct(rate / m.crypto_ceiling_mib_s)} of the one-core "
            f"crypto ceiling ({m.crypto_ceiling_mib_s:.0f} MiB/s; threshold "
            f"{_pct(CRYPTO_FRACTION)})",
        )
    share = crypto_cpu_share(m)
    if share is not None and share[0] >= CRYPTO_FRACTION:
        who = "ssh client" if share[1] == "client" else "sshd session"
        return Verdict(
            "crypto",
            f"the cipher/MAC alone takes {_pct(share[0])} of the {who}'s CPU per byte "
            f"(ceiling {m.crypto_ceiling_mib_s:.0f} MiB/s per core; threshold {_pct(CRYPTO_FRACTION)})",
        )
    shared = shared_cores_busy(m) if m.server_pinned_cpus is None else None
    if shared is not None and shared >= SHARED_BUSY_FRACTION * (m.machine_cores or 1):
        parts = [f"ssh {m.client_cpu_cores:.2f}", f"sshd {m.server_cpu_cores:.2f}"]
        if m.sink_cpu_cores:
            parts.append(f"reader {m.sink_cpu_cores:.2f}")
        return Verdict(
            "shared-cpu",
            f"{' + '.join(parts)} = {shared:.2f} of this machine's {m.machine_cores} cores busy "
            f"(threshold {_pct(SHARED_BUSY_FRACTION)})",
        )
    return _cpu_per_side(m) or _overhead(m)


def _busy_threshold(m: Measurements, side: str) -> float:
    """A full core of that side: 0.9, or 0.8 x the quota under --server-cpu below one core."""
    # (a quota of 0, which only an imported document can hold, is no quota: a threshold of 0 divides by zero)
    if side == "server" and m.server_cpu_limit_cores is not None and 0 < m.server_cpu_limit_cores < 1.0:
        return QUOTA_BUSY_FRACTION * m.server_cpu_limit_cores
    return CPU_BUSY_CORES


def _of_machine(m: Measurements, side: str) -> str:
    if side == "server" and m.server_cpu_limit_cores is not None:
        return f" (with its reader, under a CPU quota of {m.server_cpu_limit_cores:g} core)"
    if side == "server" and m.server_pinned_cpus:
        return f" (with its reader, on its own {m.server_pinned_cpus} CPU)"
    cores = m.client_machine_cores if side == "client" else m.server_machine_cores
    return f" (the {side}'s machine has {cores} cores)" if m.two_machines and cores else ""


def _crypto_per_side(m: Measurements) -> Verdict | None:
    """Two machines: each side's crypto against its own one-core ceiling."""
    assert m.mib_s is not None
    found = []
    for side, ceiling, cores in (
        ("client", m.crypto_ceiling_mib_s, m.client_cpu_cores),
        ("server", m.server_crypto_ceiling_mib_s, m.server_cpu_cores),
    ):
        if not ceiling:
            continue
        fraction = m.mib_s / ceiling
        share = fraction / cores if cores else 0.0
        if fraction >= CRYPTO_FRACTION or share >= CRYPTO_FRACTION:
            found.append((max(fraction, share), fraction, share, side, ceiling))
    if not found:
        return None
    _, fraction, share, side, ceiling = max(found)
    if fraction >= CRYPTO_FRACTION:
        evidence = (
            f"{m.mib_s:.0f} MiB/s is {_pct(fraction)} of the {side}'s one-core crypto ceiling "
            f"({ceiling:.0f} MiB/s; threshold {_pct(CRYPTO_FRACTION)})"
        )
    else:
        who = "ssh client" if side == "client" else "sshd session"
        evidence = (
            f"the cipher/MAC alone takes {_pct(share)} of the {who}'s CPU per byte "
            f"({side} ceiling {ceiling:.0f} MiB/s per core; threshold {_pct(CRYPTO_FRACTION)})"
        )
    return Verdict(f"{side}-crypto", evidence)


def _server_cores(m: Measurements) -> float | None:
    """The server side's cores: under a quota the whole group it limits (the sshd session and the
    reader share it), else the sshd session alone."""
    if (m.server_cpu_limit_cores is not None or m.server_pinned_cpus) and m.server_cpu_cores is not None:
        return m.server_cpu_cores + (m.sink_cpu_cores or 0.0)
    return m.server_cpu_cores


def server_at_quota(m: Measurements) -> bool:
    """--server-cpu: the server side (sshd session and reader) used its whole quota (0.8 x it)."""
    cores = _server_cores(m)
    return m.server_cpu_limit_cores is not None and cores is not None and cores >= _busy_threshold(m, "server")


def _side_cpus(m: Measurements, side: str) -> float | None:
    """The CPUs one side could use at most: its quota or pinned CPUs, its machine's cores, the shared machine's
    (pinned: what the server side leaves the client); None: not known."""
    if side == "server":
        return m.server_cpu_limit_cores or m.server_pinned_cpus or m.server_machine_cores or m.machine_cores
    if m.server_pinned_cpus and m.machine_cores:
        return m.machine_cores - m.server_pinned_cpus
    return m.client_machine_cores or m.machine_cores


def _cpu_per_side(m: Measurements) -> Verdict | None:
    # A side that used more CPUs than it had (e.g. an 8 MiB run's sshd at 2.80 of its 1 pinned CPU: a data phase
    # of a few 10 ms ticks) read its CPU too short to tell: no evidence, as MAX_PLAUSIBLE_SHARE for crypto.
    busy = [
        (cores / _busy_threshold(m, side), cores, side)
        for cores, side in ((m.client_cpu_cores, "client"), (_server_cores(m), "server"))
        if cores is not None
        and cores >= _busy_threshold(m, side)
        and cores <= (_side_cpus(m, side) or cores) * MAX_PLAUSIBLE_SHARE
    ]
    if not busy:
        return None
    if len(busy) == 2:  # each side full on its own cores (two machines, or pinned): naming one would be a guess
        client, server = (cores for _, cores, side in sorted(busy, key=lambda b: b[2]))
        return Verdict(
            "both-cpu",
            f"the ssh client used {client:.2f} of a core{_of_machine(m, 'client')} and the sshd session "
            f"{server:.2f}{_of_machine(m, 'server')} during the data phase (threshold {_busy_threshold(m, 'client'):.2f})",
        )
    _, cores, side = max(busy)
    who = "ssh client" if side == "client" else "sshd session"
    return Verdict(
        f"{side}-cpu",
        f"the {who} used {cores:.2f} of a core during the data phase{_of_machine(m, side)} "
        f"(threshold {_busy_threshold(m, side):.2f})",
    )


def _overhead(m: Measurements) -> Verdict:
    assert m.mib_s is not None
    rate = m.mib_s
    parts = []
    if m.raw_tcp_mib_s:
        parts.append(f"{_pct(rate / m.raw_tcp_mib_s)} of raw TCP")
    ceilings = [c for c in (m.crypto_ceiling_mib_s, m.server_crypto_ceiling_mib_s) if c]
    if ceilings:
        parts.append(f"{_pct(rate / min(ceilings))} of the crypto ceiling")
    for side_cores, side in ((m.client_cpu_cores, "client"), (m.server_cpu_cores, "server")):
        if side_cores is not None:
            parts.append(f"{side} CPU {side_cores:.2f} core")
    return Verdict("ssh-overhead", ", ".join(parts) if parts else "no baseline to compare with")


def receiver_version(combo: Combination, result: Any) -> str:
    """The version of the end that receives this combination's data (its channel window is what flow control
    waits on): the sshd build uploading, the ssh build downloading, else the run's server or client."""
    env = getattr(result, "environment", None) or {}
    if combo.direction == "down":
        return combo.ssh_build or env.get("client_ssh_version") or ""
    return combo.sshd_build or env.get("server_ssh_version") or ""


def channel_window(combo: Combination, link: dict, result: Any) -> int | None:
    """The SSH channel window that caps one channel at window/RTT: OpenSSH's fixed 2 MiB, except where the
    receiving end is HPN-SSH, whose window follows its socket's receive buffer (the link's tcp_rmem_initial, what a
    real path of this RTT grows it to; None where unknown: no window verdict). Measured on lfn1g (167 ms): HPN-SSH
    at the receiving end 89-114 MiB/s where OpenSSH's 2 MiB window holds one channel at 11.7."""
    window = link.get("window_bytes")
    if window and is_hpn(receiver_version(combo, result)):
        return link.get("tcp_rmem_initial")
    return window
