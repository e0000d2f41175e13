"""Plan the matrix (which combinations) and the schedule (in which order trials run).

Trials are interleaved round-robin: every combination once, then all again, so that a burst of
load on a shared machine spreads over all combinations instead of sinking one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sshbench.results import IMPLICIT_MAC, NO_COMPRESSION, Combination


@dataclass(frozen=True)
class ScheduledTrial:
    combination: Combination
    kind: str  # "transfer" | "handshake"
    repetition: int
    warmup: bool
    calibration: bool = False  # a warm-up trial whose rate sizes the payload


def build_matrix(ciphers: list[str], macs: list[str], kexes: list[str], aead_ciphers: set[str],
                 compression: str | list[str] = NO_COMPRESSION, tool: str | list[str] = "pipe",
                 direction: str | list[str] = "up", sink: str | list[str] = "null",
                 payload: str | list[str] = "random", server: str = "openssh", client: str = "openssh",
                 link: str | list[str] = "loopback") -> list[Combination]:
    """ciphers x MACs x kex x compression x tool x direction x sink x payload; AEAD ciphers carry their
    own integrity, so they are not multiplied by MACs. Algorithms vary fastest, so one table of
    ciphers reads together per setting."""
    def as_list(value: str | list[str]) -> list[str]:
        return [value] if isinstance(value, str) else list(value)

    combos: list[Combination] = []
    for link_name, payload_kind, tool_name, dir_name, sink_name, comp, kex in itertools.product(
            as_list(link), as_list(payload), as_list(tool), as_list(direction), as_list(sink), as_list(compression),
            kexes):
        for cipher in ciphers:
            cipher_macs = [IMPLICIT_MAC] if cipher in aead_ciphers else macs
            for mac in cipher_macs:
                combo = Combination(cipher=cipher, mac=mac, kex=kex, compression=comp, tool=tool_name,
                                    direction=dir_name, sink=sink_name, payload=payload_kind, server=server,
                                    client=client, link=link_name)
                if combo not in combos:
                    combos.append(combo)
    return combos


def handshake_combinations(transfers: list[Combination]) -> list[Combination]:
    """One no-data combination per connection shape (kex, compression, tool, direction, sink), shaped
    like the first transfer of that shape, so that its wall time can be subtracted from a transfer's:
    the data clock of tools with no server-side clock, and the cross-check of those with one."""
    seen: dict[tuple, Combination] = {}
    for combo in transfers:
        seen.setdefault(combo.shape, combo)
    return list(seen.values())


def schedule(transfers: list[Combination], handshakes: list[Combination], runs: int, warmup: int,
             calibrate: bool, raw_tcp: Combination | list[Combination] | None = None) -> list[ScheduledTrial]:
    """Warm-up passes first (the first one calibrates sizes when asked), then `runs` interleaved passes.
    Each pass opens with its handshake trials, so that a tool timed by wall minus handshake (scp,
    sftp, rsync) has a handshake figure when its calibration probe needs a rate.
    `raw_tcp`: the raw TCP control (sshbench.baselines.raw_tcp), one trial per pass like a combination
    (a list: one per emulated link)."""
    plan: list[ScheduledTrial] = []
    raw_tcps = [] if raw_tcp is None else [raw_tcp] if isinstance(raw_tcp, Combination) else list(raw_tcp)
    warmup_passes = max(warmup, 1 if calibrate else 0)
    for rep in range(warmup_passes):
        plan.extend(ScheduledTrial(c, "handshake", rep, True) for c in handshakes)
        plan.extend(ScheduledTrial(c, "transfer", rep, True, calibration=calibrate and rep == 0) for c in transfers)
        plan.extend(ScheduledTrial(r, "raw-tcp", rep, True, calibration=calibrate and rep == 0) for r in raw_tcps)
    for rep in range(runs):
        plan.extend(ScheduledTrial(c, "handshake", rep, False) for c in handshakes)
        plan.extend(ScheduledTrial(c, "transfer", rep, False) for c in transfers)
        plan.extend(ScheduledTrial(r, "raw-tcp", rep, False) for r in raw_tcps)
    return plan
