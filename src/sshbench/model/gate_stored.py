"""`sshbench check --against RUN` (issue 54): a run against a stored run of the same set-up, decided as gate.py decides.

Two runs are minutes or days apart: nothing pairs their trials, and the machine itself moves between them (raw TCP
1668 vs 3416 MiB/s half an hour apart on the issue's VM). So:
- each run's level is taken round by round (`_level`: a round's mean log rate over the rows, so that a round's
  common swing counts once, not once per row), and the change is NEW's level minus OLD's, with the variance of both;
- the interval adds the run-to-run scatter the store has seen between two runs of the same set-up on this host
  (`scatter`: the root mean square of their change beyond its within-run part), PRIOR_SCATTER until it holds
  MIN_HISTORY such pairs;
- the change may be divided by what both runs measured on the same machine without ssh, the raw TCP control: where
  the stored pairs show that dividing by it scatters less than not (`choose`), else not. On this VM it scattered
  more (stored A/A pairs: 20% divided against 9% not; docs/check.md): the raw TCP control's 3 trials a run move
  on their own, so the choice is the store's, for each host. Below MIN_HISTORY pairs: not divided.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sshbench.model import gate, summary
from sshbench.results import Combination, RunResult, TrialKind

# Run-to-run scatter of all rows together between two runs of the same set-up on one host (log scale, one standard
# deviation beyond the within-run part) assumed until the store holds MIN_HISTORY such pairs, on PRIOR_DF degrees
# of freedom: this VM's stored-run A/A pairs moved 8.8% (root mean square, 5 pairs, docs/check.md).
PRIOR_SCATTER = 0.10
PRIOR_DF = 5
MIN_HISTORY = 3
WITHIN_DF = 4  # the within-run part's degrees of freedom: 3-6 rounds a run (Welch's, rounded down)
RAW_TCP = "the raw TCP control"


@dataclass(frozen=True)
class Change:
    """log(NEW/OLD) from one run to another: each common row and all rows together, with their within-run variance."""

    rows: list[tuple[Combination, float, float, float, float]]  # row, log ratio, its variance, OLD MiB/s, NEW MiB/s
    overall: float
    variance: float
    reference: float | None = None  # the raw TCP control's log ratio (None: not in both runs)
    reference_variance: float = 0.0

    def divided(self, by_reference: bool) -> tuple[float, float]:
        """All rows together (and its variance), divided by the raw TCP control or not."""
        if by_reference and self.reference is not None:
            return self.overall - self.reference, self.variance + self.reference_variance
        return self.overall, self.variance


@dataclass(frozen=True)
class Scatter:
    sd: float
    df: float
    pairs: int  # the stored pairs it comes from (0: PRIOR_SCATTER)


def _log_stats(values: Sequence[float]) -> tuple[float, float]:
    logs = [math.log(v) for v in values if v > 0]
    return statistics.fmean(logs), (statistics.variance(logs) / len(logs) if len(logs) >= 2 else math.inf)


def _by_round(
    run: RunResult, kind: TrialKind = TrialKind.TRANSFER, any_link: bool = False
) -> dict[Combination, dict[int, float]]:
    """Each row's MiB/s by round, keyed across runs: build labels left out, and the link where `any_link` (each run
    has one: `--against RUN --link NEW` compares the same rows over another link)."""
    out: dict[Combination, dict[int, float]] = {}
    for combo, by_round in summary.rates_by_round(run.trials, kind).items():
        key = gate.row_key(combo)
        out.setdefault(replace(key, link="") if any_link else key, {}).update(by_round)
    return out


def _one_link(run: RunResult) -> bool:
    return len({t.combination.link for t in run.trials}) == 1


def _level(rates: dict[Combination, dict[int, float]], rows: list[Combination]) -> tuple[float, float]:
    """The run's level over `rows` (mean log rate) and its variance from the rounds holding every row (each round's
    mean over the rows varies with that round's swing); with fewer than 2 such rounds, the rows' own (Welch)."""
    rounds = set.intersection(*(set(rates[r]) for r in rows))
    per_round = [statistics.fmean(math.log(rates[r][j]) for r in rows) for j in sorted(rounds)]
    level = statistics.fmean(_log_stats(list(rates[r].values()))[0] for r in rows)
    if len(per_round) >= 2:
        return level, statistics.variance(per_round) / len(per_round)
    return level, sum(_log_stats(list(rates[r].values()))[1] for r in rows) / len(rows) ** 2


def run_level(run: RunResult) -> tuple[float, float, int] | None:
    """The run's level over all its rows (mean log MiB/s, as `change` takes it), its variance and the rounds that
    variance comes from (1: from the rows' own scatter): `sshbench history`'s value of a run. None: nothing measured."""
    rates = {k: v for k, v in _by_round(run).items() if v}
    if not rates:
        return None
    rows = sorted(rates)
    level, variance = _level(rates, rows)
    return level, variance, len(set.intersection(*(set(rates[r]) for r in rows)))


def change(new: RunResult, old: RunResult) -> Change | None:
    """What changed from `old` to `new` (None: no common row)."""
    any_link = _one_link(new) and _one_link(old)
    new_rates, old_rates = _by_round(new, any_link=any_link), _by_round(old, any_link=any_link)
    common = sorted(new_rates.keys() & old_rates.keys())
    if not common:
        return None
    rows = []
    for key in common:
        (a, va), (b, vb) = _log_stats(list(new_rates[key].values())), _log_stats(list(old_rates[key].values()))
        rows.append((key, a - b, va + vb, statistics.median(old_rates[key].values()), statistics.median(new_rates[key].values())))  # fmt: skip
    (a, va), (b, vb) = _level(new_rates, common), _level(old_rates, common)
    found = Change(rows, a - b, va + vb)
    new_tcp = [v for vs in _by_round(new, TrialKind.RAW_TCP, any_link).values() for v in vs.values()]
    old_tcp = [v for vs in _by_round(old, TrialKind.RAW_TCP, any_link).values() for v in vs.values()]
    if len(new_tcp) >= 2 and len(old_tcp) >= 2:
        (a, va), (b, vb) = _log_stats(new_tcp), _log_stats(old_tcp)
        found = replace(found, reference=a - b, reference_variance=va + vb)
    return found


def scatter(history: Sequence[tuple[RunResult, RunResult]], by_reference: bool = False) -> Scatter:
    """The run-to-run scatter of all rows together from stored (earlier, later) pairs of runs of one set-up, beyond
    their within-run variance; PRIOR_SCATTER below MIN_HISTORY pairs (with the reference: pairs that have it)."""
    return _scatter(_changes(history), by_reference)


def _changes(history: Sequence[tuple[RunResult, RunResult]]) -> list[Change]:
    return [c for a, b in history if (c := change(b, a)) is not None]


def _scatter(found: Sequence[Change], by_reference: bool) -> Scatter:
    moved = [c.divided(by_reference) for c in found if not by_reference or c.reference is not None]
    moved = [(d, v) for d, v in moved if math.isfinite(v)]
    if len(moved) < MIN_HISTORY:
        return Scatter(PRIOR_SCATTER, PRIOR_DF, 0)
    excess = statistics.fmean(d * d for d, _ in moved) - statistics.fmean(v for _, v in moved)
    return Scatter(math.sqrt(max(excess, 0.0)), len(moved), len(moved))


def choose(found: Change, history: Sequence[tuple[RunResult, RunResult]]) -> tuple[list[bool], Scatter, str]:
    """Whether to divide by the raw TCP control (the module's docstring): [True], [False], or both ([False, True],
    where the store cannot tell yet which scatters less: a regression must then show either way); the scatter that
    goes with it, and why, in words."""
    stored = _changes(history)  # each pair's change once, for both scatters
    plain = _scatter(stored, by_reference=False)
    if found.reference is None:
        return [False], plain, f"not divided by {RAW_TCP} (not measured in both runs)"
    divided = _scatter(stored, by_reference=True)
    if plain.pairs and divided.pairs:
        if divided.sd < plain.sd:
            return [True], divided, f"divided by {RAW_TCP} (stored pairs: {divided.sd:.1%} divided, {plain.sd:.1%} not)"
        return [False], plain, f"not divided by {RAW_TCP} (stored pairs: {plain.sd:.1%} not, {divided.sd:.1%} divided)"
    return [False, True], plain, f"both divided by {RAW_TCP} and not, the milder of the two"


SEVERITY = {gate.NO_REGRESSION: 0, "not decided": 1, gate.COULD_NOT_TELL: 1, gate.REGRESSION: 2}


def _judged(
    found: Change, by_reference: bool, threshold: float, spread: Scatter
) -> tuple[gate.Checked, list[gate.Checked]]:
    overall, variance = found.divided(by_reference)
    shift, shift_variance = (found.reference or 0.0, found.reference_variance) if by_reference else (0.0, 0.0)
    total = gate.checked(
        "all rows", overall, math.sqrt(variance + spread.sd**2), spread.df, threshold, gate.CONFIDENCE,
        (math.sqrt(variance), WITHIN_DF),
    )  # fmt: skip
    family = 1.0 - (1.0 - gate.CONFIDENCE) / len(found.rows)
    rows = []
    for key, d, v, o, n in found.rows:
        v += shift_variance
        row = gate.checked(
            gate.row_label(key), d - shift, math.sqrt(v + spread.sd**2), spread.df, threshold, family,
            (math.sqrt(v), WITHIN_DF),
        )  # fmt: skip
        row = replace(row, old_mib_s=o, new_mib_s=n)
        rows.append(row if row.decision != gate.COULD_NOT_TELL else replace(row, decision="not decided"))
    return total, rows


def _milder(a: gate.Checked, b: gate.Checked) -> gate.Checked:
    return b if SEVERITY[b.decision] < SEVERITY[a.decision] else a


def against(
    new: RunResult,
    old: RunResult,
    threshold: float,
    history: Sequence[tuple[RunResult, RunResult]],
    names: tuple[str, str],
) -> gate.GateResult:
    """`new` against the stored run `old`; `history`: the store's earlier (older, newer) pairs of this set-up."""
    result = gate.GateResult(
        "against a stored run",
        names[0],
        names[1],
        threshold,
        gate.Checked("all rows", None, None, None, gate.COULD_NOT_TELL),  # fmt: skip
    )
    found = change(new, old)
    if found is None:
        result.notes.append("the two runs have no row in common: nothing to compare")
        return result
    ways, spread, how = choose(found, history)
    source = (
        f"{spread.pairs} stored pairs of runs" if spread.pairs else f"assumed: fewer than {MIN_HISTORY} pairs stored"
    )
    result.method = f"each run's rounds (Welch), {how}, with the run-to-run scatter ({spread.sd:.1%}, {source})"
    result.reference_ratio = math.exp(found.reference) if found.reference is not None else None
    judged = [_judged(found, way, threshold, spread) for way in ways]
    result.overall, result.rows = judged[0]
    for overall, rows in judged[1:]:
        result.overall = _milder(result.overall, overall)
        result.rows = [_milder(a, b) for a, b in zip(result.rows, rows, strict=True)]
    return result
