"""What a run was asked to do: every effective setting, validated before anything starts.

RunSettings is stored with each run (the results store, --resume, the JSON's `settings`), so its
field names are stable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property

from sshbench.axis_values import (
    SINKS,
    Compression,
    Direction,
    MatrixSpec,
    Payload,
    Sink,
    comma_list,
    max_streams,
    parse_parallel,
)
from sshbench.errors import UsageError
from sshbench.links import LinkProfile, parse_links
from sshbench.measure.payload import MIN_SIZE, PAYLOAD_KINDS
from sshbench.model.statistics import DEFAULT_TIE_MARGIN
from sshbench.openssh import builds
from sshbench.units import GIB, format_size

DEFAULT_TIE = DEFAULT_TIE_MARGIN
WHY_MODES = ("auto", "fastest", "all", "off")
# The measuring part of a run; the command around it (start-up, the conclusion's check connection, the
# report) adds ~5 s: a default `sshbench run` measured 65.1 s with 60 here on a quiet 2-core VM. The
# steady-state clock (docs/clock.md) overran 55 by ~3 s (60.2 s in all, load 2): 50. With the budget's fit
# predicting trials as measured, the --why reserve sized for its own trials and the client's default ciphers
# (issue 23), default runs ended 3-4 s before 50 (commands of 47.7 and 48.5 s) with 4 rounds: 55 for a fifth.
# The clock's 0.3 s omit (was 0.2) made each trial ~0.1 s longer: at 55 the runs stopped at 3-4 rounds; at 57,
# 4-5 rounds and commands of 52-55 s (the command adds ~1.5 s to the run's own clock now).
DEFAULT_BUDGET_S = 57.0
# --full (115 combinations with OpenSSH 9.2): the budget that ends the command within ~5 minutes.
DEFAULT_FULL_BUDGET_S = 270.0


@dataclass(frozen=True)
class TargetSpec:
    """What starts a target, and nothing else, with its lists parsed: `make_target` (sshbench.targets) takes this
    alone. A run builds it once from its settings (`RunSettings.target_spec`); a command that only needs a
    target (algorithms, latency, audit, recommend's check, fleet's check of its pairs' options) builds it from
    its own options (`from_options`)."""

    host: str | None = None  # None: a private server on this machine
    ssh_paths: tuple[str, ...] = ("ssh",)  # --ssh: the client build(s), the first the primary
    sshd_paths: tuple[str | None, ...] = (None,)  # --sshd: the server build(s); None: the default sshd
    sshd_session: str | None = None
    ssh_config: str | None = None  # a HOST's ssh -F
    servers: tuple[str, ...] = ("openssh",)  # --server: private server implementations (targets.SERVERS)
    links: tuple[LinkProfile, ...] = field(default_factory=lambda: tuple(parse_links("loopback")))
    server_cpu: float | None = None  # --server-cpu, in cores
    dropbear_window: int | None = None
    raw_tcp_port: int | None = None  # a HOST's raw TCP control port (None: any free one)
    pin: bool = True  # --pin: a private server's client and daemon on CPUs of their own (sshbench.host.placement)
    most_streams: int = 1  # -P: the most connections of one trial, which a placement must leave CPUs for
    link_index: int = 0  # behind emulated links: which namespace pair (one per sshd build of a sweep)

    @property
    def ssh(self) -> str:
        return self.ssh_paths[0]

    @property
    def sshd(self) -> str | None:
        return self.sshd_paths[0]

    @property
    def emulated(self) -> bool:
        """Whether any link is emulated (a namespace pair, sshbench.links)."""
        return any(p.emulated for p in self.links)

    @classmethod
    def from_options(
        cls,
        host: str | None = None,
        ssh: str | None = "ssh",
        sshd: str | None = None,
        ssh_config: str | None = None,
        sshd_session: str | None = None,
        server: str = "openssh",
        link: str = "loopback",
        dropbear_window: int | None = None,
        server_cpu: float | None = None,
        raw_tcp_port: int | None = None,
        pin: bool = True,
        most_streams: int = 1,
    ) -> TargetSpec:
        """From the command line's strings (comma lists as the options take them)."""
        return cls(
            host=host,
            ssh_paths=tuple(builds.split_paths(ssh or "ssh")) or ("ssh",),
            sshd_paths=tuple(builds.split_paths(sshd)) or (None,),
            sshd_session=sshd_session,
            ssh_config=ssh_config,
            servers=tuple(comma_list(server)) or ("openssh",),
            links=tuple(parse_links(link)),
            dropbear_window=dropbear_window,
            server_cpu=server_cpu,
            raw_tcp_port=raw_tcp_port,
            pin=pin,
            most_streams=most_streams,
        )


@dataclass(frozen=True)
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
    tool: str = "pipe"  # comma list of transfer tools (sshbench.tools)
    direction: str = "up"  # up | down | both
    sink: str = "null"  # comma list of null, tmpfs, disk
    payload: str = "random"  # comma list of random, zero, text
    file: str | None = None  # the user's own payload file (never modified); overrides payload and size
    compression: str = "off"  # off | on | both
    verify: bool | None = None  # SHA-256 of what arrived; None: on for file sinks
    server: str = "openssh"  # comma list of private server implementations (sshbench.targets.SERVERS)
    link: str = "loopback"  # comma list of link profiles (sshbench.links)
    trial_timeout_s: float = 300.0
    ssh: str = "ssh"  # comma list of client builds (--ssh): several are an axis (sshbench.openssh.builds)
    sshd: str | None = None  # comma list of sshd builds (--sshd)
    ssh_config: str | None = None
    no_aesni: bool = False  # mask AES-NI for ssh and the private sshd (sshbench.baselines.aesni)
    baselines: bool = True  # raw TCP control, crypto ceiling, disk (sshbench.baselines)
    dropbear_window: int | None = None  # --server dropbear: its receive window -W in bytes (None: Dropbear's)
    server_cpu: float | None = None  # --server-cpu: the private sshd under a CPU quota, in cores (None: none)
    # Fields added with issue 12 (runs stored before them load with these defaults).
    tie: float = DEFAULT_TIE  # --tie: ratios within [1/(1+tie), 1+tie] are "the same speed"
    seed: int | None = None  # order within a round is shuffled with this (None: chosen when the run starts)
    adaptive: bool = False  # --runs auto: `runs` measured rounds first, then rounds for undecided pairs
    budget_s: float = DEFAULT_BUDGET_S  # --runs auto: stop adding rounds when the trials have taken this long
    parallel: str = "1"  # -P/--parallel: comma list of stream counts (sshbench.measure.parallel); runs before it: 1
    # The client's default combination measured beside the selection (the conclusion's "your ssh's
    # default"); `sshbench crossover` compares compression on and off only, and leaves it out.
    default_reference: bool = True
    # --runs auto without --seconds: the data phase shrinks (to 0.25 s at least) when the minimum rounds
    # would not fit in --budget at `seconds` per trial; `seconds` then records the target used.
    fit_seconds: bool = False
    raw_tcp_port: int | None = None  # --raw-tcp-port: the raw TCP control's port on a remote HOST (None: any free one)
    sshd_session: str | None = None  # --sshd-session: an OpenSSH 9.8+ --sshd build's sshd-session, not beside it
    # --why / --no-why (sshbench.why): "auto" (the fastest row in a --runs auto run with baselines, else
    # none), "fastest", "all" or "off"; `why_rounds` paired rounds per experiment. Runs stored before: "auto".
    why: str = "auto"
    why_rounds: int = 6  # why.experiment.DEFAULT_ROUNDS; a --budget run keeps time for 4 (RESERVED_ROUNDS)
    # --pin / --no-pin (sshbench.host.placement): the private server's client and daemon on separate CPUs. Runs
    # stored before it load with True though nothing was pinned: a run's target records the placement it used.
    pin: bool = True
    # Warm sessions (sshbench.measure.warm; `run` turns them on, --no-warm off): after each row's first measured round, its
    # transfers are bursts in one connection of its own kept open across the rounds, where that fits (pipe uploads,
    # one stream, no compression, a private OpenSSH server on loopback, sizes sshbench chose). Runs stored before
    # it load with False, as they ran; other commands that build settings (crossover) keep a connection per trial.
    warm: bool = False
    # --remedies (sshbench.measure.remedies): "auto" (`run`'s default: on over an emulated link with a delay, where
    # "what would help" is the question; a remote HOST with "on"), "on" or "off" (runs stored before it; other
    # commands). `remedy_builds`: the last --ssh (and --sshd) build was added by it (HPN-SSH found), not the user.
    remedies: str = "off"
    remedy_builds: bool = False
    # `sshbench check` (model/gate.py): NEW slower than OLD by more than this fails it; --runs auto then adds rounds
    # until the check is decided rather than the ranking's pairs. None: a run, not a check.
    check_threshold: float | None = None

    def remedies_on(self) -> bool:
        """Whether the run adds the rows that measure what would help (measure.remedies)."""
        if self.remedies == "auto":
            return any(p.delay_ms > 0 for p in self.axes.links)
        return self.remedies == "on"

    def why_mode(self) -> str:
        """The experiments this run does: "fastest", "all" or "off"."""
        if self.why == "auto":
            return "fastest" if self.adaptive and self.baselines else "off"
        return self.why

    def validate(self) -> None:
        """What can be checked from the settings alone; the target and tool registries check their own
        names and options (sshbench.targets.check_spec, sshbench.tools.get_tool) when the Runner is made."""
        if self.runs < 1:
            raise UsageError(f"--runs must be at least 1 (got {self.runs})")
        if not 0.0 <= self.tie <= MAX_TIE:
            raise UsageError(f"--tie must be a percentage from 0% to {MAX_TIE:.0%} (got {self.tie:.1%})")
        if self.budget_s <= 0:
            raise UsageError("--budget must be positive")
        if self.warmup < 0:
            raise UsageError(f"--warmup cannot be negative (got {self.warmup})")
        if self.size is not None and self.size < MIN_SIZE:
            raise UsageError(
                f"--size {format_size(self.size)} is too small: at least {format_size(MIN_SIZE)}, "
                "or the data phase is too short to time"
            )
        if self.max_size < MIN_SIZE:
            raise UsageError(f"--max-size must be at least {format_size(MIN_SIZE)}")
        if not 0.05 <= self.seconds <= 600:
            raise UsageError(f"--seconds must be between 0.05 and 600 (got {self.seconds})")
        if self.trial_timeout_s <= 0:
            raise UsageError("--trial-timeout must be positive")
        if self.server_cpu is not None:
            cores = os.cpu_count() or 1
            if not 0 < self.server_cpu <= cores:
                raise UsageError(
                    f"--server-cpu must be above 0 and at most this machine's {cores} cores (got {self.server_cpu:g})"
                )
        if self.why not in WHY_MODES:
            raise UsageError(f"--why must be one of {', '.join(WHY_MODES[1:3])} (got {self.why!r})")
        if not 3 <= self.why_rounds <= 100:
            raise UsageError(f"--why-rounds must be from 3 to 100 (got {self.why_rounds})")
        if self.raw_tcp_port is not None:
            if self.host is None:
                raise UsageError(
                    "--raw-tcp-port applies to a remote HOST (a private server's control stays on this machine)"
                )
            if not 1 <= self.raw_tcp_port <= 65535:
                raise UsageError(f"--raw-tcp-port must be a TCP port from 1 to 65535 (got {self.raw_tcp_port})")
        if self.ssh_config and self.host is None:
            raise UsageError("--ssh-config applies to a remote HOST; the private sshd never reads ssh_config")
        self.check_builds()
        if self.sshd and self.host is not None:
            raise UsageError("--sshd is the binary of the private sshd started here; a HOST's sshd is its own")
        axes = self.axes  # parsing is the axes' check: one line for the first bad value
        if self.verify and all(sink == "null" for sink in axes.sinks):
            raise UsageError("--verify checks what arrived in a file: --sink null keeps nothing (add --sink tmpfs)")
        if self.file is not None:
            if not os.path.isfile(self.file) or not os.access(self.file, os.R_OK):
                raise UsageError(f"--file {self.file}: not a readable file")
            if os.path.getsize(self.file) < MIN_SIZE:
                raise UsageError(f"--file {self.file} is too small to time: at least {format_size(MIN_SIZE)}")

    def ssh_paths(self) -> list[str]:
        """--ssh: the client build(s), the first one the primary (probes, discovery of a single-build run)."""
        return builds.split_paths(self.ssh) or ["ssh"]

    def sshd_paths(self) -> list[str | None]:
        """--sshd: the server build(s); [None] for the default sshd."""
        return list(builds.split_paths(self.sshd)) or [None]

    def check_builds(self) -> None:
        """--ssh/--sshd name programs that exist and are OpenSSH's (sessions' helpers found): else one line."""
        if self.ssh != "ssh":
            builds.inspect_all(self.ssh, "ssh")
        if self.sshd is not None:
            if not builds.split_paths(self.sshd):
                raise UsageError("--sshd needs a path")
            if builds.sweeps(self.sshd) and self.host is not None:
                raise UsageError(
                    "--sshd builds are started here as private servers; they cannot be combined with a HOST"
                )
            builds.inspect_all(self.sshd, "sshd", session=self.sshd_session)
        elif self.sshd_session is not None:
            raise UsageError("--sshd-session applies to an --sshd build (OpenSSH 9.8+) started here")

    @cached_property
    def axes(self) -> MatrixSpec:
        """The axes, parsed once per settings (UsageError as `validate` gives it). Settings are frozen, so the
        parsed axes are the settings' for good."""
        return MatrixSpec(
            tools=tuple(self.tools()),
            directions=tuple(self.directions()),
            sinks=tuple(self.sinks()),
            payloads=tuple(self.payloads()),
            compressions=tuple(self.compressions()),
            links=tuple(self.link_profiles()),
            stream_counts=tuple(self.stream_counts()),
        )

    @cached_property
    def target(self) -> TargetSpec:
        """The run's target(s): what make_target needs, parsed once per settings."""
        return TargetSpec.from_options(
            host=self.host,
            ssh=self.ssh,
            sshd=self.sshd,
            ssh_config=self.ssh_config,
            sshd_session=self.sshd_session,
            server=self.server,
            link=self.link,
            dropbear_window=self.dropbear_window,
            server_cpu=self.server_cpu,
            raw_tcp_port=self.raw_tcp_port,
            pin=self.pin,
            # --remedies' -P 4 row (measure.remedies.REMEDY_STREAMS) needs room in a placement too
            most_streams=max(*self.axes.stream_counts, 4 if self.remedies_on() else 1),
        )

    def tools(self) -> list[str]:
        return comma_list(self.tool) or ["pipe"]

    def directions(self) -> list[Direction]:
        # iperf3's -R (reverse) is `down`
        up, down = Direction.UP, Direction.DOWN
        mapping = {"up": [up], "down": [down], "reverse": [down], "both": [up, down]}
        if self.direction not in mapping:
            raise UsageError(f"--direction must be up, down or both (got {self.direction!r})")
        return mapping[self.direction]

    def sinks(self) -> list[Sink]:
        found = comma_list(self.sink) or ["null"]
        for sink in found:
            if sink not in SINKS:
                raise UsageError(f"unknown sink {sink!r}; known: {', '.join(SINKS)}")
        return [Sink(sink) for sink in found]

    def payloads(self) -> list[Payload]:
        found = ["file"] if self.file else (comma_list(self.payload) or ["random"])
        for kind in found:
            if kind not in PAYLOAD_KINDS and kind != "file":
                raise UsageError(f"unknown payload {kind!r}; known: {', '.join(PAYLOAD_KINDS)} (or --file PATH)")
        return [Payload(kind) for kind in found]

    def servers(self) -> list[str]:
        return comma_list(self.server) or ["openssh"]

    def link_profiles(self) -> list:
        return parse_links(self.link)

    def stream_counts(self) -> list[int]:
        """-P N[,M...]: the stream counts to sweep, each from 1 to the most this target takes at once."""
        return parse_parallel(self.parallel, max_streams(self.host, self.servers()))

    def compressions(self) -> list[Compression]:
        mapping = {"off": [Compression.NONE], "on": [Compression.ZLIB], "both": [Compression.NONE, Compression.ZLIB]}
        if self.compression not in mapping:
            raise UsageError(f"--compression must be off, on or both (got {self.compression!r})")
        return mapping[self.compression]


MAX_TIE = 0.5
MIN_AUTO_RUNS = 3  # --runs auto: measured rounds before any is decided
