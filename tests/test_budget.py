"""sshbench.measure.budget: --budget's arithmetic on a fake clock (pure: no process, no sleep)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from sshbench.measure.budget import END_RESERVE_S, FIT_ROOM_SHARE, PACE_ROOM, Budget, fit_room, fitted_data_phase


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeReserve:
    """A why reserve: `cost_s` kept after the rounds, `spare_s` of it the answer's round may take."""

    cost_s: float
    spare_s: float
    asked: int = 0

    def cost_after(self, trials: list) -> float:
        self.asked += 1
        return self.cost_s

    def spare_after(self, trials: list) -> float:
        return self.spare_s


def test_deadline_and_time_left_count_from_the_runs_start_with_the_ends_reserve_kept():
    clock = FakeClock(100.0)
    budget = Budget(total_s=60.0, started=100.0, clock=clock)
    assert budget.end_reserve_s == END_RESERVE_S == 3.0
    assert budget.deadline == 157.0
    assert budget.time_left() == 57.0 and budget.elapsed() == 0.0
    clock.now = 140.5
    assert budget.elapsed() == 40.5 and budget.time_left() == 16.5
    clock.now = 170.0  # past the deadline: negative, as the runner's notices say ("0 s are left")
    assert budget.time_left() == -13.0


def test_the_time_left_is_the_runners_sum_to_the_bit():
    """The same expression the runner wrote at each site: no figure or decision moves."""
    for total, started, now in [(60.0, 12.345, 31.7), (300.0, 0.1, 299.99), (45.0, 1e6 + 0.3, 1e6 + 17.9)]:
        budget = Budget(total, started, END_RESERVE_S, clock=FakeClock(now))
        assert budget.time_left() == total - END_RESERVE_S - (now - started)
        assert budget.deadline == started + total - END_RESERVE_S


def test_the_rounds_keep_the_why_reserve_back_and_the_answer_may_take_its_spare():
    reserve = FakeReserve(cost_s=16.0, spare_s=3.25)
    budget = Budget(60.0, 0.0, why=reserve, clock=FakeClock(20.0))
    assert budget.time_left() == 37.0  # to the deadline: the fit counts the reserve in its own cost model
    assert budget.rounds_time_left([]) == 21.0 and budget.why_cost([]) == 16.0
    assert budget.why_spare([]) == 3.25
    without = Budget(60.0, 0.0, clock=FakeClock(20.0))
    assert without.rounds_time_left([]) == 37.0 and without.why_spare([]) == 0.0


def test_a_next_round_fits_only_when_it_ends_by_the_deadline():
    clock = FakeClock(50.0)
    budget = Budget(60.0, 0.0, clock=clock)  # deadline 57
    assert budget.fits(7.0) and not budget.fits(7.01)
    clock.now = 57.0
    assert budget.fits(0.0) and not budget.fits(0.001)
    # the experiment's old test, `round_started + round_s > deadline`, on the same figures
    for now, round_s in [(49.0, 8.0), (49.0, 8.5), (56.9, 0.1), (10.0, 47.0), (10.0, 47.5)]:
        clock.now = now
        assert budget.fits(round_s) == (not now + round_s > budget.deadline)


def test_fits_keeps_the_why_reserve_for_the_trials_given_and_allows_extra():
    reserve = FakeReserve(cost_s=10.0, spare_s=2.0)
    budget = Budget(60.0, 0.0, why=reserve, clock=FakeClock(40.0))  # 17 s to the deadline, 7 after the reserve
    assert budget.fits(17.0)  # no trials: nothing kept back (the experiment's own rounds)
    assert budget.fits(7.0, trials=[]) and not budget.fits(7.5, trials=[])
    assert budget.fits(7.5, trials=[], extra_s=budget.why_spare([]))
    assert not budget.fits(7.5, trials=[], extra_s=-5.0)  # a negative extra takes nothing away


def test_the_pace_of_the_last_round_is_the_time_since_it_started():
    clock = FakeClock(31.0)
    budget = Budget(60.0, 0.0, clock=clock)
    assert budget.round_s(22.0) == 9.0
    clock.now = 33.5
    assert budget.round_s(22.0) == 11.5


def test_the_default_clock_is_time_monotonic_looked_up_at_each_call(monkeypatch):
    """The runner's fake-clock tests replace time.monotonic after the Budget's class was made."""
    monkeypatch.setattr(time, "monotonic", lambda: 42.0)
    budget = Budget(60.0, 40.0)
    assert budget.elapsed() == 2.0 and budget.time_left() == 55.0


def test_the_rooms_the_fit_and_the_pace_leave_the_rounds():
    assert FIT_ROOM_SHARE == 0.9 and PACE_ROOM == 0.95  # a tenth kept for spawning; the pace's round holds its own
    assert fit_room(20.0) == 0.9 * 20.0 and fit_room(20.0, PACE_ROOM) == 0.95 * 20.0


def test_fitted_data_phase_never_grows_and_stops_at_the_floor():
    def cost(target: float) -> float:  # 3 rounds of 4 transfers: 0.5 s set-up each, plus the data phase
        return 3 * 4 * (0.5 + target)

    assert fitted_data_phase(40.0, cost, target_s=1.0, floor_s=0.25) == 1.0  # 18 s in 36 s of room: the target
    fitted = fitted_data_phase(15.0, cost, target_s=1.0, floor_s=0.25)  # 13.5 s of room: 12 x (0.5 + t)
    assert fitted == pytest.approx(13.5 / 12 - 0.5, abs=1e-6) and cost(fitted) <= fit_room(15.0)
    assert fitted_data_phase(5.0, cost, target_s=1.0, floor_s=0.25) == 0.25  # not even the floor fits
    paced = fitted_data_phase(15.0, cost, target_s=1.0, floor_s=0.25, room_share=PACE_ROOM)
    assert paced == pytest.approx(15.0 * 0.95 / 12 - 0.5, abs=1e-6)
