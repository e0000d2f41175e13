"""Run a benchmark: start the target, plan the matrix, run interleaved trials, keep every result.

Whatever happens after the first trial (Ctrl-C, SIGTERM, sshd dying, a full disk), the trials
already measured are returned in the RunResult so they can be reported and saved.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from sshbench import environment
from sshbench.algorithms import select, would_negotiate
from sshbench.cleanup import Cleanup, clean_leftovers, kill_tree, signals_raise
from sshbench.errors import Interrupted, RunError, SshbenchError, UsageError
from sshbench.payload import MIN_SIZE, PROBE_SIZE, PayloadStore, needs_bigger_probe, size_for_rate
from sshbench.plan import ScheduledTrial, build_matrix, handshake_combinations, schedule
from sshbench.results import Combination, Trial
from sshbench.summary import HandshakeSummary, Summary, summarise_handshakes, summarise_transfers
from sshbench.targets import Target, make_target
from sshbench.tools import get_tool
from sshbench.trial import RunningProcess, run_trial
from sshbench.units import GIB, format_size


@dataclass
class RunSettings:
    host: str | None = None  # None: the private sshd
    ciphers: str | None = None  # None: every cipher both ends support
    macs: str | None = None  # None: the MAC a default connection negotiates (all with --full)
    kex: str | None = None  # None: the kex a default connection negotiates
    full: bool = False
    size: int | None = None  # None: adaptive, about `seconds` of data phase per combination
    seconds: float = 1.0
    max_size: int = 1 * GIB
    runs: int = 5
    warmup: int = 1
    tool: str = "pipe"
    trial_timeout_s: float = 300.0
    ssh: str = "ssh"
    sshd: str | None = None
    ssh_config: str | None = None

    def validate(self) -> None:
        if self.runs < 1:
            raise UsageError(f"--runs must be at least 1 (got {self.runs})")
        if self.warmup < 0:
            raise UsageError(f"--warmup cannot be negative (got {self.warmup})")
        if self.size is not None and self.size < MIN_SIZE:
            raise UsageError(f"--size {format_size(self.size)} is too small: at least {format_size(MIN_SIZE)}, "
                             "or the data phase is too short to time")
        if self.max_size < MIN_SIZE:
            raise UsageError(f"--max-size must be at least {format_size(MIN_SIZE)}")
        if not 0.05 <= self.seconds <= 600:
            raise UsageError(f"--seconds must be between 0.05 and 600 (got {self.seconds})")
        if self.trial_timeout_s <= 0:
            raise UsageError("--trial-timeout must be positive")
        if self.ssh_config and self.host is None:
            raise UsageError("--ssh-config applies to a remote HOST; the private sshd never reads ssh_config")


@dataclass
class RunResult:
    settings: RunSettings
    environment: dict = field(default_factory=dict)
    target: dict = field(default_factory=dict)
    combinations: list[Combination] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)
    status: str = "running"  # complete | interrupted | failed
    error: str | None = None
    exit_code: int = 0
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    notices: list[str] = field(default_factory=list)

    def summaries(self) -> list[Summary]:
        return summarise_transfers(self.trials)

    def handshakes(self) -> list[HandshakeSummary]:
        return summarise_handshakes(self.trials)

    def settings_json(self) -> dict:
        return asdict(self.settings)


TrialCallback = Callable[[int, int, Trial], None]


class Runner:
    def __init__(self, settings: RunSettings, on_trial: TrialCallback | None = None,
                 on_plan: Callable[[int], None] | None = None) -> None:
        settings.validate()
        self.settings = settings
        self.on_trial = on_trial
        self.on_plan = on_plan
        self.result = RunResult(settings=settings)
        self.tool = get_tool(settings.tool)

    def run(self) -> RunResult:
        removed = clean_leftovers()
        if removed:
            self.result.notices.append(f"removed leftovers of an earlier run that was killed: {', '.join(removed)}")
        cleanup = Cleanup()
        target: Target | None = None
        try:
            with signals_raise():
                try:
                    target = make_target(self.settings.host, sshd=self.settings.sshd, ssh=self.settings.ssh,
                                         ssh_config=self.settings.ssh_config)
                    target.start(cleanup)
                    self._measure(target, cleanup)
                    self.result.status = "complete"
                finally:
                    proc = RunningProcess.current
                    if proc is not None and proc.poll() is None:
                        kill_tree(proc.pid)
                    cleanup.close()
        except (KeyboardInterrupt, Interrupted) as err:
            self.result.status = "interrupted"
            signum = getattr(err, "signum", 2)
            self.result.error = f"interrupted by signal {signum}"
            self.result.exit_code = 128 + signum
        except SshbenchError as err:
            self.result.status = "failed"
            self.result.error = str(err)
            self.result.exit_code = err.exit_code
        finally:
            if target is not None:
                self.result.target = target.describe()
            self._cross_check()
            self.result.finished_at = time.time()
        if self.result.status == "complete" and any(s.valid_trials == 0 for s in self.result.summaries()):
            self.result.exit_code = 1
        return self.result

    # ---------------------------------------------------------------------------------------------

    def _measure(self, target: Target, cleanup: Cleanup) -> None:
        s = self.settings
        client, server = target.client_algorithms(), target.server_algorithms()
        label = target.label
        ciphers = select("cipher", s.ciphers or "all", client, server, label)
        if s.macs:
            macs = select("mac", s.macs, client, server, label)
        elif s.full:
            macs = select("mac", "all", client, server, label)
        else:
            default_mac = would_negotiate(client.default_macs, server.macs)
            macs = [default_mac] if default_mac else select("mac", "all", client, server, label)[:1]
        if s.kex:
            kexes = select("kex", s.kex, client, server, label)
        else:
            default_kex = would_negotiate(client.default_kex, server.kex)
            kexes = [default_kex] if default_kex else select("kex", "all", client, server, label)[:1]
        combos = build_matrix(ciphers, macs, kexes, client.aead_ciphers, tool=self.tool.name)
        handshakes = handshake_combinations(combos)
        self.result.combinations = combos
        self.result.environment = {
            **environment.collect(s.ssh),
            "server_ssh_version": target.server_version,
            "server_strict_kex": server.strict_kex,
            "target": label,
            "payload_kind": "random",
            "payload_size": format_size(s.size) if s.size else f"adaptive (~{s.seconds:g} s per trial, "
                                                               f"at most {format_size(s.max_size)})",
        }
        biggest = s.size or s.max_size
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=2 * biggest)
        payloads = PayloadStore(workdir)
        sizes = {c: s.size or PROBE_SIZE for c in combos}
        plan = schedule(combos, handshakes, s.runs, s.warmup, calibrate=s.size is None)
        if self.on_plan:
            self.on_plan(len(plan))
        for index, item in enumerate(plan):
            trial = self._one(target, item, sizes, payloads, workdir)
            self._record(index, len(plan), trial, target)
            if item.calibration:
                self._calibrate(target, item, trial, sizes, payloads, workdir, index, len(plan))

    def _record(self, index: int, total: int, trial: Trial, target: Target) -> None:
        self.result.trials.append(trial)
        if self.on_trial:
            self.on_trial(index + 1, total, trial)
        if not trial.valid and not target.alive():
            raise RunError(f"{target.death_reason() or 'the target died'} during the run; "
                           f"kept the {self._measured()} trials measured before")

    def _calibrate(self, target: Target, item: ScheduledTrial, trial: Trial, sizes: dict[Combination, int],
                   payloads: PayloadStore, workdir, index: int, total: int) -> None:
        """Size this combination's payload from its probe's rate; re-probe (at most twice, as extra
        warm-up trials) while the probe was too short to time well."""
        s = self.settings
        for _ in range(2):
            if not (trial.valid and trial.mib_s):
                return
            size = sizes[item.combination]
            sizes[item.combination] = size_for_rate(trial.mib_s, s.seconds, s.max_size)
            if not needs_bigger_probe(trial.data_s, size, s.seconds, s.max_size):
                return
            sizes[item.combination] = max(sizes[item.combination], min(size * 4, s.max_size))
            trial = self._one(target, item, sizes, payloads, workdir)
            self._record(index, total, trial, target)
        if trial.valid and trial.mib_s:
            sizes[item.combination] = size_for_rate(trial.mib_s, s.seconds, s.max_size)

    def _one(self, target: Target, item: ScheduledTrial, sizes: dict[Combination, int], payloads: PayloadStore,
             workdir) -> Trial:
        if not target.alive():
            raise RunError(f"{target.death_reason() or 'the target died'} during the run; "
                           f"kept the {self._measured()} trials measured before")
        size = sizes[item.combination]
        path = payloads.path_for(size) if item.kind == "transfer" else None
        return run_trial(ssh=self.settings.ssh, target=target, tool=self.tool, combo=item.combination,
                         kind=item.kind, repetition=item.repetition, warmup=item.warmup, payload=path,
                         payload_bytes=size, workdir=workdir, timeout_s=self.settings.trial_timeout_s)

    def _measured(self) -> int:
        return sum(1 for t in self.result.trials if not t.warmup and t.valid)

    def _cross_check(self) -> None:
        """wall - (median wall of a no-data connection with the same kex): the second data-phase clock.
        It also stands in for data_s where the server-side reader gave no time."""
        handshake_wall: dict[str, float] = {}
        for h in self.result.handshakes():
            if h.median_ms is not None:
                handshake_wall[h.kex] = h.median_ms / 1000
        for t in self.result.trials:
            if t.kind != "transfer" or t.wall_s is None:
                continue
            base = handshake_wall.get(t.combination.kex)
            if base is None:
                continue
            t.wall_minus_handshake_s = max(t.wall_s - base, 0.0)
            if t.data_s is None and t.valid and t.wall_minus_handshake_s > 0:
                t.data_s, t.data_clock = t.wall_minus_handshake_s, "wall-minus-handshake"


def clock_agreement(trials: list[Trial]) -> float | None:
    """Median of data_s / wall_minus_handshake_s over valid measured transfers: how well the two clocks agree."""
    ratios = [t.data_s / t.wall_minus_handshake_s for t in trials
              if t.kind == "transfer" and t.valid and not t.warmup and t.data_clock == "server-reader"
              and t.data_s and t.wall_minus_handshake_s]
    return statistics.median(ratios) if ratios else None
