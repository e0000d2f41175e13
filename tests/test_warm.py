"""Warm sessions (sshbench.measure.warm; `run` unless --no-warm): bursts in one kept connection per row, on a real sshd."""

from __future__ import annotations

import json
import os
import signal
import statistics
from pathlib import Path

import pytest

from conftest import pids_whose_cmdline_has, run_cli, sshbench_temp_dirs, start_cli, wait_for_line, wait_until
from sshbench.host import placement
from sshbench.host.cleanup import Cleanup
from sshbench.measure import steady
from sshbench.measure.trial import RunningProcess, algorithm_options, run_trial
from sshbench.measure.warm import READER, WarmSession, WarmSessions
from sshbench.model.intervals import paired_ratio_ci
from sshbench.results import IMPLICIT_MAC, STEADY_STATE, Combination, Trial, TrialKind
from sshbench.targets import PrivateOpenSSH
from sshbench.tools.pipe import PipeTool
from sshbench.units import MIB

# `timed` (run alone by `make test`): the tests that time bursts against fresh trials' rates, or count every
# session's reader on the machine. The rest run with the others.


def _session(target: PrivateOpenSSH, payload, tmp_path, index: int = 0) -> WarmSession:
    combo = Combination("aes128-ctr", "hmac-sha2-256", target.client_algorithms().default_kex[0])
    argv = [*target.client_prefix(), "ssh", *target.client_options(), *algorithm_options(combo), "-v",
            *target.destination(), READER]  # fmt: skip
    return WarmSession(
        argv=argv,
        combo=combo,
        payload=payload,
        workdir=tmp_path,
        index=index,
        env=None,
        server_pid=target.server_pid(),
        setup_kex=None,
        max_window_s=0.25,
    )


def _fresh_trial(target: PrivateOpenSSH, payload, tmp_path, size: int, repetition: int) -> Trial:
    """A trial on a fresh connection of the session's combination, timed by the same clock and window length."""
    return run_trial(
        ssh="ssh",
        target=target,
        tool=PipeTool(),
        combo=Combination("aes128-ctr", "hmac-sha2-256", target.client_algorithms().default_kex[0]),
        kind=TrialKind.TRANSFER,
        repetition=repetition,
        warmup=False,
        payload=payload,
        payload_bytes=size,
        workdir=tmp_path,
        timeout_s=60,
        max_steady_window_s=0.25,
    )


@pytest.mark.timed  # bursts against fresh trials' rates
def test_bursts_in_one_connection_are_timed_and_every_byte_is_counted_at_its_end(tmp_path):
    """Three bursts, each followed by a fresh connection's trial (stopped, the session moves nothing meanwhile): a
    burst reads what a fresh trial reads (bench/warm.py: 1.01-1.11 on average), paired by round as a run pairs its
    rows, so that a busy minute slows both sides of a pair alike. A factor of two either way is a broken clock or
    byte count, not this machine's noise."""
    payload = tmp_path / "payload"  # zeros (no compression: the bytes do not matter), sparse: nothing written
    payload.touch()
    os.truncate(payload, 1024 * MIB)
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.placement = placement.choose(True, 1)[0]  # ssh and sshd on CPUs of their own, as a run places them
        target.start(cleanup)
        session = _session(target, payload, tmp_path)
        assert session.broken is None, session.broken
        assert session.negotiated.cipher == "aes128-ctr" and session.negotiated.mac == "hmac-sha2-256"
        bursts: list[Trial] = []
        fresh: list[Trial] = []
        fresh_payload = tmp_path / "fresh-payload"  # a trial sends its whole file: sized from the first burst
        for repetition in (1, 2, 3):
            bursts.append(session.burst(repetition))
            if not fresh_payload.exists():  # a data phase of ~1 s at least: the omitted start, the window and room
                fresh_payload.touch()  # (a first burst read 178 MiB/s where the next ones read 330-350)
                mib = max(256, int((bursts[0].mib_s or 0.0) * (steady.OMIT_S + 0.9)))
                os.truncate(fresh_payload, min(mib, 1024) * MIB)
            size = fresh_payload.stat().st_size
            fresh.append(_fresh_trial(target, fresh_payload, tmp_path, size, repetition))
        for index, burst in enumerate(bursts):
            assert burst.valid, burst.invalid_reason
            assert burst.warm_burst == index and burst.kind == TrialKind.TRANSFER
            assert burst.data_clock == STEADY_STATE, burst.steady_note
            # the bytes ssh read in the burst: the clock's stretch at a real rate (not the file: it ends early)
            assert 2 * MIB < burst.payload_bytes < 1024 * MIB
            assert burst.mib_s and burst.mib_s > 5 and burst.steady_window_s
            assert burst.client_cpu_s and burst.client_cpu_s > 0 and burst.client_steady_cpu_s is not None
            assert burst.server_cpu_s and burst.server_cpu_s > 0 and burst.server_cpu_scope == "data-phase"
            assert burst.tcp_wire_bytes and burst.tcp_wire_bytes > 0.9 * burst.payload_bytes
        assert session.close() is None  # the remote dd counted every byte ssh read, over the three and the cold one
        assert session.proc.returncode == 0
        for trial in fresh:
            assert trial.valid and trial.data_clock == STEADY_STATE, (trial.invalid_reason, trial.steady_note)
        paired = paired_ratio_ci(
            {b.repetition: b.mib_s or 0.0 for b in bursts}, {t.repetition: t.mib_s or 0.0 for t in fresh}
        )
        assert paired.n_pairs == 3 and 0.5 < paired.ratio < 2.0, (
            paired,
            [(b.mib_s, t.mib_s) for b, t in zip(bursts, fresh)],
        )
    finally:
        RunningProcess.kill_all()  # a session left open by a failed assertion (the run's own finally does this)
        cleanup.close()


def test_a_session_whose_ssh_died_makes_its_bursts_invalid_and_says_why(tmp_path):
    payload = tmp_path / "payload"
    payload.write_bytes(os.urandom(64 * MIB))
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        session = _session(target, payload, tmp_path)
        first = session.burst(1)
        assert first.valid, first.invalid_reason
        os.kill(session.proc.pid, signal.SIGKILL)
        session.proc.wait(timeout=10)
        after = session.burst(2)
        assert not after.valid and "the warm session's ssh exited with status -9" in (after.invalid_reason or "")
        assert session.close() == after.invalid_reason
    finally:
        RunningProcess.kill_all()
        cleanup.close()


class _FailingSession:
    def __init__(self, why: str | None) -> None:
        self.why = why

    def burst(self, repetition: int) -> Trial:
        trial = Trial(Combination("a", IMPLICIT_MAC, "k"), TrialKind.TRANSFER, repetition, False, MIB, 0.0)
        trial.valid, trial.warm_burst = True, repetition
        return trial

    def close(self) -> str | None:
        return self.why


def test_a_failed_end_check_makes_every_burst_of_that_session_invalid_with_one_line():
    sessions = WarmSessions()
    bad, good = Combination("a", IMPLICIT_MAC, "k"), Combination("b", IMPLICIT_MAC, "k")
    reason = "the warm session's reader counted 5 of the 7 bytes ssh read"
    opened: list[int] = []

    def open_session(combo: Combination, index: int) -> _FailingSession:
        opened.append(index)
        return _FailingSession(reason if combo == bad else None)

    sessions.open_all([bad, good, bad], open_session)  # type: ignore[arg-type]
    sessions.open_all([good], open_session)  # type: ignore[arg-type]  # open already: nothing more
    assert sorted(opened) == [0, 1]
    bad_trials = [sessions.burst(bad, r) for r in (1, 2)]
    good_trial = sessions.burst(good, 1)
    lines = sessions.close_all()
    assert lines == [f"warm session {bad.label}: {reason} (2 burst(s) not counted)"]
    assert all(not t.valid and t.invalid_reason == reason for t in bad_trials)
    assert good_trial.valid and not sessions.sessions


@pytest.mark.timed  # it counts every session's reader on the machine
def test_run_times_the_rounds_after_the_first_as_bursts_and_leaves_nothing(tmp_path):
    before = sshbench_temp_dirs()
    out = tmp_path / "r.json"
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-gcm@openssh.com,aes128-ctr",
        "--macs",
        "hmac-sha2-256",
        "--runs",
        "3",
        "--seconds",
        "0.25",
        "--no-baselines",
        "--no-reference",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    measured = [t for t in doc["trials"] if t["kind"] == "transfer" and not t["warmup"] and t["repetition"] >= 0]
    plain = [t for t in measured if t["warm_burst"] is None]
    bursts = [t for t in measured if t["warm_burst"] is not None]
    assert {t["repetition"] for t in bursts} == {1, 2} and len(bursts) == 4, [
        (t["cipher"], t["repetition"], t["warm_burst"]) for t in measured
    ]
    assert all(t["repetition"] == 0 for t in plain if t["payload_bytes"] > 0 and t["valid"])
    for t in bursts:
        assert t["valid"], t["invalid_reason"]
        assert t["data_clock"] == STEADY_STATE and t["negotiated"]["cipher"] == t["cipher"]
        # no set-up in a burst's wall time: no whole data phase, start-up or wall-minus-handshake of its own
        assert t["whole_data_s"] is None and t["startup_s"] is None and t["wall_minus_handshake_s"] is None, t
    assert "rounds after its first are bursts in it" in done.stdout, done.stdout  # the header says how
    for row in doc["summaries"]:  # the start-up is the fresh connections' (the row's first round), not the bursts'
        fresh_startups = [t["startup_s"] for t in plain if t["cipher"] == row["cipher"] and t["startup_s"] is not None]
        expected = statistics.median(fresh_startups) if fresh_startups else None
        assert row["median_startup_s"] == (pytest.approx(expected) if expected is not None else None), row
    assert doc["environment"]["warm_sessions"] == {"sessions": 2, "bursts": 4, "valid_bursts": 4, "omit_s": 0.1}
    # A burst's rate against a fresh connection's is compared paired, round by round, in the test above (here the
    # fresh trials are the first round and the bursts the later ones: a busy minute between them moves one side
    # only). Here: every burst timed a whole window of the run's length (--seconds 0.25 caps it), which a session
    # whose file ran out early did not (0.10-0.14 s windows before the file was sized from the rows' payloads).
    for t in bursts:
        assert 0.8 * 0.25 <= t["steady_window_s"] <= 0.25 + 1e-9, t
    left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes() for pid in pids_whose_cmdline_has(READER)}
    assert not left, left  # every session's ssh ended, and its remote reader
    assert sshbench_temp_dirs() == before


def test_compare_says_when_one_run_timed_bursts_and_the_other_a_connection_per_trial():
    from sshbench.answers.compare import clock_lines, compare_runs
    from sshbench.results import RunResult
    from sshbench.settings import RunSettings

    combo = Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256")

    def trials(warm: bool) -> list[Trial]:
        out = []
        for repetition in range(3):
            trial = Trial(combo, TrialKind.TRANSFER, repetition, False, 256 * MIB, 0.0, valid=True)
            trial.data_s, trial.data_clock = 0.5, STEADY_STATE
            trial.warm_burst = repetition - 1 if warm and repetition else None
            out.append(trial)
        return out

    plain = RunResult(settings=RunSettings(), trials=trials(False), run_id=1)
    warm = RunResult(settings=RunSettings(), trials=trials(True), run_id=2)
    for run in (plain, warm):
        run.environment.update(steady_omit_s=0.3, steady_window_capped=True, rekeys_counted=True)
    (line,) = clock_lines(compare_runs([plain, warm]))
    assert "(run 1: a connection per trial, run 2: bursts in kept connections)" in line
    assert clock_lines(compare_runs([warm, warm])) == []


@pytest.mark.timed  # it counts every session's reader on the machine
def test_sessions_a_kill_9_left_stopped_are_ended_by_the_next_run():
    """A stopped ssh never ends by itself (its server's end going away reaches it only once continued): the run
    record names every session's client, and the next run stops them."""
    proc = start_cli("run", "--ciphers", "aes128-ctr,aes128-gcm@openssh.com", "--macs", "hmac-sha2-256", "--runs", "3",
                     "--seconds", "0.25", "--no-baselines", "--no-reference", "-v")  # fmt: skip
    try:
        wait_for_line(proc.stderr, "burst 1")
        proc.kill()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    wait_until(lambda: bool(pids_whose_cmdline_has("ssh ", READER)), 5, "the killed run's sessions still there")
    after = run_cli("run", "--ciphers", "aes128-ctr", "--size", "1M", "--runs", "1", "--no-baselines")
    assert after.returncode == 0, after.stderr
    assert "removed leftovers of an earlier run that was killed" in after.stderr, after.stderr
    wait_until(lambda: not pids_whose_cmdline_has(READER), 10, "the sessions gone")
