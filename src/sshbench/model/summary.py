"""Per-combination figures of a run: the Summary of each row (rates, CIs, rank in groups, CPU, spread), the rankings
per client/server implementation pair, and the run's figures computed once per state of its trials (summaries,
rankings, handshakes, the JSON's `stats`). Pure functions, no I/O (tested in tests/test_summary.py); the figures
besides the rates are summary_figures.py's, the clock the rates are on rate_clock.py's, the set-up
handshake_summary.py's.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from sshbench.measure.streams import summarise_streams
from sshbench.model import intervals, outliers
from sshbench.model import statistics as stats
from sshbench.model.handshake_summary import HandshakeSummary, handshake_costs, summarise_handshakes
from sshbench.model.rate_clock import clock_of, counted
from sshbench.model.summary_figures import (
    client_cpu_per_gib,
    coefficient_of_variation,
    connection_scoped,
    cpu_ci,
    cpu_per_gib,
    median_or_none,
    quartiles,
    rekey_figures,
    wire_ratio,
)
from sshbench.results import Combination, RunResult, Trial, TrialKind

# Above this coefficient of variation the spread is called out (as hyperfine warns on outliers).
WIDE_SPREAD_CV = 0.10

T = TypeVar("T")


@dataclass
class Summary:
    combination: Combination
    valid_trials: int
    invalid_trials: int
    payload_bytes: int
    median_mib_s: float | None
    min_mib_s: float | None
    max_mib_s: float | None
    q1_mib_s: float | None
    q3_mib_s: float | None
    iqr_mib_s: float | None
    cv: float | None  # stdev / mean of MiB/s
    # The first row's throughput over this one's, paired by round (statistics.rank_groups: the estimate the
    # ranking itself uses): 1.0 for the row ranked first, 2.0 takes twice as long; never decreasing down the
    # ranking. JSON schema 2; schema 1 divided the highest median by this one's.
    relative_to_fastest: float | None
    client_cpu_s_per_gib: float | None
    server_cpu_s_per_gib: float | None
    median_data_s: float | None
    median_wall_s: float | None
    wide_spread: bool
    wire_ratio: float | None = None  # SSH bytes on the wire / payload bytes
    # valid, but no data phase could be told apart (wall time within handshake jitter): too small a payload
    unmeasured_trials: int = 0
    # The decision figures (docs/statistics.md): null where no valid trial was measured.
    ci95_mib_s: list[float] | None = None  # [low, high] of the median (median_ci)
    ci_coverage: float | None = None  # its real level: below 0.95 with fewer than 6 trials
    cpu_s_per_gib_ci95: list[float] | None = None  # client + server CPU s/GiB, [low, high] of the median
    rank: int | None = None  # within its client/server pair; shared by tied neighbours
    rank_label: str | None = None  # "3", or "=1" when shared
    decided: bool | None = None  # ordered or tied against both neighbours
    group: int | None = None  # neighbours tied or undecided share a group (0: the fastest group), per pair
    relative_to_fastest_ci95: list[float] | None = None  # [low, high] of relative_to_fastest, paired by round
    outlier_trials: list[int] = field(default_factory=list)  # repetitions flagged by modified z-score (kept)
    slow_first_trial: bool = False  # the first measured trial is a slow outlier: add warm-up
    # -P N: medians over the valid trials of their per-stream figures (sshbench.measure.parallel.summarise_streams)
    per_stream: dict | None = None
    # The clock of its rates (Trial.data_clock; "steady-state" since JSON schema 2, docs/clock.md), and the
    # median start-up cost against the steady rate (Trial.startup_s): set-up + this + size / rate predicts
    # a transfer of any size.
    data_clock: str | None = None
    median_startup_s: float | None = None
    # Rekeys (sshbench.measure.rekey): the data between two rekeys, the stall one cost (the run's probe), and the share of a
    # long transfer's time they take, which median_mib_s counts; null where rekeys come every 16 GiB or more.
    rekey_every_bytes: int | None = None
    rekey_stall_s: float | None = None
    rekey_share: float | None = None

    def to_json(self) -> dict:
        c = self.combination
        return {
            **c.axis_values(),
            **{
                k: getattr(self, k)
                for k in (
                    "valid_trials",
                    "invalid_trials",
                    "payload_bytes",
                    "median_mib_s",
                    "min_mib_s",
                    "max_mib_s",
                    "q1_mib_s",
                    "q3_mib_s",
                    "iqr_mib_s",
                    "cv",
                    "relative_to_fastest",
                    "client_cpu_s_per_gib",
                    "server_cpu_s_per_gib",
                    "median_data_s",
                    "median_wall_s",
                    "wide_spread",
                    "wire_ratio",
                    "unmeasured_trials",
                    "ci95_mib_s",
                    "ci_coverage",
                    "cpu_s_per_gib_ci95",
                    "rank",
                    "rank_label",
                    "decided",
                    "group",
                    "relative_to_fastest_ci95",
                    "outlier_trials",
                    "slow_first_trial",
                    "per_stream",
                    "data_clock",
                    "median_startup_s",
                    "rekey_every_bytes",
                    "rekey_stall_s",
                    "rekey_share",
                )
            },
        }


def rates_by_round(trials: list[Trial], kind: TrialKind = TrialKind.TRANSFER) -> dict[Combination, dict[int, float]]:
    """MiB/s per combination per round (Trial.repetition) from the valid measured trials: what
    statistics.rank_groups and intervals.paired_ratio_ci take. Two trials of one round (never in a run, possible
    in hand-made data) are merged into their median."""
    collected: dict[Combination, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for t in counted(trials, kind):
        if t.mib_s:
            collected[t.combination][t.repetition].append(t.mib_s)
    return {
        combo: {rep: statistics.median(values) for rep, values in by_round.items()}
        for combo, by_round in collected.items()
    }


def rankings(
    trials: list[Trial], tie_margin: float = stats.DEFAULT_TIE_MARGIN, kind: TrialKind = TrialKind.TRANSFER
) -> dict[tuple[str, str], stats.Ranking[Combination]]:
    """One ranking in groups per client/server implementation pair (statistics.rank_groups)."""
    return {pair: stats.rank_groups(rates, tie_margin) for pair, rates in _rates_by_pair(trials, kind).items()}


def _rates_by_pair(
    trials: list[Trial], kind: TrialKind = TrialKind.TRANSFER
) -> dict[tuple[str, str], dict[Combination, dict[int, float]]]:
    """rates_by_round per client/server implementation pair: each pair is ranked on its own."""
    by_pair: dict[tuple[str, str], dict[Combination, dict[int, float]]] = defaultdict(dict)
    for combo, by_round in rates_by_round(trials, kind).items():
        if not getattr(combo, "remedy", ""):  # a remedy row is compared with the user's own (answers.remedies)
            by_pair[implementation_pair(combo)][combo] = by_round
    return by_pair


def rows_the_answer_needs(trials: list[Trial], tie_margin: float = stats.DEFAULT_TIE_MARGIN) -> list[Combination]:
    """Per client/server implementation pair, the first group and the rows it is not yet told apart from
    (statistics.first_group_contested): what an adaptive round runs when one of every undecided row no longer fits."""
    return [
        combo
        for rates in _rates_by_pair(trials).values()
        for combo in stats.first_group_contested(rates, stats.rank_groups(rates, tie_margin), tie_margin)
    ]


def _add_decisions(summaries: list[Summary], trials: list[Trial], tie_margin: float, kind: TrialKind) -> None:
    """CIs, ranks in groups, the paired "x fastest" interval and outliers, onto the summaries."""
    rates = rates_by_round(trials, kind)
    counting = counted(trials, kind)
    ranked = {
        entry.key: entry for ranking in rankings(trials, tie_margin, kind).values() for entry in ranking.combinations
    }
    for s in summaries:
        by_round = rates.get(s.combination)
        if not by_round:
            continue
        measured = sorted(
            (t for t in counting if t.combination == s.combination),
            key=lambda t: (t.repetition, t.started_at),
        )
        values = [t.mib_s for t in measured if t.mib_s]
        s.ci95_mib_s = list(intervals.median_ci(values))
        s.ci_coverage = intervals.median_ci_coverage(len(values))
        s.outlier_trials = [measured[i].repetition for i in outliers.modified_z_outliers(values)]
        s.slow_first_trial = outliers.slow_first_trial(values)
        entry = ranked.get(s.combination)
        if entry is None:  # a remedy row: ranked apart (answers.remedies)
            continue
        s.rank, s.rank_label, s.decided, s.group = entry.rank, entry.rank_label, entry.decided, entry.group
        # "x fastest": the ranking's own estimate, the first row's throughput over this one's, paired by round
        if entry.relative is not None:
            s.relative_to_fastest = entry.relative.ratio
            s.relative_to_fastest_ci95 = [entry.relative.low, entry.relative.high]


def summarise_transfers(
    trials: list[Trial], kind: TrialKind = TrialKind.TRANSFER, tie_margin: float = stats.DEFAULT_TIE_MARGIN
) -> list[Summary]:
    """One Summary per combination from the measured (non-warm-up) transfer trials, fastest first.
    `kind=TrialKind.RAW_TCP` summarises the raw TCP control the same way (sshbench.baselines)."""
    groups: dict[Combination, list[Trial]] = defaultdict(list)
    for t in trials:
        if t.kind == kind and not t.warmup:
            groups[t.combination].append(t)
    fixed_costs = handshake_costs(trials)
    counting = set(map(id, counted(trials, kind)))
    summaries = []
    for combo, group in groups.items():
        # a transfer too short to have a steady part does not count beside steady ones (counted): unmeasured
        valid = [t for t in group if id(t) in counting]
        rates = sorted(t.mib_s for t in valid if t.mib_s is not None)
        if rates:
            q1, q3 = quartiles(rates)
            cv = coefficient_of_variation(rates)
            summaries.append(
                Summary(
                    combination=combo,
                    valid_trials=len(valid),
                    invalid_trials=sum(1 for t in group if not t.valid),
                    unmeasured_trials=sum(1 for t in group if t.valid and id(t) not in counting),
                    payload_bytes=max(t.payload_bytes for t in valid),
                    median_mib_s=statistics.median(rates),
                    min_mib_s=rates[0],
                    max_mib_s=rates[-1],
                    q1_mib_s=q1,
                    q3_mib_s=q3,
                    iqr_mib_s=q3 - q1,
                    cv=cv,
                    relative_to_fastest=None,
                    client_cpu_s_per_gib=median_or_none(
                        [
                            x
                            for t in valid
                            if (x := client_cpu_per_gib(t, fixed_costs.get(t.setup_shape, (None,) * 3)[1])) is not None
                        ]
                    ),
                    server_cpu_s_per_gib=cpu_per_gib(
                        valid,
                        "server_cpu_s",
                        fixed_costs.get(valid[0].setup_shape, (None,) * 3)[2] if connection_scoped(valid) else None,
                    ),
                    wire_ratio=wire_ratio(valid),
                    median_data_s=median_or_none([t.data_s for t in valid if t.data_s is not None]),
                    median_wall_s=median_or_none([t.wall_s for t in valid if t.wall_s is not None]),
                    wide_spread=cv is not None and cv > WIDE_SPREAD_CV,
                    cpu_s_per_gib_ci95=cpu_ci(
                        valid, fixed_costs.get(valid[0].setup_shape, (None,) * 3), connection_scoped(valid)
                    ),
                    per_stream=summarise_streams(valid),
                    data_clock=clock_of(valid),
                    median_startup_s=median_or_none([t.startup_s for t in valid if t.startup_s is not None]),
                    **rekey_figures(valid),
                )
            )
        else:
            summaries.append(
                Summary(
                    combination=combo,
                    valid_trials=0,
                    invalid_trials=sum(1 for t in group if not t.valid),
                    unmeasured_trials=sum(1 for t in group if t.valid),
                    payload_bytes=group[0].payload_bytes,
                    median_mib_s=None,
                    min_mib_s=None,
                    max_mib_s=None,
                    q1_mib_s=None,
                    q3_mib_s=None,
                    iqr_mib_s=None,
                    cv=None,
                    relative_to_fastest=None,
                    client_cpu_s_per_gib=None,
                    server_cpu_s_per_gib=None,
                    median_data_s=None,
                    median_wall_s=None,
                    wide_spread=False,
                )
            )
    # One ranking per client/server implementation pair: an AsyncSSH (Python) row is never "x fastest"
    # of an OpenSSH row. OpenSSH's own pair first, then the others by name.
    _add_decisions(summaries, trials, tie_margin, kind)
    # Fastest first in the ranking's order (a row's median may sit below the next row's where the
    # rounds, paired, say it is faster: statistics.rank_groups).
    position = {
        entry.key: i
        for ranking in rankings(trials, tie_margin, kind).values()
        for i, entry in enumerate(ranking.combinations)
    }
    summaries.sort(
        key=lambda s: (
            implementation_order(s.combination),
            bool(getattr(s.combination, "remedy", "")),  # the rows sshbench added to measure what would help: last
            s.median_mib_s is None,
            position.get(s.combination, 0),
            -(s.median_mib_s or 0.0),
            s.combination,
        )
    )
    return summaries


def implementation_pair(combo: Combination) -> tuple[str, str]:
    """(client, server) implementation: the unit within which rates are ranked against each other."""
    return (getattr(combo, "client", "openssh"), getattr(combo, "server", "openssh"))


def implementation_order(combo: Combination) -> tuple[bool, str, str]:
    pair = implementation_pair(combo)
    return (pair != ("openssh", "openssh"), pair[1], pair[0])


def cached(result: RunResult, name: str, compute: Callable[[], T]) -> T:
    """A figure derived from a result, computed once per state of its trials (reports ask from many places).
    The key is every trial's identity and the fields a summary reads that change after a trial is added
    (the end-of-run cross-check sets data_s; a caller may invalidate a trial)."""
    key = (
        result.finished_at,
        result.status,
        tuple((id(t), t.valid, t.data_s, t.wall_minus_handshake_s) for t in result.trials),
    )
    hit = result.cache.get(name)
    if hit is None or hit[0] != key:
        hit = result.cache[name] = (key, compute())
    return hit[1]


def summaries(result: RunResult) -> list[Summary]:
    """The transfer summaries of a run, ranked per implementation pair (computed once)."""
    return cached(result, "summaries", lambda: summarise_transfers(result.trials, tie_margin=tie_margin(result)))


def tie_margin(result: RunResult) -> float:
    """The run's --tie (runs stored before it existed: the default)."""
    return result.settings.tie


def run_rankings(result: RunResult) -> dict[tuple[str, str], stats.Ranking[Combination]]:
    """The rankings in groups of a run's transfers, per implementation pair (computed once)."""
    return cached(result, "rankings", lambda: rankings(result.trials, tie_margin(result)))


def pair_estimate(result: RunResult, faster: Combination, slower: Combination) -> stats.RatioEstimate | None:
    """`faster`'s throughput over `slower`'s, as the run's ranking estimates any two of its rows (the model of the run
    where it held, else their own paired rounds); None where either is not ranked (another implementation pair)."""
    pair = implementation_pair(faster)
    ranking = run_rankings(result).get(pair)
    rates = _rates_by_pair(result.trials).get(pair, {})
    if ranking is None or faster not in rates or slower not in rates or implementation_pair(slower) != pair:
        return None
    return stats.estimator(rates, ranking.model)(faster, slower)


def undecided(result: RunResult) -> list[stats.PairDecision[Combination]]:
    """The neighbouring pairs the run could not decide, fastest pair first."""
    return [p for ranking in run_rankings(result).values() for p in stats.undecided_pairs(ranking)]


def rounds_run(result: RunResult) -> int:
    """Measured rounds (distinct repetitions of measured transfer trials)."""
    return len({t.repetition for t in result.trials if t.kind == TrialKind.TRANSFER and not t.warmup})


def handshakes(result: RunResult) -> list[HandshakeSummary]:
    """The connection set-up summaries of a run, per kex (computed once)."""
    return cached(result, "handshakes", lambda: summarise_handshakes(result.trials))
