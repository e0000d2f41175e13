"""The records a run produces: what was asked (Combination), what happened (Trial), and per-run context.

Plain dataclasses with stable field names: the JSON export and later the results store are
written from them (docs/results-json.md documents the names).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from sshbench.compression import NO_COMPRESSION
from sshbench.units import MIB

if TYPE_CHECKING:  # a record of the settings layer above; only its type is needed here
    from sshbench.settings import RunSettings

IMPLICIT_MAC = "implicit"  # what AEAD ciphers use instead of a separate MAC
OPENSSH_SUFFIX = "@openssh.com"


def short_name(label: str) -> str:
    """An algorithm name or combination label without `@openssh.com`, for lines that must fit 100 columns."""
    return label.replace(OPENSSH_SUFFIX, "")


# Trial.data_clock of a rate over the steady part of the transfer (sshbench.measure.steady), start-up left out.
STEADY_STATE = "steady-state"
# Trial.steady_note of a transfer that ended before a steady part could be timed: it has no headline rate.
NO_STEADY_PART = "too short: no steady part"


class TrialKind(StrEnum):
    """What one trial measures. A StrEnum: its value is what the JSON document and the store hold."""

    TRANSFER = "transfer"  # one ssh connection moving a payload
    HANDSHAKE = "handshake"  # the same connection moving nothing: its set-up (sshbench.measure.trial)
    RAW_TCP = "raw-tcp"  # the raw TCP control: the path without ssh (sshbench.baselines.raw_tcp)


# The cipher and kex of a tool that cannot be told which to use (rclone before 1.64): its rows are its own choice.
UNPINNED = "unpinned"


@dataclass(frozen=True, order=True)
class Combination:
    """One cell of the matrix: the algorithms and the way the data moves."""

    cipher: str
    mac: str  # IMPLICIT_MAC for AEAD ciphers
    kex: str
    compression: str = NO_COMPRESSION  # requested: "none" or "zlib@openssh.com"
    tool: str = "pipe"
    direction: str = "up"  # "up": client to server; "down": server to client
    sink: str = "null"  # where the receiver writes: "null" (/dev/null), "tmpfs", "disk"
    payload: str = "random"  # "random", "zero", "text" or "file" (--file)
    server: str = "openssh"  # the server implementation (sshbench.targets.SERVERS)
    client: str = "openssh"  # the client implementation: never mixed silently in one ranking
    link: str = "loopback"  # the emulated link profile (sshbench.links)
    # -P N: N connections of this combination started together, each moving 1/N of the payload
    # (sshbench.measure.parallel); a split tool moves N byte ranges of one file itself. Runs stored before it: 1.
    streams: int = 1
    # A build sweep (--ssh A,B / --sshd A,B; sshbench.openssh.builds): the version label of the client / server build
    # this combination ran with, "" when that side is not swept (runs stored before it too).
    ssh_build: str = ""
    sshd_build: str = ""
    remedy: str = ""  # --remedies' rows (measure.remedies: "hpn-both", "streams", ...), ranked apart; "": the user's

    @property
    def unpinned(self) -> bool:
        """Whether its algorithms were the tool's own choice, unknown to sshbench (UNPINNED)."""
        return UNPINNED in (self.cipher, self.kex)

    @property
    def label(self) -> str:
        return self.label_beside(())

    def label_beside(self, named_apart: Iterable[str]) -> str:
        """The label, without the axes in `named_apart` that it would name: a line or chart that names a swept
        -P N in the row's setup says it once ("aes128-gcm (-P 2)", not "aes128-gcm -P 2 (-P 2)")."""
        mac = "" if self.mac == IMPLICIT_MAC else f" + {self.mac}"
        streams = f" -P {self.streams}" if self.streams != 1 and "streams" not in named_apart else ""
        builds = f" ({self.builds.replace('OpenSSH_', '')})" if self.builds and "builds" not in named_apart else ""
        return f"{self.cipher}{mac}{streams}{builds}"

    @property
    def shape(self) -> tuple[str | int, ...]:
        """Everything but the cipher, MAC and payload content: connections of the same shape have the
        same fixed costs (handshake, session, tool start-up), which handshake trials measure."""
        return tuple(getattr(self, axis.name) for axis in AXES if axis.connection)

    def setup_label(self, fields: list[str]) -> str:
        """These setup axes' values as the reports show them: "scp/up", "zlib", "-P 4" (a row's setup where a
        run swept them; AXES' setup axes)."""
        values = []
        for name in (f for f in fields if f != "builds"):  # "builds": named apart (answer_block.own_rows_setup)
            value = getattr(self, name)
            if name == "compression":
                value = "zlib" if value != NO_COMPRESSION else "no-comp"
            elif name == "streams":  # -P N (sshbench.measure.parallel)
                value = f"-P {value}"
            values.append(str(value))
        return "/".join(values)

    def axis_values(self) -> dict[str, str | int]:
        """Every axis's value, in AXES order: the combination's keys in the JSON document (trials, summaries)."""
        return {axis.name: getattr(self, axis.name) for axis in AXES}

    @property
    def builds(self) -> str:
        """`client -> server` builds of a build sweep ("" when neither side is swept)."""
        if not (self.ssh_build or self.sshd_build):
            return ""
        return f"{self.ssh_build or '-'} -> {self.sshd_build or '-'}"


@dataclass(frozen=True)
class Axis:
    """One axis of the matrix: a `Combination` field, the words `sshbench runs` says it with, and its roles.
    AXES is the one table of them that the JSON keys, the connection's shape, the store's run listing and
    the reports' varying columns read (tests/test_axes.py holds it to Combination's fields)."""

    name: str  # the Combination field (and the JSON key)
    singular: str
    plural: str
    # Part of a connection's shape (Combination.shape): same-shape connections have the same fixed costs
    # (handshake, session, tool start-up). The algorithms the data is encrypted with and the payload's
    # content are not.
    connection: bool
    # How the data moves (tool, direction, sink, payload, link, compression, streams): a setup column in the
    # terminal table when it varies (algorithms, implementations and builds have their own).
    setup: bool = False
    # The value nearly every run has: the Markdown/HTML table shows the column only when another one appears
    # (None: whenever it varies).
    usual: str | int | None = None
    # The user's situation, not a choice (the link, which way the data goes, what it is, where it lands): a run that
    # sweeps one answers each of its values on its own (condition_answer.py), as nobody picks the WAN for its speed.
    condition: bool = False
    # Where the axis nests in the matrix (plan.build_matrix: the smallest outermost; the algorithms innermost, so
    # that one table of ciphers reads together per setting).
    nesting: int = 0


AXES: tuple[Axis, ...] = (
    Axis("cipher", "cipher", "ciphers", connection=False, nesting=13),
    Axis("mac", "MAC", "MACs", connection=False, nesting=14),
    Axis("kex", "kex", "kex", connection=True, nesting=6),
    Axis("compression", "compression", "compressions", connection=True, setup=True, usual=NO_COMPRESSION, nesting=5),
    Axis("tool", "tool", "tools", connection=True, setup=True, usual="pipe", nesting=2),
    Axis("direction", "direction", "directions", connection=True, setup=True, usual="up", condition=True, nesting=3),
    Axis("sink", "sink", "sinks", connection=True, setup=True, condition=True, nesting=4),
    Axis("payload", "payload", "payloads", connection=False, setup=True, condition=True, nesting=1),
    Axis("server", "server", "servers", connection=True, usual="openssh", nesting=8),
    Axis("client", "client", "clients", connection=True, usual="openssh", nesting=9),
    # --link A,B
    Axis("link", "link", "links", connection=True, setup=True, usual="loopback", condition=True, nesting=0),
    Axis("streams", "stream count", "stream counts", connection=True, setup=True, usual=1, nesting=7),  # -P N
    Axis("ssh_build", "ssh build", "ssh builds", connection=True, nesting=10),  # --ssh A,B (runs before it: "")
    Axis("sshd_build", "sshd build", "sshd builds", connection=True, nesting=11),
    Axis("remedy", "remedy", "remedies", connection=False, usual="", nesting=12),
)
# The axes a matrix crosses besides the algorithms (plan.build_matrix), outermost first.
CROSSED_AXES: tuple[str, ...] = tuple(
    a.name for a in sorted(AXES, key=lambda a: a.nesting) if a.name not in ("cipher", "mac")
)


@dataclass
class Negotiated:
    """What ssh -v says was negotiated (client->server direction)."""

    cipher: str | None = None
    mac: str | None = None
    kex: str | None = None
    compression: str | None = None


@dataclass
class Trial:
    """One ssh connection: a transfer of `payload_bytes`, or a handshake; or the raw TCP control (`kind`)."""

    combination: Combination
    kind: TrialKind
    repetition: int  # 0-based; warm-up trials have warmup=True
    warmup: bool
    payload_bytes: int
    started_at: float  # unix time
    exit_status: int | None = None
    valid: bool = False
    invalid_reason: str | None = None
    negotiated: Negotiated = field(default_factory=Negotiated)
    wall_s: float | None = None
    # The data phase alone; see docs/measurement.md "How throughput is measured". With data_clock "steady-state"
    # (docs/clock.md; JSON schema 2) it is the payload over the steady-state rate, start-up left out.
    data_s: float | None = None
    data_clock: str | None = None  # "steady-state", "server-reader" or "wall-minus-handshake"
    # The steady-state clock (sshbench.measure.steady): the data phase the earlier clock measured (start-up
    # included) and that clock's name; the steady window's length; why there is no steady rate.
    whole_data_s: float | None = None
    whole_data_clock: str | None = None
    steady_window_s: float | None = None
    steady_note: str | None = None  # "too short: no steady part", "no progress samples"
    # Too short: the rate over the second half of its data phase (sshbench.measure.steady), what calibration sizes from
    late_mib_s: float | None = None
    # The client's CPU over the steady window alone (sshbench.measure.progress: its processes' on-CPU time, sampled with
    # the byte counters): per GiB of that window it is the client's cost without the connection's set-up.
    client_steady_cpu_s: float | None = None
    # The server-side reader's own elapsed time (pipe tool), unscaled: the window server_cpu_s and
    # server_sink_cpu_s were measured over, whatever clock data_s ends up from.
    reader_s: float | None = None
    ssh_reported_s: float | None = None  # ssh's own "Transferred ... in T seconds" (1 decimal)
    wall_minus_handshake_s: float | None = None  # cross-check of data_s
    received_bytes_at_sink: int | None = None
    sent_bytes: int | None = None  # SSH packet bytes, from ssh's Transferred line
    received_bytes: int | None = None
    client_cpu_s: float | None = None  # user+sys of the ssh process, whole connection
    server_cpu_s: float | None = None  # user+sys of the sshd session process during the data phase
    server_sink_cpu_s: float | None = None  # the server-side reader (dd) itself
    server_cpu_scope: str | None = None  # "data-phase" (pipe, from /proc) or "connection" (listener's children)
    remote_version: str | None = None
    verified: bool | None = None  # SHA-256 of what arrived == the payload's (None: not checked)
    compressed_raw_bytes: int | None = None  # ssh -v "compress outgoing: raw data N, compressed M"
    compressed_wire_bytes: int | None = None
    # The kernel's count of TCP payload bytes the server socket received (uploads; ss/TCP_INFO):
    # SSH packets with their MACs and padding, plus the few KiB of the handshake.
    tcp_wire_bytes: int | None = None
    # ... of which had arrived before the server-side reader's clock started (see docs/measurement.md): data_s
    # is the reader's time scaled by tcp_wire_bytes / (tcp_wire_bytes - this)
    tcp_bytes_before_clock: int | None = None
    # Downloads: the SSH bytes still on their way to the client when the server's reader (dd) ended: its
    # clock stops as the last byte enters sshd, up to a channel window (2 MiB) early; data_s is the
    # reader's time scaled by total / (total - this) (clock.download_tail_bytes)
    tcp_bytes_unacked_at_clock_end: int | None = None
    # -P N (sshbench.measure.parallel): one entry per stream (its bytes, data phase, rate, CPU, validity); the
    # trial's own figures are the aggregate (sums; the data phase from first start to last end). None: one stream.
    per_stream: list[dict] | None = None
    # -P N: how many of this machine's cores were busy (every process, ours and others') while the streams
    # moved data (from the start barrier's release, else the first start, to the last end); /proc/stat
    machine_busy_cores: float | None = None
    # The cores other processes than this sshbench's used while the trial ran, and the busiest of them in words
    # (sshbench.host.neighbours: "another sshbench measurement (pid 123) 0.98 core"). None: not read (older runs).
    others_cores: float | None = None
    others_busiest: str | None = None
    # The server's wall clock when its reader ended (pipe tool): lines parallel streams up; kept in per_stream.
    reader_ended_at: float | None = field(default=None, repr=False)
    # Rekeys (sshbench.measure.rekey; docs/clock.md "Rekeys"): how many this connection's `ssh -v` logged; the data between
    # two rekeys of a long transfer with this combination; the run's measured stall per rekey (its probe). With the
    # last two set, mib_s counts the rekeys this payload would meet in a long transfer (rekey_s). None: runs stored
    # before it, or a combination whose rekeys were not measured or do not matter (every 16 GiB or more).
    rekeys: int | None = None
    rekey_every_bytes: int | None = None
    rekey_stall_s: float | None = None
    # The kex this transfer's connection was set up with where it is not the row's own (sshbench.measure.plan.setup_kex):
    # with no --kex, a transfer row's kex is what the user's ssh would negotiate, which sets only the set-up's
    # length (sntrup761x25519-sha512 ~0.23 s here, curve25519-sha256 ~0.14) and the rekeys (charged from a probe
    # with the row's own kex): the data phase does not depend on it. None: the row's own kex (and older runs).
    setup_kex: str | None = None
    # A burst in a warm session (sshbench.measure.warm; `run` unless --no-warm): its place in its combination's one connection (0: the
    # first that counts), timed by the same clock over the same stretch. None: a connection of its own (and older runs).
    warm_burst: int | None = None

    @property
    def setup_shape(self) -> tuple[str | int, ...]:
        """The shape of the connection this trial made: its combination's, with the kex it was set up with."""
        return replace(self.combination, kex=self.setup_kex).shape if self.setup_kex else self.combination.shape

    @property
    def startup_s(self) -> float | None:
        """Seconds the start of the transfer cost against the steady rate (whole data phase minus payload
        over the steady rate): set-up + this + size / steady rate predicts a transfer of any size."""
        if self.data_clock != STEADY_STATE or self.whole_data_s is None or self.data_s is None:
            return None
        return self.whole_data_s - self.data_s

    @property
    def rekey_s(self) -> float | None:
        """The seconds a long transfer spends rekeying per this payload: each stream's share over the data between
        rekeys, times the stall. None where the connection rekeyed itself with the row's own kex: its clock saw its
        own rekeys. One set up with another kex (setup_kex: curve25519-sha256, whose rekeys stalled 7-17 ms here
        against 77-135 for sntrup761x25519-sha512) is charged the row's kex's stall all the same."""
        if self.rekey_every_bytes is None or self.rekey_stall_s is None or (self.rekeys and not self.setup_kex):
            return None
        raw, wire = self.compressed_raw_bytes, self.compressed_wire_bytes  # compression: rekeys count wire bytes
        on_wire = self.payload_bytes * (wire / raw if raw and wire else 1.0)
        return on_wire / max(1, self.combination.streams) / self.rekey_every_bytes * self.rekey_stall_s

    @property
    def steady_mib_s(self) -> float | None:
        """The rate between rekeys: payload over data_s (what sizes the next trials: calibration)."""
        if self.kind not in (TrialKind.TRANSFER, TrialKind.RAW_TCP) or not self.data_s or self.data_s <= 0:
            return None
        return self.payload_bytes / MIB / self.data_s

    @property
    def mib_s(self) -> float | None:
        """The headline rate: the payload over its data phase (data_s) and the rekeys a long transfer has (rekey_s)."""
        rate = self.steady_mib_s
        if rate is None or not self.rekey_s or self.data_s is None:
            return rate
        return self.payload_bytes / MIB / (self.data_s + self.rekey_s)

    def to_json(self) -> dict:
        combo = self.combination
        data = {
            "kind": self.kind,
            **combo.axis_values(),
            "negotiated": asdict(self.negotiated),
            "setup_kex": self.setup_kex,
            "warm_burst": self.warm_burst,
            "valid": self.valid,
            "invalid_reason": self.invalid_reason,
            "repetition": self.repetition,
            "warmup": self.warmup,
            "payload_bytes": self.payload_bytes,
            "started_at": self.started_at,
            "exit_status": self.exit_status,
            "wall_s": self.wall_s,
            "data_s": self.data_s,
            "data_clock": self.data_clock,
            "whole_data_s": self.whole_data_s,
            "whole_data_clock": self.whole_data_clock,
            "startup_s": self.startup_s,
            "steady_window_s": self.steady_window_s,
            "steady_note": self.steady_note,
            "late_mib_s": self.late_mib_s,
            "client_steady_cpu_s": self.client_steady_cpu_s,
            "reader_s": self.reader_s,
            "mib_s": self.mib_s,
            "rekeys": self.rekeys,
            "rekey_every_bytes": self.rekey_every_bytes,
            "rekey_stall_s": self.rekey_stall_s,
            "rekey_s": self.rekey_s,
            "ssh_reported_s": self.ssh_reported_s,
            "wall_minus_handshake_s": self.wall_minus_handshake_s,
            "received_bytes_at_sink": self.received_bytes_at_sink,
            "sent_bytes": self.sent_bytes,
            "received_bytes": self.received_bytes,
            "client_cpu_s": self.client_cpu_s,
            "server_cpu_s": self.server_cpu_s,
            "server_sink_cpu_s": self.server_sink_cpu_s,
            "server_cpu_scope": self.server_cpu_scope,
            "verified": self.verified,
            "compressed_raw_bytes": self.compressed_raw_bytes,
            "compressed_wire_bytes": self.compressed_wire_bytes,
            "tcp_wire_bytes": self.tcp_wire_bytes,
            "tcp_bytes_before_clock": self.tcp_bytes_before_clock,
            "tcp_bytes_unacked_at_clock_end": self.tcp_bytes_unacked_at_clock_end,
            "per_stream": self.per_stream,
            "machine_busy_cores": self.machine_busy_cores,
            "others_cores": self.others_cores,
            "others_busiest": self.others_busiest,
        }
        return data


@dataclass
class RunResult:
    """One run: what was asked, where, every trial (valid or not) and how it ended."""

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
    run_id: int | None = None  # its id in the results store (sshbench.store), once recorded there
    baselines: dict = field(default_factory=dict)  # raw TCP, crypto ceiling, disk (sshbench.baselines)

    # Derived figures (sshbench.model.summary.summaries(), baselines analysis), computed once per state of the
    # trials: reports ask for them from many places.
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    def settings_json(self) -> dict:
        return asdict(self.settings)
