"""tc arguments for a link profile (tbf for rate, netem for delay, jitter and loss) and what was applied."""

from __future__ import annotations

from dataclasses import dataclass, field

from sshbench.links.profiles import LinkProfile

OPENSSH_CHANNEL_WINDOW = 2 * 1024 * 1024  # CHAN_SES_WINDOW_DEFAULT: 64 x 32 KiB packets

METHOD_LOOPBACK = "unshaped veth (no rate, no delay)"
METHOD_TBF = "tc tbf (rate)"
METHOD_NETEM = "tc netem (rate, delay, jitter, loss)"
METHOD_RELAY = "tc tbf (rate) + userspace delay relay (delay, jitter)"
METHOD_RELAY_ONLY = "userspace delay relay (delay, jitter), unshaped veth"
# The Links table's "how" column names the method in a word or two, with a legend of the parts shown under it:
# the methods in full made that column six lines tall per row in a 100-column terminal.
METHOD_SHORT = {
    METHOD_LOOPBACK: "veth",
    METHOD_TBF: "tbf",
    METHOD_NETEM: "netem",
    METHOD_RELAY: "tbf + relay",
    METHOD_RELAY_ONLY: "relay",
}
METHOD_PARTS = {
    "veth": "an unshaped veth pair",
    "tbf": "tc tbf shapes the rate",
    "netem": "tc netem sets the rate, delay, jitter and loss",
    "relay": "sshbench's userspace relay holds the data for the delay (no sch_netem in this kernel)",
}


@dataclass
class LinkState:
    """One profile as applied here: how, what it achieved, and the shaper's counters."""

    profile: LinkProfile
    method: str
    relay_port: int | None = None  # base port of its delay relay (ssh, +1 raw TCP, +2 echo)
    rtt_ms: float | None = None  # measured (median of RTT_PROBES TCP round trips)
    rtt_probe_ms: list[float] = field(default_factory=list)
    tc: dict = field(default_factory=lambda: {"sent_bytes": 0, "sent_packets": 0, "drops": 0, "overlimits": 0})
    # The TCP receive buffer every new socket of the link's namespaces starts with (net.ipv4.tcp_rmem's initial
    # value there; None: the namespace's default): shaping.receive_buffer.
    tcp_rmem_initial: int | None = None
    tcp_rmem_max: int | None = None  # this machine's net.ipv4.tcp_rmem max: what autotuning may grow a buffer to

    def describe(self) -> dict:
        return {
            **self.profile.describe(),
            "method": self.method,
            "rtt_measured_ms": self.rtt_ms,
            "window_bytes": OPENSSH_CHANNEL_WINDOW,
            # For the `window` verdict: only where the profile has a delay (an unshaped veth's
            # ~0.02 ms would make window/RTT meaningless).
            "rtt_s": None if self.profile.delay_ms <= 0 else (self.rtt_ms or self.profile.rtt_ms) / 1000,
            "tc_counters": dict(self.tc),
            "tcp_rmem_initial": self.tcp_rmem_initial,
            "tcp_rmem_max": self.tcp_rmem_max,
        }


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


def root_tcp_rmem() -> tuple[int, int, int]:
    """This machine's net.ipv4.tcp_rmem (min, initial, max), which new namespaces start with."""
    try:
        low, initial, high = (int(v) for v in open("/proc/sys/net/ipv4/tcp_rmem").read().split())
    except (OSError, ValueError):
        return 4096, 131072, 6 * 1024 * 1024  # the kernel's defaults
    return low, initial, high


def receive_buffer(profile: LinkProfile, root: tuple[int, int, int]) -> int | None:
    """The initial TCP receive buffer that makes the emulated path's sockets what a real path of this profile grows
    them to: twice its bandwidth-delay product (autotuning's target, which keeps half for overhead), at most this
    machine's tcp_rmem max, never below its initial value. None where the profile has no delay (autotuning works
    on the veth's own round trip) or no rate (no bandwidth-delay product).

    Why: the delay relay (no sch_netem in this kernel) holds the data in userspace, so the kernel's TCP on either
    hop sees a round trip of ~0 and never grows its buffers past the initial 128 KiB. HPN-SSH sizes its channel
    window from the socket's receive buffer: on lfn1g (1 Gbit/s, 167 ms) it moved 11.9 MiB/s, the same as OpenSSH's
    fixed 2 MiB window, where a real path of that RTT lets it reach the line rate."""
    if profile.delay_ms <= 0 or not profile.rate_bit_s:
        return None
    low, initial, high = root
    bdp = profile.bdp_bytes() or 0
    return max(initial, min(2 * bdp, high))
