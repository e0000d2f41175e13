"""Confidence intervals from few noisy trials: the median of one combination (order statistics), Student's t,
and the ratio of two combinations (paired by round, unpaired medians, or two runs' independent samples).

Pure functions over plain numbers (no I/O, no other sshbench module, standard library only); statistics.py
decides and ranks from them. Methods, assumptions and the coverage measured in simulation: docs/statistics.md.
Vocabulary (a round, `rates[key][round]`, common-mode noise): statistics.py.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_CONFIDENCE = 0.95
MIN_PAIRS = 3  # fewer paired rounds than this: the unpaired fallback

PAIRED_LOG_T = "paired-log-t"
UNPAIRED_MEDIANS = "unpaired-medians"
WELCH_LOG_T = "welch-log-t"  # two runs: independent samples (compare)
EXPERIMENT_MODEL = "experiment-model-t"  # the model of the run (experiment.py)
MODEL_MIN_ROWS = 6  # experiment.MIN_ROWS: below, a row's reference is too few rows (wider than the paired interval)


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
