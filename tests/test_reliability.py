"""The faults a busy machine brings (docs/reliability.md), their pure parts: a pause seen around a trial, other
processes' CPU read around it and the rounds it disturbed, the machine's measurement lock, the file a run writes when
its store fails, and the runner measuring a paused trial again. The real processes are in test_reliability_e2e.py."""

from __future__ import annotations

import json
import os
import signal

import pytest

from fakes import FakeClock, MadeUpRates, fake_parts
from sshbench.errors import UsageError
from sshbench.host import measuring, neighbours, pauses
from sshbench.measure.runner import Runner
from sshbench.measure.spec import RunSpec
from sshbench.model.disturbed import disturbed_line, disturbed_rounds
from sshbench.results import Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.store.document import result_from_document
from sshbench.store.unsaved import UnsavedRun, light_document

GCM, CHACHA = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"


# -- a pause around a trial ------------------------------------------------------------------------------------------


def test_a_sigcont_received_during_a_trial_makes_it_paused():
    pauses.watch_continues()
    watch = pauses.PauseWatch.start()
    assert watch.reason() is None
    os.kill(
        os.getpid(), signal.SIGCONT
    )  # what `kill -CONT` after a SIGSTOP delivers (the stop itself cannot be caught)
    reason = watch.reason()
    assert pauses.paused(reason) and "SIGSTOP/SIGCONT" in (reason or ""), reason
    assert pauses.PauseWatch.start().reason() is None  # the next trial starts clean


def test_a_gap_in_the_progress_samples_makes_a_trial_paused_and_a_busy_sampler_does_not():
    watch = pauses.PauseWatch.start()
    steady = [i * 0.02 for i in range(50)]
    assert watch.reason(steady) is None
    late = [*steady, 1.0 + 0.3]  # a scheduling delay of 0.3 s: no pause
    assert watch.reason(late) is None
    stopped = [*steady, steady[-1] + pauses.SAMPLE_GAP_S + 4.0]  # 5 s without a sample: the process was stopped
    reason = watch.reason(stopped)
    assert pauses.paused(reason) and "stopped for 5.0 s" in (reason or ""), reason


def test_a_clock_step_or_a_suspend_makes_a_trial_paused(monkeypatch):
    watch = pauses.PauseWatch.start()
    real_time = pauses.time.time
    monkeypatch.setattr(pauses.time, "time", lambda: real_time() + 3600.0)  # the wall clock stepped an hour
    assert "clock stepped by +3600" in (watch.reason() or "")
    monkeypatch.setattr(pauses.time, "time", real_time)
    real_clock = pauses.time.clock_gettime
    monkeypatch.setattr(
        pauses.time,
        "clock_gettime",
        lambda which: real_clock(which) + (30.0 if which == pauses.time.CLOCK_BOOTTIME else 0.0),
    )
    assert "suspended for 30" in (watch.reason() or "")


def test_only_the_pause_reasons_count_as_paused():
    assert not pauses.paused(None)
    assert not pauses.paused("timed out after 60 s")
    assert pauses.paused(f"{pauses.PAUSED}: anything")


# -- the runner measures a paused trial again -------------------------------------------------------------------------


def _settings(**options) -> RunSettings:
    defaults = dict(ciphers=f"{GCM},{CHACHA}", runs=3, adaptive=False, baselines=False, why="off", size=8 << 20, seed=3)
    return RunSettings(**{**defaults, **options})  # type: ignore[arg-type]


@pytest.mark.fast
def test_a_paused_trial_is_measured_again_at_once_and_never_ranked():
    rates = MadeUpRates(per_cipher={GCM: 900.0, CHACHA: 500.0})
    clean, _ = fake_parts(rates)
    without = Runner(RunSpec.check(_settings()), parts=clean).run()
    parts, state = fake_parts(rates, clock=FakeClock(), paused_at=frozenset({8}))
    result = Runner(RunSpec.check(_settings()), parts=parts).run()
    assert result.status == "complete" and result.exit_code == 0, result.error
    paused = [t for t in result.trials if pauses.paused(t.invalid_reason)]
    assert len(paused) == 1, [t.invalid_reason for t in result.trials if not t.valid]
    again = state["executors"].started
    assert again[8] == again[9]  # the same scheduled trial, run again at once
    measured = [t for t in result.trials if t.valid and not t.warmup and t.kind == TrialKind.TRANSFER]
    reference = [t for t in without.trials if t.valid and not t.warmup and t.kind == TrialKind.TRANSFER]
    assert len(measured) == len(reference)  # every round keeps its trial
    assert [t.combination for t in measured] == [t.combination for t in reference]


@pytest.mark.fast
def test_a_machine_that_keeps_pausing_leaves_the_trial_invalid_after_a_few_tries():
    from sshbench.measure.rounds import PAUSED_AGAIN

    rates = MadeUpRates(per_cipher={GCM: 900.0, CHACHA: 500.0})
    parts, state = fake_parts(rates, paused_at=frozenset(range(8, 8 + PAUSED_AGAIN + 1)))
    result = Runner(RunSpec.check(_settings()), parts=parts).run()
    paused = [t for t in result.trials if pauses.paused(t.invalid_reason)]
    assert len(paused) == PAUSED_AGAIN + 1  # the first try and its retries, then the run went on
    assert len(set(map(id, state["executors"].started[8 : 8 + PAUSED_AGAIN + 1]))) == 1  # one scheduled trial
    assert result.status == "complete"


# -- other processes' CPU around a trial ----------------------------------------------------------------------------


def _snapshot(at: float, **processes: tuple[str, int, int]) -> neighbours.CpuSnapshot:
    """pid=(comm, ppid, ticks) as keyword arguments p<pid>."""
    return neighbours.CpuSnapshot(
        at, {int(k[1:]): neighbours._Process(comm, ppid, ticks) for k, (comm, ppid, ticks) in processes.items()}
    )


def test_other_processes_cpu_is_counted_and_ours_and_the_kernels_are_not():
    ticks = os.sysconf("SC_CLK_TCK")
    before = _snapshot(0.0, p100=("sshbench", 1, 0), p101=("ssh", 100, 0), p200=("cc1", 1, 0), p3=("ksoftirqd", 2, 0))
    after = _snapshot(
        2.0,
        p100=("sshbench", 1, 2 * ticks),
        p101=("ssh", 100, 2 * ticks),  # ours: a child of sshbench
        p102=("sshd", 101, ticks),  # ours: a grandchild, started meanwhile
        p200=("cc1", 1, ticks),  # another process: half a core over 2 s
        p3=("ksoftirqd", 2, 2 * ticks),  # a kernel thread: loopback's packets, ours
    )
    found = neighbours.between(before, after, me=100)
    assert found is not None and found.cores == pytest.approx(0.5)
    assert found.busiest is not None and found.busiest.startswith("cc1 (pid 200") and "0.50 core" in found.busiest


def test_a_process_that_reused_a_pid_counts_from_its_own_start():
    ticks = os.sysconf("SC_CLK_TCK")
    before = _snapshot(0.0, p300=("old", 1, 50 * ticks))
    after = _snapshot(1.0, p300=("new", 1, ticks))
    found = neighbours.between(before, after, me=1)
    assert found is not None and found.cores == pytest.approx(1.0)


def test_another_sshbench_measurement_is_named_as_such(tmp_path):
    assert neighbours.describe(os.getpid(), "python").startswith("python (pid")
    # this very process's command line has no `sshbench run`; a real one is in test_reliability_e2e.py
    assert "another sshbench measurement" not in neighbours.describe(os.getpid(), "python")


def _trial(repetition: int, others: float | None, busiest: str | None = None, warmup: bool = False) -> Trial:
    return Trial(
        combination=Combination(GCM, "implicit", "curve25519-sha256"),
        kind=TrialKind.TRANSFER,
        repetition=repetition,
        warmup=warmup,
        payload_bytes=1,
        started_at=0.0,
        others_cores=others,
        others_busiest=busiest,
    )


def test_the_disturbed_rounds_name_the_busiest_process_of_the_worst_trial():
    trials = [
        _trial(0, 0.02),
        _trial(0, 0.9, "cc1 (pid 7) 0.90 core", warmup=True),  # a warm-up is not a round
        _trial(1, 0.3, "make (pid 8) 0.30 core"),
        _trial(2, 0.01),
        _trial(3, 0.97, "another sshbench measurement (pid 9) 0.97 core"),
        _trial(3, 0.5, "cc1 (pid 7) 0.50 core"),
        _trial(4, None),
    ]
    rounds = disturbed_rounds(trials)
    assert [(r.round, r.trials) for r in rounds] == [(2, 1), (4, 2)]
    line = disturbed_line(rounds)
    assert line == "disturbed: rounds 2, 4 (3 trial(s)) by another sshbench measurement (pid 9) 0.97 core"
    assert disturbed_line([]) is None


# -- the machine's measurement lock ----------------------------------------------------------------------------------


def test_a_second_measurement_refuses_with_no_wait_and_names_the_first(tmp_path, monkeypatch):
    monkeypatch.setenv("SSHBENCH_LOCK", str(tmp_path / "measuring.lock"))
    with (
        measuring.one_measurement("run"),
        pytest.raises(UsageError, match=r"another measurement is running on this machine \(pid \d+, `sshbench run`"),
        measuring.one_measurement("check", wait=False),
    ):
        pass
    with measuring.one_measurement("check", wait=False):  # free again once the first ended
        pass


def test_a_waiting_measurement_says_so_and_gives_up_at_its_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("SSHBENCH_LOCK", str(tmp_path / "measuring.lock"))
    monkeypatch.setattr(measuring.time, "sleep", lambda _s: None)
    ticks = iter(range(1000))
    said: list[str] = []
    gave_up = pytest.raises(UsageError, match="still ran after 5 s of waiting")
    waiting = measuring.one_measurement("run", say=said.append, limit_s=5, clock=lambda: float(next(ticks)))
    with measuring.one_measurement("run"), gave_up, waiting:
        pass
    assert len(said) == 1 and said[0].startswith("waiting for another measurement on this machine to end (pid")


def test_the_lock_is_machine_wide_by_default(monkeypatch):
    monkeypatch.delenv("SSHBENCH_LOCK", raising=False)
    monkeypatch.setenv("TMPDIR", "/somewhere/else")  # a fleet host's run sets its own TMPDIR: the lock stays put
    assert measuring.lock_path().name == measuring.LOCK_NAME
    assert str(measuring.lock_path().parent) in ("/run/lock", "/tmp")


def test_a_symlinked_lock_is_refused_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / "measuring.lock").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setenv("SSHBENCH_LOCK", str(tmp_path / "measuring.lock"))
    from sshbench.errors import RunError

    with pytest.raises(RunError, match="is a symlink"), measuring.one_measurement("run"):
        pass


# -- the file a run writes when its store fails ----------------------------------------------------------------------


def _result(trials: int) -> RunResult:
    result = RunResult(settings=_settings(), environment={"hostname": "h"}, status="running", started_at=1.7e9)
    result.combinations = [Combination(GCM, "implicit", "curve25519-sha256")]
    result.trials = [_trial(i, 0.0) for i in range(trials)]
    return result


def test_the_unsaved_file_goes_to_the_next_place_that_takes_it_and_imports_whole(tmp_path):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")  # the store's directory cannot hold a file: the next place takes it
    unsaved = UnsavedRun(blocked / "results.db", "database or disk is full")
    unsaved.candidates = [blocked / "x.json", tmp_path / "second" / "x.json", tmp_path / "third.json"]
    result = _result(5)
    path = unsaved.save(result)
    assert path == tmp_path / "second" / "x.json", unsaved.last_error
    doc = json.loads(path.read_text())
    assert doc["status"] == "interrupted" and len(doc["trials"]) == 5  # a run still going reads as interrupted
    back = result_from_document(doc, str(path))
    assert len(back.trials) == 5 and back.combinations == result.combinations
    assert light_document(result)["trials"] == doc["trials"]


def test_no_place_at_all_is_said_and_nothing_raised(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    unsaved = UnsavedRun(blocked / "results.db", "full")
    unsaved.candidates = [blocked / "a.json", blocked / "b.json"]
    assert unsaved.save(_result(1)) is None and unsaved.last_error is not None
