"""Each combination against the baselines: fraction of raw TCP, of the crypto ceiling, and the verdict.

Computed from a finished (or interrupted) RunResult at report time, so the JSON export and the
table always agree and nothing extra has to be stored on the result beyond `result.baselines`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from sshbench.baselines import bottleneck, crypto_ceiling, raw_tcp
from sshbench.results import Combination, Trial
from sshbench.summary import Summary, summarise_transfers


@dataclass
class Comparison:
    combination: Combination
    vs_raw_tcp: float | None  # this median / raw TCP median (1.0 = as fast as plain TCP)
    crypto_ceiling_mib_s: float | None
    vs_crypto_ceiling: float | None  # this median / the one-core crypto ceiling
    crypto_note: str | None
    client_cpu_cores: float | None
    server_cpu_cores: float | None
    verdict: bottleneck.Verdict | None

    def to_json(self) -> dict:
        return {
            "vs_raw_tcp": self.vs_raw_tcp,
            "crypto_ceiling_mib_s": self.crypto_ceiling_mib_s,
            "vs_crypto_ceiling": self.vs_crypto_ceiling,
            "crypto_ceiling_note": self.crypto_note,
            "client_cpu_cores": self.client_cpu_cores,
            "server_cpu_cores": self.server_cpu_cores,
            "bound_by": self.verdict.bound_by if self.verdict else None,
            "bound_by_evidence": self.verdict.evidence if self.verdict else None,
        }


def raw_tcp_summary(trials: list[Trial]) -> Summary | None:
    found = summarise_transfers(trials, kind=raw_tcp.KIND)
    return found[0] if found else None


def _cpu_cores(trials: list[Trial], handshake_cpu_s: float | None) -> tuple[float | None, float | None]:
    """Median CPU seconds per data-phase second, client and server. The client's figure covers the
    whole connection, so the median CPU of a no-data connection with the same kex is taken off."""
    client, server = [], []
    for t in trials:
        if not (t.valid and t.data_s and t.data_s > 0):
            continue
        if t.client_cpu_s is not None:
            client.append(max(t.client_cpu_s - (handshake_cpu_s or 0.0), 0.0) / t.data_s)
        if t.server_cpu_s is not None:
            server.append(t.server_cpu_s / t.data_s)
    return (statistics.median(client) if client else None, statistics.median(server) if server else None)


def compare(result: Any) -> dict[Combination, Comparison]:
    """Per combination of `result.summaries()` (a RunResult; typed loosely to avoid an import cycle)."""
    baselines: dict = result.baselines or {}
    raw = raw_tcp_summary(result.trials)
    raw_rate = raw.median_mib_s if raw else None
    crypto_measured: dict[str, dict] = baselines.get("crypto") or {}
    disk = baselines.get("disk") or {}
    disk_rate = None
    if disk.get("on_disk"):
        rates = [r for r in (disk.get("read_mib_s"), disk.get("write_mib_s")) if r]
        disk_rate = min(rates) if rates else None
    link = baselines.get("link") or {}  # an emulated link, when one exists: {"window_bytes", "rtt_s"}
    handshake_cpu = {h.kex: h.client_cpu_ms / 1000 for h in result.handshakes() if h.client_cpu_ms is not None}
    measured_by_combo: dict[Combination, list[Trial]] = {}
    for t in result.trials:
        if t.kind == "transfer" and not t.warmup:
            measured_by_combo.setdefault(t.combination, []).append(t)
    out: dict[Combination, Comparison] = {}
    for s in result.summaries():
        combo = s.combination
        ceiling, note = crypto_ceiling.ceiling_for(combo, crypto_measured) if crypto_measured else (None, None)
        client_cores, server_cores = _cpu_cores(measured_by_combo.get(combo, []), handshake_cpu.get(combo.kex))
        rate = s.median_mib_s
        measurements = bottleneck.Measurements(
            mib_s=rate, client_cpu_cores=client_cores, server_cpu_cores=server_cores, raw_tcp_mib_s=raw_rate,
            crypto_ceiling_mib_s=ceiling, disk_mib_s=disk_rate, window_bytes=link.get("window_bytes"),
            rtt_s=link.get("rtt_s"))
        out[combo] = Comparison(
            combination=combo,
            vs_raw_tcp=rate / raw_rate if rate and raw_rate else None,
            crypto_ceiling_mib_s=ceiling,
            vs_crypto_ceiling=rate / ceiling if rate and ceiling else None,
            crypto_note=note, client_cpu_cores=client_cores, server_cpu_cores=server_cores,
            verdict=bottleneck.verdict(measurements),
        )
    return out


def document(result: Any) -> dict:
    """The JSON `baselines` block: raw_tcp (summarised like a combination), crypto[primitive], disk."""
    baselines: dict = dict(result.baselines or {})
    raw = raw_tcp_summary(result.trials)
    raw_json = None
    if raw is not None:
        raw_json = {k: v for k, v in raw.to_json().items()
                    if k not in ("cipher", "mac", "kex", "compression", "tool", "direction", "relative_to_fastest")}
        raw_json["data_clock"] = raw_tcp.DATA_CLOCK
    return {
        "enabled": baselines.get("enabled", False),
        "raw_tcp": raw_json,
        "crypto": baselines.get("crypto") or {},
        "disk": baselines.get("disk"),
        "link": baselines.get("link"),
        "aesni_masked": baselines.get("aesni_masked", False),
        "aesni_check": baselines.get("aesni_check"),
        "notes": baselines.get("notes") or [],
        "thresholds": {
            "network_fraction": bottleneck.NETWORK_FRACTION, "disk_fraction": bottleneck.DISK_FRACTION,
            "window_fraction": bottleneck.WINDOW_FRACTION, "crypto_fraction": bottleneck.CRYPTO_FRACTION,
            "cpu_busy_cores": bottleneck.CPU_BUSY_CORES,
        },
    }


def summary_json(comparisons: dict[Combination, Comparison], summary: Summary) -> dict:
    """Keys added to one summary in the JSON (all None where there was no baseline)."""
    found = comparisons.get(summary.combination)
    if found is None:
        return {"vs_raw_tcp": None, "vs_crypto_ceiling": None, "bound_by": None}
    return found.to_json()
