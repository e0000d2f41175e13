"""Rekeys (sshbench.measure.rekey, sshbench.measure.rekey_probe): the rules, the stall estimator on constructed readings, what a
trial's MiB/s then counts, and the report's and compare's lines (pure). The probe itself runs in
tests/test_run_private.py::test_chacha20_rates_count_the_default_kexs_rekeys."""

from __future__ import annotations

import pytest

from conftest import DATA
from sshbench.answers.compare import clock_lines, compare_runs
from sshbench.measure import rekey
from sshbench.model.summary import summarise_transfers
from sshbench.openssh.sshlog import parse_ssh_log
from sshbench.report.notes import clock_notes
from sshbench.results import IMPLICIT_MAC, STEADY_STATE, Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.units import GIB, MIB

CHACHA = Combination("chacha20-poly1305@openssh.com", IMPLICIT_MAC, "sntrup761x25519-sha512")
GCM = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "sntrup761x25519-sha512")


def test_the_interval_is_the_smaller_of_both_sides_rules():
    assert rekey.interval_bytes("chacha20-poly1305@openssh.com") == GIB  # 2^30 / 8 blocks of 8 bytes
    assert rekey.interval_bytes("3des-cbc") == GIB
    assert rekey.interval_bytes("aes128-gcm@openssh.com") == 64 * GIB  # 2^32 blocks of 16
    assert rekey.interval_bytes("aes128-ctr", server="dropbear") == GIB  # Dropbear: every 1 GiB of data
    assert rekey.interval_bytes("aes128-ctr", client="asyncssh", server="asyncssh") == GIB
    assert rekey.interval_bytes("aes256-ctr", server_version="dropbear_2022.83") == GIB  # a remote Dropbear
    assert rekey.interval_bytes("aes256-ctr", server_version="OpenSSH_9.2p1 Debian-2+deb12u10") == 64 * GIB
    assert rekey.matters(GIB) and not rekey.matters(64 * GIB)


def test_the_probe_spaces_its_rekeys_by_the_rows_rate():
    assert rekey.probe_limit(None) == rekey.PROBE_LIMIT_MAX
    assert rekey.probe_limit(460.0) == 8 * MIB  # 9.2 MiB at 20 ms: capped
    assert rekey.probe_limit(200.0) == 4 * MIB
    assert rekey.probe_limit(2.9) == 512 * 1024  # behind a 24 Mbit/s link: the floor
    assert rekey.probe_limit(100.0) % 65536 == 0


def _readings(rate_mib_s: float, seconds: float, stalls: dict[float, float], every_s: float = 0.005):
    """Readings of a flow at `rate_mib_s` that stands still for `stalls[t]` seconds from each t; a session start
    first (2 MiB, then a 60 ms pause while the remote shell starts), as a real connection's counters show."""
    times, counts, t, moved = [0.0], [0], 0.0, 0.0
    counts_at_start = 2 * MIB
    times.append(0.005)
    counts.append(counts_at_start)
    t = 0.005
    while t < 0.065:  # the pause while the remote's reader starts
        t += every_s
        times.append(t)
        counts.append(counts_at_start)
    flow_t = 0.0
    while flow_t < seconds:
        t += every_s
        still = any(at <= flow_t < at + length for at, length in stalls.items())
        if not still:
            moved += rate_mib_s * MIB * every_s
        flow_t += every_s
        times.append(round(t, 6))
        counts.append(counts_at_start + int(moved))
    return times, counts


def test_the_stall_estimator_finds_the_rekeys_stalls_and_not_the_session_start():
    times, counts = _readings(460.0, 1.0, {0.1: 0.1, 0.35: 0.12, 0.7: 0.08})
    assert rekey.stalled_s(times, counts) == pytest.approx(0.30, abs=0.015)
    assert rekey.stall_per_rekey(rekey.stalled_s(times, counts), 3) == pytest.approx(0.10, abs=0.005)
    steady_times, steady_counts = _readings(460.0, 1.0, {})
    assert rekey.stalled_s(steady_times, steady_counts) == 0.0  # the 60 ms start is not a stall
    short_times, short_counts = _readings(460.0, 1.0, {0.5: 0.005})  # one reading: the flow's own, not a rekey
    assert rekey.stalled_s(short_times, short_counts) == 0.0
    assert rekey.stalled_s([0.0, 0.1], [0, 10]) is None
    assert rekey.stall_per_rekey(0.3, 0) is None and rekey.stall_per_rekey(None, 3) is None


def _trial(combo: Combination, mib_s: float, rep: int = 0, size: int = 320 * MIB, **rekeys) -> Trial:
    t = Trial(combo, TrialKind.TRANSFER, rep, False, size, 0.0, exit_status=0, valid=True, wall_s=1.0)
    t.data_s, t.data_clock = size / MIB / mib_s, STEADY_STATE
    for key, value in rekeys.items():
        setattr(t, key, value)
    return t


def test_a_trials_rate_counts_the_rekeys_its_payload_meets_in_a_long_transfer():
    t = _trial(CHACHA, 500.0, rekeys=0, rekey_every_bytes=GIB, rekey_stall_s=0.1)
    assert t.rekey_s == pytest.approx(320 / 1024 * 0.1)  # a third of a rekey per 320 MiB
    assert t.steady_mib_s == pytest.approx(500.0)
    assert t.mib_s == pytest.approx(320 / (0.64 + 0.03125))
    assert rekey.loss(500.0, GIB, 0.1) == pytest.approx(t.rekey_s / (t.data_s + t.rekey_s))
    # a connection that rekeyed itself: its clock saw its own rekeys, nothing is added
    own = _trial(CHACHA, 500.0, rekeys=2, rekey_every_bytes=GIB, rekey_stall_s=0.1)
    assert own.rekey_s is None and own.mib_s == pytest.approx(500.0)
    # -P 2: each stream rekeys on its own half; compression: the wire's bytes count
    pair = _trial(Combination(CHACHA.cipher, IMPLICIT_MAC, CHACHA.kex, streams=2), 1000.0, rekey_every_bytes=GIB)
    pair.rekey_stall_s = 0.1
    assert pair.rekey_s == pytest.approx(160 / 1024 * 0.1)
    squeezed = _trial(CHACHA, 500.0, rekey_every_bytes=GIB, rekey_stall_s=0.1)
    squeezed.compressed_raw_bytes, squeezed.compressed_wire_bytes = 100, 25
    assert squeezed.rekey_s == pytest.approx(80 / 1024 * 0.1)
    plain = _trial(GCM, 800.0)
    assert plain.rekey_s is None and plain.mib_s == pytest.approx(800.0)
    assert {"rekeys", "rekey_every_bytes", "rekey_stall_s", "rekey_s"} <= set(t.to_json())


def test_the_row_says_how_often_what_one_cost_and_the_share_and_the_report_says_it():
    trials = [
        _trial(CHACHA, r, rep, rekeys=0, rekey_every_bytes=GIB, rekey_stall_s=0.1)
        for rep, r in enumerate((450, 460, 470))
    ]
    trials += [_trial(GCM, r, rep) for rep, r in enumerate((800, 820, 840))]
    by_cipher = {s.combination.cipher: s for s in summarise_transfers(trials)}
    chacha, gcm = by_cipher[CHACHA.cipher], by_cipher[GCM.cipher]
    assert chacha.rekey_every_bytes == GIB and chacha.rekey_stall_s == pytest.approx(0.1)
    assert chacha.rekey_share == pytest.approx(rekey.loss(460.0, GIB, 0.1), rel=1e-6)
    assert chacha.median_mib_s == pytest.approx(1 / (1 / 460 + 0.1 / 1024))
    assert gcm.rekey_every_bytes is None and gcm.rekey_share is None
    result = RunResult(settings=RunSettings(), trials=trials, run_id=1)
    result.combinations = [CHACHA, GCM]
    (line,) = [n for n in clock_notes(result) if "rekeys" in n]
    assert line == "chacha20-poly1305 rekeys every 1 GiB, 100 ms each: counted in its MiB/s (-4.3%)", line
    assert len("clock: " + line) <= 100  # a 100-column terminal: one line (the set-up line names the one kex)
    curve = Combination(CHACHA.cipher, IMPLICIT_MAC, "curve25519-sha256")
    swept = trials + [_trial(curve, 480, rep, rekeys=0, rekey_every_bytes=GIB, rekey_stall_s=0.01) for rep in range(3)]
    result.trials, result.combinations = swept, [CHACHA, GCM, curve]
    lines = [n for n in clock_notes(result) if "rekeys" in n]
    assert sorted(line.split(": ")[0] for line in lines) == [  # several kexes: each line names its own
        "chacha20-poly1305 rekeys every 1 GiB, 10 ms each with curve25519-sha256",
        "chacha20-poly1305 rekeys every 1 GiB, 100 ms each with sntrup761x25519-sha512",
    ]


def test_compare_says_when_one_run_counted_rekeys_and_the_other_did_not():
    old = RunResult(settings=RunSettings(), trials=[_trial(CHACHA, 480.0, r) for r in range(3)], run_id=1)
    new = RunResult(settings=RunSettings(), trials=[_trial(CHACHA, 460.0, r) for r in range(3)], run_id=2)
    for run in (old, new):
        run.environment.update(steady_omit_s=0.3, steady_window_capped=True)
    new.environment["rekeys_counted"] = True
    (line,) = clock_lines(compare_runs([old, new]))
    assert "rekeys in the rates differ (run 1: not counted, run 2: counted)" in line
    assert clock_lines(compare_runs([new, new])) == []


def test_ssh_v_counts_the_rekeys_of_a_recorded_connection():
    """Recorded: chacha20-poly1305 with `-o RekeyLimit=1M`, 3.5 MiB through a private sshd (OpenSSH 9.2p1)."""
    log = parse_ssh_log((DATA / "ssh-v-rekeys.txt").read_text())
    assert log.rekeys == 4 and log.negotiated.cipher == "chacha20-poly1305@openssh.com"
    plain = parse_ssh_log((DATA / "ssh-vv-aes128-ctr.txt").read_text())
    assert plain.rekeys == 0
    assert parse_ssh_log("").rekeys is None


def test_the_stall_is_kept_a_day_per_machine_versions_target_kex_and_link(tmp_path):
    from fakes import FakeRemote
    from sshbench.measure.rekey_probe import CACHE_MAX_AGE_S, StallCache, cache_key

    cache = StallCache(tmp_path / "rekey-stalls.json")
    target = FakeRemote()
    key = cache_key(CHACHA, target, "", "OpenSSH_9.2p1")
    assert cache.get(key, 1000.0) is None
    cache.put(key, {"stall_s": 0.1, "rekeys": 7, "measured_at": 1000.0})
    assert cache.get(key, 1000.0 + 60)["stall_s"] == 0.1
    assert cache.get(key, 1000.0 + CACHE_MAX_AGE_S + 1) is None  # a day old: measured again
    assert cache.get(key, 900.0) is None  # from the future: a clock moved
    other_kex = Combination(CHACHA.cipher, IMPLICIT_MAC, "curve25519-sha256")
    assert cache_key(other_kex, target, "", "OpenSSH_9.2p1") != key
    assert cache_key(Combination(CHACHA.cipher, IMPLICIT_MAC, CHACHA.kex, link="wan100m"), target, "", None) != key
    assert cache_key(CHACHA, target, "", "OpenSSH_10.0p2") != key
    (tmp_path / "rekey-stalls.json").write_text("not json")
    assert StallCache(tmp_path / "rekey-stalls.json").get(key, 1000.0) is None
