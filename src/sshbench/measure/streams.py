"""The figures of a parallel trial (`run -P N`): N streams of one combination merged into one Trial,
and the per-stream medians of a summary. Pure functions over Trials (the orchestration, which starts
the N clients, is sshbench.measure.parallel).

Each stream moves 1/N of the payload. The trial's rate is the aggregate: all bytes over the common
data phase, from the first stream's start to the last one's end, on the server's clock where every
stream's reader reported its end (the pipe tool), else on the client's (wall minus the same-shape
N-stream handshake, as for any tool without a server-side clock).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from sshbench.host.pauses import paused
from sshbench.results import STEADY_STATE, Trial, TrialKind
from sshbench.units import MIB

SERVER_READER = "server-reader"  # the same name as sshbench.measure.clock's
# Clocks of the receiving end (the pipe's reader, the raw TCP control's sink): streams line up on them.
RECEIVER_CLOCKS = (SERVER_READER, "receiver")


def stream_share(payload_bytes: int, streams: int) -> int:
    """Bytes each of `streams` connections moves: an equal share (the remainder, < N bytes, is dropped
    so every stream sends the same file)."""
    return max(payload_bytes // max(streams, 1), 1)


def _sum(values: Iterable[float | int | None]) -> float | int | None:
    items = list(values)
    if not items or any(v is None for v in items):
        return None
    return sum(v for v in items if v is not None)


def _stream_entry(index: int, t: Trial, first_start: float) -> dict:
    return {
        "stream": index,
        "valid": t.valid,
        "invalid_reason": t.invalid_reason,
        "exit_status": t.exit_status,
        "payload_bytes": t.payload_bytes,
        "received_bytes_at_sink": t.received_bytes_at_sink,
        "started_s": round(t.started_at - first_start, 6),  # after the first stream's start (client clock)
        "wall_s": t.wall_s,
        "data_s": t.data_s,
        "data_clock": t.data_clock,
        "mib_s": t.mib_s,
        "client_cpu_s": t.client_cpu_s,
        "server_cpu_s": t.server_cpu_s,
        "sent_bytes": t.sent_bytes,
        "received_bytes": t.received_bytes,
        "reader_ended_at": t.reader_ended_at,
        "verified": t.verified,
    }


def merge(parent: Trial, streams: list[Trial], server_cpu_total_s: float | None = None) -> Trial:
    """Fill `parent` (the parallel trial: its combination, kind, repetition) from its streams' trials.
    A stream that failed invalidates the whole trial, and the reason names it. `server_cpu_total_s`: the
    server's CPU over the whole trial where only that is known (tools without a server-side report)."""
    n = len(streams)
    first_start = min(t.started_at for t in streams)
    parent.started_at = first_start
    parent.payload_bytes = sum(t.payload_bytes for t in streams)
    ends = [t.started_at + t.wall_s for t in streams if t.wall_s is not None]
    parent.wall_s = max(ends) - first_start if len(ends) == n else None
    parent.exit_status = next((t.exit_status for t in streams if t.exit_status != 0), 0)
    failed = [(i, t) for i, t in enumerate(streams) if not t.valid]
    if failed:
        # a stream that spans a pause first: its reason leads, so that the runner measures the trial again
        index, first = min(failed, key=lambda found: not paused(found[1].invalid_reason))
        also = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        parent.valid = False
        parent.invalid_reason = (
            f"{first.invalid_reason} (stream {index + 1} of {n}{also})"
            if paused(first.invalid_reason)
            else f"stream {index + 1} of {n}: {first.invalid_reason}{also}"
        )
    else:
        parent.valid, parent.invalid_reason = True, None
    parent.negotiated = streams[0].negotiated
    parent.remote_version = streams[0].remote_version
    parent.sent_bytes = _sum(t.sent_bytes for t in streams)  # type: ignore[assignment]
    parent.received_bytes = _sum(t.received_bytes for t in streams)  # type: ignore[assignment]
    parent.received_bytes_at_sink = _sum(t.received_bytes_at_sink for t in streams)  # type: ignore[assignment]
    parent.client_cpu_s = _sum(t.client_cpu_s for t in streams)
    if server_cpu_total_s is not None:
        parent.server_cpu_s, parent.server_cpu_scope = server_cpu_total_s, "connection"
    else:
        parent.server_cpu_s = _sum(t.server_cpu_s for t in streams)
        parent.server_cpu_scope = streams[0].server_cpu_scope if parent.server_cpu_s is not None else None
    parent.server_sink_cpu_s = _sum(t.server_sink_cpu_s for t in streams)
    parent.tcp_wire_bytes = _sum(t.tcp_wire_bytes for t in streams)  # type: ignore[assignment]
    parent.tcp_bytes_before_clock = _sum(t.tcp_bytes_before_clock for t in streams)  # type: ignore[assignment]
    parent.compressed_raw_bytes = _sum(t.compressed_raw_bytes for t in streams)  # type: ignore[assignment]
    parent.compressed_wire_bytes = _sum(t.compressed_wire_bytes for t in streams)  # type: ignore[assignment]
    checks = [t.verified for t in streams]
    parent.verified = False if False in checks else (True if checks and all(checks) else None)
    parent.data_s, parent.data_clock = common_data_phase(streams)
    steady_aggregate(parent, streams)
    parent.per_stream = [_stream_entry(i, t, first_start) for i, t in enumerate(streams)]
    starts = _server_starts(streams)
    if starts is not None:  # where each stream's data phase began after the first one's (server clock)
        for entry, start in zip(parent.per_stream, starts):
            entry["data_started_s"] = round(start - min(starts), 6)
    return parent


def _whole(t: Trial) -> tuple[float | None, str | None]:
    """A stream's whole data phase and its clock (the earlier clock's, beside a steady-state rate)."""
    return (t.whole_data_s, t.whole_data_clock) if t.data_clock == STEADY_STATE else (t.data_s, t.data_clock)


def _server_starts(streams: list[Trial]) -> list[float] | None:
    """Each stream's data-phase start on the server's clock: its reader's end minus its whole data phase."""
    if not streams or any(
        t.kind == TrialKind.HANDSHAKE
        or _whole(t)[1] not in RECEIVER_CLOCKS
        or t.reader_ended_at is None
        or not _whole(t)[0]
        for t in streams
    ):
        return None
    return [t.reader_ended_at - (_whole(t)[0] or 0.0) for t in streams if t.reader_ended_at is not None]


def common_data_phase(streams: list[Trial]) -> tuple[float | None, str | None]:
    """From the first stream's start to the last one's end on the server's clock: each stream's reader
    ended at `reader_ended_at` and ran for its data phase (scaled for what arrived before it started),
    so it started at end - data_s. None when a stream has no server-side end time: the client's clock
    (wall minus handshake, sshbench.measure.clock) then decides."""
    starts = _server_starts(streams)
    if starts is None:
        return None, None
    ends = [t.reader_ended_at for t in streams if t.reader_ended_at is not None]
    phase = max(ends) - min(starts)
    return (phase, _whole(streams[0])[1]) if phase > 0 else (None, None)


def steady_aggregate(parent: Trial, streams: list[Trial]) -> None:
    """Every stream had a steady part: the aggregate's steady rate is the sum of theirs (they start
    together at the barrier and overlap in their steady parts; docs/clock.md), and the common data phase
    becomes the whole one. Otherwise the parent keeps the earlier clock."""
    rates = [t.mib_s for t in streams if t.data_clock == STEADY_STATE and t.mib_s]
    if len(rates) != len(streams) or not rates or parent.payload_bytes <= 0:
        if any(t.steady_note for t in streams):
            parent.steady_note = next(t.steady_note for t in streams if t.steady_note)
        return
    parent.whole_data_s, parent.whole_data_clock = parent.data_s, parent.data_clock
    parent.data_s, parent.data_clock = parent.payload_bytes / MIB / sum(rates), STEADY_STATE
    parent.steady_window_s = min(t.steady_window_s or 0.0 for t in streams)


def imbalance(per_stream: list[dict]) -> float | None:
    """How unevenly the streams went: the fastest stream's rate over the slowest's, minus 1 (0: every
    stream alike; 0.5: the fastest moved its share half again as fast as the slowest)."""
    rates = [s.get("mib_s") for s in per_stream]
    if len(rates) < 2 or any(not r for r in rates):
        return None
    return max(rates) / min(rates) - 1.0  # type: ignore[type-var, operator]


def summarise_streams(trials: list[Trial]) -> dict | None:
    """A summary's `per_stream` block: medians over its valid parallel trials (None for one stream)."""
    parallel = [t for t in trials if t.per_stream and t.valid and t.mib_s]
    if not parallel:
        return None
    rates = [s["mib_s"] for t in parallel for s in t.per_stream or [] if s.get("mib_s")]
    slowest = [
        min(s["mib_s"] for s in t.per_stream or []) for t in parallel if all(s.get("mib_s") for s in t.per_stream or [])
    ]
    skews = [v for t in parallel if (v := imbalance(t.per_stream or [])) is not None]
    client_cores = [t.client_cpu_s / t.data_s for t in parallel if t.client_cpu_s is not None and t.data_s]
    server_cores = [t.server_cpu_s / t.data_s for t in parallel if t.server_cpu_s is not None and t.data_s]
    # How far apart the streams' data phases began (their handshakes compete for the same cores): a spread
    # near the data phase means the streams barely overlapped and the aggregate is close to one stream's.
    spreads = [
        max(starts) - min(starts)
        for t in parallel
        if len(starts := [s["data_started_s"] for s in t.per_stream or [] if s.get("data_started_s") is not None]) > 1
    ]

    def median(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    return {
        "streams": len(parallel[0].per_stream or []),
        "share_bytes": parallel[0].payload_bytes // max(len(parallel[0].per_stream or []), 1),
        "median_stream_mib_s": median(rates),
        "median_slowest_stream_mib_s": median(slowest),
        "median_imbalance": median(skews),
        "median_client_cores": median(client_cores),  # client CPU seconds (all streams) per data-phase second
        "median_server_cores": median(server_cores),
        "median_start_spread_s": median(spreads),
        "aggregate_mib_s_per_stream": (median([t.mib_s for t in parallel if t.mib_s]) or 0.0)
        / max(len(parallel[0].per_stream or []), 1),
    }
