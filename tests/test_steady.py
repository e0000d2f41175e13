"""The steady-state clock: the estimator as a pure function on synthetic samples shaped like the recorded
ones (docs/clock.md), the summaries' choice of trials, and the sampler on a real sshd."""

from __future__ import annotations

import os

import pytest

from sshbench.host.cleanup import Cleanup
from sshbench.links import LINKS
from sshbench.measure import clock, steady
from sshbench.measure.calibration import FIT_FLOOR_S, steady_window_cap
from sshbench.measure.clock import apply_steady, cross_check
from sshbench.measure.payload import PayloadStore
from sshbench.measure.rounds import adaptive_round
from sshbench.measure.run_plan import link_probe_size
from sshbench.measure.steady import estimate
from sshbench.measure.trial import run_trial
from sshbench.model.summary import summarise_transfers
from sshbench.model.summary_figures import client_cpu_per_gib
from sshbench.results import IMPLICIT_MAC, NO_STEADY_PART, STEADY_STATE, Combination, Trial
from sshbench.settings import RunSettings
from sshbench.targets import PrivateOpenSSH
from sshbench.tools.pipe import PipeTool
from sshbench.units import MIB

COMBO = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256")


def recorded_shape(steady_mib_s: float, steady_s: float, wire_per_payload: float = 1.0, dt: float = 0.01):
    """Samples like a loopback upload's (bench/startup.py): handshake bytes, the first 2 MiB channel
    window, a 0.3 s pause while the remote shell starts, 0.15 s at a third of the rate, then steady."""
    times, counts = [], []
    t, n = 0.0, 0.0
    rate = steady_mib_s * MIB * wire_per_payload

    def add(seconds: float, per_s: float) -> None:
        nonlocal t, n
        for _ in range(round(seconds / dt)):
            t += dt
            n += per_s * dt
            times.append(round(t, 6))
            counts.append(int(n))

    add(0.2, 20_000)  # key exchange, auth
    add(0.01, 2 * MIB / 0.01)  # the first window
    add(0.3, 0)  # the remote shell starts
    add(0.15, rate / 3)  # the ramp
    add(steady_s, rate)
    add(0.1, 0)  # channel close: the counter stays
    payload = int((n - counts[0]) / wire_per_payload)
    return times, counts, payload


def test_the_steady_rate_leaves_out_the_start():
    times, counts, payload = recorded_shape(500, 1.0)
    est = estimate(times, counts, payload)
    assert est.note is None and est.mib_s is not None
    assert abs(est.mib_s / 500 - 1) < 0.02
    # the data phase starts after the remote shell's pause, not at the first window
    assert est.start_s is not None and abs(est.start_s - 0.51) < 0.02
    assert est.window_start_s is not None and est.window_start_s >= est.start_s + steady.OMIT_S
    # the whole transfer's rate is well below it: what the earlier clock read
    whole = payload / MIB / (times[-11] - est.start_s)
    assert whole < 0.95 * est.mib_s


def test_wire_bytes_are_scaled_to_payload_bytes():
    times, counts, payload = recorded_shape(300, 1.0, wire_per_payload=0.5)  # compressed 2:1
    est = estimate(times, counts, payload)
    assert est.mib_s is not None and abs(est.mib_s / 300 - 1) < 0.03


def test_a_trial_too_short_says_so_and_has_no_rate():
    times, counts, payload = recorded_shape(500, 0.05)
    est = estimate(times, counts, payload)
    assert est.mib_s is None and est.note == NO_STEADY_PART
    assert estimate([0.0, 0.01], [0, 10], 10).note == steady.NO_SAMPLES


def climbing_shape(seconds: float, dt: float = 0.01) -> tuple[list[float], list[int], int]:
    """A transfer whose rate still climbs after the omitted start (docs/clock.md: 512 MiB trials read 0.93x of
    4 GiB ones): 400 MiB/s at the data phase's start, rising by 100 MiB/s every second, for `seconds`."""
    times, counts = [0.0, 0.2, 0.21], [0, 4000, 4000 + 2 * MIB]  # handshake, first window
    t, n = 0.51, counts[-1]  # a 0.3 s pause for the remote shell, then data
    times.append(t)
    counts.append(n)
    start = t
    while t < start + seconds:
        t += dt
        n += int((400 + 100 * (t - start)) * MIB * dt)
        times.append(round(t, 6))
        counts.append(n)
    times.append(t + 0.1)  # channel close: the counter stays
    counts.append(n)
    return times, counts, n - counts[0]


def test_a_capped_window_times_the_same_stretch_of_a_short_and_a_long_trial():
    cap = 0.3
    short, long = climbing_shape(0.7), climbing_shape(3.0)
    uncapped = [estimate(*shape).mib_s for shape in (short, long)]
    capped = [estimate(*shape, max_window_s=cap) for shape in (short, long)]
    assert uncapped[0] is not None and uncapped[1] is not None
    assert uncapped[1] / uncapped[0] > 1.08  # the long trial's window reaches further up the climb
    rates = [c.mib_s for c in capped]
    assert rates[0] is not None and rates[1] is not None and abs(rates[1] / rates[0] - 1) < 0.005
    # the window starts where it did and ends at the cap: ~450 MiB/s, the climb's rate at 0.3-0.6 s
    assert all(c.window_s is not None and cap - 0.011 <= c.window_s <= cap + 1e-9 for c in capped)
    assert abs(rates[0] / 445 - 1) < 0.02
    # a trial shorter than the cap keeps its whole window; one too short for a steady part stays too short
    assert estimate(*climbing_shape(0.5), max_window_s=cap).window_s == estimate(*climbing_shape(0.5)).window_s
    assert estimate(*climbing_shape(0.32), max_window_s=cap).note == NO_STEADY_PART


def test_the_cap_is_the_fitted_steady_part_and_only_for_calibrated_sizes():
    assert steady_window_cap(RunSettings(seconds=0.6)) == 0.6
    assert steady_window_cap(RunSettings(seconds=0.12)) == FIT_FLOOR_S  # --full's shortest fit: not below
    assert steady_window_cap(RunSettings(size=512 * MIB)) is None  # the user's size: the whole window


def _trial(rep: int, mib_s: float, clock: str, note: str | None = None) -> Trial:
    t = Trial(COMBO, "transfer", rep, False, 100 * MIB, 0.0, exit_status=0, valid=True, wall_s=1.0)
    t.data_s, t.data_clock, t.steady_note = 100 / mib_s, clock, note
    return t


def test_summaries_count_steady_trials_and_label_the_clock():
    trials = [
        _trial(0, 900, STEADY_STATE),
        _trial(1, 300, "server-reader", NO_STEADY_PART),
        _trial(2, 950, STEADY_STATE),
    ]
    (s,) = summarise_transfers(trials)
    assert s.valid_trials == 2 and s.unmeasured_trials == 1
    assert s.median_mib_s == 925 and s.data_clock == STEADY_STATE
    # no trial of the combination had a steady part: the earlier clock, named
    (s,) = summarise_transfers([_trial(0, 300, "server-reader", NO_STEADY_PART)])
    assert s.median_mib_s == 300 and s.data_clock == "server-reader"


def test_apply_steady_keeps_the_whole_data_phase_and_the_start_up_cost():
    t = _trial(0, 400, "server-reader")
    times, counts, payload = recorded_shape(800, 1.0)
    t.payload_bytes = payload
    apply_steady(t, estimate(times, counts, payload))
    assert t.data_clock == STEADY_STATE and t.whole_data_clock == "server-reader"
    assert t.mib_s is not None and abs(t.mib_s / 800 - 1) < 0.02
    assert t.startup_s is not None and t.startup_s == t.whole_data_s - t.data_s
    handshake = Trial(COMBO, "handshake", 0, False, 0, 0.0, valid=True, wall_s=0.4)
    cross_check([t, handshake])
    assert t.data_clock == STEADY_STATE and t.whole_data_clock == "server-reader"  # the reader stays the whole clock
    assert t.to_json()["startup_s"] == t.startup_s


def _real_upload(tmp_path, payload, size: int, max_steady_window_s: float | None = None) -> Trial:
    """One pipe upload of `payload` to a private sshd of its own (aes128-ctr + hmac-sha2-256), as a run makes it."""
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        kex = target.client_algorithms().default_kex[0]
        return run_trial(
            ssh="ssh",
            target=target,
            tool=PipeTool(),
            combo=Combination("aes128-ctr", "hmac-sha2-256", kex),
            kind="transfer",
            repetition=0,
            warmup=False,
            payload=payload,
            payload_bytes=size,
            workdir=tmp_path,
            timeout_s=60,
            max_steady_window_s=max_steady_window_s,
        )
    finally:
        cleanup.close()


def test_a_real_short_transfer_is_sampled_and_labelled_too_short(tmp_path):
    payload = tmp_path / "payload"
    payload.write_bytes(os.urandom(4 * MIB))
    trial = _real_upload(tmp_path, payload, 4 * MIB)
    assert trial.valid, trial.invalid_reason
    assert trial.steady_note == NO_STEADY_PART  # 4 MiB: over before the omitted start ends
    assert trial.data_clock == "server-reader" and trial.mib_s is not None  # the earlier clock, kept


def test_calibration_sizes_a_short_probe_from_its_late_rate_and_grows_short_trials():
    from sshbench.measure.calibration import Calibration, grow_if_too_short
    from sshbench.settings import RunSettings

    times, counts, payload = recorded_shape(500, 0.05)
    probe = _trial(0, 100, "server-reader")
    probe.payload_bytes, probe.warmup = payload, True
    apply_steady(probe, estimate(times, counts, payload))
    assert probe.steady_note == NO_STEADY_PART and probe.late_mib_s is not None and probe.late_mib_s > 300
    sizes = {COMBO: 16 * MIB}
    settings = RunSettings(seconds=0.25)
    Calibration([COMBO], settings, sizes).after_probe(COMBO, probe, 2)
    # sized from the late rate (> 300 MiB/s) for the steady part plus the omitted start: at least 128 MiB
    assert sizes[COMBO] >= 128 * MIB
    short = _trial(1, 300, "server-reader", NO_STEADY_PART)
    before = sizes[COMBO]
    grow_if_too_short(sizes, short, settings)
    assert sizes[COMBO] == min(4 * before, settings.max_size)  # no late rate: four times as much
    sizes[COMBO] = 256 * MIB
    short.late_mib_s = 648.0  # the default run's aes256-ctr: its late rate needs 648 x 0.65 + 2 = 423 -> 512 MiB
    grow_if_too_short(sizes, short, settings)
    assert sizes[COMBO] == 512 * MIB
    short.late_mib_s = 100.0  # a late rate that asks for less: still twice as much (it was too short)
    grow_if_too_short(sizes, short, settings)
    assert sizes[COMBO] == 1024 * MIB
    fixed = {COMBO: 64 * MIB}
    grow_if_too_short(fixed, short, RunSettings(size=64 * MIB))
    assert fixed[COMBO] == 64 * MIB  # a fixed --size never grows


def test_a_trial_that_grows_grows_its_groups_members_not_yet_measured():
    """--full sizes a cipher's 16 MACs from one probe: the first of them too short grows the others not yet run."""
    from dataclasses import replace

    from sshbench.measure.calibration import grow_if_too_short, share_growth
    from sshbench.measure.plan import calibration_groups
    from sshbench.settings import RunSettings

    ctr = [
        replace(COMBO, cipher="aes192-ctr", mac=mac)
        for mac in ("umac-64-etm@openssh.com", "hmac-sha1", "hmac-sha2-256")
    ]
    other = replace(COMBO, cipher="aes256-ctr", mac="hmac-sha1")
    groups = calibration_groups([*ctr, other])
    sizes = {c: 192 * MIB for c in [*ctr, other]}
    measured = replace(_trial(0, 800, STEADY_STATE), combination=ctr[2])  # run before, at its own size
    sizes[ctr[2]] = 256 * MIB
    short = replace(_trial(0, 800, "server-reader", NO_STEADY_PART), combination=ctr[0])
    short.late_mib_s = 800.0
    grow_if_too_short(sizes, short, RunSettings(seconds=0.12))
    assert sizes[ctr[0]] == 384 * MIB  # 800 x 0.42 + 2 = 338 MiB -> 384, at least twice 192
    share_growth(sizes, ctr[0], groups, [measured, short])
    assert sizes[ctr[1]] == 384 * MIB  # not measured yet: grows with it
    assert sizes[ctr[2]] == 256 * MIB  # measured: its own rates size it (follow_measured_rates)
    assert sizes[other] == 192 * MIB  # another cipher's group: untouched


def test_a_measured_steady_rate_shrinks_its_groups_members_not_yet_measured_with_room_for_a_faster_mac():
    """--full sizes a cipher's MACs from one probe, whose rate sized the first round at up to 2-3x what the rows
    needed: the first of them measured shrinks the others not yet run, to what 1.6x its rate needs."""
    from dataclasses import replace

    from sshbench.measure.calibration import share_shrink
    from sshbench.measure.plan import calibration_groups
    from sshbench.settings import RunSettings

    ctr = [replace(COMBO, cipher="aes192-ctr", mac=mac) for mac in ("hmac-sha2-512", "umac-64-etm@openssh.com", "x")]
    other = replace(COMBO, cipher="aes256-ctr", mac="hmac-sha1")
    groups = calibration_groups([*ctr, other])
    settings = RunSettings(seconds=0.25)
    sizes = {c: 768 * MIB for c in [*ctr, other]}
    first = replace(_trial(0, 400, STEADY_STATE), combination=ctr[0])  # 400 MiB/s at 768 MiB: 1.9 s
    earlier = replace(_trial(0, 600, STEADY_STATE), combination=ctr[2])
    sizes[ctr[2]] = 448 * MIB  # measured before: its own rates size it
    share_shrink(sizes, first, groups, [earlier, first], settings)
    assert sizes[ctr[1]] == 384 * MIB  # 1.6 x 400 x (0.25 + 0.3) + 2 = 354 MiB, up the ladder
    assert sizes[ctr[0]] == 768 * MIB  # its own: follow_measured_rates' business
    assert sizes[ctr[2]] == 448 * MIB and sizes[other] == 768 * MIB
    sizes[ctr[1]] = 448 * MIB  # within a quarter of what it would shrink to: no new size
    share_shrink(sizes, first, groups, [earlier, first], settings)
    assert sizes[ctr[1]] == 448 * MIB
    unsteady = replace(_trial(1, 100, "server-reader", NO_STEADY_PART), combination=ctr[0])
    sizes[ctr[1]] = 768 * MIB
    share_shrink(sizes, unsteady, groups, [earlier, first, unsteady], settings)
    assert sizes[ctr[1]] == 768 * MIB  # no steady rate: nothing to size from
    share_shrink(sizes, first, groups, [earlier, first], RunSettings(seconds=0.25, size=768 * MIB))
    assert sizes[ctr[1]] == 768 * MIB  # the user's --size


def test_an_earlier_clock_run_is_marked_and_compare_says_the_clocks_differ():
    from sshbench.answers.compare import clock_lines, compare_runs
    from sshbench.report.notes import clock_notes
    from sshbench.results import RunResult
    from sshbench.settings import RunSettings

    old = RunResult(settings=RunSettings(), trials=[_trial(r, 300, "server-reader") for r in range(3)], run_id=1)
    new = RunResult(settings=RunSettings(), trials=[_trial(r, 900, STEADY_STATE) for r in range(3)], run_id=2)
    assert "earlier clock" in clock_notes(old)[0] and clock_notes(new) == []
    comparison = compare_runs([old, new])
    (row,) = comparison.rows
    assert row.clocks_differ == [True] and row.ratios == [None]  # not a 3x speed-up
    assert "clocks differ" in clock_lines(comparison)[0]
    same = compare_runs([new, new])
    assert same.rows[0].ratios[0] is not None and clock_lines(same) == []
    # a run that recorded its 0.3 s omit against one stored before (0.2 s): the same clock, a ratio, and a line
    newer = RunResult(settings=RunSettings(), trials=[_trial(r, 950, STEADY_STATE) for r in range(3)], run_id=3)
    newer.environment["steady_omit_s"] = 0.3
    shifted = compare_runs([new, newer])
    assert shifted.rows[0].ratios[0] is not None
    (line,) = clock_lines(shifted)
    assert "run 2: 0.2 s, run 3: 0.3 s" in line and "5-9%" in line
    # one whose steady windows were capped at --seconds against one stored before the cap: a ratio, and a line
    capped = RunResult(settings=RunSettings(), trials=[_trial(r, 960, STEADY_STATE) for r in range(3)], run_id=4)
    capped.environment.update(steady_omit_s=0.3, steady_window_capped=True)
    against = compare_runs([newer, capped])
    assert against.rows[0].ratios[0] is not None
    (line,) = clock_lines(against)
    assert "run 3: to each trial's end, run 4: at most --seconds" in line
    assert clock_lines(compare_runs([capped, capped])) == []
    (omit, window) = clock_lines(compare_runs([new, capped]))  # both: an old omit and an uncapped window
    assert "0.2 s" in omit and "steady windows differ" in window


def test_a_probe_too_short_to_sample_is_probed_again_four_times_bigger_not_at_a_trials_size():
    from sshbench.measure.calibration import Calibration
    from sshbench.settings import RunSettings

    probe = _trial(0, 200, "server-reader", NO_STEADY_PART)  # 16 MiB in 0.08 s: no late rate either
    probe.payload_bytes, probe.warmup, probe.late_mib_s = 16 * MIB, True, None
    probe.data_s = 0.08
    sizes = {COMBO: 16 * MIB}
    calibration = Calibration([COMBO], RunSettings(seconds=1.0), sizes)
    assert calibration.after_probe(COMBO, probe, 0) is True  # probe again
    assert sizes[COMBO] == 64 * MIB  # sized as a trial it would be 512 MiB (200 x 2 MiB/s for 1.2 s)


def test_measured_trials_shrink_their_combination_to_what_the_median_of_their_steady_rates_needs():
    from sshbench.measure.calibration import follow_measured_rates
    from sshbench.settings import RunSettings

    settings = RunSettings(seconds=round(0.5 - steady.OMIT_S, 3))  # a data phase of 0.5 s, the omit included
    sizes = {COMBO: 1024 * MIB}  # grown fourfold once: ~1 s of data phase at 1000 MiB/s
    trials = [_trial(0, 1000, STEADY_STATE)]
    follow_measured_rates(sizes, trials[0], trials, settings)
    # 1000 MiB/s x (the steady part + the omitted start: 0.5 s) + the first window: 502 MiB, the next ladder step up
    assert sizes[COMBO] == 512 * MIB
    trials += [_trial(1, 800, STEADY_STATE), _trial(2, 800, STEADY_STATE)]  # slower rounds: median 800
    follow_measured_rates(sizes, trials[2], trials, settings)
    assert sizes[COMBO] == 512 * MIB  # 800 x 0.5 + 2 -> 448 MiB is more than 3/4 of it: no new payload for it...
    trials += [_trial(3, 400, STEADY_STATE), _trial(4, 400, STEADY_STATE), _trial(5, 400, STEADY_STATE)]
    follow_measured_rates(sizes, trials[5], trials, settings)
    assert sizes[COMBO] == 320 * MIB  # ...until the median (600: 302 MiB -> 320) needs 3/4 or less
    sizes[COMBO] = 64 * MIB
    follow_measured_rates(sizes, trials[5], trials, settings)
    assert sizes[COMBO] == 64 * MIB  # never up: a trial too short for a steady part grows by itself
    unsteady = _trial(6, 50, "server-reader", NO_STEADY_PART)
    sizes[COMBO] = 1024 * MIB
    follow_measured_rates(sizes, unsteady, trials, settings)
    assert sizes[COMBO] == 1024 * MIB  # no steady rate: grow_if_too_short's business
    for kept in (RunSettings(seconds=0.1, size=1024 * MIB), RunSettings(seconds=0.1, server_cpu=0.5)):
        fixed = {COMBO: 1024 * MIB}
        follow_measured_rates(fixed, trials[0], trials, kept)
        assert fixed[COMBO] == 1024 * MIB  # a --size of the user's; --server-cpu sizes cover a channel window


def _probe(size: int, mib_s: float, late_mib_s: float) -> Trial:
    probe = _trial(0, mib_s, "server-reader", NO_STEADY_PART)
    probe.payload_bytes, probe.warmup, probe.late_mib_s = size, True, late_mib_s
    probe.data_s = size / MIB / mib_s
    return probe


def test_a_fast_16_mib_probe_probes_again_with_64_mib_whose_late_rate_sizes_scaled_by_its_data_phase():
    """A 16 MiB probe is all start-up (~230 MiB/s for every cipher): a fast one probes again with 64 MiB, whose
    late rate sizes the trials, scaled up the shorter its data phase (ramp_probe_headroom: still in the ramp); a
    slow one (3DES, ~28 MiB/s) already timed its cipher and sizes at once."""
    from sshbench.measure.calibration import RAMP_PROBE_SIZE, Calibration, ramp_probe_headroom
    from sshbench.settings import RunSettings

    settings = RunSettings(seconds=0.25)
    sizes = {COMBO: 16 * MIB}
    calibration = Calibration([COMBO], settings, sizes)
    assert calibration.after_probe(COMBO, _probe(16 * MIB, 230, 120), 0) is True
    assert sizes[COMBO] == RAMP_PROBE_SIZE
    assert calibration.after_probe(COMBO, _probe(RAMP_PROBE_SIZE, 256, 1000), 1) is False
    # a data phase of 0.25 s: its late rate as it is. 1000 MiB/s x (0.25 s + the 0.3 s omitted) + the first
    # window: 552 MiB -> 640 (not x2: 1280)
    assert sizes[COMBO] == 640 * MIB and calibration.probe_rates[COMBO] == 1000.0
    # AES-GCM's 64 MiB in 0.15 s, late at 600 MiB/s where it then runs at ~1000: taken as 600 x 0.25 / 0.15
    sizes[COMBO] = 16 * MIB
    assert calibration.after_probe(COMBO, _probe(16 * MIB, 230, 120), 0) is True
    assert calibration.after_probe(COMBO, _probe(RAMP_PROBE_SIZE, 64 / 0.15, 600), 1) is False
    assert sizes[COMBO] == 640 * MIB and calibration.probe_rates[COMBO] == pytest.approx(1000.0)
    # never less than as it is, never more than twice, however short
    assert [ramp_probe_headroom(d) for d in (0.5, 0.25, 0.05, None)] == [1.0, 1.0, 2.0, 1.0]
    slow_sizes = {COMBO: 16 * MIB}
    assert Calibration([COMBO], settings, slow_sizes).after_probe(COMBO, _probe(16 * MIB, 28, 28), 0) is False
    assert slow_sizes[COMBO] < RAMP_PROBE_SIZE


def test_the_budget_fit_plans_for_the_adaptive_rounds_and_the_why_reserve():
    """--runs auto fits the data phase for PLANNED_AUTO_ROUNDS rounds (the minimum 3 are in the plan): shorter
    phases leave room for the rounds past the third, which decide the close pairs. The --why reserve is sized
    for its own trials (WHY_SECONDS), not for the run's."""
    from sshbench.measure.calibration import FIT_FLOOR_S, PLANNED_AUTO_ROUNDS, SHORTEST_FIT_S, Calibration, Reserve
    from sshbench.measure.plan import schedule
    from sshbench.settings import RunSettings

    def fit(time_left_s: float, reserve: Reserve | None = None) -> tuple[float, str | None]:
        settings = RunSettings(seconds=1.0, runs=3, adaptive=True, fit_seconds=True)
        calibration = Calibration([COMBO], settings, {COMBO: 16 * MIB})
        calibration.probe_rates[COMBO] = 1000.0
        warm = _trial(0, 500, "server-reader")
        warm.warmup, warm.wall_s, warm.data_s = True, 0.6, 0.2  # 0.4 s of set-up per connection
        rest = [p for p in schedule([COMBO], [], 3, 1, calibrate=True) if not p.warmup]
        notice = calibration.fit_minimum_rounds(rest, [warm], time_left_s, reserve)
        return calibration.settings.seconds, notice

    # at 1 s, a round is 0.4 s set-up + 1536 MiB / 1000 MiB/s + 0.1 s start-up: 3 rounds take ~6.1 s, 5 ~10.2 s
    seconds, notice = fit(8.0)
    assert FIT_FLOOR_S < seconds < 1.0 and notice is not None
    assert f"to fit {PLANNED_AUTO_ROUNDS} rounds of 1 transfers" in notice
    assert fit(12.0) == (1.0, None)  # 5 rounds at 1 s fit: nothing shrinks
    reserve = Reserve(trials=10, data_s_each=0.5, stretch=1.5)
    assert reserve.cost(0.4, 0.1) == 10 * (0.4 + 0.6 * 1.5)
    with_reserve, _ = fit(12.0 + reserve.cost(0.4, 0.1) - 3.0, reserve)
    assert with_reserve < 1.0  # the reserve's 13 s come off the rounds' time
    # 3 rounds at the floor (0.25 s: 640 MiB a trial) take 3.42 s, at SHORTEST_FIT_S (448 MiB) 2.84 s: with 3.5 s
    # left (3.15 s after the tenth kept for spawning) the minimum rounds shrink below the floor, as far as they must
    shorter, notice = fit(3.5)
    assert SHORTEST_FIT_S < shorter < FIT_FLOOR_S and notice is not None
    assert notice.endswith("to fit the 3 minimum rounds of 1 transfers")
    floor, notice = fit(1.0)
    assert floor == SHORTEST_FIT_S and notice is not None and "the run may overrun (they need ~" in notice
    assert notice.endswith(", 1 s are left)")  # and how far over: --full's 3 rounds of 115 took 386 s of 270


def test_the_minimum_rounds_and_the_why_reserve_fit_at_the_floor_or_the_experiment_is_left_out():
    """calibration.minimum_rounds_fit: the runner leaves the default --why experiment out (`--why auto`) where the
    3 minimum rounds and its reserve do not fit --budget at FIT_FLOOR_S: --full's 345 trials overran by its ~14 s."""
    from sshbench.measure.calibration import Calibration, Reserve
    from sshbench.measure.plan import schedule
    from sshbench.settings import RunSettings

    settings = RunSettings(seconds=1.0, runs=3, adaptive=True, fit_seconds=True)
    calibration = Calibration([COMBO], settings, {COMBO: 16 * MIB})
    warm = _trial(0, 500, "server-reader")
    warm.warmup, warm.wall_s, warm.data_s = True, 0.6, 0.2  # 0.4 s of set-up per connection
    rest = [p for p in schedule([COMBO], [], 3, 1, calibrate=True) if not p.warmup]
    reserve = Reserve(trials=10, data_s_each=0.5, stretch=1.5)  # 13 s at 0.4 s set-up and 0.1 s start-up
    assert calibration.minimum_rounds_fit(rest, [warm], 1.0, reserve)  # no probe rate yet: nothing to predict
    calibration.probe_rates[COMBO] = 1000.0
    # 3 rounds at the floor take 3.42 s (the fit test above); with the reserve 16.42 s, which 0.9 x 18.3 s holds
    assert calibration.minimum_rounds_fit(rest, [warm], 18.3, reserve)
    assert not calibration.minimum_rounds_fit(rest, [warm], 17.5, reserve)
    assert calibration.minimum_rounds_fit(rest, [warm], 17.5, None)  # the rounds alone fit
    assert settings.seconds == 1.0  # asking changes nothing


def test_a_cipher_with_a_fast_crypto_ceiling_probes_with_64_mib_at_once():
    from sshbench.measure.calibration import RAMP_PROBE_SIZE
    from sshbench.measure.payload import PROBE_SIZE
    from sshbench.measure.run_plan import FAST_CEILING_MIB_S, first_probe_size

    assert first_probe_size(9060.0, 1 << 30) == RAMP_PROBE_SIZE  # aes128-ctr here
    assert first_probe_size(FAST_CEILING_MIB_S - 1, 1 << 30) == PROBE_SIZE
    assert first_probe_size(30.0, 1 << 30) == PROBE_SIZE  # 3des-cbc: 64 MiB would take ~2.3 s
    assert first_probe_size(None, 1 << 30) == PROBE_SIZE  # --no-baselines: no ceiling measured
    assert first_probe_size(9060.0, 32 * MIB) == 32 * MIB  # never above --max-size


def test_the_clients_cpu_over_the_steady_window_is_read_at_its_two_ends():
    times = [round(0.02 * i, 2) for i in range(60)]
    counts = [min(i, 50) * 4 * MIB for i in range(60)]  # 200 MiB at 200 MiB/s, then the end
    cpu = [i * 10_000_000 for i in range(60)]  # 10 ms of CPU per 20 ms sample: one core
    estimate = steady.estimate(times, counts, 200 * MIB)
    assert estimate.window_start_s is not None and estimate.window_end_s is not None
    window = estimate.window_end_s - estimate.window_start_s
    assert clock.window_cpu_s(times, cpu, estimate) == pytest.approx(window / 2)
    # a reading missing at one end (a client process gone), or no window: no figure
    gone = [None if t == estimate.window_end_s else c for t, c in zip(times, cpu)]
    assert clock.window_cpu_s(times, gone, estimate) is None
    assert clock.window_cpu_s(times[:3], cpu[:3], steady.estimate(times[:3], counts[:3], 200 * MIB)) is None


def test_a_real_steady_transfer_has_the_clients_cpu_over_its_window(tmp_path):
    payload = PayloadStore(tmp_path).path_for(512 * MIB)  # 0.7-1 s at this machine's 500-750 MiB/s
    trial = _real_upload(tmp_path, payload, 512 * MIB, max_steady_window_s=0.15)
    assert trial.valid, trial.invalid_reason
    assert trial.data_clock == STEADY_STATE and trial.steady_window_s, trial.steady_note
    # the window capped as a calibrated run caps it, where the data phase went on well past it
    assert 0.1 <= trial.steady_window_s <= 0.15 + 1e-9
    assert trial.whole_data_s is not None and trial.whole_data_s > steady.OMIT_S + 0.15 + 0.02
    cpu = trial.client_steady_cpu_s
    assert cpu is not None and trial.client_cpu_s is not None
    # ssh is one thread: at most one core over the window; and less than its whole connection (handshake too)
    assert 0 < cpu <= trial.steady_window_s * 1.05 and cpu < trial.client_cpu_s
    assert client_cpu_per_gib(trial, None) == cpu / (trial.mib_s * trial.steady_window_s / 1024)
    assert trial.to_json()["client_steady_cpu_s"] == cpu


def _stepped_link(total: int, step: int = 128 * 1024, every_s: float = 0.047) -> tuple[list[float], list[int]]:
    """A 24 Mbit/s link's counter as sampled: nothing during the set-up, the first 2 MiB window at once (a local
    relay takes it), then 128 KiB every 47 ms (two 20 ms samples without growth, again and again), then the tail."""
    times, counts = [], []
    t = 0.0
    while True:
        if t < 0.42:
            moved = 0
        else:
            moved = min(total, 2 * MIB + int((t - 0.42) / every_s) * step)
        times.append(round(t, 3))
        counts.append(moved)
        if moved >= total and t > 0.42 + (total - 2 * MIB) / step * every_s + 0.2:
            return times, counts
        t += 0.02


def test_a_link_that_moves_in_steps_is_not_a_row_of_pauses():
    times, counts = _stepped_link(4 * MIB)
    assert steady.pause_s(times, counts) > 0.06  # its own 20-40 ms stalls do not count as the start-up's pause
    first = steady.data_start(times, counts)
    assert 0.38 <= times[first] <= 0.42  # the set-up's stall, then the data (before: after the first 9 MiB)
    got = estimate(times, counts, 4 * MIB)
    assert got.mib_s is not None, got.note
    assert got.mib_s == pytest.approx(128 / 1024 / 0.047, rel=0.05)  # 2.66 MiB/s


def test_where_every_sample_moves_a_pause_is_still_40_ms():
    times = [round(0.02 * i, 2) for i in range(80)]
    # the first window, 100 ms of nothing while the remote reader starts, then 20 MiB per sample
    counts = [min(i, 3) * MIB for i in range(8)] + [3 * MIB + (i - 7) * 20 * MIB for i in range(8, 80)]
    assert steady.pause_s(times, counts) == steady.PAUSE_S
    assert steady.data_start(times, counts) == 7


def test_a_probe_behind_a_shaped_link_is_sized_for_its_line_rate():
    # 24 Mbit/s: 2 MiB of first window + 0.6 s at 2.86 MiB/s -> 4 MiB (16 MiB took 6.2 s a probe)
    assert link_probe_size(LINKS["wan24m"].rate_bit_s or 0, 1 << 30) == 4 * MIB
    assert link_probe_size(LINKS["wan100m"].rate_bit_s or 0, 1 << 30) == 10 * MIB  # 9.2 MiB
    assert link_probe_size(LINKS["lan1g"].rate_bit_s or 0, 1 << 30) == 16 * MIB  # never above the usual probe
    assert link_probe_size(LINKS["wan24m"].rate_bit_s or 0, 3 * MIB) == 3 * MIB  # nor above --max-size


def test_an_adaptive_round_narrows_to_the_answers_rows_only_where_a_whole_round_no_longer_fits():
    rows = [Combination(c, IMPLICIT_MAC, "kex") for c in ("gcm128", "gcm256", "ctr128", "ctr256", "chacha")]
    answer = [rows[0], rows[1], rows[4]]

    def cost(combos: list[Combination]) -> float:
        return 1.2 * len(combos)

    assert adaptive_round(rows, answer, 10.0, cost) == rows  # the whole round fits: every undecided row
    assert adaptive_round(rows, answer, 4.0, cost) == answer  # it does not; the answer's three rows do
    assert adaptive_round(rows, answer, 3.0, cost) is None  # neither fits: stop
    assert adaptive_round(rows, [], 4.0, cost) is None  # the answer is decided: nothing worth a partial round
    assert adaptive_round(answer, answer, 3.0, cost) is None  # no narrower round than the one that did not fit
    # the --why experiment's spare (its reserve past the typical stretch) goes to the answer's round, not to a
    # whole one: the answer before the explanation's extra precision
    assert adaptive_round(rows, answer, 3.0, cost, answer_extra_s=1.0) == answer
    assert adaptive_round(rows, answer, 5.5, cost, answer_extra_s=1.0) == answer  # 6 s for 5 rows: not the whole
    assert adaptive_round(rows, [], 3.0, cost, answer_extra_s=1.0) is None


def test_the_why_reserves_spare_is_what_its_long_end_holds_over_the_typical_stretch():
    from sshbench.measure.calibration import WHY_TYPICAL_STRETCH, Reserve

    reserve = Reserve(trials=10, data_s_each=0.55, stretch=2.0)
    no_trials: list = []  # nothing measured: overhead 1.0 s, start-up DEFAULT_STARTUP_S (0.1 s)
    assert reserve.cost_after(no_trials) == pytest.approx(10 * (1.0 + 0.65 * 2.0))
    assert reserve.spare_after(no_trials) == pytest.approx(10 * 0.65 * (2.0 - WHY_TYPICAL_STRETCH))
    assert Reserve(trials=0, data_s_each=0.55, stretch=2.0).spare_after(no_trials) == 0.0  # no experiment: none
    assert Reserve(trials=10, data_s_each=0.55, stretch=1.2).spare_after(no_trials) == 0.0


def test_the_cost_models_set_up_leaves_the_start_up_to_its_own_figure_and_a_negative_start_up_counts_as_none():
    from sshbench.measure.calibration import DEFAULT_STARTUP_S, setup_overheads, startup_loss_s

    steady_trial = _trial(0, 500, STEADY_STATE)  # 100 MiB: data_s 0.2 s on the steady clock
    steady_trial.whole_data_s, steady_trial.wall_s = 0.3, 0.45  # 0.1 s of start-up, 0.15 s of set-up
    short = _trial(1, 400, "server-reader", NO_STEADY_PART)  # its data_s is the whole data phase
    short.wall_s = 0.25 + 0.15
    assert setup_overheads([steady_trial, short]) == pytest.approx([0.15, 0.15])  # not 0.25: no start-up in it
    assert steady_trial.startup_s == pytest.approx(0.1)
    odd = _trial(2, 13, STEADY_STATE)  # 3des-cbc's 16 MiB probe: its reader's clock shorter than payload / rate
    odd.whole_data_s = odd.data_s - 0.13
    assert startup_loss_s([odd]) == DEFAULT_STARTUP_S  # one reading is not a figure
    assert startup_loss_s([odd, steady_trial, steady_trial]) == pytest.approx(0.1)  # the odd one read as 0
    assert startup_loss_s([odd, odd, steady_trial]) == 0.0  # never below 0


def test_the_minimum_rounds_are_paced_by_the_round_before_when_they_would_overrun():
    """--full's three rounds took ~10% more than the fit predicted: at each round's start, the rounds left are
    predicted from the round before (its wall time, each payload's bytes at its steady rate) and shrunk to fit."""
    from dataclasses import replace

    from sshbench.measure.calibration import SHORTEST_FIT_S
    from sshbench.measure.rounds import paced_data_phase

    combos = [replace(COMBO, cipher=f"c{i}") for i in range(4)]
    settings = RunSettings(seconds=0.5)
    sizes = dict.fromkeys(combos, 384 * MIB)  # 400 MiB/s x (0.5 + 0.3 omit) + 2 MiB, up the ladder
    done = [replace(_trial(0, 400, STEADY_STATE), combination=c, payload_bytes=384 * MIB, data_s=0.96) for c in combos]
    # a round of 10 s, two left, 18 s: 8.55 s a round, so 1.45 s of the four payloads' 3.84 s go; at 224 MiB each
    # saves 0.4 s, and 224 MiB hold 400 x (t + 0.3) + 2 up to t = 0.255
    pace = paced_data_phase(done, 10.0, 2, 18.0, settings, sizes)
    assert pace is not None and pace.target_s == pytest.approx(0.255, abs=0.002)
    assert pace.sizes == dict.fromkeys(combos, 224 * MIB)
    assert pace.round_s == 10.0
    assert paced_data_phase(done, 10.0, 2, 30.0, settings, sizes) is None  # they fit: nothing shrinks
    assert paced_data_phase(done, 10.0, 0, 18.0, settings, sizes) is None  # no round left
    floor = paced_data_phase(done, 10.0, 2, 5.0, settings, sizes)  # not even the floor fits: the floor
    assert floor is not None and floor.target_s == SHORTEST_FIT_S
    smaller = {**sizes, combos[0]: 128 * MIB}  # already smaller than the pace would make it: kept
    assert paced_data_phase(done, 10.0, 2, 18.0, settings, smaller).sizes[combos[0]] == 128 * MIB  # type: ignore[union-attr]
    unsteady = [replace(t, data_clock="server-reader", steady_note=NO_STEADY_PART) for t in done]
    assert paced_data_phase(unsteady, 10.0, 2, 18.0, settings, sizes) is None  # nothing to pace by
    assert paced_data_phase(done, 10.0, 2, 18.0, RunSettings(seconds=0.5, size=384 * MIB), sizes) is None  # --size
