"""statistics.rank_groups decides from the model of the run (issue 52) where it holds: simulated runs with a known
truth and this machine's noise (test_experiment_model.simulate_rows: common-mode rounds of up to 40%, per-row CVs
1-30%, an outlier round, adaptive rounds, truths tied in pairs). What the ranking prints must hold: a neighbour pair
called "ordered" is in the true order, a true tie is "ordered" at most 5% of the time, and "x fastest" covers the
true ratio to the first row."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from sshbench.model import experiment, statistics
from sshbench.model.intervals import PAIRED_LOG_T
from test_experiment_model import TIE_MARGIN, simulate_rows

pytestmark = pytest.mark.fast

# "x fastest" is each row against the first, and the first is picked as the fastest from the same trials: the
# winner's curse takes its coverage below a fixed pair's 95% as rows grow, for the pairwise method alike (simulated
# without an outlier: model / paired 96.9 / 95.9% at 6 rows x 5 rounds, 91.6 / 91.2% at 20 x 6, 87.4 / 89.1% at
# 115 x 3, 81.6 / 82.5% at 115 x 5; docs/statistics.md).
GRID = [  # rows, rounds, runs, outlier, adaptive, least coverage of "x fastest"
    (6, 5, 300, False, False, 0.94),  # a default run
    (6, 3, 300, True, False, 0.90),
    (20, 6, 100, False, True, 0.88),
    (115, 3, 20, False, False, 0.85),  # --full
]


@pytest.mark.parametrize(("rows", "rounds", "runs", "outlier", "adaptive", "least"), GRID)
def test_the_ranking_from_the_model_orders_truly_and_ties_stay_unordered(
    rows: int, rounds: int, runs: int, outlier: bool, adaptive: bool, least: float
) -> None:
    rng = np.random.default_rng([rows, rounds, outlier, adaptive])
    ordered = wrong = ties = ties_ordered = covered = relatives = modelled = 0
    for _ in range(runs):
        truth, rates = simulate_rows(rng, rows, rounds, outlier, adaptive)
        ranking = statistics.rank_groups(rates, TIE_MARGIN)
        modelled += ranking.model is not None
        first = ranking.combinations[0].key
        for pair in ranking.pairs:
            gap = truth[pair.faster] - truth[pair.slower]
            if abs(gap) < 1e-12:
                ties += 1
                ties_ordered += pair.decision == "ordered"
            elif pair.decision == "ordered":
                ordered += 1
                wrong += gap < 0
        for entry in ranking.combinations[1:]:
            assert entry.relative is not None
            relatives += 1
            covered += entry.relative.low <= math.exp(truth[first] - truth[entry.key]) <= entry.relative.high
    assert modelled >= 0.8 * runs  # the model held in most runs: these figures are its own
    assert ties_ordered <= 0.05 * ties
    assert wrong <= 0.05 * max(ordered, 1)
    assert covered >= least * relatives


def test_the_pairwise_method_stands_where_the_model_does_not_hold() -> None:
    rng = np.random.default_rng(7)
    _, rates = simulate_rows(rng, 4, 5)  # below experiment.MIN_ROWS
    ranking = statistics.rank_groups(rates)
    assert ranking.model is None and all(p.estimate.method == PAIRED_LOG_T for p in ranking.pairs)
    _, rates = simulate_rows(rng, 8, 5)
    ranking = statistics.rank_groups(rates)
    assert ranking.model is not None
    assert all(p.estimate.method == experiment.EXPERIMENT_MODEL for p in ranking.pairs)
    assert statistics.rank_groups(rates, use_model=False).model is None
    # an undecided pair of the model still says what more rounds would buy
    estimate = ranking.model.ratio(0, 2)
    wider = type(estimate)(1.06, 1.0, 1.12, 5, experiment.EXPERIMENT_MODEL)
    assert statistics.pairs_to_decide(wider, TIE_MARGIN) is not None
    assert statistics.why_undecided(wider, TIE_MARGIN).reason == "more-rounds"


def test_without_numpy_and_scipy_a_run_ranks_pairwise_and_has_no_factor_answer() -> None:
    """A fleet host goes without them (fleet.wheelhouse.HOST_LEFT_OUT): sshbench still imports and ranks."""
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "scipy"):
            raise ImportError(name)
sys.meta_path.insert(0, Block())
from sshbench.model import factor_ranking, statistics
rates = {k: {r: 100.0 * (1 + k) * (1 + 0.01 * ((r * 7 + k) % 5)) for r in range(4)} for k in range(8)}
ranking = statistics.rank_groups(rates)
assert ranking.model is None and ranking.model_rejected == "numpy and scipy are not installed here"
assert factor_ranking.rows_to_narrow([], 0.03) == [] and "numpy" not in sys.modules
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_numpy_and_scipy_are_imported_only_where_a_model_is_fitted() -> None:
    """scipy.stats took 1.2 s to import, scipy.special 0.4: every sshbench process paid it, and `make test` (hundreds
    of them) took 140 s longer. The runner, the answer and the report import without them."""
    code = "import sys, sshbench.measure.runner, sshbench.report.table; print(sorted({'numpy', 'scipy'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


# A default run here (10 consecutive, 2026-11-29): 8 rounds, two rows not in the last (MiB/s, rounded).
EIGHT_ROUNDS = {
    "aes192-ctr": [448.8, 576.8, 511.2, 447.4, 511.3, 406.3, 422.5, 516.8],
    "aes128-ctr": [635.4, 515.1, 535.0, 421.1, 432.1, 419.3, 417.2],
    "aes256-gcm": [1093.7, 1057.9, 797.0, 733.8, 608.4, 783.7, 715.8, 747.7],
    "aes256-ctr": [633.6, 367.6, 375.4, 266.6, 442.8, 487.1, 390.9],
    "chacha20-poly1305": [540.6, 458.4, 565.0, 423.4, 530.1, 469.0, 462.1, 454.3],
    "aes128-gcm": [809.9, 751.4, 854.2, 775.7, 813.8, 678.1, 798.2, 842.8],
}


def test_rows_a_round_short_are_connected_through_the_others() -> None:
    """The normal matrix's null space (the constant) came out of the eigensolver near 1e-12 and pinv inverted it:
    this run read as "not connected" and fell back to the pairwise method (blocks.RCOND)."""
    rates = {key: dict(enumerate(values)) for key, values in EIGHT_ROUNDS.items()}
    model, check = experiment.assess(rates)
    assert model is not None and check.reason is None, check
    assert statistics.rank_groups(rates).combinations[0].key in ("aes256-gcm", "aes128-gcm")
