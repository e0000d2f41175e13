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
5. `client-cpu` / `server-cpu`
                  that process used >= CPU_BUSY_CORES (0.9) of a core during the data phase
                  (CPU seconds / data-phase seconds; ssh is single-threaded per connection).
                  Where both are, the busier one.
6. `ssh-overhead` none of the above: the time goes to SSH itself (buffering, window, copies,
                  scheduling), not to a resource that is full.

Crypto comes before CPU because a saturated core that runs at the crypto ceiling is explained
by the cipher; a saturated core well below it is explained by the rest of ssh's work.
"""

from __future__ import annotations

from dataclasses import dataclass

NETWORK_FRACTION = 0.90
DISK_FRACTION = 0.90
WINDOW_FRACTION = 0.80
CRYPTO_FRACTION = 0.80
CPU_BUSY_CORES = 0.90

VERDICTS = ("network", "disk", "window", "crypto", "client-cpu", "server-cpu", "ssh-overhead")

EXPLANATIONS = {
    "network": "ssh moved data about as fast as a plain TCP connection on the same path, so the path is the limit.",
    "disk": "the payload's disk source or sink is about this fast on its own, so the disk is the limit.",
    "window": "throughput is near the SSH channel window divided by the round-trip time; a larger window would help.",
    "crypto": "encrypting and MACing take most of the CPU time per byte (near one core's crypto ceiling); a "
    "faster cipher/MAC would help.",
    "client-cpu": "the ssh client used a full core during the data phase; a faster client CPU or cheaper "
    "algorithms would help.",
    "server-cpu": "the sshd session process used a full core during the data phase; a faster server CPU or "
    "cheaper algorithms would help.",
    "ssh-overhead": "no resource measured here was full; the time went to ssh itself (buffering, flow control, "
    "copies, scheduling).",
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
    window_bytes: int | None = None
    rtt_s: float | None = None  # None on loopback (no emulated link)


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
    shares = [
        ((m.mib_s / m.crypto_ceiling_mib_s) / cores, side)
        for cores, side in ((m.client_cpu_cores, "client"), (m.server_cpu_cores, "server"))
        if cores is not None and cores > 0
    ]
    return max(shares) if shares else None


def verdict(m: Measurements) -> Verdict | None:
    """One word and its evidence; None where there is no throughput to judge."""
    if m.mib_s is None or m.mib_s <= 0:
        return None
    rate = m.mib_s
    if m.raw_tcp_mib_s and rate >= NETWORK_FRACTION * m.raw_tcp_mib_s:
        return Verdict(
            "network",
            f"{rate:.0f} MiB/s is {_pct(rate / m.raw_tcp_mib_s)} of raw TCP "
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
            f"the cipher/MAC alone needs {_pct(share[0])} of the {who}'s CPU time per byte "
            f"(ceiling {m.crypto_ceiling_mib_s:.0f} MiB/s per core; threshold "
            f"{_pct(CRYPTO_FRACTION)})",
        )
    busy = [
        (cores, side)
        for cores, side in ((m.client_cpu_cores, "client"), (m.server_cpu_cores, "server"))
        if cores is not None and cores >= CPU_BUSY_CORES
    ]
    if busy:
        cores, side = max(busy)
        who = "ssh client" if side == "client" else "sshd session"
        return Verdict(
            f"{side}-cpu",
            f"the {who} used {cores:.2f} of a core during the data phase (threshold {CPU_BUSY_CORES:.2f})",
        )
    parts = []
    if m.raw_tcp_mib_s:
        parts.append(f"{_pct(rate / m.raw_tcp_mib_s)} of raw TCP")
    if m.crypto_ceiling_mib_s:
        parts.append(f"{_pct(rate / m.crypto_ceiling_mib_s)} of the crypto ceiling")
    for side_cores, side in ((m.client_cpu_cores, "client"), (m.server_cpu_cores, "server")):
        if side_cores is not None:
            parts.append(f"{side} CPU {side_cores:.2f} core")
    return Verdict("ssh-overhead", ", ".join(parts) if parts else "no baseline to compare with")
