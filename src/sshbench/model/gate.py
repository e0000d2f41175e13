"""`sshbench check` (issue 54): is NEW slower than OLD by more than a threshold? Pure functions over trials.

Two ways to compare (docs/check.md):
- side by side (`side_by_side`): OLD and NEW are two values of one axis of one run (--ssh, --sshd or --link), so
  every row runs under both in the same interleaved rounds. NEW/OLD is estimated per row and for all rows together
  (the mean over rows of log(NEW/OLD)) from the model of the run (experiment.py: rounds as blocks, each row's scatter
  its own) where it holds, else from each round's log ratios (paired by round, Student t);
- against a stored run: gate_stored.py, with the same decision.

The decision (`decide`) of a ratio NEW/OLD with its 95% interval, against floor = 1 - threshold:
- "regression": the whole interval lies below the floor (decided slower by more than the threshold: the interval
  clears it, as criterion's noise band and mise's final gate, not a point estimate beyond it);
- "could not tell": the estimate is below the floor and the run's own trials decide that NEW is slower (the
  interval from within the run lies below 1), but not by more than the threshold: a regression may be there. Against
  a stored run this is the case the run-to-run scatter leaves open ("could not tell" rather than a false alarm).
  Also where the interval is too wide to exclude a slowdown of UNTOLD x the threshold;
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
from sshbench.results import Combination, Trial

DEFAULT_THRESHOLD = 0.05  # docs/check.md: A/A checks here scatter +-8-10% (95%) for all rows together
COMPARED_FIELDS = ("ssh_build", "sshd_build", "link")  # the axes whose two values a side-by-side check compares
REGRESSION, COULD_NOT_TELL, NO_REGRESSION = "regression", "could not tell", "no regression"
EXIT_NO_REGRESSION, EXIT_REGRESSION, EXIT_COULD_NOT_TELL = 0, 1, 3  # 2 is bad input, as every command's
CONFIDENCE = intervals.DEFAULT_CONFIDENCE
# An interval that cannot exclude a slowdown of UNTOLD x the threshold (20% at 5%: the size of slowdown a gate is for)
# around an estimate beyond the threshold tells nothing: "could not tell", not "no regression" (a 97% slower estimate
# on 3 rounds read 0.033 (0.001-1.754)). Side-by-side A/A checks here never come near it (lows 0.86-0.98).
UNTOLD = 4


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
    uninformative = low < 1.0 - UNTOLD * threshold
    return COULD_NOT_TELL if ratio < floor and (slower or uninformative) else NO_REGRESSION


def t_value(confidence: float, df: float) -> float:
    """Student's t for a Satterthwaite df: rounded down (only wider), at most 1000 (1.962 at 95%, the normal's 1.960).
    intervals.t_critical, not blocks.t_quantile: `sshbench run` imports this module, and numpy/scipy only load where a
    model is fitted (tests/test_ranking_model.py)."""
    return intervals.t_critical(confidence, max(1, min(1000, math.floor(df))))


def checked(
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
    half = t_value(confidence, df) * se
    low, high = math.exp(log_ratio - half), math.exp(log_ratio + half)
    within_high = None
    if within is not None and within[0] > 0 and math.isfinite(within[0]):
        within_high = math.exp(log_ratio + t_value(confidence, within[1]) * within[0])
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


def row_key(combo: Combination) -> Combination:
    """A row across runs: build labels left out (an upgrade changes them; --sshd NEW is the same row)."""
    return replace(combo, ssh_build="", sshd_build="")


def row_label(combo: Combination) -> str:
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
        result.overall = checked("all rows", c.estimate, c.se, c.df, threshold, CONFIDENCE)
        for o, n in pairs:
            rc = model.contrast({n: 1.0, o: -1.0})
            label = row_label(_blank(o, list(old)))
            result.rows.append(_with_rates(checked(label, rc.estimate, rc.se, rc.df, threshold, family), rates, o, n))
    else:
        result.method = "each round's log ratio NEW/OLD, paired by round (Student t)"
        if rejected:
            result.notes.append(f"the model of the run did not hold ({rejected}): rounds paired instead")
        per_round: dict[int, list[float]] = {}
        for o, n in pairs:
            for r in rates[o].keys() & rates[n].keys():
                per_round.setdefault(r, []).append(math.log(rates[n][r] / rates[o][r]))
            est = intervals.paired_ratio_ci(rates[n], rates[o], family)
            row = Checked(
                row_label(_blank(o, list(old))), est.ratio, est.low, est.high, NO_REGRESSION, confidence=family
            )
            if est.n_pairs >= intervals.MIN_PAIRS and est.low < est.high:
                row = replace(row, decision=decide(est.ratio, est.low, est.high, threshold))
            else:  # too few paired rounds for an interval
                row = replace(row, low=None, high=None, decision=decide(est.ratio, None, None, threshold))
            result.rows.append(_with_rates(row, rates, o, n))
        means = [statistics.fmean(v) for r, v in sorted(per_round.items()) if len(v) == k]
        se = statistics.stdev(means) / math.sqrt(len(means)) if len(means) >= 2 else 0.0
        centre = statistics.fmean(means) if means else statistics.fmean(x for v in per_round.values() for x in v)
        result.overall = checked("all rows", centre, se, len(means) - 1, threshold, CONFIDENCE)
    # A row's own "could not tell" is shown, not acted on: all rows together decide it (the module's docstring).
    result.rows = [r if r.decision != COULD_NOT_TELL else replace(r, decision="not decided") for r in result.rows]
    return result


def _with_rates(
    row: Checked, rates: Mapping[Combination, Mapping[int, float]], o: Combination, n: Combination
) -> Checked:
    return replace(row, old_mib_s=statistics.median(rates[o].values()), new_mib_s=statistics.median(rates[n].values()))


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
