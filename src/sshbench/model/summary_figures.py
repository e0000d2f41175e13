"""The figures of a combination's summary besides its rates' ranking: quartiles and spread, CPU seconds per GiB and
cores (the handshake's fixed cost taken off), bytes on the wire, and the share rekeys take. Pure functions over
trials, no I/O; summary.py puts them in a Summary.
"""

from __future__ import annotations

import statistics

from sshbench.model import intervals
from sshbench.results import Trial
from sshbench.units import GIB


def quartiles(values: list[float]) -> tuple[float, float]:
    """First and third quartile (inclusive method; the values themselves for n < 2)."""
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def coefficient_of_variation(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean > 0 else None


def median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def client_cpu_per_gib(t: Trial, fixed_cost_s: float | None) -> float | None:
    """The client's CPU seconds per GiB of one trial: over its steady window where the sampler read the
    client's CPU (no set-up in it), else the whole connection's less the same-shape handshake's
    (`fixed_cost_s`). Why the window: a 12 MiB trial behind a 100 Mbit/s link spent ~20 ms on its data and
    84-120 ms on its handshake, and the difference of the two read 0.00 s/GiB for three ciphers of six."""
    if t.client_steady_cpu_s is not None and t.steady_window_s and t.mib_s:
        return t.client_steady_cpu_s / (t.mib_s * t.steady_window_s / 1024)  # over the window's payload GiB
    if t.client_cpu_s is None or t.payload_bytes <= 0:
        return None
    return max(t.client_cpu_s - (fixed_cost_s or 0.0), 0.0) / (t.payload_bytes / GIB)


def client_cpu_cores(t: Trial, fixed_cost_s: float | None) -> float | None:
    """The cores the client kept busy while the data moved: over the steady window where the sampler read its
    CPU, else the whole connection's CPU less the handshake's over the data phase."""
    if t.client_steady_cpu_s is not None and t.steady_window_s:
        return t.client_steady_cpu_s / t.steady_window_s
    if t.client_cpu_s is None or not t.data_s or t.data_s <= 0:
        return None
    return max(t.client_cpu_s - (fixed_cost_s or 0.0), 0.0) / t.data_s


def cpu_per_gib(trials: list[Trial], attr: str, fixed_cost_s: float | None = None) -> float | None:
    """Median over trials of CPU seconds per GiB moved. `fixed_cost_s` (the same-shape handshake's
    CPU) is taken off first where the figure covers the whole connection, so that short transfers
    do not inflate it with key exchange and start-up."""
    pairs = [(getattr(t, attr), t.payload_bytes) for t in trials if getattr(t, attr) is not None]
    if not pairs:
        return None
    # Per-trial seconds per GiB, then the median: robust to one noisy trial.
    return statistics.median(max(cpu - (fixed_cost_s or 0.0), 0.0) / (n / GIB) for cpu, n in pairs if n > 0)


def connection_scoped(trials: list[Trial]) -> bool:
    return any(t.server_cpu_scope == "connection" for t in trials)


def wire_ratio(trials: list[Trial]) -> float | None:
    """Bytes on the wire / payload bytes (below 1 when compression helps): the kernel's TCP count where
    the server reported it, else ssh's own packet count ("Transferred: sent N")."""
    ratios = []
    for t in trials:
        wire = t.tcp_wire_bytes or (t.sent_bytes if t.combination.direction == "up" else t.received_bytes)
        if wire and t.payload_bytes:
            ratios.append(wire / t.payload_bytes)
    return median_or_none(ratios)


def rekey_figures(trials: list[Trial]) -> dict:
    """The row's rekey figures (Summary.rekey_*), from the trials that carry them."""
    charged = [t for t in trials if t.rekey_every_bytes is not None and t.rekey_stall_s is not None]
    if not charged:
        return {}
    shares = [t.rekey_s / (t.data_s + t.rekey_s) for t in charged if t.rekey_s and t.data_s]
    return {
        "rekey_every_bytes": charged[0].rekey_every_bytes,
        "rekey_stall_s": median_or_none([t.rekey_stall_s for t in charged if t.rekey_stall_s is not None]),
        "rekey_share": median_or_none(shares),
    }


def cpu_ci(trials: list[Trial], fixed: tuple[float | None, ...], whole_connection: bool) -> list[float] | None:
    """The median CI of per-trial (client + server) CPU seconds per GiB."""
    values = [
        client + max(t.server_cpu_s - ((fixed[2] or 0.0) if whole_connection else 0.0), 0.0) / (t.payload_bytes / GIB)
        for t in trials
        if t.server_cpu_s is not None
        and t.payload_bytes > 0
        and (client := client_cpu_per_gib(t, fixed[1])) is not None
    ]
    return list(intervals.median_ci(values)) if values else None
