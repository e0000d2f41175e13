"""Plan the matrix (which combinations) and the schedule (in which order trials run).

Trials are interleaved round-robin: every combination once, then all again, so that a burst of
load on a shared machine spreads over all combinations instead of sinking one.
"""

from __future__ import annotations

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
                 compression: str = NO_COMPRESSION, tool: str = "pipe", direction: str = "up") -> list[Combination]:
    """ciphers x MACs x kex; AEAD ciphers carry their own integrity, so they are not multiplied by MACs."""
    combos: list[Combination] = []
    for kex in kexes:
        for cipher in ciphers:
            cipher_macs = [IMPLICIT_MAC] if cipher in aead_ciphers else macs
            for mac in cipher_macs:
                combo = Combination(cipher=cipher, mac=mac, kex=kex, compression=compression, tool=tool,
                                    direction=direction)
                if combo not in combos:
                    combos.append(combo)
    return combos


def handshake_combinations(transfers: list[Combination]) -> list[Combination]:
    """One `ssh ... (no data)` combination per kex, shaped like the first transfer that uses that kex,
    so that its wall time can be subtracted from a transfer's as a cross-check."""
    seen: dict[str, Combination] = {}
    for combo in transfers:
        seen.setdefault(combo.kex, combo)
    return list(seen.values())


def schedule(transfers: list[Combination], handshakes: list[Combination], runs: int, warmup: int,
             calibrate: bool) -> list[ScheduledTrial]:
    """Warm-up passes first (the first one calibrates sizes when asked), then `runs` interleaved passes."""
    plan: list[ScheduledTrial] = []
    warmup_passes = max(warmup, 1 if calibrate else 0)
    for rep in range(warmup_passes):
        plan.extend(ScheduledTrial(c, "transfer", rep, True, calibration=calibrate and rep == 0) for c in transfers)
        plan.extend(ScheduledTrial(c, "handshake", rep, True) for c in handshakes)
    for rep in range(runs):
        plan.extend(ScheduledTrial(c, "transfer", rep, False) for c in transfers)
        plan.extend(ScheduledTrial(c, "handshake", rep, False) for c in handshakes)
    return plan
