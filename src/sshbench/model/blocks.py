"""The numerical core of experiment.py: rows x rounds, a variance per row, contrasts with Satterthwaite's df.

y[k, j] = mu[k] + beta[j] + e[k, j], e with variance sigma2[k]; `mask` says which cells were measured. Everything
centred within a row's own rounds (C_k y_k), so a row's mean never enters its variance. Row k's reference (the round
effects beta^(-k)) is the weighted least-squares fit of the *other* rows, with weights that do not depend on row k
either: they come from a first unweighted pass without rows k and i (row i's weight in row k's reference). Weights
that had seen row k lean toward the rows whose noise happened to follow row k's, and the noisy rows' variances came
out 8% low (10 rows, 3 rounds). Then E[s2[k]] = sigma2[k] + sum_i Omega[k, i] sigma2[i] exactly, and
sigma2 = (I + Omega)^-1 s2. numpy, and scipy.special for the F, t and chi-square distributions (the functions
scipy.stats calls; importing scipy.stats took 1.2 s, scipy.special 0.4, in every sshbench process that ranked 6 rows
or more); experiment.py's docstring says why this and not pooling.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from sshbench.model.intervals import t_critical

FLOOR_SHARE = 0.05  # a row's variance is at least this share of its raw deviations' (s2)
WEIGHT_FLOOR = 1e-2  # no variance counts below this share of the median in the weights
RCOND = 1e-10  # the normal matrices' eigenvalues below this share of the largest are their null space (_deviations)


# --- distributions ------------------------------------------------------------------------------

EXACT_T_DF = 1000  # integer df up to here: intervals.t_critical (its series has df / 2 terms)


def f_sf(x: ArrayLike, df1: ArrayLike, df2: ArrayLike) -> np.ndarray:
    """P(F > x) for Fisher's F with (df1, df2) degrees of freedom (not necessarily integers): scipy.stats.f.sf's
    special.fdtrc."""
    return np.asarray(special.fdtrc(df1, df2, x))


def t_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray:
    """P(T > x) for Student's t with df degrees of freedom: scipy.stats.t.sf's special.stdtr(df, -x)."""
    return np.asarray(special.stdtr(df, -np.asarray(x)))


def chi2_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray:
    """P(X > x) for chi-square with df degrees of freedom: scipy.stats.chi2.sf's special.chdtrc."""
    return np.asarray(special.chdtrc(df, x))


def t_quantile(confidence: float, df: float) -> float:
    """Two-sided critical value of Student's t for a real df (Satterthwaite's, not rounded), at least 1:
    scipy.stats.t.ppf's own function, scipy.special.stdtrit (the same values to the bit; t.ppf's argument handling
    costs ~50 us a call, and intervals come one at a time: 90,000 in tests/test_experiment_model.py). An integer df
    takes intervals.t_critical, so that a contrast on n - 1 df gets the paired interval's (paired_ratio_ci's) critical
    value to the last bit."""
    df = max(1.0, float(df))
    if df.is_integer() and df <= EXACT_T_DF:
        return t_critical(confidence, int(df))
    return float(special.stdtrit(df, (1.0 + confidence) / 2.0))


# --- rows x rounds ------------------------------------------------------------------------------


class RowTable:
    """Row variances, row effects and contrasts of one table (y = log time per byte, mask = measured)."""

    def __init__(self, y: np.ndarray, mask: np.ndarray) -> None:
        self.y, self.mask = np.where(mask, y, 0.0), mask
        self.n = mask.sum(axis=1).astype(float)
        self.complete = bool(mask.all())
        j = mask.shape[1]
        self.c = mask[:, :, None] * np.eye(j)[None] - mask[:, :, None] * mask[:, None, :] / self.n[:, None, None]
        self.cy = np.einsum("kab,kb->ka", self.c, self.y)
        self.connected = True
        weights = self._reference_weights()
        self.s2, self.d, self.g, self.omega = self._deviations(weights)
        self.sigma2, self.lin = self._solve(self.s2, self.omega)
        self.w = 1.0 / np.maximum(self.sigma2, max(1e-10, WEIGHT_FLOOR * float(np.median(self.sigma2))))
        self._mu_map()

    def _reference_weights(self) -> np.ndarray:
        """weights[k, i]: row i's weight in row k's reference, 1 / its variance from an unweighted pass without
        rows k and i (0 on the diagonal). Those variances are corrected as if the table were complete: they
        only set weights, and a weight that is off costs precision, never bias."""
        r, j = self.mask.shape
        total = self.cy.sum(axis=0)
        rest = total[None, None, :] - self.cy[None, :, :] - self.cy[:, None, :]  # [k, i]: without rows k and i
        if self.complete:
            beta = rest / max(r - 2, 1)
        else:
            normal = np.einsum("kab->ab", self.c)
            pair = normal[None, None] - self.c[None, :] - self.c[:, None]
            pair += np.ones((j, j)) / j + 1e-9 * max(float(np.trace(normal)), 1.0) * np.eye(j)
            beta = np.linalg.solve(pair, rest[..., None])[..., 0]
        dev = self.cy[None, :, :] - np.einsum("iab,kib->kia", self.c, beta)
        s2 = (dev**2).sum(axis=2) / (self.n[None, :] - 1)
        np.fill_diagonal(s2, 0.0)
        if r > 3:  # (I + a (11' - I)) sigma2 = s2 over the r - 1 rows but k
            a = 1.0 / (r - 2) ** 2
            sigma2 = (s2 - a * s2.sum(axis=1, keepdims=True) / (1 - a + a * (r - 1))) / (1 - a)
        else:  # two rows left: only their sum is known
            sigma2 = s2
        np.fill_diagonal(s2, np.nan)
        floor = np.maximum(1e-10, WEIGHT_FLOOR * np.nanmedian(s2, axis=1, keepdims=True))
        weights = 1.0 / np.maximum(sigma2, floor)
        np.fill_diagonal(weights, 0.0)
        return weights

    def _deviations(self, wk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each row against round effects fitted on the other rows (weights wk[k]): s2, deviations, reference,
        Omega (the reference's noise in s2)."""
        weighted = wk @ self.cy  # [k]: sum_i wk[k, i] C_i y_i
        if self.complete:
            total = wk.sum(axis=1)
            g = weighted / total[:, None]
            omega = wk**2 / total[:, None] ** 2
        else:
            normal = np.einsum("ki,iab->kab", wk, self.c)
            # rcond: the normal matrix's null space (the constant) comes out of the eigensolver near 1e-12, not 0, and
            # pinv's default cutoff (1e-15 of the largest) inverted it: a default run whose two rows missed the last
            # round read as "not connected" and fell back to the pairwise method
            pinv = np.linalg.pinv(normal, rcond=RCOND, hermitian=True)
            check = self.c - np.einsum("kab,kbc,kcd->kad", self.c, pinv, normal)
            self.connected = bool(np.abs(check).max() <= 1e-8)
            a = np.einsum("kab,kbc->kac", self.c, pinv)
            g = np.einsum("kab,kb->ka", a, weighted)
            omega = wk**2 * (np.einsum("kab,ibc->kiac", a, self.c) ** 2).sum(axis=(2, 3)) / (self.n[:, None] - 1)
        np.fill_diagonal(omega, 0.0)
        d = self.cy - g
        return (d**2).sum(axis=1) / (self.n - 1), d, g, omega

    @staticmethod
    def _solve(s2: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """sigma2 = (I + Omega)^-1 s2, floored at FLOOR_SHARE s2; and the linear map s2 -> sigma2 that gives."""
        lin = np.linalg.inv(np.eye(len(s2)) + omega)
        floored = lin @ s2 < FLOOR_SHARE * s2
        lin[floored] = FLOOR_SHARE * np.eye(len(s2))[floored]
        return lin @ s2, lin

    def _mu_map(self) -> None:
        """mu = L y (WLS with weights w): L[k, i, j] is the weight of cell (i, j) in row k's effect."""
        r = self.mask.shape[0]
        normal = np.einsum("k,kab->ab", self.w, self.c)
        u = self.mask / self.n[:, None]  # row k's mean over its rounds
        gmat = np.linalg.pinv(normal, rcond=RCOND, hermitian=True) @ u.T  # J x R
        cg = np.einsum("iab,bk->ika", self.c, gmat)
        self.lmap = np.eye(r)[:, :, None] * u[None, :, :] - self.w[None, :, None] * cg.transpose(1, 0, 2)
        self.mu = np.einsum("kij,ij->k", self.lmap, self.y)

    def contrast(self, a: np.ndarray) -> tuple[float, float, float]:
        """a'mu (log time), its variance and Satterthwaite's df."""
        cells = np.einsum("k,kij->ij", a, self.lmap)
        q = (cells**2).sum(axis=1)
        variance = float(q @ self.sigma2)
        per_row = (self.lin.T @ q) * self.s2
        spread = float((per_row**2 / (self.n - 1)).sum())
        return float(a @ self.mu), variance, variance**2 / spread if spread > 0 else 1e6

    def projection_test(self, rows: list[int], projector: np.ndarray) -> tuple[float, float, float, float]:
        """F = |P mu|^2 / tr(P V P) over `rows` (V: the row effects' covariance), Box's df1, Satterthwaite's df2,
        and P(F > statistic). (0, 1, 1, 1) when P V P is 0."""
        pl = np.einsum("ab,bij->aij", projector, self.lmap[rows])
        per_row = (pl**2).sum(axis=(0, 2))
        expected = float(per_row @ self.sigma2)
        if expected <= 0:
            return 0.0, 1.0, 1.0, 1.0
        cov = np.einsum("aij,bij,i->ab", pl, pl, self.sigma2)
        df1 = expected**2 / float((cov * cov).sum())
        spread = float((((self.lin.T @ per_row) * self.s2) ** 2 / (self.n - 1)).sum())
        df2 = expected**2 / spread if spread > 0 else 1e6
        residual = projector @ self.mu[rows]
        statistic = float(residual @ residual) / expected
        return statistic, df1, df2, float(f_sf(statistic, df1, df2))
