"""sshbench.model.experiment (rows x rounds) and factorial (cipher x MAC) against simulated runs with a known truth.

The machine's noise (issue 52): every round multiplies all rows by one factor from U(0.6, 1.0) (common-mode swings of
up to 40%); each row has its own lognormal noise, CV drawn log-uniformly from 1% to 30% (3des-cbc to AES-GCM); in the
runs "with an outlier round" one round slows a random subset of rows (each with probability U(0.1, 0.5)) by U(2, 3)
beyond the round's factor. Truths come in tied pairs, so that ties are tested as often as gaps. bench/precision_sim.py
prints the figures (docs/statistics.md, "One model of the run").
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass, field

import numpy as np
import pytest

from sshbench.model import experiment, factorial
from sshbench.model.blocks import RowTable, f_sf, t_quantile
from sshbench.model.intervals import RatioEstimate, paired_ratio_ci, t_critical

pytestmark = pytest.mark.fast

SLOW_ROUNDS = (0.6, 1.0)
CV_RANGE = (0.01, 0.30)
TIE_MARGIN = 0.03
Rates = dict[object, dict[int, float]]


# --- simulated runs -------------------------------------------------------------------------------------


def _noise(rng: np.random.Generator, rows: int, rounds: int, outlier: bool) -> np.ndarray:
    """log rate noise: the round's common factor, each row's own lognormal noise, the outlier round."""
    cv = np.exp(rng.uniform(math.log(CV_RANGE[0]), math.log(CV_RANGE[1]), rows))
    noise = (
        np.log(rng.uniform(*SLOW_ROUNDS, rounds))[None, :]
        + rng.normal(size=(rows, rounds)) * np.sqrt(np.log1p(cv**2))[:, None]
    )
    if outlier:
        hit = rng.random(rows) < rng.uniform(0.1, 0.5)
        noise[hit, rng.integers(rounds)] -= np.log(rng.uniform(2.0, 3.0, int(hit.sum())))
    return noise


def _rates(keys: list, log_rate: np.ndarray, measured: np.ndarray | None = None) -> Rates:
    rounds = range(log_rate.shape[1])
    return {
        k: {j: math.exp(log_rate[i, j]) for j in rounds if measured is None or measured[i, j]}
        for i, k in enumerate(keys)
    }


def _measured(rng: np.random.Generator, rows: int, rounds: int, adaptive: bool) -> np.ndarray | None:
    """`adaptive`: every row in the first 3 rounds, then each round keeps each row of the one before with
    probability 0.7 (decided rows leave the schedule), two rows at least."""
    if not adaptive:
        return None
    measured = np.ones((rows, rounds), dtype=bool)
    for j in range(3, rounds):
        measured[:, j] = measured[:, j - 1] & (rng.random(rows) < 0.7)
        measured[rng.choice(rows, 2, replace=False), j] = True
    return measured


def simulate_rows(
    rng: np.random.Generator, rows: int, rounds: int, outlier: bool = False, adaptive: bool = False
) -> tuple[np.ndarray, Rates]:
    """True log rates (tied in pairs: row 2i and 2i+1 share one) and the run's rates."""
    truth = np.repeat(np.log(rng.uniform(100, 1000, (rows + 1) // 2)), 2)[:rows]
    noise = _noise(rng, rows, rounds, outlier)
    return truth, _rates(list(range(rows)), truth[:, None] + noise, _measured(rng, rows, rounds, adaptive))


@dataclass
class Tally:
    covered: int = 0
    total: int = 0
    ties_ordered: int = 0
    ties: int = 0
    widths: list[float] = field(default_factory=list)  # log-width over the paired interval's, same rows
    paired_covered: int = 0  # today's paired interval of those rows covered the truth
    runs: int = 0
    fallbacks: int = 0  # fit returned None

    def add(self, estimate: RatioEstimate, truth: float, paired: RatioEstimate | None = None) -> None:
        self.covered += estimate.low <= truth <= estimate.high
        self.total += 1
        if abs(math.log(truth)) < 1e-12:
            self.ties += 1
            self.ties_ordered += estimate.low > 1 + TIE_MARGIN or estimate.high < 1 / (1 + TIE_MARGIN)
        if paired is not None:
            self.paired_covered += paired.low <= truth <= paired.high
            self.widths.append(math.log(estimate.high / estimate.low) / math.log(paired.high / paired.low))

    @property
    def coverage(self) -> float:
        return self.covered / self.total

    @property
    def tie_ordered_share(self) -> float:
        return self.ties_ordered / self.ties if self.ties else 0.0

    @property
    def width(self) -> float:
        return statistics.median(self.widths)


def row_figures(
    rows: int, rounds: int, runs: int, outlier: bool = False, adaptive: bool = False, pairs: int = 40, seed: int = 0
) -> Tally:
    """The row model's pair intervals over simulated runs: half the pairs sampled are ties, half any two rows."""
    rng = np.random.default_rng([seed, rows, rounds, outlier, adaptive])
    tally = Tally()
    for _ in range(runs):
        truth, rates = simulate_rows(rng, rows, rounds, outlier, adaptive)
        tally.runs += 1
        model = experiment.fit(rates)
        if model is None:
            tally.fallbacks += 1
            continue
        ties = [(2 * i, 2 * i + 1) for i in range(rows // 2)]
        every = list(itertools.combinations(range(rows), 2))
        chosen = [ties[i] for i in rng.permutation(len(ties))[: pairs // 2]]
        chosen += [every[i] for i in rng.permutation(len(every))[: pairs - len(chosen)]]
        for a, b in chosen:
            tally.add(model.ratio(a, b), math.exp(truth[a] - truth[b]), paired_ratio_ci(rates[a], rates[b]))
    return tally


def simulate_factorial(
    rng: np.random.Generator,
    ciphers: int,
    macs: int,
    aead: int,
    rounds: int,
    outlier: bool = False,
    adaptive: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Rates]:
    """Cipher and MAC effects (log rate, tied in pairs), AEAD ciphers' own, and the run: keys (cipher, mac), AEAD
    ciphers with mac "implicit"; log rate of a row = cipher + MAC (AEAD: its own)."""
    cipher = np.repeat(np.log(rng.uniform(200, 900, (ciphers + 1) // 2)), 2)[:ciphers]
    mac = np.repeat(np.log(rng.uniform(0.5, 1.0, (macs + 1) // 2)), 2)[:macs]
    own = np.log(rng.uniform(300, 1200, aead))
    keys = [(f"c{c}", f"m{m}") for c in range(ciphers) for m in range(macs)] + [
        (f"g{a}", "implicit") for a in range(aead)
    ]
    truth = np.concatenate([(cipher[:, None] + mac[None, :]).ravel(), own])
    noise = _noise(rng, len(keys), rounds, outlier)
    return cipher, mac, own, _rates(keys, truth[:, None] + noise, _measured(rng, len(keys), rounds, adaptive))


def factorial_figures(
    ciphers: int,
    macs: int,
    aead: int,
    rounds: int,
    runs: int,
    outlier: bool = False,
    adaptive: bool = False,
    seed: int = 0,
) -> dict[str, Tally]:
    """Every cipher contrast (its width against a pair of rows with one MAC, paired), up to 20 MAC contrasts,
    every AEAD cipher against every MAC cipher with the reference MAC."""
    rng = np.random.default_rng([seed, ciphers, macs, aead, rounds, outlier, adaptive])
    tallies = {"cipher": Tally(), "mac": Tally(), "aead": Tally()}
    for _ in range(runs):
        cipher, mac, own, rates = simulate_factorial(rng, ciphers, macs, aead, rounds, outlier, adaptive)
        model = factorial.fit_factorial(rates, lambda key: key[0], lambda key: key[1])
        for tally in tallies.values():
            tally.runs += 1
            tally.fallbacks += model is None
        if model is None:
            continue
        for a, b in itertools.combinations(range(ciphers), 2):
            m = int(rng.integers(macs))
            paired = paired_ratio_ci(rates[(f"c{a}", f"m{m}")], rates[(f"c{b}", f"m{m}")])
            tallies["cipher"].add(model.cipher_ratio(f"c{a}", f"c{b}"), math.exp(cipher[a] - cipher[b]), paired)
        for i in rng.permutation(macs * (macs - 1) // 2)[:20]:
            a, b = list(itertools.combinations(range(macs), 2))[i]
            tallies["mac"].add(model.mac_ratio(f"m{a}", f"m{b}"), math.exp(mac[a] - mac[b]))
        reference = int(model.reference_mac[1:])
        for g, c in itertools.product(range(aead), range(ciphers)):
            truth = math.exp(own[g] - cipher[c] - mac[reference])
            tallies["aead"].add(model.cipher_ratio(f"g{g}", f"c{c}"), truth)
    return tallies


# --- the row model: coverage and ties ---------------------------------------------------------------------

ROW_GRID = [  # rows, rounds, runs, outlier, adaptive: the corners of 6-115 rows x 3-10 rounds, with and without
    (6, 3, 300, False, False),
    (6, 3, 300, True, False),
    (6, 10, 150, False, False),
    (20, 5, 120, True, False),
    (20, 10, 80, False, True),
    (115, 3, 20, False, False),
    (115, 10, 12, True, False),
]


@pytest.mark.parametrize(("rows", "rounds", "runs", "outlier", "adaptive"), ROW_GRID)
def test_row_model_covers_the_truth_and_does_not_order_ties(
    rows: int, rounds: int, runs: int, outlier: bool, adaptive: bool
) -> None:
    tally = row_figures(rows, rounds, runs, outlier, adaptive)
    assert tally.coverage >= 0.94
    assert tally.tie_ordered_share <= 0.05
    assert tally.fallbacks <= (0.2 if outlier else 0.1) * runs


def test_two_rows_fall_back_to_the_paired_interval() -> None:
    rng = np.random.default_rng(1)
    for rounds in (3, 5, 10):
        _, rates = simulate_rows(rng, 2, rounds)
        model, check = experiment.assess(rates)
        assert model is None and check.reason is not None and "row(s)" in check.reason


# --- the factorial model -------------------------------------------------------------------------------

FACTORIAL_GRID = [  # ciphers, MACs, AEAD ciphers, rounds, runs, outlier, adaptive
    (3, 3, 1, 3, 300, False, False),
    (3, 3, 1, 10, 300, False, False),
    (3, 4, 1, 6, 400, False, True),
    (7, 16, 3, 3, 20, False, False),  # --full: 115 rows
    (7, 16, 3, 3, 20, True, False),  # a stalled minute: the model goes on with 2 rounds
    (7, 16, 3, 5, 30, True, False),
]


@pytest.mark.parametrize(("ciphers", "macs", "aead", "rounds", "runs", "outlier", "adaptive"), FACTORIAL_GRID)
def test_factorial_model_covers_cipher_mac_and_aead_contrasts(
    ciphers: int, macs: int, aead: int, rounds: int, runs: int, outlier: bool, adaptive: bool
) -> None:
    tallies = factorial_figures(ciphers, macs, aead, rounds, runs, outlier, adaptive)
    for tally in tallies.values():
        assert tally.coverage >= 0.94
        assert tally.tie_ordered_share <= 0.05
        assert tally.fallbacks <= (0.2 if outlier else 0.1) * runs  # a stall the model cannot drop: paired
    if macs >= 16:  # issue 52: a cipher contrast at least 3x narrower than a pair of rows' paired interval
        assert tallies["cipher"].width <= 1 / 3


# --- properties and edge cases ---------------------------------------------------------------------------


def test_distribution_functions() -> None:
    for df in (1, 2, 4, 9, 30):
        assert float(f_sf(t_critical(0.95, df) ** 2, 1, df)) == pytest.approx(0.05, abs=1e-9)
        assert t_quantile(0.95, df) == t_critical(0.95, df)
    assert t_critical(0.95, 3) > t_quantile(0.95, 3.5) > t_critical(0.95, 4)
    assert float(f_sf(3.0, 4, 10)) == pytest.approx(0.0723232, abs=1e-6)  # scipy.stats.f.sf(3, 4, 10)


def test_common_mode_rounds_cancel_and_the_estimate_is_the_paired_one() -> None:
    rng = np.random.default_rng(2)
    _, rates = simulate_rows(rng, 8, 5)
    slow = {r: float(f) for r, f in enumerate(rng.uniform(0.3, 1.0, 5))}
    slowed = {k: {r: v * slow[r] for r, v in by_round.items()} for k, by_round in rates.items()}
    plain, moved = experiment.fit(rates), experiment.fit(slowed)
    assert plain is not None and moved is not None
    a, b = plain.ratio(0, 3), moved.ratio(0, 3)
    assert (a.ratio, a.low, a.high) == pytest.approx((b.ratio, b.low, b.high))
    assert a.ratio == pytest.approx(paired_ratio_ci(rates[0], rates[3]).ratio)
    assert a.method == experiment.EXPERIMENT_MODEL and a.n_pairs == 5
    assert plain.ratio(3, 0).low == pytest.approx(1 / a.high)


def test_missing_rounds_take_the_general_path_and_it_agrees_on_a_complete_table() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=(7, 5)) * rng.uniform(0.01, 0.3, 7)[:, None] + rng.normal(size=5)[None, :]
    complete = RowTable(y, np.ones(y.shape, dtype=bool))
    general = RowTable.__new__(RowTable)
    general.__dict__.update(complete.__dict__)
    general.complete = False
    s2, _, _, omega = general._deviations(general._reference_weights())
    assert s2 == pytest.approx(complete.s2) and omega == pytest.approx(complete.omega)


def test_rows_with_one_round_are_left_out_and_bad_rates_refused() -> None:
    rng = np.random.default_rng(4)
    _, rates = simulate_rows(rng, 7, 4)
    rates[6] = {0: 100.0}
    model, check = experiment.assess(rates)
    assert model is not None and check.left_out == (6,) and 6 not in model.rows
    with pytest.raises(KeyError):
        model.ratio(0, 6)
    with pytest.raises(ValueError):
        experiment.fit({**rates, 7: {0: 0.0, 1: 10.0}})


def test_an_outlier_round_is_dropped() -> None:
    rng = np.random.default_rng(5)
    truth, rates = simulate_rows(rng, 30, 5)
    for key in range(0, 30, 3):
        rates[key][2] /= 2.5  # a stalled minute: a third of the rows 2.5x slower in round 2
    model, check = experiment.assess(rates)
    assert model is not None and check.dropped_rounds == (2,) and model.rounds == [0, 1, 3, 4]
    assert model.ratio(0, 1).n_pairs == 4
    # 3 rounds: without the stalled one too few would be left; the rows no longer share the round effect either
    short, short_check = experiment.assess({k: {r: by[r] for r in range(3)} for k, by in rates.items()})
    assert short is None and short_check.reason is not None


def test_rows_that_do_not_share_the_round_effect_are_refused() -> None:
    rng = np.random.default_rng(6)
    common = np.log(rng.uniform(0.4, 1.0, 8))
    slopes = np.linspace(0.3, 1.7, 12)  # a slow round slows some rows far more than others
    log_rate = 5.0 + slopes[:, None] * common[None, :] + rng.normal(size=(12, 8)) * 0.01
    model, check = experiment.assess(_rates(list(range(12)), log_rate))
    assert model is None and check.reason is not None and "round effect" in check.reason


def test_aead_ciphers_are_levels_of_their_own() -> None:
    """Issue 52's aliasing: aes256-gcm at 535 MiB/s, aes192-ctr's rows 280-360 with their MACs."""
    mac_factor = {"hmac-sha2-256": 1.0, "umac-64": 1.3, "hmac-sha1": 1.1}
    cipher_rate = {"aes192-ctr": 300.0, "aes128-ctr": 330.0}
    rng = np.random.default_rng(7)
    rates: Rates = {}
    for (c, base), (m, f) in itertools.product(cipher_rate.items(), mac_factor.items()):
        rates[(c, m)] = {r: base * f * float(np.exp(rng.normal() * 0.01)) for r in range(4)}
    rates[("aes256-gcm", "implicit")] = {r: 535.0 * float(np.exp(rng.normal() * 0.01)) for r in range(4)}
    model = factorial.fit_factorial(rates, lambda k: k[0], lambda k: k[1])
    assert model is not None and model.reference_mac == "umac-64"
    assert model.cipher_ratio("aes256-gcm", "aes192-ctr").ratio == pytest.approx(535 / 390, rel=0.03)
    assert model.cipher_ratio("aes128-ctr", "aes192-ctr").ratio == pytest.approx(1.1, rel=0.02)
    assert model.mac_ratio("umac-64", "hmac-sha2-256").ratio == pytest.approx(1.3, rel=0.02)
    assert model.cipher_groups() == [["aes256-gcm"], ["aes128-ctr"], ["aes192-ctr"]]
    assert model.mac_groups() == [["umac-64"], ["hmac-sha1"], ["hmac-sha2-256"]]
    assert model.cipher_ratio("aes256-gcm", "aes192-ctr").method == factorial.FACTORIAL_MODEL


def test_the_interaction_test_holds_its_level_and_sees_an_interaction() -> None:
    rng = np.random.default_rng(8)
    p_additive = []
    for _ in range(200):
        _, _, _, rates = simulate_factorial(rng, 3, 4, 1, 5)
        model = factorial.fit_factorial(rates, lambda k: k[0], lambda k: k[1])
        assert model is not None
        p_additive.append(model.interaction.p)
    assert sum(p < 0.05 for p in p_additive) / len(p_additive) <= 0.08
    times = {"c0": 1.0, "c1": 2.0, "c2": 6.0}  # time per byte adds: cipher + MAC, far from additive in logs
    macs = {"m0": 0.2, "m1": 1.0, "m2": 4.0}
    rates: Rates = {
        (c, m): {r: 1000 / (tc + tm) * float(np.exp(rng.normal() * 0.02)) for r in range(5)}
        for (c, tc), (m, tm) in itertools.product(times.items(), macs.items())
    }
    model = factorial.fit_factorial(rates, lambda k: k[0], lambda k: k[1])
    assert model is not None and model.interaction.p < 1e-3


def test_no_factorial_without_two_levels_of_each() -> None:
    rng = np.random.default_rng(9)
    _, _, _, rates = simulate_factorial(rng, 4, 1, 2, 3)
    assert factorial.fit_factorial(rates, lambda k: k[0], lambda k: k[1]) is None


# --- the figures -------------------------------------------------------------------------------------


def _row(label: str, tally: Tally) -> str:
    paired = (
        f"{tally.paired_covered / len(tally.widths):6.1%} {tally.width:5.2f}" if tally.widths else f"{'-':>6} {'-':>5}"
    )
    return (
        f"{label:<36} {tally.coverage:6.1%} {tally.tie_ordered_share:6.1%} {paired} "
        f"{tally.fallbacks:>3}/{tally.runs:<4} {tally.total:>6}"
    )


def print_figures(scale: int = 1) -> None:
    """The table of docs/statistics.md (bench/precision_sim.py), with `scale` times the tests' runs: the model's
    coverage, its ties called ordered, the paired interval's coverage on the same rows and the width of the
    model's interval over the paired one (median), runs it fell back in, contrasts."""
    print(f"{'':36} {'cover':>6} {'ties':>6} {'paired':>6} {'width':>5} {'fallback':>8} {'n':>6}")
    for rows, rounds, runs, outlier, adaptive in ROW_GRID:
        label = (
            f"rows {rows:>3} x {rounds:>2} rounds"
            + (" +outlier" if outlier else "")
            + (" adaptive" if adaptive else "")
        )
        print(_row(label, row_figures(rows, rounds, runs * scale, outlier, adaptive)), flush=True)
    for ciphers, macs, aead, rounds, runs, outlier, adaptive in FACTORIAL_GRID:
        tallies = factorial_figures(ciphers, macs, aead, rounds, runs * scale, outlier, adaptive)
        base = (
            f"{ciphers}x{macs}+{aead} x {rounds:>2}"
            + (" +outlier" if outlier else "")
            + (" adaptive" if adaptive else "")
        )
        for name, tally in tallies.items():
            print(_row(f"{base} {name}", tally), flush=True)


if __name__ == "__main__":
    print_figures()
