"""How one scheduled trial runs, past the runner's choice of a warm burst (sshbench.measure.warm_rows): the raw TCP control
(one stream or -P N), a -P N transfer (sshbench.measure.parallel) or a single client connection (sshbench.measure.trial). Each
executor takes what it runs with as parameters and returns the Trial; the runner records it and charges its rekeys."""

from __future__ import annotations

from pathlib import Path

from sshbench.baselines import raw_tcp, raw_tcp_remote
from sshbench.baselines.raw_tcp_streams import run_raw_tcp_streams
from sshbench.measure import parallel
from sshbench.measure.payload import PayloadStore
from sshbench.measure.plan import ScheduledTrial
from sshbench.measure.streams import stream_share
from sshbench.measure.trial import TrialOverlay, run_trial
from sshbench.measure.trial_files import TrialPaths
from sshbench.results import Trial, TrialKind
from sshbench.targets import Target
from sshbench.tools import TransferTool
from sshbench.units import MIB

RAW_TCP_BLOCK = 64 * MIB  # the raw TCP control's payload file, sent as often as its size needs


def raw_tcp_trial(
    item: ScheduledTrial, size: int, *, target: Target, payloads: PayloadStore, files: TrialPaths, timeout_s: float
) -> tuple[Trial, str | None]:
    """The raw TCP control: its payload file sent over and over (its sink only counts), no file of its own size; with
    -P N, N streams of a share each. A remote host sends its copy for "down". With it, the note where a remote
    control cannot work (raw_tcp_remote.blocked_note: a blocked port; one stream only)."""
    path = payloads.path_for(min(size, RAW_TCP_BLOCK))
    target.before_trial(item.combination)  # an emulated link: apply it, and run over it
    link_path = target.raw_tcp_path()
    if item.combination.streams > 1:
        share = stream_share(size, item.combination.streams)
        streams = run_raw_tcp_streams(
            share_payload=payloads.path_for(share),
            share_bytes=share,
            repetition=item.repetition,
            warmup=item.warmup,
            timeout_s=timeout_s,
            combination=item.combination,
            path=link_path,
        )
        return streams, None
    if link_path is not None and item.combination.direction == "down":  # a remote host sends its copy
        link_path["source"] = files.remote_payload(size)
    trial = raw_tcp.run_raw_tcp_trial(
        payload=path,
        payload_bytes=size,
        repetition=item.repetition,
        warmup=item.warmup,
        timeout_s=timeout_s,
        combination=item.combination,
        path=link_path,
    )
    return trial, raw_tcp_remote.blocked_note(trial, link_path)


def connection_trial(
    item: ScheduledTrial,
    size: int,
    *,
    target: Target,
    tool: TransferTool,
    ssh: str,
    paths: TrialPaths,
    workdir: Path,
    timeout_s: float,
    env: dict[str, str] | None,
    overlay: TrialOverlay,
    max_steady_window_s: float | None,
    setup_kex: str | None,
) -> Trial:
    """A trial on fresh connections: N clients started together where the tool fans out (-P N, sshbench.measure.parallel),
    else one client (sshbench.measure.trial.run_trial), its received copy checked after a transfer. `overlay` (a --why
    experiment's client prefix and throttle) is prepared after the target's before_trial."""
    combo = item.combination
    if parallel.fans_out(combo, tool):  # -P N: N clients started together (sshbench.measure.parallel)
        overlay.prepare(target, combo)
        return parallel.run_parallel_trial(
            ssh=ssh,
            target=target,
            tool=tool,
            item=item,
            payload_bytes=size,
            paths=paths,
            workdir=workdir,
            timeout_s=timeout_s,
            env=env,
            client_prefix=overlay.client_prefix,
            max_steady_window_s=max_steady_window_s,
            setup_kex=setup_kex,
        )
    files = paths.for_trial(combo, item.kind, size, tail_ok=tool.source_on_stdin)
    overlay.prepare(target, combo)
    trial = run_trial(
        ssh=ssh,
        target=target,
        tool=tool,
        combo=combo,
        kind=item.kind,
        repetition=item.repetition,
        warmup=item.warmup,
        payload=Path(files.local_source),
        payload_bytes=size,
        workdir=workdir,
        timeout_s=timeout_s,
        env=env,
        files=files,
        client_prefix=overlay.client_prefix,
        max_steady_window_s=max_steady_window_s,
        setup_kex=setup_kex,
    )
    if item.kind == TrialKind.TRANSFER:
        paths.check_received(trial, files)
    return trial
