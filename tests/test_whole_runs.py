"""Whole runs against fakes: the runner handed fake parts (tests/fakes.py fake_parts: a FakeTarget, FakeExecutors on
a fake clock, a why experiment that records its call). What a run decides as it goes (rounds added, the budget's
end, the why reserve, a resume after a kill, a warm session that broke) is checked end to end here, in milliseconds;
what the numbers are comes from the end-to-end tier."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from fakes import FakeClock, MadeUpRates, fake_parts
from sshbench.measure import runner as runner_module
from sshbench.measure.budget import END_RESERVE_S
from sshbench.measure.runner import Runner
from sshbench.measure.spec import RunSpec
from sshbench.results import Combination, RunResult
from sshbench.settings import RunSettings

# Whole runs, but against fakes: milliseconds each (conftest marks anything that makes a Runner end-to-end).
pytestmark = pytest.mark.fast

GCM, CTR, CHACHA = "aes128-gcm@openssh.com", "aes128-ctr", "chacha20-poly1305@openssh.com"


class NoisyRates(MadeUpRates):
    """Each row's rate with its own noise per round (seeded): `spread` of the rate, as a busy machine's."""

    def __init__(self, per_cipher: dict[str, float], spread: float = 0.08, seed: int = 1) -> None:
        super().__init__(per_cipher=per_cipher)
        self.spread, self.seed = spread, seed

    def __call__(self, combo: Combination, repetition: int) -> float:
        noise = random.Random(f"{self.seed}/{combo.cipher}/{combo.mac}/{repetition}").uniform(-1, 1)
        return self.per_cipher.get(combo.cipher, self.other) * (1 + self.spread * noise)


def _settings(**options) -> RunSettings:
    defaults = dict(
        ciphers=f"{GCM},{CTR},{CHACHA}",
        macs="umac-64-etm@openssh.com",
        adaptive=True,
        runs=3,
        baselines=False,
        why="off",
        fit_seconds=True,
        max_size=64 << 20,
        seed=11,
    )
    return RunSettings(**{**defaults, **options})  # type: ignore[arg-type]


def _run(settings: RunSettings, rates: MadeUpRates, resume_from: RunResult | None = None, **fakes):
    parts, state = fake_parts(rates, **fakes)
    result = Runner(RunSpec.check(settings), parts=parts, resume_from=resume_from).run()
    return result, state


def _rounds(result: RunResult) -> int:
    return max(t.repetition for t in result.trials if not t.warmup) + 1


def test_a_run_adds_rounds_for_the_pairs_still_undecided_and_stops_once_each_is_decided():
    rates = NoisyRates({GCM: 1000.0, CTR: 900.0, CHACHA: 600.0})
    result, state = _run(_settings(budget_s=600.0), rates)
    assert result.status == "complete" and result.exit_code == 0, result.error
    assert _rounds(result) > 3  # 10% apart with 8% noise: 3 rounds do not order them
    assert "stopped: every pair is decided" in result.notices[-1], result.notices
    per_row = Counter(t.combination for t in result.trials if t.kind == "transfer" and not t.warmup)
    assert per_row[Combination(CHACHA, "implicit", "curve25519-sha256")] < max(per_row.values())  # decided early
    assert state["executors"].stopped  # the executors were stopped at the run's end


def test_a_run_whose_budget_runs_out_stops_its_rounds_within_it():
    rates = NoisyRates({GCM: 1000.0, CTR: 990.0, CHACHA: 995.0}, spread=0.2)  # never decided
    clock = FakeClock()
    start = clock.now
    result, _ = _run(_settings(budget_s=15.0), rates, clock=clock)
    assert result.status == "complete"
    assert "stopped: the --budget of 15 s is spent" in result.notices[-1], result.notices
    assert _rounds(result) > 3
    assert clock.now - start <= 15.0 - END_RESERVE_S + 0.5  # the rounds end before the end's reserve


def test_the_why_reserve_keeps_time_for_the_experiment_after_the_rounds(monkeypatch):
    """`--why fastest` in a --runs auto run: the rounds stop earlier than without it, so that the experiment's
    trials (its reserve) still fit in --budget; the experiment is then run with the budget's deadline."""
    monkeypatch.setattr(runner_module.os, "geteuid", lambda: 0)  # the experiment needs root: the fake does not
    rates = NoisyRates({GCM: 1000.0, CTR: 990.0, CHACHA: 995.0}, spread=0.2)
    without, _ = _run(_settings(budget_s=25.0, why="off"), rates)
    clock = FakeClock()
    start = clock.now
    with_why, state = _run(_settings(budget_s=25.0, why="fastest"), rates, clock=clock)
    assert _rounds(with_why) < _rounds(without)
    why = state["why"]
    assert why["mode"] == "fastest" and why["budget"] is not None and why["rounds"] == 6
    reserve_s = state["why_started_at"] - start
    assert reserve_s <= 25.0 - END_RESERVE_S  # the experiment starts before the deadline, its reserve ahead
    assert with_why.baselines["why"] == {"mode": "fastest", "combinations": []}


def test_a_run_killed_part_way_resumes_with_only_the_trials_it_did_not_measure():
    rates = NoisyRates({GCM: 1000.0, CTR: 700.0, CHACHA: 500.0})
    settings = _settings(adaptive=False, fit_seconds=False, runs=4)
    stopped, _ = _run(settings, rates, interrupt_after=9)
    assert stopped.status == "interrupted" and stopped.exit_code == 130
    kept = len(stopped.trials)
    assert kept == 9
    resumed, state = _run(stopped.settings, rates, resume_from=stopped)
    assert resumed.status == "complete", resumed.error
    measured = Counter(t.combination for t in resumed.trials if t.kind == "transfer" and not t.warmup)
    assert set(measured.values()) == {4}  # each row's 4 rounds, none twice
    assert len(state["executors"].started) == len(resumed.trials) - kept  # only what was missing ran


def test_a_warm_session_that_broke_leaves_its_row_on_fresh_connections():
    rates = NoisyRates({GCM: 1000.0, CTR: 700.0, CHACHA: 500.0})
    settings = _settings(adaptive=False, fit_seconds=False, runs=4, warm=True)
    result, state = _run(settings, rates, warm=True, break_after=1)
    assert result.status == "complete", result.error
    transfers = [t for t in result.trials if t.kind == "transfer" and not t.warmup]
    by_round = {r: [t for t in transfers if t.repetition == r] for r in range(4)}
    assert all(t.warm_burst is None for t in by_round[0])  # the first round: fresh connections
    assert all(t.warm_burst == 0 for t in by_round[1])  # the second: one burst in each row's session
    assert all(t.warm_burst is None and t.valid for r in (2, 3) for t in by_round[r])  # broken: fresh again
    assert state["executors"].warm.opened == len(result.combinations) == 3  # together, at the first burst
