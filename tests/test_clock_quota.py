"""The data clock and the server's cores under --server-cpu, on constructed trials (no ssh): a reader that
timed under half of the payload gives way to wall minus handshake, calibration sizes past one channel
window, and the server's CPU is divided by the window it was measured over (the reader's own clock)."""

from __future__ import annotations

from sshbench.baselines.analysis import _cpu_cores, _sink_cores
from sshbench.measure import clock
from sshbench.measure.calibration import Calibration
from sshbench.measure.payload import LADDER, MIN_SIZE, size_at_least
from sshbench.results import Combination, Negotiated, Trial
from sshbench.settings import RunSettings
from sshbench.units import MIB

COMBO = Combination("3des-cbc", "umac-64-etm@openssh.com", "sntrup761x25519-sha512")
WINDOW = 2_168_000  # what arrived before the reader started, as measured: one channel window and a bit


def _handshake(wall_s: float) -> Trial:
    return Trial(COMBO, "handshake", 0, False, 0, 1.0, exit_status=0, valid=True, wall_s=wall_s)


def _upload(payload: int, reader_s: float, wall_s: float, before: int = WINDOW) -> Trial:
    trial = Trial(
        COMBO,
        "transfer",
        0,
        False,
        payload,
        1.0,
        exit_status=0,
        valid=True,
        negotiated=Negotiated("3des-cbc", "umac-64-etm@openssh.com", "sntrup761x25519-sha512", "none"),
        wall_s=wall_s,
        tcp_wire_bytes=payload + 5_000,
        tcp_bytes_before_clock=before,
        server_cpu_s=0.09 * reader_s,
        server_sink_cpu_s=0.01 * reader_s,
    )
    clock.set_reader_clock(trial, reader_s)
    return trial


def test_a_reader_that_timed_under_half_gives_way_under_a_quota() -> None:
    # As measured: 2 MiB of 3des-cbc at 0.1 core, all of it inside sshd before dd started: 1.6 ms.
    short = _upload(2 * MIB, reader_s=0.0016, wall_s=3.0, before=2 * MIB + 5_000)
    assert clock.reader_timed_too_little(short) and short.reader_s == 0.0016
    trials = [_handshake(1.35), short]
    clock.provisional_wall_clock(short, trials, slow_server=True)
    assert short.data_clock == clock.WALL_MINUS_HANDSHAKE and abs(short.data_s - 1.65) < 1e-9
    assert short.reader_s == 0.0016  # kept: the window of the server's CPU figures

    # Most of the payload timed: the reader (scaled) stays the clock.
    long = _upload(8 * MIB, reader_s=3.8, wall_s=7.0)
    assert not clock.reader_timed_too_little(long)
    clock.provisional_wall_clock(long, trials, slow_server=True)
    assert long.data_clock == clock.SERVER_READER and long.data_s > 3.8

    # Without a quota the reader is left alone (loopback moves the window in milliseconds).
    plain = _upload(2 * MIB, reader_s=0.0016, wall_s=3.0, before=2 * MIB + 5_000)
    clock.provisional_wall_clock(plain, trials)
    assert plain.data_clock == clock.SERVER_READER


def test_cross_check_under_a_quota_and_without_a_handshake_yet() -> None:
    short = _upload(2 * MIB, reader_s=0.0016, wall_s=3.0, before=2 * MIB + 5_000)
    clock.provisional_wall_clock(short, [short], slow_server=True)  # no handshake measured yet: no rate
    assert short.data_s is None and short.mib_s is None
    clock.cross_check([_handshake(1.3), _handshake(1.4), short], slow_server=True)
    assert short.data_clock == clock.WALL_MINUS_HANDSHAKE and abs(short.data_s - 1.65) < 1e-9
    untouched = _upload(2 * MIB, reader_s=0.0016, wall_s=3.0, before=2 * MIB + 5_000)
    clock.cross_check([_handshake(1.35), untouched], slow_server=True)
    assert untouched.data_clock == clock.WALL_MINUS_HANDSHAKE


def test_calibration_floor_is_the_ladder_size_past_twice_the_window() -> None:
    assert size_at_least(2 * WINDOW, 1 << 30) == 5 * MIB  # 4.1 MiB, rounded up to the ladder
    assert size_at_least(2 * WINDOW, 4 * MIB) == 4 * MIB  # --max-size wins
    assert size_at_least(1, 1 << 30) == MIN_SIZE
    assert size_at_least(LADDER[-1] * 2, LADDER[-1] * 4) == LADDER[-1]
    # A 3des-cbc probe at 0.1 core: ~2 MiB/s would size it 4 MiB for 0.5 s (+ the omitted start and the first
    # window, sshbench.measure.calibration); under the quota it moves 5 (the ladder size past twice the window).
    probe = _upload(16 * MIB, reader_s=8.0, wall_s=11.0)
    for server_cpu, size in ((0.1, 5 * MIB), (None, 4 * MIB)):
        sizes = {COMBO: 16 * MIB}
        calibration = Calibration([COMBO], RunSettings(seconds=0.5, server_cpu=server_cpu), sizes)
        assert probe.mib_s is not None and 1.5 < probe.mib_s < 2.5
        assert calibration.after_probe(COMBO, probe, 0) is False and sizes[COMBO] == size, (server_cpu, sizes)


def test_server_cores_divide_by_the_window_they_were_measured_over() -> None:
    # An 8 MiB upload whose reader ran 0.9 s after 2.1 MiB had arrived: data_s is ~1.2 s, but the
    # session's 0.09 x 0.9 s of CPU and the reader's 0.01 x 0.9 s belong to the 0.9 s.
    trial = _upload(8 * MIB, reader_s=0.9, wall_s=3.0)
    assert trial.data_s > 1.15
    _, server = _cpu_cores([trial], None)
    assert server is not None and abs(server - 0.09) < 1e-9
    sink = _sink_cores([trial])
    assert sink is not None and abs(sink - 0.01) < 1e-9
    # A trial without a reader (scp, sftp): its data phase.
    trial.reader_s = None
    _, server = _cpu_cores([trial], None)
    assert server is not None and server < 0.07
