"""Connection set-up: a run's handshake trials summarised per connection shape (HandshakeSummary, the report's
set-up lines), and the fixed cost of a connection that moves no data, which transfers' CPU and wall-minus-handshake
figures take off (handshake_costs). Pure, no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sshbench.model.summary_figures import median_or_none
from sshbench.results import AXES, Trial, TrialKind


@dataclass
class HandshakeSummary:
    kex: str
    valid_trials: int
    median_ms: float | None
    min_ms: float | None
    max_ms: float | None
    client_cpu_ms: float | None
    compression: str = "none"
    tool: str = "pipe"
    direction: str = "up"
    sink: str = "null"
    server: str = "openssh"
    client: str = "openssh"
    link: str = "loopback"
    streams: int = 1  # -P N: N connections set up together
    ssh_build: str = ""  # a build sweep: the client / server build's label (sshbench.openssh.builds)
    sshd_build: str = ""
    # No row has this kex: only the transfers connected with it (plan.setup_kex), and their wall-minus-handshake
    # clock subtracts this; the rows' own set-up is their kex's line
    setup_only: bool = False

    def to_json(self) -> dict:
        return dict(self.__dict__)


def handshake_costs(trials: list[Trial]) -> dict[tuple, tuple[float | None, float | None, float | None]]:
    """Per connection shape, the medians of (wall s, client CPU s, server CPU s) of valid handshake
    trials: the fixed cost of a connection that moves no data. Measured trials where there are any,
    else warm-up ones (so that a calibration probe can already use them)."""
    groups: dict[tuple, list[Trial]] = defaultdict(list)
    for t in trials:
        if t.kind == TrialKind.HANDSHAKE and t.valid:
            groups[t.combination.shape].append(t)
    costs = {}
    for shape, group in groups.items():
        measured = [t for t in group if not t.warmup] or group
        costs[shape] = (
            median_or_none([t.wall_s for t in measured if t.wall_s is not None]),
            median_or_none([t.client_cpu_s for t in measured if t.client_cpu_s is not None]),
            median_or_none([t.server_cpu_s for t in measured if t.server_cpu_s is not None]),
        )
    return costs


def summarise_handshakes(trials: list[Trial]) -> list[HandshakeSummary]:
    groups: dict[tuple, list[Trial]] = defaultdict(list)
    for t in trials:
        if t.kind == TrialKind.HANDSHAKE and not t.warmup:
            groups[t.combination.shape].append(t)
    out = []
    names = [axis.name for axis in AXES if axis.connection]  # the shape's axes, in its order (results.AXES)
    row_kexes = {t.combination.kex for t in trials if t.kind == TrialKind.TRANSFER}
    setup_kexes = {t.setup_kex for t in trials if t.setup_kex} - row_kexes
    for shape, group in groups.items():
        walls = sorted(t.wall_s * 1000 for t in group if t.valid and t.wall_s is not None)
        cpus = [t.client_cpu_s * 1000 for t in group if t.valid and t.client_cpu_s is not None]
        out.append(
            HandshakeSummary(
                valid_trials=len(walls),
                median_ms=median_or_none(walls),
                min_ms=walls[0] if walls else None,
                max_ms=walls[-1] if walls else None,
                client_cpu_ms=median_or_none(cpus),
                **dict(zip(names, shape, strict=True)),
                setup_only=group[0].combination.kex in setup_kexes,
            )
        )
    out.sort(key=lambda h: (h.setup_only, h.median_ms is None, h.median_ms or 0.0))  # the rows' own set-up first
    return out
