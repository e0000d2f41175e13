"""`sshbench check` (issue 54): is NEW slower than OLD by more than a threshold? Pure functions over trials.

Two ways to compare (docs/check.md):
- side by side (`side_by_side`): OLD and NEW are two values of one axis of one run (--ssh, --sshd or --link), so
  every row runs under both in the same interleaved rounds. NEW/OLD is estimated per row and for all rows together
  (the mean over rows of log(NEW/OLD)) from the model of the run (experiment.py: rounds as blocks, each row's scatter
  its own) where it holds, else from each round's log ratios (paired by round, Student t);
- against a stored run (`against`): two runs, minutes or days apart. Nothing pairs their trials, and the machine
  itself moves between them (raw TCP 1668 vs 3416 MiB/s half an hour apart on the issue's VM), so each run's change
  is divided by what both measured on the same machine without ssh (the raw TCP control, interleaved with the
  rows), and the interval adds the run-to-run scatter the store has seen for such pairs of runs on this host
  (`Scatter`: an assumed PRIOR_SCATTER until it has MIN_HISTORY pairs).

The decision (`decide`) of a ratio NEW/OLD with its 95% interval, against floor = 1 - threshold:
- "regression": the whole interval lies below the floor (decided slower by more than the threshold: the interval
  clears it, as criterion's noise band and mise's final gate, not a point estimate beyond it);
- "could not tell": the estimate is below the floor and the run's own trials decide that NEW is slower (the
  interval from within the run lies below 1), but not by more than the threshold: a regression may be there. Against
  a stored run this is the case the run-to-run scatter leaves open ("could not tell" rather than a false alarm);
- "no regression" otherwise: no slowdown beyond the threshold shown (the interval says how large one could hide).
Identical builds side by side: "could not tell" at most ~2.5% of checks (the one-sided error of "decided slower"),
where a rule on the estimate alone said it in 13% (simulated, tests/test_gate.py; docs/check.md).
All rows together decide "could not tell"; a single row can add a regression only, decided on a family-wise
interval (Bonferroni over the rows: 6 rows at 95% each would raise ~6x the false alarms).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from sshbench.model import intervals, summary
from sshbench.model import statistics as stats
from sshbench.model.blocks import t_quantile
from sshbench.results import Combination, RunResult, Trial, TrialKind

DEFAULT_THRESHOLD = 0.05  # docs/check.md: A/A checks here scatter +-8-10% (95%) for all rows together
COMPARED_FIELDS = ("ssh_build", "sshd_build", "link")  # the axes whose two values a side-by-side check compares
REGRESSION, COULD_NOT_TELL, NO_REGRESSION = "regression", "could not tell", "no regression"
EXIT_NO_REGRESSION, EXIT_REGRESSION, EXIT_COULD_NOT_TELL = 0, 1, 3  # 2 is bad input, as every command's
CONFIDENCE = intervals.DEFAULT_CONFIDENCE
# Run-to-run scatter of "all rows together / raw TCP" between two runs of the same set-up on one host (log scale,
# one standard deviation) assumed until the store holds MIN_HISTORY such pairs: measured by bench/gate.py's
# stored-run A/A checks (docs/check.md), on PRIOR_DF degrees of freedom.
PRIOR_SCATTER = 0.10
PRIOR_DF = 5
MIN_HISTORY = 3
WITHIN_DF = 4  # a stored-run comparison's within-run part: Welch over 3-6 rounds a row (its df, rounded down)


@dataclass(frozen=True)
class Checked:
    """One line of a check: NEW's rate over OLD's for a row (or all rows together), with its interval."""

    label: str
    ratio: float | None  # NEW / OLD: below 1 is slower
    low: float | None
    high: float | None
    decision: str  # REGRESSION | COULD_NOT_TELL | NO_REGRESSION
    old_mib_s: float | None = None
    new_mib_s: float | None = None
    confidence: float = CONFIDENCE


@dataclass
class GateResult:
    mode: str  # "side by side" | "against a stored run"
    old: str  # what OLD is, e.g. "sshd OpenSSH_9.2p1" or "run 12"
    new: str
    threshold: float
    overall: Checked  # all rows together
    rows: list[Checked] = field(default_factory=list)
    method: str = ""  # how the intervals were made, in words
    reference_ratio: float | None = None  # against a stored run: the raw TCP control's NEW/OLD, divided out
    notes: list[str] = field(default_factory=list)

    @property
    def decision(self) -> str:
        if self.overall.decision == REGRESSION or any(r.decision == REGRESSION for r in self.rows):
            return REGRESSION
        return COULD_NOT_TELL if self.overall.decision == COULD_NOT_TELL else NO_REGRESSION

    def exit_code(self, inconclusive: str | None = None) -> int:
        """0, 1 (a regression), or for "could not tell" 3, or what --inconclusive pass (0) / fail (1) makes it."""
        if self.decision == COULD_NOT_TELL:
            return {"pass": EXIT_NO_REGRESSION, "fail": EXIT_REGRESSION}.get(inconclusive or "", EXIT_COULD_NOT_TELL)
        return EXIT_REGRESSION if self.decision == REGRESSION else EXIT_NO_REGRESSION

    def to_json(self) -> dict:
        return {
            **{k: v for k, v in asdict(self).items() if k not in ("overall", "rows")},
            "decision": self.decision,
            "overall": asdict(self.overall),
            "rows": [asdict(r) for r in self.rows],
        }


def decide(
    ratio: float | None, low: float | None, high: float | None, threshold: float, within_high: float | None = None
) -> str:
    """The module's docstring; `within_high`: the interval's top from the run's own trials alone (default `high`).
    No interval (one round) with an estimate below the floor: could not tell."""
    floor = 1.0 - threshold
    if ratio is None or low is None or high is None:
        return COULD_NOT_TELL if ratio is None or ratio < floor else NO_REGRESSION
    if high < floor:
        return REGRESSION
    slower = (high if within_high is None else within_high) < 1.0
    return COULD_NOT_TELL if ratio < floor and slower else NO_REGRESSION


def _checked(
    label: str,
    log_ratio: float,
    se: float,
    df: float,
    threshold: float,
    confidence: float,
    within: tuple[float, float] | None = None,  # (se, df) from the run's own trials, where `se` adds more
) -> Checked:
    ratio = math.exp(log_ratio)
    if not se > 0 or not math.isfinite(se):  # no spread: no interval (one round), nothing decided
        return Checked(label, ratio, None, None, decide(ratio, None, None, threshold), confidence=confidence)
    half = t_quantile(confidence, max(df, 1.0)) * se
    low, high = math.exp(log_ratio - half), math.exp(log_ratio + half)
    within_high = None
    if within is not None and within[0] > 0 and math.isfinite(within[0]):
        within_high = math.exp(log_ratio + t_quantile(confidence, max(within[1], 1.0)) * within[0])
    return Checked(label, ratio, low, high, decide(ratio, low, high, threshold, within_high), confidence=confidence)


# --- side by side -------------------------------------------------------------------------------


def compared_fields(combinations: Sequence[Combination]) -> list[str]:
    """The axes a side-by-side check compares: those of COMPARED_FIELDS with two values among the rows."""
    return [f for f in COMPARED_FIELDS if len({getattr(c, f) for c in combinations}) == 2]


def _blank(combo: Combination, fields: Sequence[str]) -> Combination:
    blank: dict[str, str] = {f: "" for f in fields}
    return replace(combo, **blank)  # type: ignore[arg-type]  # str fields only (COMPARED_FIELDS)


def row_pairs(
    combinations: Sequence[Combination], old: Mapping[str, str], new: Mapping[str, str]
) -> list[tuple[Combination, Combination]]:
    """(OLD's row, NEW's row) for each row measured under both: the same combination but the compared fields'."""
    fields = list(old)
    by_row: dict[Combination, dict[str, Combination]] = {}
    for c in combinations:
        values = {f: getattr(c, f) for f in fields}
        side = "old" if values == dict(old) else "new" if values == dict(new) else None
        if side:
            by_row.setdefault(_blank(c, fields), {})[side] = c
    return [(d["old"], d["new"]) for d in by_row.values() if len(d) == 2]


def _row_label(combo: Combination) -> str:
    link = "" if combo.link in ("", "loopback") else f" [link {combo.link}]"
    return row_key(combo).label + link


def side_by_side(
    trials: list[Trial],
    old: Mapping[str, str],
    new: Mapping[str, str],
    threshold: float,
    names: tuple[str, str] = ("OLD", "NEW"),
) -> GateResult:
    """NEW against OLD in one run (`old`/`new`: each compared field's value; `names`: how to call them)."""
    rates = summary.rates_by_round(trials)
    pairs = [(o, n) for o, n in row_pairs(list(rates), old, new) if rates[o] and rates[n]]
    result = GateResult(
        "side by side", names[0], names[1], threshold, Checked("all rows", None, None, None, COULD_NOT_TELL)
    )
    if not pairs:
        result.notes.append("no row was measured under both: nothing to compare")
        return result
    model, rejected = stats.run_model(rates)
    if model is not None and not all(o in model.rows and n in model.rows for o, n in pairs):
        model = None
    family = 1.0 - (1.0 - CONFIDENCE) / len(pairs)  # Bonferroni over the rows
    k = len(pairs)
    if model is not None:
        result.method = "the model of the run (rounds as blocks, each row's scatter its own)"
        c = model.contrast({**{n: 1.0 / k for _, n in pairs}, **{o: -1.0 / k for o, _ in pairs}})
        result.overall = _checked("all rows", c.estimate, c.se, c.df, threshold, CONFIDENCE)
        for o, n in pairs:
            rc = model.contrast({n: 1.0, o: -1.0})
            result.rows.append(
                _with_rates(_checked(_row_label(o), rc.estimate, rc.se, rc.df, threshold, family), rates, o, n)
            )
    else:
        result.method = "each round's log ratio NEW/OLD, paired by round (Student t)"
        if rejected:
            result.notes.append(f"the model of the run did not hold ({rejected}): rounds paired instead")
        per_round: dict[int, list[float]] = {}
        for o, n in pairs:
            for r in rates[o].keys() & rates[n].keys():
                per_round.setdefault(r, []).append(math.log(rates[n][r] / rates[o][r]))
            est = intervals.paired_ratio_ci(rates[n], rates[o], family)
            checked = Checked(_row_label(o), est.ratio, est.low, est.high, NO_REGRESSION, confidence=family)
            if est.n_pairs >= intervals.MIN_PAIRS and est.low < est.high:
                checked = replace(checked, decision=decide(est.ratio, est.low, est.high, threshold))
            else:  # too few paired rounds for an interval
                checked = replace(checked, low=None, high=None, decision=decide(est.ratio, None, None, threshold))
            result.rows.append(_with_rates(checked, rates, o, n))
        means = [statistics.fmean(v) for r, v in sorted(per_round.items()) if len(v) == k]
        se = statistics.stdev(means) / math.sqrt(len(means)) if len(means) >= 2 else 0.0
        centre = statistics.fmean(means) if means else statistics.fmean(x for v in per_round.values() for x in v)
        result.overall = _checked("all rows", centre, se, len(means) - 1, threshold, CONFIDENCE)
    # A row's own "could not tell" is shown, not acted on: all rows together decide it (the module's docstring).
    result.rows = [r if r.decision != COULD_NOT_TELL else replace(r, decision="not decided") for r in result.rows]
    return result


def _with_rates(
    checked: Checked, rates: Mapping[Combination, Mapping[int, float]], o: Combination, n: Combination
) -> Checked:
    return replace(
        checked, old_mib_s=statistics.median(rates[o].values()), new_mib_s=statistics.median(rates[n].values())
    )


def rounds_decided(trials: list[Trial], threshold: float) -> bool | None:
    """For --runs auto in a side-by-side check (measure/rounds.next_round): whether more rounds can still change the
    decision. Decided when all rows together are a regression or shown within the threshold whichever of the two
    values is NEW (the rounds do not know which is). None where it cannot say (no single compared axis)."""
    rates = summary.rates_by_round(trials)
    fields = compared_fields(list(rates))
    if len(fields) != 1:
        return None
    a, b = sorted({getattr(c, fields[0]) for c in rates})
    gate = side_by_side(trials, {fields[0]: a}, {fields[0]: b}, threshold)
    o = gate.overall
    if o.low is None or o.high is None:
        return False
    floor = 1.0 - threshold
    forward = o.high < floor or o.low >= floor  # b is NEW
    backward = 1.0 / o.low < floor or 1.0 / o.high >= floor  # a is NEW
    return forward and backward


# --- against a stored run ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """log(NEW/OLD) between two runs for each common row and all rows together, divided by the raw TCP control's."""

    rows: list[tuple[Combination, float, float, float, float]]  # row, log ratio, its variance, OLD MiB/s, NEW MiB/s
    overall: float
    variance: float  # within the runs (Welch), rows and reference
    reference: str  # what it was divided by, in words ("" for nothing)
    reference_ratio: float | None = None  # the raw TCP control's NEW/OLD (the machine's own change)


@dataclass(frozen=True)
class Scatter:
    sd: float  # one standard deviation of Change.overall between two runs of one set-up, beyond the within-run part
    df: float
    pairs: int  # the stored pairs it comes from (0: PRIOR_SCATTER)


def _log_stats(values: Sequence[float]) -> tuple[float, float]:
    logs = [math.log(v) for v in values if v > 0]
    mean = statistics.fmean(logs)
    return mean, (statistics.variance(logs) / len(logs) if len(logs) >= 2 else math.inf)


def row_key(combo: Combination) -> Combination:
    """A row across runs: build labels left out (an upgrade changes them; --sshd NEW is the same row)."""
    return replace(combo, ssh_build="", sshd_build="")


def _by_row(trials: list[Trial], kind: TrialKind = TrialKind.TRANSFER) -> dict[Combination, list[float]]:
    out: dict[Combination, list[float]] = {}
    for combo, by_round in summary.rates_by_round(trials, kind).items():
        out.setdefault(row_key(combo), []).extend(by_round.values())
    return out


def change(new: RunResult, old: RunResult) -> Change | None:
    """What changed from `old` to `new` (None: no common row)."""
    new_rows, old_rows = _by_row(new.trials), _by_row(old.trials)
    rows = []
    for key in sorted(new_rows.keys() & old_rows.keys()):
        (a, va), (b, vb) = _log_stats(new_rows[key]), _log_stats(old_rows[key])
        rows.append((key, a - b, va + vb, statistics.median(old_rows[key]), statistics.median(new_rows[key])))
    if not rows:
        return None
    k = len(rows)
    overall = statistics.fmean(r[1] for r in rows)
    variance = sum(r[2] for r in rows) / k**2
    new_tcp, old_tcp = _by_row(new.trials, TrialKind.RAW_TCP), _by_row(old.trials, TrialKind.RAW_TCP)
    new_ref = [v for vs in new_tcp.values() for v in vs]
    old_ref = [v for vs in old_tcp.values() for v in vs]
    if not (new_ref and old_ref):
        return Change(rows, overall, variance, "")
    (a, va), (b, vb) = _log_stats(new_ref), _log_stats(old_ref)
    shift = a - b
    rows = [(key, d - shift, v + va + vb, o, n) for key, d, v, o, n in rows]
    return Change(rows, overall - shift, variance + va + vb, "the raw TCP control", math.exp(shift))


def scatter(history: Sequence[tuple[RunResult, RunResult]]) -> Scatter:
    """The run-to-run scatter of Change.overall from stored (earlier, later) pairs of runs of one set-up, beyond
    their within-run variance; PRIOR_SCATTER below MIN_HISTORY pairs."""
    found = [c for a, b in history if (c := change(b, a)) is not None and math.isfinite(c.variance)]
    if len(found) < MIN_HISTORY:
        return Scatter(PRIOR_SCATTER, PRIOR_DF, 0)
    excess = statistics.fmean(c.overall**2 for c in found) - statistics.fmean(c.variance for c in found)
    return Scatter(math.sqrt(max(excess, 0.0)), len(found), len(found))


def against(new: RunResult, old: RunResult, threshold: float, spread: Scatter, names: tuple[str, str]) -> GateResult:
    """`new` against the stored run `old` (see the module's docstring)."""
    result = GateResult(
        "against a stored run", names[0], names[1], threshold, Checked("all rows", None, None, None, COULD_NOT_TELL)
    )
    found = change(new, old)
    if found is None:
        result.notes.append("the two runs have no row in common: nothing to compare")
        return result
    history = (
        f"{spread.pairs} earlier pairs of runs here"
        if spread.pairs
        else f"assumed: fewer than {MIN_HISTORY} earlier pairs stored"
    )
    result.method = (
        f"each run's geometric mean per row (Welch), {'divided by ' + found.reference if found.reference else 'not normalised'}, "
        f"with the run-to-run scatter ({spread.sd:.1%}, {history})"
    )
    if not found.reference:
        result.notes.append(
            "neither run measured the raw TCP control (--no-baselines?): the machine's own drift is not taken out"
        )
    result.reference_ratio = found.reference_ratio
    var = found.variance + spread.sd**2
    within = (math.sqrt(found.variance), WITHIN_DF)
    result.overall = _checked("all rows", found.overall, math.sqrt(var), spread.df, threshold, CONFIDENCE, within)
    family = 1.0 - (1.0 - CONFIDENCE) / len(found.rows)
    for key, d, v, o, n in found.rows:
        row = _checked(
            _row_label(key), d, math.sqrt(v + spread.sd**2), spread.df, threshold, family, (math.sqrt(v), WITHIN_DF)
        )
        row = replace(row, old_mib_s=o, new_mib_s=n)
        result.rows.append(row if row.decision != COULD_NOT_TELL else replace(row, decision="not decided"))
    return result
