"""One model over all trials of a run (issue 52): rounds are blocks, every row is compared through them.

Model (a randomized complete block design on the log scale): y[k, j] = -ln(rate of row k in round j), the log time per
byte, is mu[k] + beta[j] + e[k, j]: a row effect, a round effect (the minute's common-mode slowdown, shared by every
row of the round) and a residual with the row's own variance sigma2[k]. Rows may miss rounds (adaptive runs).

Heteroscedasticity: **a variance per row, each estimated against round effects fitted on the other rows, and
Satterthwaite's degrees of freedom for every contrast** (blocks.py). Rows do not scatter alike (3des-cbc ~1% CV, AES-GCM
15-30%): one pooled variance makes the quiet rows' intervals far too wide and the noisy rows' far too narrow; variance
groups found from the data, or each row's variance shrunk toward the others' (limma), select on the noise and
underestimate the noisy rows (moderated pairwise variances, tried before, covered 90-94% at 3 rounds). So:
- row k's deviations from its reference beta^(-k): the round effects by weighted least squares on the other rows,
  weighted by 1 / their variance (the quiet rows define the rounds), those weights from a pass without row k either;
- E[s2[k]] = sigma2[k] + sum_i Omega[k, i] sigma2[i] exactly (Omega: the reference's own noise, from the design and
  the weights), so sigma2 = (I + Omega)^-1 s2 is unbiased, each s2[k] with n[k] - 1 df; floored at 5% of s2[k] (a row
  far quieter than its reference: conservative);
- a contrast of row effects (weighted least squares, linear in y) has variance sum_k q[k] sigma2[k], and as sigma2 is
  linear in the s2, Satterthwaite gives its df (not rounded: blocks.t_quantile); Student's t on the log scale.
With every row in every round a pair's estimate is the paired mean log ratio (round effects cancel) with variance
(sigma2[a] + sigma2[b]) / n: the model adds the variance, each row's against a reference that all the others measure,
with up to 2 (n - 1) df where the pair alone has n - 1; where one row is far noisier it is the paired interval again.
With rows missing rounds (adaptive runs) it compares every row through the round effects, on all of its rounds.
A factorial contrast (factorial.py) sums many rows and gets many df. Simulated: tests/test_experiment_model.py,
docs/statistics.md ("One model of the run").

Checks (`assess` says which failed; `fit` then returns None and the caller keeps paired_ratio_ci):
- enough data: MIN_ROWS rows with MIN_ROW_ROUNDS rounds each (rows with fewer are left out: `ModelCheck.left_out`,
  and `ratio` raises KeyError for them), MIN_ROUNDS rounds, every row's rounds connected to the others';
- outlier rounds (a stalled minute that slows some rows far more than the round effect): per row and round, the
  round against the row's other rounds is a Student t with n - 2 df; Fisher's combination of the one-sided (slow)
  p over the round's rows; a round below OUTLIER_ROUND_P / rounds is dropped and the model refit (fewer than
  `rounds_left` rounds left: rejected). An outlier the test does not see inflates its own row's variance, as it does a
  pair's paired variance: it widens that row's intervals rather than deciding them;
- rows share the round effect (a row that a slow round slows more, or less, than the others would not cancel it):
  per row, the share of its deviations along its reference is an F(1, n - 2) test of a slope; Fisher's combination
  over the rows (rows whose reference is mostly its own noise left out); p < COMMON_ROUND_P rejects.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from sshbench.model.blocks import RowTable, chi2_sf, f_sf, t_quantile, t_sf
from sshbench.model.intervals import DEFAULT_CONFIDENCE, EXPERIMENT_MODEL, MODEL_MIN_ROWS, RatioEstimate

K = TypeVar("K", bound=Hashable)

__all__ = ["EXPERIMENT_MODEL", "ExperimentModel", "ModelCheck", "assess", "fit"]
MIN_ROWS = MODEL_MIN_ROWS  # below, a row's reference is too few rows: wider than the paired interval (simulated)
MIN_ROWS_IDENTIFIED = 3  # with 2 rows their variances are not separable at all
MIN_ROUNDS = 3
MIN_ROW_ROUNDS = 2
OUTLIER_ROUND_P = 0.001  # family-wise, over the rounds
COMMON_ROUND_P = 1e-4


@dataclass(frozen=True)
class ModelCheck:
    """What the assumption checks found; `reason` says why the model was rejected (None: accepted)."""

    rows: int
    rounds: int
    left_out: tuple[Hashable, ...] = ()  # rows with fewer than MIN_ROW_ROUNDS rounds
    dropped_rounds: tuple[int, ...] = ()  # outlier rounds left out
    common_round_p: float | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Contrast:
    """A linear contrast of log *rates* (log rate_a - log rate_b for a pair), its standard error and df."""

    estimate: float
    se: float
    df: float  # Satterthwaite's, not rounded

    def interval(self, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
        half = t_quantile(confidence, self.df) * self.se
        return self.estimate - half, self.estimate + half


class ExperimentModel(Generic[K]):
    """The fitted model: ratios of any two rows from all trials of the run (see the module's docstring)."""

    def __init__(self, keys: list[K], rounds: list[int], core: RowTable, check: ModelCheck, confidence: float) -> None:
        self.keys, self.rounds, self.check, self.confidence = keys, rounds, check, confidence
        self.index = {key: i for i, key in enumerate(keys)}
        self._core = core

    @property
    def rows(self) -> frozenset[K]:
        return frozenset(self.keys)

    def row_cv(self, key: K) -> float:
        """A row's own scatter, as a coefficient of variation (round effects removed)."""
        return math.sqrt(math.expm1(float(self._core.sigma2[self.index[key]])))

    def noise_per_round(self, key: K) -> tuple[float, int]:
        """A row's variance (log scale) and its rounds: what one more round of it would narrow (sigma2 / n)."""
        i = self.index[key]
        return float(self._core.sigma2[i]), int(self._core.n[i])

    def log_rate(self, key: K) -> float:
        """A row's effect as log rate (up to one constant shared by all rows)."""
        return -float(self._core.mu[self.index[key]])

    def estimate(self, weights: Mapping[K, float]) -> float:
        """sum_k weights[k] log rate[k] (weights summing to 0), the estimate alone."""
        return -sum(w * float(self._core.mu[self.index[k]]) for k, w in weights.items())

    def contrast(self, weights: Mapping[K, float]) -> Contrast:
        """sum_k weights[k] log rate[k] (weights summing to 0), with its standard error and df."""
        a = np.zeros(len(self.keys))
        for key, weight in weights.items():
            a[self.index[key]] = weight
        if abs(a.sum()) > 1e-9:
            raise ValueError("a contrast's weights must sum to 0")
        estimate, variance, df = self._core.contrast(a)
        return Contrast(-estimate, math.sqrt(max(variance, 0.0)), min(df, 1e6))

    def projection_test(self, keys: list[K], projector: np.ndarray) -> tuple[float, float, float, float]:
        """Wald-type F test that projector @ (log rates of `keys`) is 0 (a symmetric projector, e.g. onto the
        residuals of an additive fit): F = |P mu|^2 / tr(P V P), V the rows' covariance from their variances;
        numerator df by Box's approximation, denominator df by Satterthwaite's. (F, df1, df2, p)."""
        return self._core.projection_test([self.index[key] for key in keys], projector)

    def ratio(self, a: K, b: K, confidence: float | None = None) -> RatioEstimate:
        """rate a / rate b with its interval (KeyError for a row the model left out)."""
        level = self.confidence if confidence is None else confidence
        ia, ib = self.index[a], self.index[b]
        n_pairs = int((self._core.mask[ia] & self._core.mask[ib]).sum())
        if a == b:
            return RatioEstimate(1.0, 1.0, 1.0, n_pairs, EXPERIMENT_MODEL, level)
        c = self.contrast({a: 1.0, b: -1.0})
        low, high = c.interval(level)
        return RatioEstimate(math.exp(c.estimate), math.exp(low), math.exp(high), n_pairs, EXPERIMENT_MODEL, level)


def _table(rates: Mapping[K, Mapping[int, float]]) -> tuple[list[K], list[int], np.ndarray, np.ndarray]:
    """Rows, rounds, y = -ln(rate) (log time per byte) and the mask of measured cells."""
    for by_round in rates.values():
        if any(not (v > 0 and math.isfinite(v)) for v in by_round.values()):
            raise ValueError("throughputs must be positive and finite")
    keys, rounds = list(rates), sorted({r for by_round in rates.values() for r in by_round})
    mask = np.array([[r in rates[k] for r in rounds] for k in keys], dtype=bool).reshape(len(keys), len(rounds))
    y = np.array([[-math.log(rates[k][r]) if r in rates[k] else 0.0 for r in rounds] for k in keys])
    return keys, rounds, y.reshape(mask.shape), mask


def _trim(
    keys: list[K], rounds: list[int], y: np.ndarray, mask: np.ndarray
) -> tuple[list[K], list[int], np.ndarray, np.ndarray, list[K]]:
    """Rows with fewer than MIN_ROW_ROUNDS rounds (no variance) and rounds with fewer than 2 rows (no contrast)
    left out, until none is; and the rows so left out."""
    short: list[K] = []
    while True:
        rows_kept = mask.sum(axis=1) >= MIN_ROW_ROUNDS
        rounds_kept = mask[rows_kept].sum(axis=0) >= 2
        if rows_kept.all() and rounds_kept.all():
            return keys, rounds, y, mask, short
        short += [k for k, kept in zip(keys, rows_kept) if not kept]
        keys = [k for k, kept in zip(keys, rows_kept) if kept]
        rounds = [r for r, kept in zip(rounds, rounds_kept) if kept]
        y, mask = y[rows_kept][:, rounds_kept], mask[rows_kept][:, rounds_kept]


def _outlier_round(core: RowTable) -> tuple[int, float] | None:
    """The round (column) whose rows read slower than their other rounds allow, if improbable: per row and round
    the one-sided p of a Student t with n - 2 df (the round against the row's other rounds), Fisher's combination
    over the round's rows; the smallest, if below OUTLIER_ROUND_P / rounds."""
    t_values, dfs, columns = [], [], []
    for k in range(len(core.n)):
        n = int(core.n[k])
        if n < 3:
            continue
        cols = np.flatnonzero(core.mask[k])
        d = core.d[k, cols]
        rest = np.broadcast_to(d, (n, n))[~np.eye(n, dtype=bool)].reshape(n, n - 1)  # row pos: d without d[pos]
        scale = rest.std(axis=1, ddof=1) * math.sqrt(1 + 1 / (n - 1))
        t_values.append(np.divide(d - rest.mean(axis=1), scale, out=np.zeros(n), where=scale > 0))
        dfs.append(np.full(n, n - 2.0))
        columns.append(cols)
    rounds = core.mask.shape[1]
    if not columns:
        return None
    column = np.concatenate(columns)
    one_sided = t_sf(np.concatenate(t_values), np.concatenate(dfs))
    log_p = np.bincount(column, np.log(np.maximum(one_sided, 1e-300)), minlength=rounds)
    rows = np.bincount(column, minlength=rounds)
    p = np.where(rows > 0, chi2_sf(-2 * log_p, 2 * np.maximum(rows, 1)), 1.0)
    worst = int(np.argmin(p))
    return (worst, float(p[worst])) if p[worst] < OUTLIER_ROUND_P / rounds else None


def _common_round_p(core: RowTable) -> float | None:
    """Do rows follow the round effects by their own slopes? Per row the share of its deviations along its
    reference, an F(1, n - 2) test of the slope; Fisher's combination of the rows' p. Rows whose reference is
    mostly its own estimation noise are skipped (their test would see that noise, not the row)."""
    f_values, dfs = [], []
    for k in range(len(core.n)):
        n, dd, gg = core.n[k], float(core.d[k] @ core.d[k]), float(core.g[k] @ core.g[k])
        noise = float(core.omega[k] @ core.sigma2) * (n - 1)
        if n < 3 or dd <= 0 or gg <= 30 * noise:
            continue
        share = min(float(core.d[k] @ core.g[k]) ** 2 / (dd * gg), 1 - 1e-15)
        f_values.append(share / (1 - share) * (n - 2))
        dfs.append(n - 2)
    if not f_values:
        return None
    log_p = float(np.log(np.maximum(f_sf(np.asarray(f_values), 1, np.asarray(dfs)), 1e-300)).sum())
    return float(chi2_sf(-2 * log_p, 2 * len(f_values)))


def assess(
    rates: Mapping[K, Mapping[int, float]],
    confidence: float = DEFAULT_CONFIDENCE,
    min_rows: int = MIN_ROWS,
    rounds_left: int = MIN_ROUNDS,
) -> tuple[ExperimentModel[K] | None, ModelCheck]:
    """Fit the model, checking its assumptions; (None, check with its reason) where they do not hold. `min_rows`
    (at least MIN_ROWS_IDENTIFIED) and `rounds_left`, the rounds needed once outlier rounds are dropped: contrasts
    over many rows (factorial.py) are still far narrower than a pair's with 3 rows or 2 rounds."""
    keys, rounds, y, mask = _table(rates)
    dropped: list[int] = []
    left_out: list[K] = []

    def rejected(reason: str, common: float | None = None) -> tuple[None, ModelCheck]:
        check = ModelCheck(len(keys), len(rounds), tuple(left_out), tuple(dropped), common, reason)
        return None, check

    while True:
        keys, rounds, y, mask, short = _trim(keys, rounds, y, mask)
        left_out += short
        if len(keys) < max(min_rows, MIN_ROWS_IDENTIFIED):
            return rejected(f"{len(keys)} row(s) with {MIN_ROW_ROUNDS} rounds or more: {min_rows} needed")
        if len(rounds) < (rounds_left if dropped else MIN_ROUNDS):
            return rejected(f"{len(rounds)} round(s) shared by two rows or more: {MIN_ROUNDS} needed")
        core = RowTable(y, mask)
        if not core.connected:
            return rejected("some rows' rounds are not connected to the other rows' rounds")
        outlier = _outlier_round(core) if len(rounds) >= 3 else None
        if outlier is None:
            break
        column, p = outlier
        dropped.append(rounds[column])
        if len(rounds) - 1 < rounds_left:
            return rejected(f"round {rounds[column]} is an outlier round (p = {p:.1g}): too few rounds without it")
        rounds = rounds[:column] + rounds[column + 1 :]
        keep = np.arange(mask.shape[1]) != column
        y, mask = y[:, keep], mask[:, keep]
    common = _common_round_p(core)
    if common is not None and common < COMMON_ROUND_P:
        return rejected(f"rows do not share the round effect (p = {common:.1g})", common)
    check = ModelCheck(len(keys), len(rounds), tuple(left_out), tuple(dropped), common, None)
    return ExperimentModel(keys, rounds, core, check, confidence), check


def fit(rates: Mapping[K, Mapping[int, float]], confidence: float = DEFAULT_CONFIDENCE) -> ExperimentModel[K] | None:
    """The model of the run, or None where its checks fail or the data are too few (`assess` says why)."""
    return assess(rates, confidence)[0]
