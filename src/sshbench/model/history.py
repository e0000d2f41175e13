"""`sshbench history` (issue 65): one set-up's stored runs over time (store/setups.py says which runs), each run's level
with its interval and each row's median with its interval, and where the level changed.

- A run's level is all its rows together as `check --against` takes it (model/gate_stored.run_level: the rows' mean
  log MiB/s, its variance from the rounds, so that one round's common swing counts once), shown as MiB/s (the
  geometric mean of the rows).
- Change points: ruptures' Pelt on the runs' log levels (an l2 cost: a shift of the mean), its penalty per change
  point PENALTY x sigma^2 x ln(runs), sigma the history's own run-to-run scatter (the median absolute deviation of
  successive differences, which a step moves only once); each change point kept only where Welch's t-test of the two
  segments either side rejects at ALPHA, and at least MIN_SEGMENT runs on each side (one slow run is an outlier, not
  a change). Tuned on simulated histories (docs/history.md, tests/test_history.py).
- A change point names the runs either side and what the store says differs between them (`differences`).

Pure: runs in, a History out. numpy, scipy and ruptures are imported in `change_points` alone, where the model is
fitted: no other sshbench command pays for them.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from sshbench.model import gate, gate_stored, intervals, summary
from sshbench.results import RunResult

PENALTY = 4.0  # Pelt's penalty per change point, in sigma^2 ln(n): with ALPHA, 1.5% of simulated A/A histories of 20
ALPHA = 0.001  # Welch's t-test of the segments either side of a change point
MIN_SEGMENT = 3  # runs on each side of a change point
MIN_RUNS = 2 * MIN_SEGMENT  # below this no change point is looked for
MIN_SIGMA = 1e-4  # a history of identical levels (made up) has no scatter: 0.01% keeps the penalty above zero
CONFIDENCE = 0.95
METHOD = (
    f"ruptures Pelt (l2 cost, penalty {PENALTY:g} sigma^2 ln n, at least {MIN_SEGMENT} runs a side) on the runs' log "
    f"levels, each change confirmed by Welch's t-test (p < {ALPHA:g})"
)
# What a change point's two runs may differ in, from their stored environment: (key, how it is named).
ENVIRONMENT = (
    ("client_ssh_version", "ssh"),
    ("server_ssh_version", "sshd"),
    ("client_crypto_library", "crypto library"),
    ("openssl_version", "openssl"),
    ("cpu_model", "CPU"),
    ("cores", "cores"),
    ("crypto_flags", "CPU crypto flags"),
    ("kernel", "kernel"),
    ("os", "OS"),
    ("client_default_algorithms", "ssh's default algorithms"),
)
NOT_OPTIONS = {"seed"}  # drawn per run: never a difference worth naming


@dataclass(frozen=True)
class Rate:
    """A median MiB/s with its interval (None: one trial, or one round, gives none)."""

    mib_s: float
    low: float | None = None
    high: float | None = None

    def to_json(self) -> dict:
        return {"mib_s": self.mib_s, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Point:
    """One stored run of the history."""

    run_id: int | None
    started_at: float
    level: Rate  # all rows together
    rows: dict[str, Rate]  # each row's median, by its label (gate.row_label)
    log_level: float

    def to_json(self) -> dict:
        return {
            "run_id": self.run_id,
            "started_at": self.started_at,
            "all_rows": self.level.to_json(),
            "rows": {label: rate.to_json() for label, rate in self.rows.items()},
        }


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first run after the change, in History.points
    before: int | None  # the run ids either side
    after: int | None
    ratio: float  # the segment after over the segment before (geometric means of the levels): below 1, slower
    p_value: float
    rows: dict[str, float]  # each row's change across it (the medians of its medians either side)
    differences: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "index"} | {"first_after": self.index}


@dataclass
class History:
    points: list[Point]
    rows: list[str]
    change_points: list[ChangePoint]
    sigma: float | None  # the run-to-run scatter (log scale) the penalty was set from; None: not looked for
    method: str = METHOD

    def to_json(self) -> dict:
        return {
            "runs": [p.to_json() for p in self.points],
            "rows": self.rows,
            "change_points": [c.to_json() for c in self.change_points],
            "run_to_run_scatter": self.sigma,
            "method": self.method if self.sigma is not None else f"fewer than {MIN_RUNS} runs: not looked for",
        }


def scatter(values: Sequence[float]) -> float:
    """The series' run-to-run standard deviation from its successive differences (robust: a step moves one)."""
    diffs = [b - a for a, b in zip(values, values[1:])]
    centre = statistics.median(diffs)
    mad = statistics.median(abs(d - centre) for d in diffs)
    return max(1.4826 * mad / math.sqrt(2.0), MIN_SIGMA)


def change_points(values: Sequence[float]) -> list[tuple[int, float]]:
    """Where the mean of `values` (log levels, oldest first) shifts: (index of the first value after, Welch's p) for
    each change point kept (the module's docstring). Fewer than MIN_RUNS values: none."""
    if len(values) < MIN_RUNS:
        return []
    import numpy as np  # where the model is fitted: no other command imports them
    import ruptures
    from scipy import stats

    series = np.asarray(values, dtype=float).reshape(-1, 1)
    penalty = PENALTY * scatter(values) ** 2 * math.log(len(values))
    found = ruptures.Pelt(model="l2", min_size=MIN_SEGMENT, jump=1).fit(series).predict(pen=penalty)[:-1]
    edges = [0, *found, len(values)]
    kept = []
    for k, at in enumerate(found):
        before, after = values[edges[k] : at], values[at : edges[k + 2]]
        p = float(stats.ttest_ind(before, after, equal_var=False).pvalue)
        if p < ALPHA:
            kept.append((int(at), p))
    return kept


def _rate(s: summary.Summary) -> Rate:
    low, high = (s.ci95_mib_s or (None, None)) if s.ci_coverage else (None, None)
    assert s.median_mib_s is not None
    return Rate(s.median_mib_s, low, high)


def point(run: RunResult) -> Point | None:
    """A run's place in the history; None when it measured nothing."""
    found = gate_stored.run_level(run)
    if found is None:
        return None
    level, variance, rounds = found
    low = high = None
    if rounds >= 2 and math.isfinite(variance):
        half = intervals.t_critical(CONFIDENCE, rounds - 1) * math.sqrt(variance)
        low, high = math.exp(level - half), math.exp(level + half)
    rows = {
        gate.row_label(s.combination): _rate(s)
        for s in summary.summaries(run)
        if s.median_mib_s is not None and s.combination.remedy == ""
    }
    return Point(run.run_id, run.started_at, Rate(math.exp(level), low, high), rows, level)


def _plain(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_plain(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return "-" if value is None else str(value)


def _leaves(value: object, prefix: str = "") -> dict[str, object]:
    """A nested record's leaves by dotted key (`negotiated.kex`): what changed inside it is named, not all of it."""
    if not isinstance(value, dict):
        return {prefix: value}
    out: dict[str, object] = {}
    for key, inner in value.items():
        out.update(_leaves(inner, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _changed(name: str, a: object, b: object) -> str:
    if isinstance(a, list) and isinstance(b, list):  # an algorithm list: what came and went, not both lists
        moved = [f"+{x}" for x in b if x not in a] + [f"-{x}" for x in a if x not in b]
        return f"{name} {' '.join(moved) or 'reordered'}"
    return f"{name} {_plain(a)} -> {_plain(b)}"


def differences(before: RunResult, after: RunResult) -> list[str]:
    """What the store says differs between two runs of one set-up: versions, CPU, kernel, the ssh's defaults (its
    kex among them), and the options that are not the set-up's own (rounds, budget, sizes)."""
    out = []
    for key, name in ENVIRONMENT:
        a, b = _leaves(before.environment.get(key)), _leaves(after.environment.get(key))
        for leaf in sorted(a.keys() | b.keys()):
            if a.get(leaf) != b.get(leaf):
                out.append(_changed(f"{name}{': ' + leaf if leaf else ''}", a.get(leaf), b.get(leaf)))
    for f in dataclasses.fields(before.settings):
        a, b = getattr(before.settings, f.name), getattr(after.settings, f.name)
        if f.name not in NOT_OPTIONS and a != b:
            out.append(f"option {f.name} {_plain(a)} -> {_plain(b)}")
    return out


def _segment_change(points: list[Point], edges: tuple[int, int, int], label: str | None) -> float | None:
    """After over before across edges[1], from the segments edges[0]:edges[1] and edges[1]:edges[2]."""
    start, at, end = edges
    if label is None:
        before = statistics.fmean(p.log_level for p in points[start:at])
        return math.exp(statistics.fmean(p.log_level for p in points[at:end]) - before)
    a = [p.rows[label].mib_s for p in points[start:at] if label in p.rows]
    b = [p.rows[label].mib_s for p in points[at:end] if label in p.rows]
    return statistics.median(b) / statistics.median(a) if a and b else None


def build(runs: Sequence[RunResult]) -> History:
    """The history of these runs (one set-up's, oldest first): their points and change points."""
    kept = [(run, p) for run in runs if (p := point(run)) is not None]
    points = [p for _, p in kept]
    rows = sorted({label for p in points for label in p.rows}, key=lambda r: -max(p.rows.get(r, Rate(0)).mib_s for p in points))  # fmt: skip
    if len(points) < MIN_RUNS:
        return History(points, rows, [], None)
    values = [p.log_level for p in points]
    found = change_points(values)
    edges = [0, *(at for at, _ in found), len(points)]
    changes = []
    for k, (at, p_value) in enumerate(found):
        around = (edges[k], at, edges[k + 2])
        ratio = _segment_change(points, around, None)
        assert ratio is not None
        per_row = {r: c for r in rows if (c := _segment_change(points, around, r)) is not None}
        changes.append(
            ChangePoint(
                at, points[at - 1].run_id, points[at].run_id, ratio, p_value, per_row,
                differences(kept[at - 1][0], kept[at][0]),
            )
        )  # fmt: skip
    return History(points, rows, changes, scatter(values))
