"""Fakes for the fast tier: scheduling and wiring only, never the measured path (which the end-to-end
tier runs against real servers). A target that starts nothing, a transfer tool whose client is `true`,
and runs built from a plan with made-up rates, so that the planner, the statistics and the reports have
tests that need no sshd."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms
from sshbench.capabilities import RemoteFacts
from sshbench.host.cleanup import Cleanup
from sshbench.measure.plan import ScheduledTrial
from sshbench.results import IMPLICIT_MAC, Combination, Negotiated, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.targets.base import Target
from sshbench.tools.base import Invocation, TransferTool, TrialFiles

AEAD = {"aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"}
CLIENT = ClientAlgorithms(
    ciphers=["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr", "aes256-ctr"],
    macs=["hmac-sha2-256", "umac-64-etm@openssh.com"],
    kex=["curve25519-sha256", "sntrup761x25519-sha512@openssh.com"],
    aead_ciphers=AEAD,
    default_ciphers=["chacha20-poly1305@openssh.com"],
    default_macs=["umac-64-etm@openssh.com"],
    default_kex=["curve25519-sha256"],
)
SERVER = ServerAlgorithms(ciphers=CLIENT.ciphers, macs=CLIENT.macs, kex=CLIENT.kex)
MIB = 1 << 20


class FakeTarget(Target):
    """A server on this machine that starts nothing: canned algorithm lists; set-up commands are recorded
    and answered with `replies` (prefix -> (status, output))."""

    kind = "fake"
    shares_local_filesystem: ClassVar[bool] = True

    def __init__(self, client: ClientAlgorithms = CLIENT, server: ServerAlgorithms = SERVER) -> None:
        self._client, self._server = client, server
        self.label = "fake server 127.0.0.1:22"
        self.server_version = "OpenSSH_9.2p1"
        self.started = False
        self.commands: list[str] = []
        self.replies: dict[str, tuple[int, str]] = {}

    def start(self, cleanup: Cleanup) -> None:
        self.started = True

    def client_options(self) -> list[str]:
        return ["-F", "/dev/null", "-o", "Port=22"]

    def destination(self) -> list[str]:
        return ["127.0.0.1"]

    def client_algorithms(self) -> ClientAlgorithms:
        return self._client

    def server_algorithms(self) -> ServerAlgorithms:
        return self._server

    def run_remote(self, command: str, stdin_path: str | None = None, timeout_s: float = 600) -> tuple[int, str]:
        self.commands.append(command)
        return next((reply for prefix, reply in self.replies.items() if command.startswith(prefix)), (0, ""))


class FakeRemote(FakeTarget):
    """Another machine, as RemoteHost looks once started: a host, its facts, no shared filesystem."""

    kind = "fake-remote"
    shares_local_filesystem: ClassVar[bool] = False

    def __init__(self, host: str = "nas", facts: RemoteFacts | None = None) -> None:
        super().__init__()
        self.host = host
        self.facts = facts if facts is not None else RemoteFacts(machine="x86_64", cores=4)
        self.label = f"{host} (me@{host}:22)"


class FakeTool(TransferTool):
    """A transfer tool whose client does nothing (`true`): for plans, never for trials that measure."""

    name = "fake"
    program = "true"

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        return Invocation(argv=[self.program, ssh, *ssh_options, host, direction])


@dataclass
class MadeUpRates:
    """MiB/s per cipher (default: `other`), scaled per repetition by `jitter` (cycled)."""

    per_cipher: dict[str, float] = field(default_factory=dict)
    other: float = 500.0
    jitter: tuple[float, ...] = (0.98, 1.0, 1.02)

    def __call__(self, combo: Combination, repetition: int) -> float:
        return self.per_cipher.get(combo.cipher, self.other) * self.jitter[repetition % len(self.jitter)]


def trial_for(item: ScheduledTrial, rates: MadeUpRates, payload_bytes: int = 8 * MIB, at: float = 1.7e9) -> Trial:
    """The trial a scheduled item would record if the path moved `rates` MiB/s (handshakes: 50 ms)."""
    c = item.combination
    negotiated = Negotiated(c.cipher, c.mac, c.kex, c.compression)
    if item.kind == "handshake":
        return Trial(
            combination=c,
            kind="handshake",
            repetition=item.repetition,
            warmup=item.warmup,
            payload_bytes=0,
            started_at=at,
            exit_status=0,
            valid=True,
            negotiated=negotiated,
            wall_s=0.05,
        )
    mib_s = rates(c, item.repetition)
    data_s = payload_bytes / MIB / mib_s
    return Trial(
        combination=c,
        kind=item.kind,
        repetition=item.repetition,
        warmup=item.warmup,
        payload_bytes=payload_bytes,
        started_at=at,
        exit_status=0,
        valid=True,
        negotiated=negotiated,
        wall_s=data_s + 0.05,
        data_s=data_s,
        data_clock="server-reader",
        received_bytes_at_sink=payload_bytes,
        client_cpu_s=data_s * 0.8,
        server_cpu_s=data_s * 0.7,
    )


def run_from_plan(
    plan: list[ScheduledTrial],
    combos: list[Combination],
    rates: MadeUpRates,
    settings: RunSettings | None = None,
) -> RunResult:
    """A complete run whose trials are `plan`'s, each with the made-up rate."""
    trials = [trial_for(item, rates, at=1.7e9 + i) for i, item in enumerate(plan)]
    return RunResult(
        settings=settings or RunSettings(baselines=False),
        environment=ENVIRONMENT,
        target={"kind": "fake", "label": "fake server 127.0.0.1:22", "server_version": "OpenSSH_9.2p1"},
        combinations=combos,
        trials=trials,
        status="complete",
        started_at=1.7e9,
        finished_at=1.7e9 + len(trials),
        run_id=1,
    )


ENVIRONMENT = {
    "hostname": "fake-host",
    "cpu_model": "Test CPU",
    "cores": 4,
    "crypto_flags": {"aes": True},
    "client_ssh_version": "OpenSSH_9.2p1",
    "server_ssh_version": "OpenSSH_9.2p1",
    "target": "loopback",
    "payload_kind": "random",
    "payload_size": "8 MiB",
}


def constructed_run(
    ciphers: tuple[str, ...] = ("aes128-gcm@openssh.com", "aes128-ctr", "chacha20-poly1305@openssh.com"),
    kex: str = "curve25519-sha256",
    runs: int = 3,
    environment: dict | None = None,
    notices: list[str] | None = None,
) -> RunResult:
    """A small complete run built by hand: each cipher (a MAC for the non-AEAD ones) `runs` times."""
    from sshbench.measure.plan import schedule

    combos = [Combination(c, IMPLICIT_MAC if c in AEAD else "hmac-sha2-256", kex) for c in ciphers]
    rates = MadeUpRates({c: 300.0 + 200 * i for i, c in enumerate(ciphers)})
    result = run_from_plan(schedule(combos, [], runs, 0, calibrate=False), combos, rates)
    if environment is not None:
        result.environment = environment
    result.notices = list(notices or [])
    return result


def empty_run(status: str = "failed", error: str | None = "private sshd started but a login failed") -> RunResult:
    """A run that ended before any trial (a failed start), as the store keeps it."""
    return RunResult(
        settings=RunSettings(),
        environment={},
        status=status,
        error=error,
        exit_code=1,
        started_at=1.7e9,
        finished_at=1.7e9 + 1,
        run_id=2,
    )


def invalid_run() -> RunResult:
    """A run whose every trial failed (exit status 255)."""
    result = constructed_run(ciphers=("aes128-ctr",), runs=2)
    for t in result.trials:
        t.valid, t.exit_status, t.invalid_reason = False, 255, "ssh exited with 255"
        t.data_s = None
    result.exit_code = 1
    return result


# -- whole runs against fakes: the runner handed fake parts (sshbench.measure.runner.RunParts) -----------------------


class FakeClock:
    """The run's clock (RunParts.clock): it moves only as fake trials take their wall time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeExecutors:
    """A run's executors (executors.ExecutorSet) that start nothing: each trial is `trial_for` at `rates` with the
    size the run asked for, a steady clock, and its wall time (set-up `setup_s` + data phase) taken on `clock`.
    `interrupt_after`: a Ctrl-C as the trial after that many starts. `warm`: rows' rounds after their first are
    bursts (executors.WarmBursts) in these sessions."""

    ctx: object
    rates: MadeUpRates
    clock: FakeClock
    setup_s: float = 0.3
    interrupt_after: int | None = None
    paused_at: frozenset[int] = frozenset()  # the starts (0-based) whose trial spans a pause (host/pauses)
    warm: object | None = None
    started: list[ScheduledTrial] = field(default_factory=list)
    sizes_asked: list[int] = field(default_factory=list)
    stopped: bool = False

    def executor_for(self, item: ScheduledTrial):
        from sshbench.measure.executors import WarmBursts

        if self.warm is not None and item.kind == "transfer":
            return WarmBursts(self.ctx, self, self.warm, list(self.ctx.result.combinations))  # type: ignore[attr-defined]
        return self

    def run(self, item: ScheduledTrial, size: int, overlay=None) -> Trial:
        if self.interrupt_after is not None and len(self.started) >= self.interrupt_after:
            raise KeyboardInterrupt
        self.started.append(item)
        self.sizes_asked.append(size)
        trial = trial_for(item, self.rates, payload_bytes=size or 8 * MIB, at=1.7e9 + len(self.started))
        if len(self.started) - 1 in self.paused_at:
            from sshbench.host.pauses import PAUSED

            trial.valid, trial.invalid_reason = False, f"{PAUSED}: sshbench was stopped and continued (SIGSTOP/SIGCONT)"
        if item.kind == "transfer":
            trial.data_clock = "steady-state"
            trial.wall_s = self.setup_s + (trial.data_s or 0.0) + 0.1
        self.clock.now += trial.wall_s or 0.0
        return trial

    def skips(self, item: ScheduledTrial) -> bool:
        return False

    def before_rounds(self, combos: list[Combination]) -> None:
        pass

    def end_rounds(self) -> list[str]:
        return []

    def stop(self) -> None:
        self.stopped = True


class FakeWarmSessions:
    """Warm sessions (warm.WarmSessions' part executors.WarmBursts uses) that open nothing: a burst is a fresh
    trial marked as a burst; `break_after` bursts of a row, its session is broken (its ssh exited)."""

    def __init__(self, fresh: FakeExecutors, break_after: int | None = None) -> None:
        self.fresh, self.break_after = fresh, break_after
        self.sessions: dict[Combination, int] = {}
        self.opened = 0

    def open_all(self, combos, open_session, track=None) -> None:
        for combo in combos:
            if combo not in self.sessions:
                self.sessions[combo] = 0
                self.opened += 1

    def broken(self, combo: Combination) -> str | None:
        if self.break_after is not None and self.sessions[combo] >= self.break_after:
            return "the warm session's ssh exited with status 255: Broken pipe"
        return None

    def burst(self, combo: Combination, repetition: int) -> Trial:
        size = self.fresh.ctx.sizes.get(combo, 64 * MIB)  # type: ignore[attr-defined]
        trial = self.fresh.run(ScheduledTrial(combo, "transfer", repetition, False), size)
        trial.warm_burst = self.sessions[combo]
        self.sessions[combo] += 1
        return trial


def fake_parts(
    rates: MadeUpRates,
    clock: FakeClock | None = None,
    target: FakeTarget | None = None,
    warm: bool = False,
    break_after: int | None = None,
    **executor_options,
):
    """RunParts whose every part is fake: a FakeTarget started, FakeExecutors (with `executor_options`), the
    fake clock, no rekey probe, a why experiment that records its call, a canned header. Returns (parts, state):
    state["executors"] is the run's FakeExecutors once made, state["why"] the experiment's keyword arguments."""
    from sshbench.measure.runner import RunParts

    clock = clock or FakeClock()
    state: dict = {"clock": clock}

    def start_targets(settings, into, cleanup, env) -> None:
        into.add("openssh", target or FakeTarget())

    def executors(ctx):
        made = FakeExecutors(ctx, rates, clock, **executor_options)
        if warm:
            made.warm = FakeWarmSessions(made, break_after=break_after)
        state["executors"] = made
        return made

    def why_experiment(**kwargs) -> dict:
        state["why"] = kwargs
        state["why_started_at"] = clock.now
        return {"mode": kwargs["mode"], "combinations": []}

    parts = RunParts(
        start_targets=start_targets,
        executors=executors,
        clock=clock,
        rekey_probe=lambda ctx, combos: None,
        why_experiment=why_experiment,
        header=lambda **kwargs: dict(ENVIRONMENT),
        clean_leftovers=lambda: [],
    )
    return parts, state
