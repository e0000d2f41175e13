"""Each combination against the baselines: fraction of raw TCP, of the crypto ceiling, and the verdict.

Computed from a finished (or interrupted) RunResult at report time, so the JSON export and the
table always agree and nothing extra has to be stored on the result beyond `result.baselines`.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from sshbench.baselines import bottleneck, crypto_ceiling, sensitivity, sink_process, stream_ceiling
from sshbench.compression import NO_COMPRESSION
from sshbench.host.placement import Placement
from sshbench.model import summary, summary_figures
from sshbench.model.summary import Summary, summarise_transfers
from sshbench.results import Combination, Trial, TrialKind


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
    crypto_cpu_share: float | None = None  # of the busier side's CPU time per byte, what the crypto needs
    crypto_ceiling_side: str | None = None  # two machines: whose ceiling is the slower ("client"/"server")

    def to_json(self) -> dict:
        return {
            "vs_raw_tcp": self.vs_raw_tcp,
            "crypto_ceiling_mib_s": self.crypto_ceiling_mib_s,
            "vs_crypto_ceiling": self.vs_crypto_ceiling,
            "crypto_ceiling_note": self.crypto_note,
            "client_cpu_cores": self.client_cpu_cores,
            "server_cpu_cores": self.server_cpu_cores,
            "crypto_cpu_share": self.crypto_cpu_share,
            "crypto_ceiling_side": self.crypto_ceiling_side,
            "bound_by": self.verdict.bound_by if self.verdict else None,
            "bound_by_evidence": self.verdict.evidence if self.verdict else None,
        }


def raw_tcp_summary(trials: list[Trial], direction: str = "up") -> Summary | None:
    """The single-stream control in `direction` ("up" everywhere; a remote host's runs "down" too, the
    server sending); with -P N the N-stream ones are in raw_tcp_by_streams."""
    found = [s for s in summarise_transfers(trials, kind=TrialKind.RAW_TCP) if s.combination.direction == direction]
    single = [s for s in found if s.combination.streams == 1]
    return (single or found)[0] if found else None


def raw_tcp_by_link(trials: list[Trial]) -> dict[str, Summary]:
    """The raw TCP control per link profile (one entry on plain loopback; one per --link otherwise)."""
    return {
        s.combination.link: s
        for s in summarise_transfers(trials, kind=TrialKind.RAW_TCP)
        if s.combination.direction == "up" and s.combination.streams == 1
    }


def raw_tcp_by_streams(trials: list[Trial]) -> dict[tuple[str, int], Summary]:
    """-P N: the raw TCP control per (link, stream count), so that N ssh streams compare with N TCP streams."""
    return {
        (s.combination.link, s.combination.streams): s
        for s in summarise_transfers(trials, kind=TrialKind.RAW_TCP)
        if s.combination.direction == "up"
    }


def raw_tcp_by_link_direction(trials: list[Trial]) -> dict[tuple[str, str], Summary]:
    """(link, direction) -> the single-stream control: a remote host's runs both ways (the server sends for "down")."""
    return {
        (s.combination.link, s.combination.direction): s
        for s in summarise_transfers(trials, kind=TrialKind.RAW_TCP)
        if s.combination.streams == 1
    }


def _server_window(t: Trial) -> float | None:
    """The seconds the server's CPU figures of trial `t` cover: the reader's own unscaled clock where it
    timed them (the data phase is longer by the bytes that arrived before it started, or is another
    clock), else the data phase."""
    return t.reader_s if t.reader_s and t.reader_s > 0 else t.data_s


def _cpu_cores(trials: list[Trial], handshake_cpu_s: float | None) -> tuple[float | None, float | None]:
    """Median CPU seconds per data-phase second, client and server. The client's figure is over the steady
    window where the sampler read it, else over the whole connection less the median CPU of a no-data
    connection with the same kex (summary_figures.client_cpu_cores)."""
    client, server = [], []
    for t in trials:
        if not (t.valid and t.data_s and t.data_s > 0):
            continue
        if (cores := summary_figures.client_cpu_cores(t, handshake_cpu_s)) is not None:
            client.append(cores)
        if t.server_cpu_s is not None:
            server.append(t.server_cpu_s / (_server_window(t) or t.data_s))
    return (statistics.median(client) if client else None, statistics.median(server) if server else None)


def _sink_cores(trials: list[Trial]) -> float | None:
    """Median cores the server-side reader (dd) used during the data phase."""
    values = [
        t.server_sink_cpu_s / (_server_window(t) or t.data_s)
        for t in trials
        if t.valid and t.data_s and t.data_s > 0 and t.server_sink_cpu_s is not None
    ]
    return statistics.median(values) if values else None


# Targets whose server runs on this machine, so client and server share its cores.
SHARED_MACHINE_TARGETS = ("private-openssh", "netns-openssh", "private-dropbear", "private-asyncssh")


def machine_cores_if_shared(result: Any) -> int | None:
    """This machine's cores when the run's client and server shared them (a private server); None otherwise."""
    target = result.target or {}
    kinds = {target.get("kind")} | {
        t.get("kind") for t in (target.get("servers") or {}).values() if isinstance(t, dict)
    }
    if not kinds or not kinds <= set(SHARED_MACHINE_TARGETS):
        return None
    cores = (result.environment or {}).get("cores")
    return cores if isinstance(cores, int) and cores > 0 else None


def server_pinned_cpus(result: Any) -> int | None:
    """How many CPUs the private server side was pinned to (--pin, sshbench.host.placement), the client having
    its own; None when the run did not pin (or was stored before it could)."""
    try:
        placement = Placement.from_json((result.target or {}).get("placement"))
    except (TypeError, ValueError):
        return None
    return len(placement.server_cpus) if placement else None


def two_machines(result: Any) -> tuple[bool, int | None, float | None]:
    """(client and server on two machines, the server's core count, its CPU quota in cores): a remote
    host has its own cores (read once: target.machine.cores); --server-cpu gives the private sshd a quota."""
    target = result.target or {}
    remote = target.get("kind") == "remote"
    machine = target.get("machine")
    cores = machine.get("cores") if remote and isinstance(machine, dict) else None
    quota = result.settings.server_cpu if not remote else None
    return remote, cores if isinstance(cores, int) else None, quota


def _disk_rate(disk: dict, combo: Combination) -> float | None:
    """The slowest disk stage this combination goes through: the payload's source when it is on a
    disk, and the disk sink's write speed when this combination writes to one."""
    rates = []
    if disk.get("on_disk") and disk.get("read_mib_s"):
        rates.append(disk["read_mib_s"])
    if combo.sink == "disk" and disk.get("write_mib_s"):
        rates.append(disk["write_mib_s"])
    return min(rates) if rates else None


def compare(result: Any) -> dict[Combination, Comparison]:
    """Per combination of `summary.summaries(result)`: computed once per state of the result's trials."""
    return summary.cached(result, "baseline-comparisons", lambda: _compare(result))


def _compare(result: Any) -> dict[Combination, Comparison]:
    baselines: dict = result.baselines or {}
    raw = raw_tcp_summary(result.trials)
    raw_rate = raw.median_mib_s if raw else None
    raw_per_link = raw_tcp_by_link(result.trials)
    raw_per_streams = raw_tcp_by_streams(result.trials)
    crypto_measured: dict[str, dict] = baselines.get("crypto") or {}
    crypto_server: dict[str, dict] = baselines.get("crypto_server") or {}
    raw_per_direction = raw_tcp_by_link_direction(result.trials)
    remote, server_machine_cores, server_quota = two_machines(result)
    client_machine_cores = (result.environment or {}).get("cores")
    disk = baselines.get("disk") or {}
    link = baselines.get("link") or {}  # an emulated link, when one exists: {"window_bytes", "rtt_s"}
    links = baselines.get("links") or {}  # per link profile (sshbench.links): the same keys
    handshake_cpu = {h.kex: h.client_cpu_ms / 1000 for h in summary.handshakes(result) if h.client_cpu_ms is not None}
    measured_by_combo: dict[Combination, list[Trial]] = {}
    for t in result.trials:
        if t.kind == TrialKind.TRANSFER and not t.warmup:
            measured_by_combo.setdefault(t.combination, []).append(t)
    machine_cores = machine_cores_if_shared(result)
    why = baselines.get("why")
    out: dict[Combination, Comparison] = {}
    for s in summary.summaries(result):
        combo = s.combination
        ceiling, note = crypto_ceiling.ceiling_for(combo, crypto_measured) if crypto_measured else (None, None)
        server_ceiling = crypto_ceiling.ceiling_for(combo, crypto_server)[0] if crypto_server else None
        # Each summary's ceiling is the slower side's (a remote host's own, measured there).
        slower, side = min(
            ((c, n) for c, n in ((ceiling, "client"), (server_ceiling, "server")) if c), default=(None, None)
        )
        measured = measured_by_combo.get(combo, [])
        setup_kex = next((t.setup_kex for t in measured if t.setup_kex), combo.kex)  # the kex it connected with
        client_cores, server_cores = _cpu_cores(measured, handshake_cpu.get(setup_kex))
        rate = s.median_mib_s
        # Emulated links: compare with the control measured over the same link, and that link's RTT.
        combo_raw = raw_per_link[combo.link].median_mib_s if combo.link in raw_per_link else raw_rate
        if combo.streams > 1 and (combo.link, combo.streams) in raw_per_streams:  # -P N: as many streams
            combo_raw = raw_per_streams[(combo.link, combo.streams)].median_mib_s
        elif (combo.link, combo.direction) in raw_per_direction:  # the control in this combination's direction
            combo_raw = raw_per_direction[(combo.link, combo.direction)].median_mib_s
        combo_link = links.get(combo.link) or link
        measurements = bottleneck.Measurements(
            mib_s=rate,
            # compressed: what crosses the link is the wire's bytes, not the payload's (zlib on text: ~1/3)
            wire_mib_s=rate * s.wire_ratio if rate and s.wire_ratio and combo.compression != NO_COMPRESSION else None,
            client_cpu_cores=client_cores,
            server_cpu_cores=server_cores,
            raw_tcp_mib_s=combo_raw,
            crypto_ceiling_mib_s=ceiling,
            disk_mib_s=_disk_rate(disk, combo),
            window_bytes=bottleneck.channel_window(combo, combo_link, result),
            rtt_s=combo_link.get("rtt_s"),
            machine_cores=machine_cores,
            sink_cpu_cores=_sink_cores(measured_by_combo.get(combo, [])) if machine_cores else None,
            server_crypto_ceiling_mib_s=server_ceiling,
            two_machines=remote,
            client_machine_cores=client_machine_cores,
            server_machine_cores=server_machine_cores,
            server_cpu_limit_cores=server_quota,
            server_pinned_cpus=server_pinned_cpus(result),
        )
        out[combo] = Comparison(
            combination=combo,
            vs_raw_tcp=rate / combo_raw if rate and combo_raw else None,
            crypto_ceiling_mib_s=slower,
            vs_crypto_ceiling=rate / slower if rate and slower else None,
            crypto_note=note,
            client_cpu_cores=client_cores,
            server_cpu_cores=server_cores,
            verdict=_by_experiment(why, combo) or bottleneck.verdict(measurements),
            crypto_cpu_share=(bottleneck.crypto_cpu_share(measurements) or (None,))[0],
            crypto_ceiling_side=side if remote else None,
        )
    return out


# An experiment's verdict (run --why, baselines/sensitivity.py) in the bottleneck column's words; the verdicts not
# here (partly, undecided, not measured) leave the row its inferred verdict.
_EXPERIMENT_WORDS = {
    "client-cpu": "client-cpu",
    "server-cpu": "server-cpu",
    "disk": "disk",
    "link": "network",
    "window": "window",
    "ssh-itself": "ssh-overhead",
}


def _by_experiment(why: object, combo: Combination) -> bottleneck.Verdict | None:
    """The `--why` verdict of this row, where one was measured: it replaces the inferred one (on a pinned 2-core
    run both sides sit near a full core, and slowing each in turn tells which limits; utilisation cannot)."""
    found = sensitivity.verdict_for(why, asdict(combo))
    if not found:
        return None
    word = _EXPERIMENT_WORDS.get(found.get("kind", ""))
    if found.get("kind") == "shared" and set(found.get("limited_by") or []) == {"client-cpu", "server-cpu"}:
        word = "both-cpu"
    return bottleneck.Verdict(word, f"by experiment: {found.get('line')}") if word else None


def document(result: Any) -> dict:
    """The JSON `baselines` block: raw_tcp (summarised like a combination), crypto[primitive], disk."""
    baselines: dict = dict(result.baselines or {})
    raw_json = _raw_json(raw_tcp_summary(result.trials))
    # A remote host's control from the server to the client (the "down" direction), same shape.
    raw_down = _raw_json(raw_tcp_summary(result.trials, "down"))
    return {
        "enabled": baselines.get("enabled", False),
        "raw_tcp": raw_json,
        "raw_tcp_down": raw_down,
        "crypto": baselines.get("crypto") or {},
        "crypto_server": baselines.get("crypto_server"),
        "disk": baselines.get("disk"),
        "link": baselines.get("link"),
        "links": _links_json(baselines.get("links"), result.trials),
        "raw_tcp_streams": _raw_streams_json(result.trials),
        "stream_ceiling": [sweep.to_json() for sweep in stream_sweeps(result)] or None,
        "aesni_masked": baselines.get("aesni_masked", False),
        "aesni_check": baselines.get("aesni_check"),
        "notes": baselines.get("notes") or [],
        "why": baselines.get("why"),  # `run --why`: sensitivities with their CIs (baselines/sensitivity.py)
        # the rekey probes: per key exchange, link and server, the stall one rekey cost (sshbench.measure.rekey_probe)
        "rekeys": baselines.get("rekeys"),
        "thresholds": {
            "network_fraction": bottleneck.NETWORK_FRACTION,
            "disk_fraction": bottleneck.DISK_FRACTION,
            "window_fraction": bottleneck.WINDOW_FRACTION,
            "crypto_fraction": bottleneck.CRYPTO_FRACTION,
            "cpu_busy_cores": bottleneck.CPU_BUSY_CORES,
        },
    }


def stream_sweeps(result: Any) -> list:
    """-P 1,2,...: per setting swept over stream counts, each count's ceiling and the conclusion
    (baselines/stream_ceiling.py); empty without a sweep."""
    return summary.cached(
        result,
        "stream-sweeps",
        lambda: stream_ceiling.sweeps(
            summary.summaries(result),
            raw_tcp_by_streams(result.trials),
            (result.baselines or {}).get("crypto") or {},
            result.environment.get("cores"),
            shares_machine=machine_cores_if_shared(result) is not None,
            machine_busy=machine_busy_cores(result.trials),
        ),
    )


def machine_busy_cores(trials: list[Trial]) -> dict:
    """Per combination, the median of this machine's busy cores while its -P N streams moved data
    (`Trial.machine_busy_cores`, valid measured transfers)."""
    found: dict = {}
    for t in trials:
        if t.kind == TrialKind.TRANSFER and t.valid and not t.warmup and t.machine_busy_cores is not None:
            found.setdefault(t.combination, []).append(t.machine_busy_cores)
    return {combo: statistics.median(values) for combo, values in found.items()}


def _raw_streams_json(trials: list[Trial]) -> list[dict] | None:
    """-P N: the raw TCP control of every (link, stream count) above one stream; null without -P."""
    found = [s for s in summarise_transfers(trials, kind=TrialKind.RAW_TCP) if s.combination.streams > 1]
    if not found:
        return None
    return [
        {
            "link": s.combination.link,
            "streams": s.combination.streams,
            "median_mib_s": s.median_mib_s,
            "valid_trials": s.valid_trials,
            "invalid_trials": s.invalid_trials,
            "per_stream": s.per_stream,
        }
        for s in found
    ]


def _raw_json(raw: Summary | None) -> dict | None:
    if raw is None:
        return None
    drop = ("cipher", "mac", "kex", "compression", "tool", "direction", "relative_to_fastest")
    found = {k: v for k, v in raw.to_json().items() if k not in drop}
    found["data_clock"] = sink_process.DATA_CLOCK
    return found


def _links_json(links: dict | None, trials: list[Trial]) -> dict | None:
    """Per link profile: its settings, how it was emulated, measured RTT, shaper counters, and the raw
    TCP control's achieved rate over it (docs/results-json.md)."""
    if not links:
        return None
    raw = raw_tcp_by_link(trials)
    out = {}
    for name, details in links.items():
        found = raw.get(name)
        mib_s = found.median_mib_s if found else None
        rate = details.get("rate_bit_s")
        out[name] = {
            **details,
            "achieved_raw_tcp_mib_s": mib_s,
            "achieved_mbit_s": None if mib_s is None else round(mib_s * 8 * 1.048576, 2),
            "achieved_vs_rate": None if (mib_s is None or not rate) else round(mib_s * 8 * 1048576 / rate, 4),
        }
    return out


def summary_json(comparisons: dict[Combination, Comparison], summary: Summary) -> dict:
    """Keys added to one summary in the JSON (all None where there was no baseline)."""
    found = comparisons.get(summary.combination)
    if found is None:
        return {"vs_raw_tcp": None, "vs_crypto_ceiling": None, "bound_by": None}
    return found.to_json()
