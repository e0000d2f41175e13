"""How one scheduled trial runs: one small interface (TrialExecutor) and the run's choice of one per row.

Four executors: the raw TCP control (one stream or -P N), a fresh connection (one client: sshbench.measure.trial),
N streams started together (-P N: sshbench.measure.parallel), and a warm burst in the row's kept connection
(sshbench.measure.warm) after its first round, on a fresh connection where a burst does not fit or the session
broke. `Executors` chooses each row's once and owns the warm sessions; the runner only asks for a row's executor and
records what it returns. A test hands the runner its own executors (tests/fakes.py) to drive whole runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sshbench.baselines import raw_tcp, raw_tcp_remote
from sshbench.baselines.raw_tcp_streams import run_raw_tcp_streams
from sshbench.host.cleanup import Cleanup
from sshbench.measure import clock, parallel
from sshbench.measure.calibration import steady_window_cap
from sshbench.measure.plan import ScheduledTrial
from sshbench.measure.rekey_probe import RekeyCosts, probe_run
from sshbench.measure.run_plan import write_tails
from sshbench.measure.streams import stream_share
from sshbench.measure.target_set import TargetSet
from sshbench.measure.trial import RunningProcess, TrialOverlay, run_trial
from sshbench.measure.warm import WarmSession, WarmSessions
from sshbench.measure.warm_rows import burst_fits, open_warm, warm_files, warm_record, warm_row
from sshbench.results import Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.tools import TransferTool, get_tool
from sshbench.units import MIB

RAW_TCP_BLOCK = 64 * MIB  # the raw TCP control's payload file, sent as often as its size needs


class TrialExecutor(Protocol):
    """Runs one scheduled trial of `size` bytes (a --why experiment's `overlay`: its client prefix and throttle)."""

    def run(self, item: ScheduledTrial, size: int, overlay: TrialOverlay | None = None) -> Trial: ...


class ExecutorSet(Protocol):
    """A run's executors: one per row, chosen once; what ends with the rounds; what an interrupt stops."""

    def executor_for(self, item: ScheduledTrial) -> TrialExecutor: ...

    def skips(self, item: ScheduledTrial) -> bool: ...

    def before_rounds(self, combos: list[Combination]) -> None: ...

    def end_rounds(self) -> list[str]: ...

    def stop(self) -> None: ...


@dataclass
class TrialContext:
    """What every executor of a run runs with. The runner sets `settings` (its record: the data phase as fitted),
    `rekeys` (measured before the rounds) and `sizes` as the run decides them; executors read them per trial."""

    settings: RunSettings
    targets: TargetSet
    result: RunResult  # the trials so far (a provisional clock), the rows (warm sessions), baselines' notes
    workdir: Path
    cleanup: Cleanup
    env: dict[str, str] | None = None  # --no-aesni: every client's environment
    tools: dict[str, TransferTool] = field(default_factory=dict)
    setup_kexes: dict[Combination, str] = field(default_factory=dict)
    rekeys: RekeyCosts = field(default_factory=RekeyCosts)
    sizes: dict[Combination, int] = field(default_factory=dict)

    def tool_for(self, combo: Combination) -> TransferTool:
        """The tool implementation for the combination's client (an AsyncSSH client has its own pipe)."""
        if combo.client != "openssh":
            return get_tool(combo.tool, client=combo.client)
        return self.tools[combo.tool]


class RawTcpControl:
    """The raw TCP control: its payload file sent over and over (its sink only counts), no file of its own size;
    with -P N, N streams of a share each. A remote host sends its copy for "down". Where a remote control cannot
    work (a blocked port), a note, and the run leaves the control out from then on (`left_out`)."""

    def __init__(self, ctx: TrialContext) -> None:
        self.ctx, self.left_out = ctx, False

    def run(self, item: ScheduledTrial, size: int, overlay: TrialOverlay | None = None) -> Trial:
        ctx = self.ctx
        files, target, timeout_s = ctx.targets.files, ctx.targets.of(item.combination), ctx.settings.trial_timeout_s
        path = files.payloads.path_for(min(size, RAW_TCP_BLOCK))
        target.before_trial(item.combination)  # an emulated link: apply it, and run over it
        link_path = target.raw_tcp_path()
        if item.combination.streams > 1:
            share = stream_share(size, item.combination.streams)
            return run_raw_tcp_streams(
                share_payload=files.payloads.path_for(share),
                share_bytes=share,
                repetition=item.repetition,
                warmup=item.warmup,
                timeout_s=timeout_s,
                combination=item.combination,
                path=link_path,
            )
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
        found = (link_path or {}).pop("notes", [])  # the remote end's: once each
        if note := raw_tcp_remote.blocked_note(trial, link_path):
            found.append(note)
            self.left_out = True
        for note in found:
            if note not in (notes := ctx.result.baselines.setdefault("notes", [])):
                notes.append(note)
        return trial


class FreshConnection:
    """A trial on a connection of its own: one client (sshbench.measure.trial.run_trial), its received copy checked
    after a transfer; a transfer's provisional clock and rekeys charged. The kex it connects with is the quickest
    to set up where the run does not measure kex (plan.setup_kex)."""

    def __init__(self, ctx: TrialContext, tool: TransferTool) -> None:
        self.ctx, self.tool = ctx, tool

    def run(self, item: ScheduledTrial, size: int, overlay: TrialOverlay | None = None) -> Trial:
        ctx, combo = self.ctx, item.combination
        target, paths = ctx.targets.of(combo), ctx.targets.paths_of(combo)
        files = paths.for_trial(combo, item.kind, size, tail_ok=self.tool.source_on_stdin)
        overlay = overlay or TrialOverlay()
        overlay.prepare(target, combo)
        trial = run_trial(
            ssh=ctx.targets.ssh_for(combo),
            target=target,
            tool=self.tool,
            combo=combo,
            kind=item.kind,
            repetition=item.repetition,
            warmup=item.warmup,
            payload=Path(files.local_source),
            payload_bytes=size,
            workdir=ctx.workdir,
            timeout_s=ctx.settings.trial_timeout_s,
            env=ctx.env,
            files=files,
            client_prefix=overlay.client_prefix,
            max_steady_window_s=steady_window_cap(ctx.settings),  # the same stretch of every trial's connection
            setup_kex=ctx.setup_kexes.get(combo) if item.kind == TrialKind.TRANSFER else None,
        )
        if item.kind == TrialKind.TRANSFER:
            paths.check_received(trial, files)
        return after_transfer(ctx, trial)


class ParallelStreams:
    """-P N: N clients started together, each moving 1/N of the payload (sshbench.measure.parallel)."""

    def __init__(self, ctx: TrialContext, tool: TransferTool) -> None:
        self.ctx, self.tool = ctx, tool

    def run(self, item: ScheduledTrial, size: int, overlay: TrialOverlay | None = None) -> Trial:
        ctx, combo = self.ctx, item.combination
        target = ctx.targets.of(combo)
        overlay = overlay or TrialOverlay()
        overlay.prepare(target, combo)
        trial = parallel.run_parallel_trial(
            ssh=ctx.targets.ssh_for(combo),
            target=target,
            tool=self.tool,
            item=item,
            payload_bytes=size,
            paths=ctx.targets.paths_of(combo),
            workdir=ctx.workdir,
            timeout_s=ctx.settings.trial_timeout_s,
            env=ctx.env,
            client_prefix=overlay.client_prefix,
            max_steady_window_s=steady_window_cap(ctx.settings),
            setup_kex=ctx.setup_kexes.get(combo) if item.kind == TrialKind.TRANSFER else None,
        )
        return after_transfer(ctx, trial)


def after_transfer(ctx: TrialContext, trial: Trial) -> Trial:
    """A transfer's provisional clock (tools with no server-side clock) and the rekeys it meets, where they matter
    (sshbench.measure.rekey), charged as soon as it ends."""
    if trial.kind == TrialKind.TRANSFER:
        slow_server = ctx.settings.server_cpu is not None
        clock.provisional_wall_clock(trial, ctx.result.trials, slow_server=slow_server)
        ctx.rekeys.charge(trial, ctx.targets.of(trial.combination))
    return trial


class WarmBursts:
    """A row's transfers after its first round as bursts in one connection kept open across the rounds (burst_fits);
    its other trials, and every one after its session broke, on a fresh connection. The first burst of the run
    opens every warm row's session together."""

    def __init__(self, ctx: TrialContext, fresh: TrialExecutor, sessions: WarmSessions, rows: list[Combination]):
        self.ctx, self.fresh, self.sessions, self.rows = ctx, fresh, sessions, rows

    def run(self, item: ScheduledTrial, size: int, overlay: TrialOverlay | None = None) -> Trial:
        combo = item.combination
        if overlay is not None or not burst_fits(item, lambda c: c in self.rows):
            return self.fresh.run(item, size, overlay)
        if combo not in self.sessions.sessions:  # the first burst: every row's session, opened together
            self._open_all(combo)
        if self.sessions.broken(combo) is not None:  # its ssh exited: the row goes on, on fresh connections
            return self.fresh.run(item, size, overlay)
        trial = self.sessions.burst(combo, item.repetition)
        self.ctx.rekeys.charge(trial, self.ctx.targets.of(combo))  # the rekeys a long transfer meets, as a trial's
        return trial

    def _open_all(self, combo: Combination) -> None:
        ctx = self.ctx
        payloads: dict[Combination, Path] = {}

        def open_one(c: Combination, index: int) -> WarmSession:
            if not payloads:  # the files the sessions read, written with the first session opened (warm_files)
                payloads.update(warm_files(self.rows, ctx.sizes, ctx.targets.paths_of, ctx.settings.max_size))
            return open_warm(
                c,
                ctx.targets.of(c),
                index,
                ssh=ctx.targets.ssh_for(c),
                setup_kex=ctx.setup_kexes.get(c),
                payload=payloads[c],
                workdir=ctx.workdir,
                ssh_env=ctx.env,
                settings=ctx.settings,
            )

        self.sessions.open_all([combo, *self.rows], open_one, track=ctx.cleanup.track_process)


class Executors:
    """The run's executors (ExecutorSet), each row's chosen at its first trial: the raw TCP control, -P N where the
    tool fans out, a warm row's bursts (--no-warm: none), else a fresh connection."""

    def __init__(self, ctx: TrialContext) -> None:
        self.ctx = ctx
        self.warm = WarmSessions() if ctx.settings.warm else None
        self.raw_tcp = RawTcpControl(ctx)
        self._chosen: dict[tuple[Combination, str], TrialExecutor] = {}
        self._warm_rows: list[Combination] | None = None

    def executor_for(self, item: ScheduledTrial) -> TrialExecutor:
        key = (item.combination, item.kind)
        if key not in self._chosen:
            self._chosen[key] = self._choose(item)
        return self._chosen[key]

    def _choose(self, item: ScheduledTrial) -> TrialExecutor:
        if item.kind == TrialKind.RAW_TCP:
            return self.raw_tcp
        combo, ctx = item.combination, self.ctx
        tool = ctx.tool_for(combo)
        if parallel.fans_out(combo, tool):
            return ParallelStreams(ctx, tool)
        fresh = FreshConnection(ctx, tool)
        if self.warm is None or item.kind != TrialKind.TRANSFER or combo not in self.warm_rows():
            return fresh
        return WarmBursts(ctx, fresh, self.warm, self.warm_rows())

    def warm_rows(self) -> list[Combination]:
        """The rows whose transfers after their first round can be bursts (warm_rows.warm_row), once."""
        if self._warm_rows is None:
            ctx = self.ctx
            emulated = ctx.settings.target.emulated

            def fits(c: Combination) -> bool:
                return warm_row(c, ctx.targets.of(c), ctx.targets.paths_of(c), ctx.settings, emulated)

            self._warm_rows = [c for c in ctx.result.combinations if fits(c)]
        return self._warm_rows

    def skips(self, item: ScheduledTrial) -> bool:
        """A trial the run leaves out: the raw TCP control's, once a remote control could not work."""
        return self.raw_tcp.left_out and item.kind == TrialKind.RAW_TCP

    def before_rounds(self, combos: list[Combination]) -> None:
        """Before the measured rounds: each payload file stdin tools read tails of (run_plan.write_tails)."""
        write_tails(combos, self.ctx.sizes, self.ctx.targets.paths_of, self.ctx.tool_for)

    def end_rounds(self) -> list[str]:
        """The warm sessions closed, each one's end check made (before anything reads the rows); their notices."""
        if self.warm is None or not self.warm.sessions:
            return []
        notices = self.warm.close_all()
        self.ctx.result.environment["warm_sessions"] = warm_record(self.ctx.result.trials)
        return notices

    def stop(self) -> None:
        """An interrupt or the run's end: the warm sessions' clients (checked no more) and the clients in flight."""
        if self.warm is not None:
            self.warm.kill_all()
        RunningProcess.kill_all()  # several with -P N


def probe_rekeys(ctx: TrialContext, combos: list[Combination]) -> RekeyCosts | None:
    """The run's rekey probes (rekey_probe.probe_run), with its targets, tools, files and client environment; None
    where no row rekeys often enough to matter."""
    return probe_run(
        combos,
        ctx.result.trials,
        target_for=ctx.targets.of,
        tool_for=ctx.tool_for,
        paths_for=ctx.targets.paths_of,
        ssh_for=ctx.targets.ssh_for,
        workdir=ctx.workdir,
        timeout_s=ctx.settings.trial_timeout_s,
        env=ctx.env,
        where=ctx.settings.host or "",
        client_version=ctx.result.environment.get("client_ssh_version"),
    )


__all__ = ["ExecutorSet", "Executors", "TrialContext", "TrialExecutor"]
