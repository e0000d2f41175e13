"""The raw TCP control with N streams (`run -P N`), so that `x raw TCP` of an N-stream combination compares
like with like: N sinks and N senders started together, each moving 1/N of the payload, merged into one
trial as the ssh streams are (sshbench.measure.streams: the aggregate over the common data phase, first start to
last end on the sinks' clock). Each stream is an ordinary raw TCP trial (raw_tcp.run_raw_tcp_trial) on its
own thread; this module adds only the fan-out."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sshbench.baselines import raw_tcp, sink_process
from sshbench.measure.streams import merge
from sshbench.results import Combination, Trial, TrialKind

_JOIN_MARGIN_S = 30.0


def run_raw_tcp_streams(
    *,
    share_payload: Path,
    share_bytes: int,
    repetition: int,
    warmup: bool,
    timeout_s: float,
    combination: Combination,
    path: dict | None = None,
) -> Trial:
    """`combination.streams` raw TCP streams of `share_bytes` each (the file `share_payload`). Over an
    emulated link the sink's port is fixed (the delay relay forwards it): one sink takes all N there."""
    n = combination.streams
    if path is not None and "sink" in path:
        return _one_sink(share_payload, share_bytes, repetition, warmup, timeout_s, combination, path)
    parent = Trial(
        combination=combination,
        kind=TrialKind.RAW_TCP,
        repetition=repetition,
        warmup=warmup,
        payload_bytes=share_bytes * n,
        started_at=time.time(),
    )
    results: list[Trial | None] = [None] * n
    go = threading.Event()

    def stream(index: int) -> None:
        go.wait()
        try:
            results[index] = raw_tcp.run_raw_tcp_trial(
                payload=share_payload,
                payload_bytes=share_bytes,
                repetition=repetition,
                warmup=warmup,
                timeout_s=timeout_s,
                combination=combination,
                path=path,
            )
        except Exception as err:  # one line in the trial, never a traceback from a thread
            results[index] = Trial(
                combination=combination,
                kind=TrialKind.RAW_TCP,
                repetition=repetition,
                warmup=warmup,
                payload_bytes=share_bytes,
                started_at=time.time(),
                invalid_reason=f"{type(err).__name__}: {err}",
            )

    # Daemon threads: an interrupt leaves them to the sinks' own timeouts and stdin EOF (tcp_sink.py).
    threads = [threading.Thread(target=stream, args=(i,), daemon=True) for i in range(n)]
    for thread in threads:
        thread.start()
    go.set()
    deadline = time.monotonic() + timeout_s + _JOIN_MARGIN_S
    for thread in threads:
        thread.join(max(deadline - time.monotonic(), 0.0))
    streams = [
        r
        if r is not None
        else Trial(
            combination=combination,
            kind=TrialKind.RAW_TCP,
            repetition=repetition,
            warmup=warmup,
            payload_bytes=share_bytes,
            started_at=parent.started_at,
            invalid_reason="did not finish in time",
        )
        for r in results
    ]
    return merge(parent, streams)


def _one_sink(
    share_payload: Path,
    share_bytes: int,
    repetition: int,
    warmup: bool,
    timeout_s: float,
    combination: Combination,
    path: dict,
) -> Trial:
    """N senders (threads here) into one sink process of N connections (tcp_sink.serve_many)."""
    n = combination.streams

    def trial(payload_bytes: int) -> Trial:
        return Trial(
            combination, TrialKind.RAW_TCP, repetition, warmup, payload_bytes=payload_bytes, started_at=time.time()
        )

    parent = trial(share_bytes * n)
    sink = sink_process.TcpSink(
        timeout_s, host=path["sink"][0], port=path["sink"][1], netns=path["sink_netns"], connections=n
    )
    try:
        sink.start()
    except OSError as err:
        parent.exit_status, parent.invalid_reason = 1, str(err)
        return parent
    streams = [trial(share_bytes) for _ in range(n)]
    go = threading.Event()

    def send(index: int) -> None:
        go.wait()
        try:
            done = raw_tcp.send_file(share_payload, path["connect"], timeout_s, netns=path["sender_netns"])
            streams[index].sent_bytes, streams[index].client_cpu_s = done.sent_bytes, done.cpu_s
        except OSError as err:
            streams[index].invalid_reason = f"raw TCP sender to {path['connect'][0]}:{path['connect'][1]}: {err}"

    threads = [threading.Thread(target=send, args=(i,), daemon=True) for i in range(n)]
    try:
        for thread in threads:
            thread.start()
        go.set()
        deadline = time.monotonic() + timeout_s + _JOIN_MARGIN_S
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        result = sink.wait() if all(t.invalid_reason is None for t in streams) else sink.result
    finally:
        sink.close()
    reports = result.streams or []
    for index, t in enumerate(streams):
        report = reports[index] if index < len(reports) else {}
        t.received_bytes_at_sink = report.get("received_bytes")
        t.data_s, t.reader_ended_at = report.get("data_s"), report.get("ended_at")
        t.data_clock = sink_process.DATA_CLOCK if t.data_s else None
        t.wall_s = t.data_s
        t.exit_status = 0 if t.invalid_reason is None and not report.get("error") else 1
        if t.invalid_reason is None:
            t.invalid_reason = report.get("error") or result.error
        if t.invalid_reason is None and t.received_bytes_at_sink != share_bytes:
            t.invalid_reason = f"sink received {t.received_bytes_at_sink} of {share_bytes} bytes"
        t.valid = t.invalid_reason is None
    # The sink's CPU is one process's for all connections: the trial's server CPU, not per stream.
    return merge(parent, streams, server_cpu_total_s=result.cpu_s)


__all__ = ["run_raw_tcp_streams"]
