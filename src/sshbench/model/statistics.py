"""Deciding from few noisy trials: a pair ordered, tied or undecided (and why), and the ranking in groups.

Pure functions over plain numbers (no I/O, standard library only; the intervals they decide from are
intervals.py's, the outliers outliers.py's), so that the runner, the report and `compare` share one tested
set of rules. Methods, assumptions and the coverage measured in simulation: docs/statistics.md.

Vocabulary: a *round* is one interleaved pass over every combination; `rates[key][round]` is the
MiB/s of combination `key` in that round. Trials of one round run seconds apart, so a machine that
slows down for a minute slows every combination of that round alike ("common-mode" noise); ratios
taken within a round cancel it.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from sshbench.model.intervals import (
    DEFAULT_CONFIDENCE,
    EXPERIMENT_MODEL,
    MIN_PAIRS,
    MODEL_MIN_ROWS,
    PAIRED_LOG_T,
    RatioEstimate,
    paired_ratio_ci,
    t_critical,
)

if TYPE_CHECKING:
    from sshbench.model.experiment import ExperimentModel

Decision = Literal["ordered", "tied", "undecided"]
K = TypeVar("K", bound=Hashable)
# Rate of the first over rate of the second, with its interval: the run's model (experiment.py) where it holds,
# else the pair's own rounds (paired_ratio_ci).
PairEstimator = Callable[[K, K], RatioEstimate]

DEFAULT_TIE_MARGIN = 0.03  # `--tie 3%`: ratios within [1/1.03, 1.03] are "the same speed"
# An interval that covers the truth less often than this never decides a pair (one or two trials,
# or the unpaired fallback on tiny samples); see compare_pair.
DEFAULT_MIN_COVERAGE = 0.90
# The estimates whose interval narrows with more rounds as a paired t's does (pairs_to_decide, why_undecided).
DECIDING_METHODS = (PAIRED_LOG_T, EXPERIMENT_MODEL)


# --- deciding a pair ----------------------------------------------------------------------------


def compare_pair(
    estimate: RatioEstimate, tie_margin: float = DEFAULT_TIE_MARGIN, min_coverage: float = DEFAULT_MIN_COVERAGE
) -> Decision:
    """ordered: the whole interval lies beyond the margin on one side (above 1+m or below 1/(1+m));
    tied: the whole interval lies within [1/(1+m), 1+m]; else undecided. An interval whose actual
    coverage is below `min_coverage` is always undecided."""
    if estimate.coverage < min_coverage:
        return "undecided"
    upper = 1.0 + tie_margin
    lower = 1.0 / upper
    if estimate.low > upper or estimate.high < lower:
        return "ordered"
    if lower <= estimate.low and estimate.high <= upper:
        return "tied"
    return "undecided"


def pairs_to_decide(
    estimate: RatioEstimate, tie_margin: float = DEFAULT_TIE_MARGIN, confidence: float = DEFAULT_CONFIDENCE
) -> int | None:
    """About how many paired rounds in all would decide this pair if the spread stays as measured
    (the interval narrows as t(n-1)/sqrt(n)): what more time would buy, as pyperf's "needed runs".
    None when it cannot tell: an unpaired estimate, or a ratio on the margin's edge. An estimate of the run's
    model (experiment.py) narrows as 1/sqrt(rounds) with its t factor held (its df, more than rounds - 1, are
    not in the estimate; the factor only falls with more rounds, so the count is on the safe side)."""
    if estimate.method not in DECIDING_METHODS or estimate.n_pairs < 2:
        return None
    centre = math.log(estimate.ratio)
    half_width = (math.log(estimate.high) - math.log(estimate.low)) / 2.0
    margin = math.log1p(tie_margin)
    room = abs(abs(centre) - margin)  # the half-width at which it becomes ordered or tied
    if room < 1e-3 * margin:
        return None
    n = estimate.n_pairs
    paired = estimate.method == PAIRED_LOG_T

    def factor(rounds: int) -> float:
        return t_critical(confidence, rounds - 1) if paired else 1.0

    spread = half_width * math.sqrt(n) / factor(n)
    while factor(n) * spread / math.sqrt(n) > room:
        n += max(1, n // 4)
        if n > 100_000:
            return None
    return n


UndecidedReason = Literal["few-rounds", "more-rounds", "spread", "margin"]
PRACTICAL_ROUNDS = 100  # beyond this, "about N rounds would decide it" is no advice


@dataclass(frozen=True)
class WhyUndecided:
    """Why a pair stayed undecided, read from its own estimate, and what would decide it:
    - few-rounds: its interval covers the truth less often than `min_coverage` (fewer than MIN_PAIRS
      rounds in common: the unpaired fallback); `rounds` is MIN_PAIRS, what a decision needs at least;
    - more-rounds: about `more` further paired rounds at this spread would decide it;
    - margin: its ratio sits at the tie margin's edge: no practical number of rounds orders or ties them;
    - spread: the rounds scatter too much for the gap: over PRACTICAL_ROUNDS at this spread."""

    reason: UndecidedReason
    rounds: int | None  # paired rounds in all that would decide it (None: no practical number)
    more: int | None  # of which not yet run

    def sentence(self, tie_margin: float, n_pairs: int) -> str:
        if self.reason == "few-rounds":
            return f"{n_pairs} paired round(s) are too few for a 95% interval: {MIN_PAIRS} at least would decide"
        if self.reason == "more-rounds":
            return f"about {self.more} more round(s) would decide it"
        if self.reason == "margin":
            return (
                f"its ratio sits at the ±{tie_margin:.0%} tie margin: no practical number of rounds decides it "
                "(a wider --tie would call them tied)"
            )
        return f"the rounds scatter too much for the gap (over {PRACTICAL_ROUNDS} rounds): a quieter machine would decide it"


def why_undecided(
    estimate: RatioEstimate,
    tie_margin: float = DEFAULT_TIE_MARGIN,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    practical: int = PRACTICAL_ROUNDS,
) -> WhyUndecided:
    """The reason an undecided pair's own figures give (WhyUndecided)."""
    if estimate.coverage < min_coverage or estimate.method not in DECIDING_METHODS:
        return WhyUndecided("few-rounds", MIN_PAIRS, max(MIN_PAIRS - estimate.n_pairs, 1))
    needed = pairs_to_decide(estimate, tie_margin)
    if needed is not None and needed <= practical:
        return WhyUndecided("more-rounds", needed, max(needed - estimate.n_pairs, 1))
    ratio = max(estimate.ratio, 1.0 / estimate.ratio)
    near_margin = abs(math.log(ratio) - math.log1p(tie_margin)) < math.log1p(tie_margin) / 2
    return WhyUndecided("margin" if near_margin else "spread", None, None)


# --- ranking in groups --------------------------------------------------------------------------


@dataclass(frozen=True)
class PairDecision(Generic[K]):
    """Neighbours in the ranking: `estimate` is faster / slower."""

    faster: K
    slower: K
    estimate: RatioEstimate
    decision: Decision


@dataclass(frozen=True)
class RankedCombination(Generic[K]):
    key: K
    median: float
    rank: int  # shared by tied neighbours (competition ranking: 1, =2, =2, 4)
    shared: bool
    decided: bool  # ordered or tied against both neighbours
    # The first combination's throughput over this one's, paired by round: the one estimate the order, the
    # "x fastest" column and the conclusion all use (1.0 for the first; never decreasing down the ranking).
    relative: RatioEstimate | None = None
    # Index of its group (recommendations): a group is a run of neighbours, tied or undecided each with the
    # one above, and none told apart from the group's first (rank_groups).
    group: int = 0

    @property
    def rank_label(self) -> str:
        return f"={self.rank}" if self.shared else str(self.rank)


@dataclass(frozen=True)
class Ranking(Generic[K]):
    combinations: list[RankedCombination[K]]  # fastest first
    pairs: list[PairDecision[K]]  # pairs[i]: combinations[i] against combinations[i + 1]
    # The run's model where it held (run_model; None: every estimate is its pair's own paired_ratio_ci), and why it
    # did not hold where it was tried (experiment.ModelCheck.reason).
    model: ExperimentModel[K] | None = None
    model_rejected: str | None = None

    def groups(self) -> list[list[K]]:
        """The combinations in groups, fastest group first: a group ends at a neighbour pair that is
        ordered, or at a row told apart from the group's first; inside it every neighbour pair is tied or
        undecided (the run could not order them)."""
        out: list[list[K]] = []
        for c in self.combinations:
            if c.group == len(out):
                out.append([])
            out[c.group].append(c.key)
        return out


def run_model(
    rates: Mapping[K, Mapping[int, float]], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[ExperimentModel[K] | None, str | None]:
    """The model of the run (experiment.py) where it holds for every row: enough rows and rounds, no row left out,
    the rows sharing the round effect (outlier rounds dropped). (None, why) where it was tried and did not hold;
    (None, None) below MODEL_MIN_ROWS rows, where it is not tried. None: the pairwise method decides."""
    if len(rates) < MODEL_MIN_ROWS:
        return None, None
    # Imported here, not with this module: numpy and scipy take ~0.5 s to import, which every sshbench process that
    # ranks (most of them fewer than 6 rows) paid; and a fleet host goes without them (fleet.wheelhouse.HOST_LEFT_OUT:
    # the control machine ranks the trials it brings back): there every ranking is pairwise.
    try:
        from sshbench.model import experiment
    except ImportError:
        return None, "numpy and scipy are not installed here"
    model, check = experiment.assess(rates, confidence)
    if model is not None and check.left_out:
        return None, f"{len(check.left_out)} row(s) with fewer than {experiment.MIN_ROW_ROUNDS} rounds"
    return model, check.reason


def estimator(
    rates: Mapping[K, Mapping[int, float]],
    model: ExperimentModel[K] | None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairEstimator[K]:
    """a over b from the model where there is one (every row compared through the round effects, each row's
    scatter its own), else from the pair's own rounds."""
    if model is not None:
        return lambda a, b: model.ratio(a, b, confidence)
    return lambda a, b: paired_ratio_ci(rates[a], rates[b], confidence)


def _model_order(
    rates: Mapping[K, Mapping[int, float]], model: ExperimentModel[K], confidence: float
) -> tuple[list[K], dict[K, RatioEstimate]]:
    """The model's order (its row effects: ratios of one model are transitive) and each row's ratio to the first."""
    order = sorted(rates, key=lambda key: (-model.log_rate(key), -statistics.median(rates[key].values())))
    relative = {key: model.ratio(order[0], key, confidence) for key in order}
    return order, relative


def _paired_order(rates: Mapping[K, Mapping[int, float]], confidence: float) -> tuple[list[K], dict[K, RatioEstimate]]:
    """The order and every combination's ratio to the first, by one estimator: the paired ratio.

    Median descending, then neighbours swapped where their paired ratio says the lower one is faster
    (sample medians do not see through common-mode noise, paired rounds do). The first of that order is
    the reference unless some combination is faster than it, paired (possible when adaptive rounds left
    combinations with different rounds: a paired ratio is then not transitive); then that one is, until
    none is (at most once per combination). Finally every combination is placed by its paired ratio to
    the reference, so that "x fastest" never decreases down the ranking and the first row reads 1.00."""
    order = sorted(rates, key=lambda key: -statistics.median(rates[key].values()))
    for _ in range(len(order)):
        swapped = False
        for i in range(len(order) - 1):
            if paired_ratio_ci(rates[order[i]], rates[order[i + 1]], confidence).ratio < 1.0:
                order[i], order[i + 1] = order[i + 1], order[i]
                swapped = True
        if not swapped:
            break
    reference = order[0]
    tried = {reference}
    relative = {key: paired_ratio_ci(rates[reference], rates[key], confidence) for key in order}
    for _ in range(len(order)):
        faster = min(order, key=lambda key: relative[key].ratio)
        if relative[faster].ratio >= 1.0 or faster in tried:
            break
        reference = faster
        tried.add(reference)
        relative = {key: paired_ratio_ci(rates[reference], rates[key], confidence) for key in order}
    relative[reference] = RatioEstimate(1.0, 1.0, 1.0, len(rates[reference]))
    for key, estimate in relative.items():
        if estimate.ratio < 1.0:
            # A cycle of paired ratios (a faster than b, b than c, c than a: possible only when rounds differ
            # between combinations): no first row is faster than every other. Such a row reads as not told
            # apart from the first (1.00, its interval widened to hold 1), never as faster than the first.
            relative[key] = RatioEstimate(
                1.0, min(estimate.low, 1.0), max(estimate.high, 1.0), estimate.n_pairs, estimate.method, 0.0
            )
    position = {key: i for i, key in enumerate(order)}
    order.sort(key=lambda key: (key != reference, relative[key].ratio, position[key]))
    return order, relative


def rank_groups(
    rates: Mapping[K, Mapping[int, float]],
    tie_margin: float = DEFAULT_TIE_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    use_model: bool = True,
) -> Ranking[K]:
    """Rank combinations (rates[key][round] = MiB/s, measured rounds only) fastest first, decide each neighbour
    pair (compare_pair), give tied neighbours one rank, and group neighbours the run could not order. The
    estimates are the run's model's (run_model: its row effects order the rows, every ratio from all the run's
    trials) where it holds, else each pair's own rounds (_paired_order, paired_ratio_ci); `use_model=False`: the
    pairwise method alone. A neighbour pair whose own paired ratio contradicts the order (non-transitive
    rounds) is never "ordered": undecided."""
    if any(not by_round for by_round in rates.values()):
        raise ValueError("rank_groups: every combination needs at least one rate")
    model, rejected = run_model(rates, confidence) if use_model else (None, None)
    order, relative = _model_order(rates, model, confidence) if model else _paired_order(rates, confidence)
    ratio = estimator(rates, model, confidence)
    pairs: list[PairDecision[K]] = []
    for faster, slower in itertools.pairwise(order):
        estimate = ratio(faster, slower)
        decision = compare_pair(estimate, tie_margin, min_coverage)
        if decision == "ordered" and estimate.ratio < 1.0:
            decision = "undecided"
        pairs.append(PairDecision(faster, slower, estimate, decision))
    ranks, groups = [1], [0]
    head = order[0]  # the first of the current group
    for i, pair in enumerate(pairs, start=1):
        ranks.append(ranks[-1] if pair.decision == "tied" else i + 1)
        # A group holds the rows not told apart from its first row. Neighbours alone would chain: on a noisy
        # run every neighbour pair can be undecided while row 1 and row 9 are 3.7x (3.3-4.2) apart, and the
        # conclusion then called nine rows "not told apart".
        joins = pair.decision != "ordered"
        if joins and head != order[i - 1]:
            joins = not _ordered_faster(ratio(head, order[i]), tie_margin, min_coverage)
        if not joins:
            head = order[i]
        groups.append(groups[-1] if joins else groups[-1] + 1)
    ranked = []
    for i, key in enumerate(order):
        neighbours = pairs[max(i - 1, 0) : i + 1]
        ranked.append(
            RankedCombination(
                key=key,
                median=statistics.median(rates[key].values()),
                rank=ranks[i],
                shared=any(p.decision == "tied" for p in neighbours),
                decided=all(p.decision != "undecided" for p in neighbours),
                relative=relative[key],
                group=groups[i],
            )
        )
    return Ranking(ranked, pairs, model, rejected)


def undecided_pairs(ranking: Ranking[K]) -> list[PairDecision[K]]:
    """The neighbour pairs the report names as undecided."""
    return [p for p in ranking.pairs if p.decision == "undecided"]


def combinations_needing_rounds(ranking: Ranking[K]) -> list[K]:
    """For adaptive repetitions: the combinations still undecided against a neighbour, fastest
    first. A combination decided against both neighbours leaves the schedule; empty: stop."""
    return [c.key for c in ranking.combinations if not c.decided]


def first_group_contested(
    rates: Mapping[K, Mapping[int, float]],
    ranking: Ranking[K],
    tie_margin: float = DEFAULT_TIE_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> list[K]:
    """The rows the answer still needs rounds for: the first group (the rows not told apart from the first)
    and every row outside it that some row of the group is not ordered faster than (paired, as rank_groups
    decides), fastest first; empty when every row of the first group is ordered against every other row.
    Pairs inside the first group are left out: the headline names the group as equivalent, and two AES-GCM
    ciphers 4% apart take far more rounds than a default run has. Neither are pairs among the slower rows
    (aes128-ctr vs aes256-ctr), which the answer does not rest on."""
    groups = ranking.groups()
    first = groups[0]
    ratio = estimator(rates, ranking.model, confidence)
    contested = [
        key
        for group in groups[1:]
        for key in group
        if not all(_ordered_faster(ratio(inside, key), tie_margin, min_coverage) for inside in first)
    ]
    return [*first, *contested] if contested else []


def _ordered_faster(estimate: RatioEstimate, tie_margin: float, min_coverage: float) -> bool:
    """The first decided faster than the second."""
    return compare_pair(estimate, tie_margin, min_coverage) == "ordered" and estimate.ratio > 1.0
