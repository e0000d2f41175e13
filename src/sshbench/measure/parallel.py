"""`run -P N`: N connections of one combination started together, each moving 1/N of the payload, merged
into one trial (its figures: sshbench.measure.streams).

Each stream is an ordinary trial (sshbench.measure.trial.run_trial: its own client process in its own session,
its own timer, its own log and server-side report), run on its own thread so that all N start within a
few milliseconds and each one's end is seen when it happens. With the pipe tool on a server that shares
this machine's filesystem, the streams' server-side scripts also wait at a start barrier
(sshbench.measure.start_gate) until all N are about to move data, so that the common data phase holds data
movement and not N connection set-ups queueing for the same cores. Every client is registered with
`trial.RunningProcess`, so Ctrl-C kills all of them (the runner's `finally`). Integrity checks of what
arrived (sizes, SHA-256) run after the last stream ended, never while others still move data.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sshbench.host.environment import busy_cores, cpu_ticks
from sshbench.measure.plan import ScheduledTrial
from sshbench.measure.start_gate import StartGate
from sshbench.measure.streams import merge, stream_share
from sshbench.measure.trial import run_trial
from sshbench.measure.trial_files import TrialPaths
from sshbench.results import Combination, Trial, TrialKind
from sshbench.targets import Target
from sshbench.tools import TransferTool, TrialFiles

# How long past its own timeout a stream's thread may take to hand its trial back (reading its log).
_JOIN_MARGIN_S = 60.0


def fans_out(combo: Combination, tool: TransferTool) -> bool:
    """Whether this combination runs as N copies of the tool (a tool that splits one file over its own
    connections takes N itself)."""
    return combo.streams > 1 and not tool.splits_streams


def uses_gate(tool: TransferTool, target: Target) -> bool:
    """Whether the streams wait at the start barrier: a tool whose server-side script can (the pipe), on a
    server whose filesystem is this machine's (the barrier's FIFOs)."""
    return tool.start_gate and target.shares_local_filesystem


def stream_files(files: TrialFiles, index: int) -> TrialFiles:
    """Stream `index`'s files: the same source (every stream sends an equal share, the same bytes), and
    a sink file of its own (N writers must not share one)."""

    def own(path: str) -> str:
        return path if path == "/dev/null" else f"{path}-stream{index + 1}"

    return replace(files, remote_sink=own(files.remote_sink), local_sink=own(files.local_sink), streams=1)


def run_parallel_trial(
    *,
    ssh: str,
    target: Target,
    tool: TransferTool,
    item: ScheduledTrial,
    payload_bytes: int,
    paths: TrialPaths,
    workdir: Path,
    timeout_s: float,
    env: dict[str, str] | None = None,
    client_prefix: Sequence[str] = (),
    max_steady_window_s: float | None = None,
    setup_kex: str | None = None,
) -> Trial:
    """One parallel trial of `item.combination.streams` streams (`client_prefix`, `max_steady_window_s`,
    `setup_kex`: as run_trial's, for each stream). A handshake
    trial opens N empty connections together (through the same barrier): the fixed cost the N-stream
    transfers' wall time also contains."""
    combo, kind = item.combination, item.kind
    n = combo.streams
    share = stream_share(payload_bytes, n) if kind == TrialKind.TRANSFER else 0
    tail_ok = tool.source_on_stdin
    files = [stream_files(paths.for_trial(combo, kind, share or payload_bytes, tail_ok=tail_ok), i) for i in range(n)]
    parent = Trial(
        combination=combo,
        kind=kind,
        repetition=item.repetition,
        warmup=item.warmup,
        payload_bytes=share * n,
        started_at=time.time(),
        setup_kex=setup_kex,
    )
    results: list[Trial | None] = [None] * n
    failures: list[str | None] = [None] * n
    go = threading.Event()
    gate = StartGate(workdir / f"gate-{time.monotonic_ns()}", n) if uses_gate(tool, target) else None
    if gate is not None:
        files = [replace(f, gate=gate.files(i)) for i, f in enumerate(files)]

    def stream(index: int) -> None:
        go.wait()
        try:
            stream_dir = workdir / f"stream-{index + 1}"
            stream_dir.mkdir(exist_ok=True)
            results[index] = run_trial(
                ssh=ssh,
                target=target,
                tool=tool,
                combo=combo,
                kind=kind,
                repetition=item.repetition,
                warmup=item.warmup,
                payload=Path(files[index].local_source),
                payload_bytes=share,
                workdir=stream_dir,
                timeout_s=timeout_s,
                env=env,
                files=files[index],
                client_prefix=client_prefix,
                max_steady_window_s=max_steady_window_s,
                setup_kex=setup_kex,
            )
        except Exception as err:  # a stream that could not even start: the trial says which
            failures[index] = f"{type(err).__name__}: {err}"
        finally:
            if gate is not None:
                gate.ended(index)  # (one that never reached the barrier is not waited for)

    server_cpu_before = None if tool.reports_server_side else target.server_cpu_total()
    # Daemon threads: after Ctrl-C the runner kills every client (RunningProcess) and moves on.
    threads = [threading.Thread(target=stream, args=(i,), daemon=True, name=f"stream-{i + 1}") for i in range(n)]
    try:
        for thread in threads:
            thread.start()
        go.set()
        if gate is not None:  # every stream at the barrier (or ended), then all released together
            gate.wait(timeout_s)
            gate.release()
        ticks_before = cpu_ticks()  # the machine's CPU while the streams move data (the cores verdict)
        deadline = time.monotonic() + timeout_s + _JOIN_MARGIN_S
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        ticks_after = cpu_ticks()
    finally:
        if gate is not None:
            gate.close()
    server_cpu_total = None
    if server_cpu_before is not None:
        after = target.server_cpu_total()
        server_cpu_total = max(after - server_cpu_before, 0.0) if after is not None else None
    streams = [_stream_trial(results[i], failures[i], threads[i], parent, share) for i in range(n)]
    if kind == TrialKind.TRANSFER:  # after the timed phase of every stream
        for index, trial in enumerate(streams):
            if results[index] is not None:
                paths.check_received(trial, files[index])
    merged = merge(parent, streams, server_cpu_total)
    merged.machine_busy_cores = busy_cores(ticks_before, ticks_after, os.cpu_count())
    if gate is not None and gate.released_at is not None and merged.per_stream:
        first = merged.started_at  # the first stream's start (client clock), as `started_s` counts
        if merged.wall_s is not None:
            # The trial's wall time from the release: what wall minus the same-shape (N-stream, gated)
            # handshake compares with the data phase, without the slowest set-up's jitter in it.
            merged.wall_s = max(first + merged.wall_s - gate.released_at, 0.0)
        for index, entry in enumerate(merged.per_stream):
            # When its server side was ready to move data (connection, login, session and shell behind it),
            # and when all were released: the set-up the barrier keeps out of the common data phase.
            arrived = gate.arrived_at.get(index)
            entry["at_gate_s"] = round(arrived - first, 6) if arrived is not None else None
            entry["released_s"] = round(gate.released_at - first, 6)
    return merged


def _stream_trial(
    result: Trial | None, failure: str | None, thread: threading.Thread, parent: Trial, share: int
) -> Trial:
    """The stream's own trial, or an invalid stand-in saying why there is none."""
    if result is not None:
        return result
    reason = failure or ("did not finish in time" if thread.is_alive() else "no result")
    return Trial(
        combination=parent.combination,
        kind=parent.kind,
        repetition=parent.repetition,
        warmup=parent.warmup,
        payload_bytes=share,
        started_at=parent.started_at,
        invalid_reason=reason,
    )


__all__ = ["fans_out", "run_parallel_trial", "stream_files", "uses_gate"]
