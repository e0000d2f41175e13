"""Cipher x MAC as a factorial experiment (issue 52, `--full`): each cipher from all its MACs' trials, each MAC from all
ciphers'.

On top of the row model (experiment.py: round effects, a variance per row, Satterthwaite df), the rows' log rates
are fitted as cipher + MAC (additive on the log scale: a MAC costs about the same share of a byte's time whatever
the cipher; unweighted least squares over the rows, so that a level's effect is the plain average over the levels
of the other factor and not led by the rows that happen to scatter least). AEAD ciphers have no MAC (their rows
carry `aead_mac`, "implicit"): in an additive fit that MAC would alias with them (the issue's fit put aes256-gcm at
6.5x aes192-ctr's time), so they stay out of it, each a level of its own placed against the others by its rows.

Contrasts, all as RatioEstimate (rate of the first over the second, Student t on Satterthwaite's df):
- two MAC ciphers: the difference of their effects = the mean over MACs of their rows' log ratio (complete table);
  its variance sums 2 M rows' variances over M^2, so it is about sqrt(M) narrower than a pair of rows, on more df;
- two MACs: the same over the ciphers;
- an AEAD cipher against a MAC cipher: its rows against that cipher's fitted cell with `mac`, or by default with the
  fastest MAC (`reference_mac`, what a config line would pair it with), the interval then spanning every MAC not
  decided slower (`leading_macs`: the fastest is picked from the same trials); two AEAD ciphers: their rows.
The interaction (cipher x MAC) is tested (`interaction`): Wald-type F of the additive fit's residuals against the
rows' covariance (experiment.ExperimentModel.projection_test). Where it is significant a cipher contrast is still what
it says, the geometric mean over the MACs of the two ciphers' ratio, but no longer the ratio with every MAC, and an
AEAD placement rests on a fitted cell that the rows do not follow: the caller says so or uses the rows' ratios.

Groups (`cipher_groups`, `mac_groups`): levels fastest first; a group ends at the first level told apart from the
group's first (its interval beyond the tie margin, compare_pair's "ordered"), so each group's edge is decided. fit_factorial returns None where the row model does (experiment.assess) or where there
is no factorial to fit (fewer than 2 MAC ciphers or 2 MACs, or a table whose levels are not connected).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from sshbench.model.experiment import ExperimentModel, assess
from sshbench.model.intervals import DEFAULT_CONFIDENCE, RatioEstimate

K = TypeVar("K", bound=Hashable)

FACTORIAL_MODEL = "factorial-model-t"  # RatioEstimate.method of a factor contrast
IMPLICIT_MAC = "implicit"  # results.IMPLICIT_MAC: what AEAD ciphers have instead of a MAC
DEFAULT_TIE_MARGIN = 0.03  # statistics.DEFAULT_TIE_MARGIN


@dataclass(frozen=True)
class InteractionTest:
    """cipher x MAC interaction: F of the additive fit's residuals, its (Box, Satterthwaite) df and p-value."""

    statistic: float
    df1: float
    df2: float
    p: float


class FactorialModel(Generic[K]):
    """Cipher and MAC effects of a run (see the module's docstring)."""

    def __init__(
        self,
        rows: ExperimentModel[K],
        level_of: dict[K, tuple[str, str]],
        aead: list[str],
        confidence: float,
    ) -> None:
        self.rows, self.confidence = rows, confidence
        self.aead = aead  # AEAD ciphers, each a level of its own
        self._keys = [k for k in rows.keys if level_of[k][0] not in aead]  # the additive fit's rows
        self.mac_ciphers = sorted({level_of[k][0] for k in self._keys})
        self.macs = sorted({level_of[k][1] for k in self._keys})
        self._aead_rows = {c: [k for k in rows.keys if level_of[k][0] == c] for c in aead}
        columns = [*((0, c) for c in self.mac_ciphers), *((1, m) for m in self.macs)]  # (factor, level)
        design = np.array([[1.0] + [float(level_of[k][f] == name) for f, name in columns] for k in self._keys])
        self._column = {column: i + 1 for i, column in enumerate(columns)}
        self._hat = design @ np.linalg.pinv(design.T @ design)  # rows x parameters: a functional l -> weights
        self.connected = np.linalg.matrix_rank(design) == len(self.mac_ciphers) + len(self.macs) - 1
        first = self.macs[0]
        mac_score = {m: rows.estimate(self._weights(self._unit(mac=m) - self._unit(mac=first))) for m in self.macs}
        self.mac_order = sorted(self.macs, key=lambda m: -mac_score[m])
        self.reference_mac = self.mac_order[0]  # the fastest MAC: what an AEAD cipher is placed against
        first = self.mac_ciphers[0]  # every cipher's log rate with reference_mac, less this one's
        score = {c: rows.estimate(self._between(c, first, self.reference_mac)) for c in [*self.mac_ciphers, *aead]}
        self.cipher_order = sorted([*self.mac_ciphers, *aead], key=lambda c: -score[c])
        projector = np.eye(len(self._keys)) - self._hat @ design.T
        self.interaction = InteractionTest(*rows.projection_test(self._keys, projector))

    def _unit(self, cipher: str | None = None, mac: str | None = None) -> np.ndarray:
        """The additive fit's parameters: 1 for the cipher's effect, and the MAC's."""
        unit = np.zeros(self._hat.shape[1])
        if cipher is not None:
            unit[self._column[(0, cipher)]] = 1.0
        if mac is not None:
            unit[self._column[(1, mac)]] = 1.0
        return unit

    def _weights(self, functional: np.ndarray) -> dict[K, float]:
        """The rows' weights of a linear functional of the additive fit's parameters."""
        return dict(zip(self._keys, (self._hat @ functional).tolist()))

    def _side(self, cipher: str, mac: str) -> dict[K, float]:
        """A cipher's weights on the rows: an AEAD cipher's rows, or a MAC cipher's fitted cell with `mac`."""
        if cipher in self._aead_rows:
            return {k: 1.0 / len(self._aead_rows[cipher]) for k in self._aead_rows[cipher]}
        cell = self._unit(cipher, mac)
        cell[0] = 1.0  # the intercept
        return self._weights(cell)

    def _between(self, c1: str, c2: str, mac: str) -> dict[K, float]:
        """The rows' weights of log rate with c1 less log rate with c2 (MAC ciphers: their effects)."""
        if c1 in self.mac_ciphers and c2 in self.mac_ciphers:
            return self._weights(self._unit(c1) - self._unit(c2))
        weights = dict(self._side(c1, mac))
        for key, weight in self._side(c2, mac).items():
            weights[key] = weights.get(key, 0.0) - weight
        return weights

    def _estimate(self, weights: dict[K, float], confidence: float | None) -> RatioEstimate:
        level = self.confidence if confidence is None else confidence
        contrast = self.rows.contrast(weights)
        low, high = contrast.interval(level)
        n = len(self.rows.rounds)
        return RatioEstimate(math.exp(contrast.estimate), math.exp(low), math.exp(high), n, FACTORIAL_MODEL, level)

    def cipher_ratio(self, c1: str, c2: str, mac: str | None = None, confidence: float | None = None) -> RatioEstimate:
        """Rate with cipher c1 over rate with c2: two MAC ciphers by their effects (MACs averaged out); an AEAD
        cipher against a MAC cipher with `mac`, or by default with the fastest MAC: the estimate with
        reference_mac, the interval spanning those with every MAC not decided slower than it (`leading_macs`).
        reference_mac is picked from the same trials, so its own estimate is biased up (the winner's curse):
        alone its interval covered 93% where two MACs tie for the lead (simulated); the span covers it."""
        if mac is not None or (c1 in self.mac_ciphers and c2 in self.mac_ciphers):
            return self._estimate(self._between(c1, c2, self.reference_mac if mac is None else mac), confidence)
        each = [self._estimate(self._between(c1, c2, m), confidence) for m in self.leading_macs()]
        first = each[0]  # leading_macs() starts with reference_mac
        low, high = min(e.low for e in each), max(e.high for e in each)
        return RatioEstimate(first.ratio, low, high, first.n_pairs, first.method, first.coverage)

    def cipher_weights(self, c1: str, c2: str) -> dict[K, float]:
        """The rows' weights of cipher_ratio(c1, c2)'s estimate (with reference_mac): what adaptive rounds narrow."""
        return self._between(c1, c2, self.reference_mac)

    def mac_weights(self, m1: str, m2: str) -> dict[K, float]:
        """The rows' weights of mac_ratio(m1, m2)."""
        return self._weights(self._unit(mac=m1) - self._unit(mac=m2))

    def leading_macs(self, confidence: float | None = None) -> list[str]:
        """reference_mac and every MAC whose interval against it holds 1 (not decided slower), fastest first."""
        first = self.reference_mac
        return [m for m in self.mac_order if m == first or self.mac_ratio(first, m, confidence).low <= 1.0]

    def mac_ratio(self, m1: str, m2: str, confidence: float | None = None) -> RatioEstimate:
        """Rate with MAC m1 over rate with m2, the ciphers averaged out."""
        return self._estimate(self._weights(self._unit(mac=m1) - self._unit(mac=m2)), confidence)

    def cipher_groups(self, tie_margin: float = DEFAULT_TIE_MARGIN) -> list[list[str]]:
        """The ciphers in groups, fastest first (AEAD ones placed against the MAC ciphers with reference_mac)."""
        return _groups(self.cipher_order, self.cipher_ratio, tie_margin)

    def mac_groups(self, tie_margin: float = DEFAULT_TIE_MARGIN) -> list[list[str]]:
        """The MACs in groups, fastest first."""
        return _groups(self.mac_order, self.mac_ratio, tie_margin)


def _faster(estimate: RatioEstimate, tie_margin: float) -> bool:
    """Told apart, the first faster: statistics.compare_pair's "ordered" with the ratio above 1."""
    return estimate.low > 1.0 + tie_margin


def _groups(order: list[str], ratio: Callable[[str, str], RatioEstimate], tie_margin: float) -> list[list[str]]:
    """A group ends at the first level told apart from the group's first (so each group's edge, its first against
    the next group's first, is decided: what the answer prints). A neighbour pair alone does not end it: at 3
    rounds of `--full` aes256-gcm was told apart from aes128-ctr, 1.44x (1.06-2.06), where aes128-gcm, the first,
    was not, 1.52x (0.81-3.02), and the answer would have printed an edge it had not decided."""
    groups, head = [[order[0]]], order[0]
    for slower in order[1:]:
        joins = not _faster(ratio(head, slower), tie_margin)
        if joins:
            groups[-1].append(slower)
        else:
            groups.append([slower])
            head = slower
    return groups


def fit_factorial(
    rates: Mapping[K, Mapping[int, float]],
    cipher_of: Callable[[K], str],
    mac_of: Callable[[K], str],
    confidence: float = DEFAULT_CONFIDENCE,
    aead_mac: str = IMPLICIT_MAC,
) -> FactorialModel[K] | None:
    """The factorial model of a run's rows (rates[key][round] = MiB/s), or None (the module's docstring)."""
    rows, _check = assess(rates, confidence, min_rows=3, rounds_left=2)
    if rows is None:
        return None
    level_of = {k: (cipher_of(k), mac_of(k)) for k in rows.keys}
    aead = sorted({c for c, m in level_of.values() if m == aead_mac})
    mac_ciphers = {c for c, m in level_of.values() if c not in aead}
    macs = {m for c, m in level_of.values() if c not in aead}
    if len(mac_ciphers) < 2 or len(macs) < 2:
        return None
    model = FactorialModel(rows, level_of, aead, confidence)
    return model if model.connected else None
