"""Outliers among a combination's trials: Iglewicz & Hoaglin's modified z-score, flagged and never dropped, and
hyperfine's slow first trial. Pure functions over plain numbers (standard library only); docs/statistics.md.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

OUTLIER_Z = 3.5  # Iglewicz & Hoaglin's recommended cut-off for the modified z-score


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
