"""Statistics over constructed trials (pure functions)."""

import pytest

from sshbench.measure.payload import LADDER, MIN_SIZE, needs_bigger_probe, size_for_rate
from sshbench.measure.plan import build_matrix, handshake_combinations, schedule
from sshbench.model.handshake_summary import summarise_handshakes
from sshbench.model.summary import summarise_transfers
from sshbench.model.summary_figures import quartiles
from sshbench.results import IMPLICIT_MAC, Combination, Trial
from sshbench.units import GIB, MIB


def _trial(combo, mib_s, *, valid=True, warmup=False, size=64 * MIB, cpu=0.1, kind="transfer", rep=0):
    t = Trial(combination=combo, kind=kind, repetition=rep, warmup=warmup, payload_bytes=size, started_at=0.0)
    t.valid = valid
    t.data_s = size / MIB / mib_s
    t.wall_s = t.data_s + 0.3
    t.client_cpu_s = cpu
    t.server_cpu_s = cpu / 2
    return t


FAST = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256")
SLOW = Combination("3des-cbc", "hmac-sha1", "curve25519-sha256")


def test_median_spread_and_relative_to_fastest():
    trials = [_trial(FAST, r) for r in (800, 700, 900, 750, 850)] + [_trial(SLOW, r) for r in (20, 22, 21, 19, 23)]
    trials.append(_trial(FAST, 5, warmup=True))  # warm-up never counted
    trials.append(_trial(SLOW, 1000, valid=False))  # invalid never counted
    fast, slow = summarise_transfers(trials)
    assert fast.combination == FAST and fast.median_mib_s == pytest.approx(800)
    assert (fast.min_mib_s, fast.max_mib_s) == (700, 900)
    assert fast.iqr_mib_s == pytest.approx(100)
    assert fast.relative_to_fastest == 1.0
    assert slow.median_mib_s == pytest.approx(21)
    assert slow.relative_to_fastest == pytest.approx(800 / 21)
    assert slow.valid_trials == 5 and slow.invalid_trials == 1
    assert fast.client_cpu_s_per_gib == pytest.approx(0.1 / (64 * MIB / GIB))
    assert not fast.wide_spread


def test_wide_spread_flagged():
    (s,) = summarise_transfers([_trial(FAST, r) for r in (100, 400, 800)])
    assert s.wide_spread and s.cv > 0.5


def test_combination_with_no_valid_trial_is_listed_last():
    trials = [_trial(FAST, 100), _trial(SLOW, 10, valid=False)]
    summaries = summarise_transfers(trials)
    assert [s.combination for s in summaries] == [FAST, SLOW]
    assert summaries[1].median_mib_s is None and summaries[1].valid_trials == 0


def test_handshake_summary():
    trials = [_trial(FAST, 1, kind="handshake") for _ in range(3)]
    for t, wall in zip(trials, (0.2, 0.3, 0.25)):
        t.wall_s = wall
    (h,) = summarise_handshakes(trials)
    assert h.median_ms == pytest.approx(250) and h.min_ms == pytest.approx(200)


def test_quartiles_small_inputs():
    assert quartiles([5.0]) == (5.0, 5.0)
    assert quartiles([1.0, 3.0]) == (1.5, 2.5)


def test_matrix_does_not_multiply_aead_by_macs():
    combos = build_matrix(
        ["aes128-gcm@openssh.com", "aes128-ctr"],
        ["hmac-sha1", "umac-64-etm@openssh.com"],
        ["curve25519-sha256"],
        {"aes128-gcm@openssh.com"},
    )
    assert [(c.cipher, c.mac) for c in combos] == [
        ("aes128-gcm@openssh.com", IMPLICIT_MAC),
        ("aes128-ctr", "hmac-sha1"),
        ("aes128-ctr", "umac-64-etm@openssh.com"),
    ]
    assert len(handshake_combinations(combos)) == 1


def test_schedule_is_interleaved_round_robin():
    combos = build_matrix(["a", "b"], ["m"], ["k"], set())
    plan = schedule(combos, [], runs=3, warmup=1, calibrate=True)
    measured = [(p.repetition, p.combination.cipher) for p in plan if not p.warmup]
    assert measured == [(0, "a"), (0, "b"), (1, "a"), (1, "b"), (2, "a"), (2, "b")]
    assert [p.calibration for p in plan if p.warmup] == [True, True]
    # never the same combination twice in a row in the measured part
    assert all(x[1] != y[1] for x, y in zip(measured, measured[1:]))


def test_adaptive_size():
    assert size_for_rate(800, 1.0, GIB) == 768 * MIB  # the nearest on a log scale, within 0.8-1.25x
    assert size_for_rate(20, 1.0, GIB) == 20 * MIB
    assert size_for_rate(5000, 1.0, 256 * MIB) == 256 * MIB
    assert size_for_rate(0.001, 1.0, GIB) == MIN_SIZE
    # quarter steps: a size rounded up to the ladder moves at most 1.25x what it needs from 4 MiB on (powers of
    # two alone: 2x; with half steps 1.5x)
    assert all(1 < b / a <= 1.25 for a, b in zip(LADDER[3:], LADDER[4:]))
    assert all(1 < b / a <= 2 for a, b in zip(LADDER, LADDER[1:]))  # 1, 2, 3, 4 MiB below
    assert all(LADDER[i] % LADDER[0] == 0 for i in range(len(LADDER))) and LADDER[-1] == 8 * GIB
    assert needs_bigger_probe(0.05, 16 * MIB, 1.0, GIB)
    assert not needs_bigger_probe(0.5, 16 * MIB, 1.0, GIB)
    assert not needs_bigger_probe(0.05, GIB, 1.0, GIB)


# --- the decision figures (issue 12) ------------------------------------------------------------

GCM256 = Combination("aes256-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256")


def _rounds(combo, rates):
    return [_trial(combo, r, rep=i) for i, r in enumerate(rates)]


def test_decision_figures_from_rounds_with_common_mode_noise():
    # Round 2 is slow for everyone (a busy minute): paired ratios cancel it, the medians do not.
    slowdown = [1.0, 1.0, 0.6, 1.0, 0.95, 1.0]
    fast = _rounds(FAST, [800 * f for f in slowdown])
    tied = _rounds(GCM256, [800 * f * g for f, g in zip(slowdown, (1.0, 1.01, 0.99, 1.0, 1.005, 0.995))])
    slow = _rounds(SLOW, [20 * f for f in slowdown])
    summaries = summarise_transfers(fast + tied + slow)
    by = {s.combination: s for s in summaries}
    assert summaries[-1].combination == SLOW
    # 6 trials: the order-statistic interval at its real level (min-max, 96.9%)
    assert by[FAST].ci95_mib_s == [pytest.approx(480), pytest.approx(800)]
    assert by[FAST].ci_coverage == pytest.approx(0.96875)
    # tied within 3%: a shared rank; the slow one ordered behind, rank 3
    assert by[FAST].rank == by[GCM256].rank == 1
    assert {by[FAST].rank_label, by[GCM256].rank_label} == {"=1"}
    assert by[SLOW].rank == 3 and by[SLOW].rank_label == "3"
    assert all(s.decided for s in summaries)
    # "x fastest" with its paired CI: exactly 40 in every round, so the interval is tight around it
    low, high = by[SLOW].relative_to_fastest_ci95
    assert low == pytest.approx(40) and high == pytest.approx(40)
    assert by[SLOW].relative_to_fastest == pytest.approx(40)
    assert summaries[0].relative_to_fastest_ci95 == [1.0, 1.0]
    assert by[FAST].cpu_s_per_gib_ci95 is not None
    assert by[FAST].outlier_trials == [2]  # the slow round stands out in one combination's own rates
    assert not by[FAST].slow_first_trial


def test_undecided_and_slow_first_trial_and_few_trials():
    a = _rounds(FAST, [100, 300, 150])  # paired ratios all over the place: undecided
    b = _rounds(GCM256, [200, 140, 160])
    by = {s.combination: s for s in summarise_transfers(a + b)}
    assert not by[FAST].decided and not by[GCM256].decided
    assert by[FAST].ci_coverage == pytest.approx(0.75)  # 3 trials: the min-max range covers 75%
    first = {s.combination: s for s in summarise_transfers(_rounds(FAST, [10, 100, 101, 99, 100, 102]))}
    assert first[FAST].slow_first_trial and first[FAST].outlier_trials == [0]


def test_old_trials_without_rounds_still_summarise():
    # Hand-made trials all in round 0: merged into one rate per combination; nothing decided.
    fast, slow = summarise_transfers([_trial(FAST, r) for r in (800, 700)] + [_trial(SLOW, r) for r in (20, 21)])
    assert fast.combination == FAST and fast.rank == 1 and slow.rank == 2
    assert fast.decided is False and fast.ci95_mib_s == [700, 800]


def test_a_steady_warm_up_does_not_hide_a_measured_trial_too_short_for_a_steady_part():
    """crossover at 20 Mbit/s (a fixed 4 MiB text payload): the zlib warm-up had a steady part, its one
    measured trial did not, and the point read "-": that trial counts, on the earlier clock."""
    from sshbench.model.rate_clock import counted
    from sshbench.results import NO_STEADY_PART, STEADY_STATE

    warm = _trial(FAST, 10.6, warmup=True, size=4 * MIB)
    warm.data_clock = STEADY_STATE
    short = _trial(FAST, 10.4, size=4 * MIB, rep=0)
    short.data_clock, short.steady_note = "server-reader", NO_STEADY_PART
    assert counted([warm, short]) == [short]
    (row,) = summarise_transfers([warm, short])
    assert row.median_mib_s == pytest.approx(10.4) and row.valid_trials == 1 and row.unmeasured_trials == 0
    steady = _trial(FAST, 11.0, size=4 * MIB, rep=1)
    steady.data_clock = STEADY_STATE
    assert counted([warm, short, steady]) == [steady]  # beside a steady measured trial it still does not count


def test_client_cpu_per_gib_is_the_steady_windows_where_the_sampler_read_it():
    """A 12 MiB trial behind a 100 Mbit/s link: ~20 ms of client CPU on its data, ~100 ms on its handshake.
    The whole connection less a handshake that happened to cost more read 0 s/GiB; the window does not."""
    link = Combination("aes128-ctr", "umac-64-etm@openssh.com", "curve25519-sha256", link="wan100m")
    handshake = _trial(link, 1, size=0, cpu=0.12, kind="handshake")
    handshake.data_s = None
    trials = [handshake]
    for rep, window_cpu in enumerate((0.0100, 0.0105, 0.0095)):
        t = _trial(link, 11.4, size=12 * MIB, cpu=0.11, rep=rep)
        t.data_clock, t.steady_window_s = "steady-state", 0.75
        t.client_steady_cpu_s = window_cpu  # over 11.4 x 0.75 = 8.55 MiB
        trials.append(t)
    (row,) = summarise_transfers(trials)
    assert row.client_cpu_s_per_gib == pytest.approx(0.0100 / (11.4 * 0.75 / 1024), rel=1e-9)  # ~1.2 s/GiB
    # without the window's reading: the earlier estimate, clamped at 0 where the handshake cost more
    for t in trials[1:]:
        t.client_steady_cpu_s = None
    (row,) = summarise_transfers(trials)
    assert row.client_cpu_s_per_gib == 0.0
