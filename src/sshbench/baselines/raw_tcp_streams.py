"""The raw TCP control with N streams (`run -P N`), so that `x raw TCP` of an N-stream combination compares
like with like: N sinks and N senders started together, each moving 1/N of the payload, merged into one
trial as the ssh streams are (sshbench.streams: the aggregate over the common data phase, first start to
last end on the sinks' clock). Each stream is an ordinary raw TCP trial (raw_tcp.run_raw_tcp_trial) on its
own thread; this module adds only the fan-out."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sshbench.baselines import raw_tcp
from sshbench.results import Combination, Trial
from sshbench.streams import merge

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
    """`combination.streams` raw TCP streams of `share_bytes` each (the file `share_payload`)."""
    n = combination.streams
    parent = Trial(
        combination=combination,
        kind=raw_tcp.KIND,
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
                kind=raw_tcp.KIND,
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
            kind=raw_tcp.KIND,
            repetition=repetition,
            warmup=warmup,
            payload_bytes=share_bytes,
            started_at=parent.started_at,
            invalid_reason="did not finish in time",
        )
        for r in results
    ]
    return merge(parent, streams)


__all__ = ["run_raw_tcp_streams"]
