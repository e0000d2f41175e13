"""Deciding from few noisy trials: confidence intervals, paired ratios, tied ranks, outliers.

Pure functions over plain numbers (no I/O, no other sshbench module, standard library only), so that
the runner, the report and `compare` share one tested set of rules. Methods, assumptions and the
coverage measured in simulation: docs/statistics.md.

Vocabulary: a *round* is one interleaved pass over every combination; `rates[key][round]` is the
MiB/s of combination `key` in that round. Trials of one round run seconds apart, so a machine that
slows down for a minute slows every combination of that round alike ("common-mode" noise); ratios
taken within a round cancel it.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, Literal, TypeVar

Decision = Literal["ordered", "tied", "undecided"]
K = TypeVar("K", bound=Hashable)

DEFAULT_CONFIDENCE = 0.95
DEFAULT_TIE_MARGIN = 0.03  # `--tie 3%`: ratios within [1/1.03, 1.03] are "the same speed"
# An interval that covers the truth less often than this never decides a pair (one or two trials,
# or the unpaired fallback on tiny samples); see compare_pair.
DEFAULT_MIN_COVERAGE = 0.90
MIN_PAIRS = 3  # fewer paired rounds than this: the unpaired fallback
OUTLIER_Z = 3.5  # Iglewicz & Hoaglin's recommended cut-off for the modified z-score

PAIRED_LOG_T = "paired-log-t"
UNPAIRED_MEDIANS = "unpaired-medians"
WELCH_LOG_T = "welch-log-t"  # two runs: independent samples (compare)


# --- the median of one combination ------------------------------------------------------------


def order_statistic_coverage(n: int, k: int) -> float:
    """P(X(k) <= median <= X(n+1-k)) for n independent draws of any continuous distribution:
    1 - 2 P(Binomial(n, 1/2) < k). Distribution-free (the sign test's interval)."""
    below = sum(math.comb(n, i) for i in range(k))
    return max(0.0, 1.0 - 2.0 * below / math.ldexp(1.0, n))


def order_statistic_rank(n: int, confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The largest k whose interval [X(k), X(n+1-k)] still covers the median with at least
    `confidence`; 1 (the min-max range) when even that falls short, which is n < 6 at 95%."""
    k = 1
    while 2 * (k + 1) <= n + 1 and order_statistic_coverage(n, k + 1) >= confidence:
        k += 1
    return k


def median_ci_coverage(n: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The actual coverage of median_ci for n values: at least `confidence` from n = 6 (at 95%);
    below it for smaller n, where the min-max range is returned: 93.75% (n=5), 87.5% (4), 75% (3),
    50% (2), 0% (1)."""
    return order_statistic_coverage(n, order_statistic_rank(n, confidence))


def median_ci(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Distribution-free confidence interval for the population median: the order statistics
    (X(k), X(n+1-k)) with k from the binomial distribution (order_statistic_rank).

    Why: throughput on a shared machine is skewed (slow rounds, stragglers) and n is 3-10, so no
    normal approximation holds; this interval only assumes independent rounds. Its coverage moves
    in steps and is usually above `confidence` (e.g. 96.9% at n=6, 98.4% at n=7).

    For n < 6 no pair of order statistics reaches 95%: the min-max range is returned, and its
    actual coverage (median_ci_coverage) is below the requested level; callers show it as such.
    Also used for CPU seconds per GiB."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median_ci needs at least one value")
    k = order_statistic_rank(len(ordered), confidence)
    return ordered[k - 1], ordered[len(ordered) - k]


# --- Student's t, for the paired log ratios ---------------------------------------------------


def _t_central_probability(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with integer df: the finite series of Abramowitz & Stegun
    26.7.3 (odd df) and 26.7.4 (even df)."""
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    term = total = 1.0
    if df % 2 == 1:
        for k in range(1, (df - 1) // 2):
            term *= 2 * k / (2 * k + 1) * cos2
            total += term
        series = math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0
        return 2.0 / math.pi * (theta + series)
    for k in range(1, df // 2):
        term *= (2 * k - 1) / (2 * k) * cos2
        total += term
    return math.sin(theta) * total


@lru_cache(maxsize=256)
def t_critical(confidence: float, df: int) -> float:
    """Two-sided critical value of Student's t (4.303 for 95% at df=2), by bisection on the CDF."""
    if df < 1 or not 0.0 < confidence < 1.0:
        raise ValueError(f"t_critical: need df >= 1 and 0 < confidence < 1, got {df}, {confidence}")
    low, high = 0.0, 1.0
    while _t_central_probability(high, df) < confidence:
        low, high = high, high * 2.0
    for _ in range(80):
        middle = (low + high) / 2.0
        low, high = (middle, high) if _t_central_probability(middle, df) < confidence else (low, middle)
    return high


# --- the ratio of two combinations --------------------------------------------------------------


@dataclass(frozen=True)
class RatioEstimate:
    """Throughput of a over throughput of b (above 1: a is faster), with its confidence interval.
    `coverage` is the interval's actual confidence level (below the requested one for the unpaired
    fallback on small samples); `n_pairs` the rounds in which both were measured."""

    ratio: float
    low: float
    high: float
    n_pairs: int
    method: str = PAIRED_LOG_T
    coverage: float = DEFAULT_CONFIDENCE

    def reciprocal(self) -> RatioEstimate:
        """b over a."""
        return RatioEstimate(
            1.0 / self.ratio, 1.0 / self.high, 1.0 / self.low, self.n_pairs, self.method, self.coverage
        )


def _check_positive(values: Mapping[int, float]) -> None:
    if any(not v > 0 for v in values.values()):
        raise ValueError("throughputs must be positive")


def paired_ratio_ci(
    a_by_round: Mapping[int, float], b_by_round: Mapping[int, float], confidence: float = DEFAULT_CONFIDENCE
) -> RatioEstimate:
    """a/b from the rounds in which both were measured: d_r = ln(a_r / b_r) per round, the
    estimate exp(mean d) (the geometric mean of the per-round ratios) and a Student t interval on
    mean d, exponentiated.

    Why paired: a round's common slowdown multiplies a_r and b_r alike and drops out of d_r, so the
    interval reflects only the noise that is not shared. Why logs: noise on throughput is
    multiplicative, so d_r is near-symmetric and a/b and b/a get reciprocal intervals. Why t and
    not the distribution-free sign interval of median_ci: no distribution-free 95% interval exists
    below 6 rounds and adaptive runs decide from 3; with lognormal noise the t interval is exact,
    and an outlier widens it (undecided), it does not move it to a wrong decision (simulated in
    tests/test_statistics.py). With fewer than MIN_PAIRS pairs: unpaired_ratio_ci."""
    _check_positive(a_by_round)
    _check_positive(b_by_round)
    rounds = sorted(a_by_round.keys() & b_by_round.keys())
    if len(rounds) < MIN_PAIRS:
        return unpaired_ratio_ci(list(a_by_round.values()), list(b_by_round.values()), confidence, len(rounds))
    log_ratios = [math.log(a_by_round[r] / b_by_round[r]) for r in rounds]
    centre = statistics.fmean(log_ratios)
    half_width = t_critical(confidence, len(rounds) - 1) * statistics.stdev(log_ratios) / math.sqrt(len(rounds))
    return RatioEstimate(
        math.exp(centre),
        math.exp(centre - half_width),
        math.exp(centre + half_width),
        len(rounds),
        PAIRED_LOG_T,
        confidence,
    )


def unpaired_ratio_ci(
    a_values: Sequence[float], b_values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE, n_pairs: int = 0
) -> RatioEstimate:
    """Ratio of medians, its interval propagated from each side's median_ci at sqrt(confidence):
    [a_low / b_high, a_high / b_low]. If both intervals hold (probability >= the product of their
    coverages, independent samples) the ratio lies inside, so `coverage` is that product. With one
    or two values per side it is far below the requested level, and compare_pair will not decide."""
    if not a_values or not b_values:
        raise ValueError("unpaired_ratio_ci needs at least one value on each side")
    each = math.sqrt(confidence)
    a_low, a_high = median_ci(a_values, each)
    b_low, b_high = median_ci(b_values, each)
    coverage = median_ci_coverage(len(a_values), each) * median_ci_coverage(len(b_values), each)
    return RatioEstimate(
        statistics.median(a_values) / statistics.median(b_values),
        a_low / b_high,
        a_high / b_low,
        n_pairs,
        UNPAIRED_MEDIANS,
        coverage,
    )


def welch_log_ratio_ci(
    a_values: Sequence[float], b_values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> RatioEstimate:
    """a/b for two *independent* samples (two runs: other minutes, other machines, nothing to pair
    by round): the ratio of geometric means, exp(mean ln a - mean ln b), with Welch's t interval on
    the difference of the log means (Welch-Satterthwaite degrees of freedom, rounded down, which
    only widens it). The log scale for the same reason as paired_ratio_ci: noise on throughput is
    multiplicative, so ln(rate) is near-normal and a/b and b/a get reciprocal intervals. With one
    value on a side there is no spread: the interval is the point and `coverage` 0 (never decides)."""
    if not a_values or not b_values:
        raise ValueError("welch_log_ratio_ci needs at least one value on each side")
    if any(not v > 0 for v in (*a_values, *b_values)):
        raise ValueError("throughputs must be positive")
    log_a, log_b = [math.log(v) for v in a_values], [math.log(v) for v in b_values]
    centre = statistics.fmean(log_a) - statistics.fmean(log_b)
    if len(log_a) < 2 or len(log_b) < 2:
        return RatioEstimate(math.exp(centre), math.exp(centre), math.exp(centre), 0, WELCH_LOG_T, 0.0)
    var_a, var_b = statistics.variance(log_a) / len(log_a), statistics.variance(log_b) / len(log_b)
    se = math.sqrt(var_a + var_b)
    if se == 0:
        return RatioEstimate(math.exp(centre), math.exp(centre), math.exp(centre), 0, WELCH_LOG_T, confidence)
    df = (var_a + var_b) ** 2 / (var_a**2 / (len(log_a) - 1) + var_b**2 / (len(log_b) - 1))
    half_width = t_critical(confidence, max(1, math.floor(df))) * se
    return RatioEstimate(
        math.exp(centre), math.exp(centre - half_width), math.exp(centre + half_width), 0, WELCH_LOG_T, confidence
    )


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
    None when it cannot tell: an unpaired estimate, or a ratio on the margin's edge."""
    if estimate.method != PAIRED_LOG_T or estimate.n_pairs < 2:
        return None
    centre = math.log(estimate.ratio)
    half_width = (math.log(estimate.high) - math.log(estimate.low)) / 2.0
    margin = math.log1p(tie_margin)
    room = abs(abs(centre) - margin)  # the half-width at which it becomes ordered or tied
    if room < 1e-3 * margin:
        return None
    spread = half_width * math.sqrt(estimate.n_pairs) / t_critical(confidence, estimate.n_pairs - 1)
    n = estimate.n_pairs
    while t_critical(confidence, n - 1) * spread / math.sqrt(n) > room:
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
    if estimate.coverage < min_coverage or estimate.method != PAIRED_LOG_T:
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
) -> Ranking[K]:
    """Rank combinations (rates[key][round] = MiB/s, measured rounds only) fastest first by their paired
    ratio to the first (_paired_order), decide each neighbour pair with paired_ratio_ci + compare_pair,
    give tied neighbours one rank, and group neighbours the run could not order. A neighbour pair whose
    own paired ratio contradicts the order (non-transitive rounds) is never "ordered": undecided."""
    if any(not by_round for by_round in rates.values()):
        raise ValueError("rank_groups: every combination needs at least one rate")
    order, relative = _paired_order(rates, confidence)
    pairs: list[PairDecision[K]] = []
    for faster, slower in itertools.pairwise(order):
        estimate = paired_ratio_ci(rates[faster], rates[slower], confidence)
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
            joins = not _ordered_faster(rates[head], rates[order[i]], tie_margin, confidence, min_coverage)
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
    return Ranking(ranked, pairs)


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
    contested = [
        key
        for group in groups[1:]
        for key in group
        if not all(_ordered_faster(rates[inside], rates[key], tie_margin, confidence, min_coverage) for inside in first)
    ]
    return [*first, *contested] if contested else []


def _ordered_faster(
    a_by_round: Mapping[int, float],
    b_by_round: Mapping[int, float],
    tie_margin: float,
    confidence: float,
    min_coverage: float,
) -> bool:
    """a decided faster than b, paired."""
    estimate = paired_ratio_ci(a_by_round, b_by_round, confidence)
    return compare_pair(estimate, tie_margin, min_coverage) == "ordered" and estimate.ratio > 1.0


# --- outliers -----------------------------------------------------------------------------------


def modified_z_scores(values: Sequence[float]) -> list[float]:
    """Iglewicz & Hoaglin's modified z-score, 0.6745 (x - median) / MAD: robust, as the median and
    the median absolute deviation ignore the outliers being looked for. When MAD is 0 (over half the
    values equal) the mean absolute deviation stands in, scaled by 1.2533 (sqrt(pi/2)) as for a
    normal sample; when that is 0 too every value is the median and every score 0."""
    centre = statistics.median(values)
    deviations = [abs(v - centre) for v in values]
    mad = statistics.median(deviations)
    if mad > 0:
        return [0.6745 * (v - centre) / mad for v in values]
    mean_deviation = statistics.fmean(deviations)
    if mean_deviation == 0:
        return [0.0] * len(values)
    return [(v - centre) / (1.253314 * mean_deviation) for v in values]


def modified_z_outliers(values: Sequence[float], threshold: float = OUTLIER_Z) -> list[int]:
    """Indices of the values whose |modified z-score| exceeds `threshold` (3.5, the authors'
    cut-off). Flagged, never dropped: the medians are already robust to them. Fewer than 3 values:
    none (there is no "rest" to stand out from)."""
    if len(values) < 3:
        return []
    return [i for i, z in enumerate(modified_z_scores(values)) if abs(z) > threshold]


def slow_first_trial(values: Sequence[float], threshold: float = OUTLIER_Z, higher_is_faster: bool = True) -> bool:
    """hyperfine's warning: the first measured value (in the order run) is an outlier on the slow
    side, a sign of caches, CPU frequency or a daemon still settling: add warm-up. For throughput
    slow means low (`higher_is_faster`); for times pass False."""
    if len(values) < 3:
        return False
    first = modified_z_scores(values)[0]
    return first < -threshold if higher_is_faster else first > threshold
