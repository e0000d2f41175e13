"""The schedule's budget arithmetic: one calibration probe per cipher group, and the minimum rounds'
data phase fitted to what is left of --budget (pure functions of sshbench.measure.plan)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.measure.budget import fitted_data_phase
from sshbench.measure.plan import calibration_groups, schedule
from sshbench.results import IMPLICIT_MAC, Combination

GCM = "aes128-gcm@openssh.com"


def combo(cipher: str, mac: str = IMPLICIT_MAC, kex: str = "curve25519-sha256") -> Combination:
    return Combination(cipher=cipher, mac=mac, kex=kex)


def test_macs_and_kex_share_their_ciphers_calibration_probe():
    full = [combo("aes128-ctr", m) for m in ("umac-64-etm@openssh.com", "hmac-sha2-256")] + [combo(GCM)]
    full.append(combo("aes128-ctr", "umac-64-etm@openssh.com", kex="sntrup761x25519-sha512"))
    groups = calibration_groups(full)
    assert list(groups) == [full[0], full[2]]  # the first of each group, in matrix order
    assert groups[full[0]] == [full[0], full[1], full[3]] and groups[full[2]] == [full[2]]


def test_the_calibration_pass_probes_each_group_once_then_every_round_has_every_combination():
    full = [combo("aes128-ctr", m) for m in ("umac-64-etm@openssh.com", "hmac-sha2-256", "hmac-sha1")]
    plan = schedule(full, [], runs=3, warmup=1, calibrate=True)
    probes = [t for t in plan if t.warmup]
    assert [t.combination for t in probes] == [full[0]] and probes[0].calibration
    assert sum(not t.warmup for t in plan) == 9
    # a fixed --size calibrates nothing: the warm-up pass then warms every combination
    assert sum(t.warmup for t in schedule(full, [], runs=3, warmup=1, calibrate=False)) == 3


def _linear(transfers: int, overhead: float, fixed: float):
    return lambda target: fixed + transfers * (overhead + target)


def test_fitted_data_phase_shrinks_to_fit_and_never_grows():
    # 30 transfers at 0.34 s overhead and 2 s of handshakes in 40 s: (0.9 * 40 - 2) / 30 - 0.34 = 0.793
    cost = _linear(30, 0.34, 2.0)
    assert fitted_data_phase(40, cost, target_s=1.0, floor_s=0.5) == pytest.approx(0.7933, abs=1e-3)
    assert fitted_data_phase(400, cost, target_s=1.0, floor_s=0.5) == 1.0  # room: the target
    assert fitted_data_phase(-5, cost, target_s=1.0, floor_s=0.5) == 0.5  # overrun: the floor
    assert fitted_data_phase(10, _linear(0, 0.34, 2.0), target_s=1.0, floor_s=0.5) == 1.0


def test_fitted_data_phase_follows_a_ladder_of_sizes():
    """A payload ladder makes the cost a step function: the fit lands on the longest step that fits."""
    steps = [0.3, 0.45, 0.6, 0.9, 1.2]  # what each target's size takes in data phase, rounded up the ladder

    def cost(target: float) -> float:
        return 10 * (0.4 + next(x for x in steps if x >= target))

    fitted = fitted_data_phase(12.0, cost, target_s=1.0, floor_s=0.25)  # 0.9 * 12 = 10.8: 0.68 s a trial
    assert cost(fitted) <= 10.8 and fitted == pytest.approx(0.6, abs=1e-6)


@given(
    time_left=st.floats(-100, 1000),
    transfers=st.integers(1, 500),
    overhead=st.floats(0, 2),
    fixed=st.floats(0, 50),
)
def test_fitted_data_phase_fits_whenever_it_is_above_the_floor(time_left, transfers, overhead, fixed):
    fitted = fitted_data_phase(time_left, _linear(transfers, overhead, fixed), target_s=1.0, floor_s=0.5)
    assert 0.5 <= fitted <= 1.0
    if fitted > 0.5:
        assert transfers * (overhead + fitted) + fixed <= time_left + 1e-9
