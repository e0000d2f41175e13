"""The results store: trials survive kill -9, --resume finishes the run, bad databases get one line."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from conftest import run_cli, start_cli, wait_for_line
from sshbench.errors import RunError, UsageError
from sshbench.model import summary
from sshbench.results import Combination, Negotiated, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.store import default_path, open_store
from sshbench.store.schema import SCHEMA_VERSION

TWO_CIPHERS = ("--ciphers", "aes128-ctr,aes256-ctr", "--size", "1M", "--runs", "2", "--warmup", "1", "--no-baselines")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line_error(done, code: int, *needles: str) -> None:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sshbench: error:"), done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def _trial(rep: int, data_s: float = 0.01) -> Trial:
    return Trial(
        combination=Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256"),
        kind="transfer",
        repetition=rep,
        warmup=False,
        payload_bytes=1 << 20,
        started_at=1.0 + rep,
        exit_status=0,
        valid=True,
        negotiated=Negotiated("aes128-ctr", "hmac-sha2-256", "curve25519-sha256", "none"),
        wall_s=0.3,
        data_s=data_s,
        data_clock="server-reader",
        client_cpu_s=0.02,
        server_cpu_s=0.01,
    )


def test_path_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("SSHBENCH_DB", str(tmp_path / "env.db"))
    assert default_path() == tmp_path / "env.db"
    monkeypatch.delenv("SSHBENCH_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "sshbench" / "results.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "sshbench" / "results.db"
    with open_store(tmp_path / "explicit.db") as store:  # --db wins over everything
        assert store.path == tmp_path / "explicit.db"
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.execute("SELECT max(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION


def test_trials_round_trip_whole_and_are_committed_at_once(tmp_path):
    path = tmp_path / "r.db"
    store = open_store(path)
    result = RunResult(settings=RunSettings(size=1 << 20, runs=2))
    run_id = store.create_run(result)
    for rep in range(2):
        result.trials.append(_trial(rep, 0.01 * (rep + 1)))
        store.add_trial(run_id, rep, result.trials[-1])
    # Another connection sees both trials before the run is finished: nothing waits for the end.
    other = sqlite3.connect(path)
    assert other.execute("SELECT count(*) FROM trials").fetchone()[0] == 2
    other.close()
    loaded = open_store(path).load_result("latest")
    assert loaded.run_id == run_id and loaded.trials == result.trials
    assert loaded.settings == result.settings
    assert loaded.status == "running"  # this process owns it and is alive
    store.close()


def test_fields_added_to_run_result_later_round_trip(tmp_path):
    """RunResult fields without a column of their own (e.g. baselines) are kept in extra_json."""
    result = RunResult(settings=RunSettings(), environment={"hostname": "h"})
    result.baselines = {"enabled": True, "crypto": {"aes-128-ctr": {"mib_s": 7003.1}}, "notes": ["x"]}
    with open_store(tmp_path / "r.db") as store:
        store.create_run(result)
        result.status = "complete"
        store.finish_run(result)
        loaded = store.load_result("latest")
    assert loaded.baselines == result.baselines and loaded.status == "complete"


def test_unknown_run_and_bad_reference(tmp_path):
    with open_store(tmp_path / "r.db") as store:
        with pytest.raises(UsageError, match="no runs"):
            store.load_result("latest")
        store.create_run(RunResult(settings=RunSettings()))
        with pytest.raises(UsageError, match="no run 42"):
            store.load_result("42")
        with pytest.raises(UsageError, match="number or 'latest'"):
            store.load_result("first")
    open_store().close()  # the default store exists (a missing one is its own error)
    done = run_cli("report", "42")
    _one_line_error(done, 2, "no run 42")


def test_locked_database_gives_one_line_after_a_short_wait(tmp_path):
    path = tmp_path / "r.db"
    open_store(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with open_store(path, timeout_s=0.2) as store:
            assert store.list_runs() == []  # WAL: reading still works
            with pytest.raises(RunError, match="busy .*waited 0.2 s"):
                store.create_run(RunResult(settings=RunSettings()))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("kind", ["not-sqlite", "foreign-sqlite", "newer-schema"])
def test_database_that_is_not_ours_is_refused_untouched(tmp_path, kind):
    path = tmp_path / "other.db"
    if kind == "not-sqlite":
        path.write_text("name,value\nthis is a CSV file, not a database\n")
    elif kind == "foreign-sqlite":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
        db.commit()
        db.close()
    else:
        open_store(path).close()
        db = sqlite3.connect(path)
        db.execute("INSERT INTO schema_version VALUES (?, 0)", (SCHEMA_VERSION + 1,))
        db.commit()
        db.close()
    before = _digest(path)
    for argv in (
        ("runs", "--db", str(path)),
        ("report", "latest", "--db", str(path)),
        ("run", "--db", str(path), "--size", "1M", "--runs", "1"),
    ):
        done = run_cli(*argv)
        expected = {"not-sqlite": "not SQLite", "foreign-sqlite": "not sshbench's", "newer-schema": "newer sshbench"}[
            kind
        ]
        _one_line_error(done, 2, expected)
    assert _digest(path) == before


def test_kill_9_keeps_trials_and_resume_completes_the_run():
    proc = start_cli("run", *TWO_CIPHERS, "-v")
    try:
        # A fixed --size: no calibration, so the plan's length is known from the first line; kill after 4.
        line = wait_for_line(proc.stderr, "trial 4/")
        planned = int(line.split("/", 1)[1].split()[0])
        proc.kill()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    with open_store() as store:
        (run,) = store.list_runs()
        assert run.status == "interrupted"  # still 'running' in the row; its owner is dead
        killed = store.load_result(run.id)
    assert 4 <= len(killed.trials) < planned, "everything up to the kill is stored, the run was not finished"
    assert killed.environment.get("client_ssh_version") and len(killed.combinations) == 2
    listed = run_cli("runs")
    assert listed.returncode == 0 and f"{run.id}" in listed.stdout and "interrupted" in listed.stdout

    resumed = run_cli("run", "--resume", str(run.id), "-v", "--wide")  # output options are allowed
    assert resumed.returncode == 0, resumed.stderr
    total = planned - len(killed.trials)  # only the missing trials are measured
    assert f"trial {total}/{total}" in resumed.stderr and f"trial {total + 1}/" not in resumed.stderr
    with open_store() as store:
        done = store.load_result(run.id)
    assert done.status == "complete" and done.started_at == killed.started_at
    # The stored trials are kept as they were (the end-of-run cross-check only adds fields to them).
    assert [t.started_at for t in done.trials[: len(killed.trials)]] == [t.started_at for t in killed.trials]
    keys = [(t.combination, t.kind, t.repetition, t.warmup) for t in done.trials]
    assert len(keys) == len(set(keys)) == planned, "no trial measured twice, none missing"
    summaries = summary.summaries(done)
    assert len(summaries) == 2 and all(s.valid_trials == 2 for s in summaries)
    # The final table of the resumed command is over all trials.
    assert "2/2" in resumed.stdout

    again = run_cli("run", "--resume", str(run.id))
    _one_line_error(again, 2, "complete")


def test_resume_refuses_a_changed_environment_and_extra_options():
    first = run_cli("run", "--ciphers", "aes128-ctr", "--size", "1M", "--runs", "1", "--warmup", "0", "--no-baselines")
    assert first.returncode == 0, first.stderr
    with open_store() as store:
        run_id = store.resolve("latest")
        env = store.load_result(run_id).environment
        env["client_ssh_version"] = "OpenSSH_6.7p1"  # as if measured with another client
        # Make it look killed half-way: resumable.
        store.db.execute(
            "UPDATE runs SET environment_json = ?, status = 'interrupted' WHERE id = ?", (json.dumps(env), run_id)
        )
        trials_before = len(store.load_result(run_id).trials)
    done = run_cli("run", "--resume", str(run_id))
    assert done.returncode == 1, done.stderr
    assert "cannot resume: the environment changed (client_ssh_version 'OpenSSH_6.7p1'" in done.stderr
    assert "Traceback" not in done.stderr
    with open_store() as store:
        after = store.load_result(run_id)
    assert after.status == "interrupted" and len(after.trials) == trials_before

    extra = run_cli("run", "--resume", str(run_id), "--ciphers", "aes256-ctr")
    _one_line_error(extra, 2, "drop --ciphers")
    unknown = run_cli("run", "--resume", "99")
    _one_line_error(unknown, 2, "no run 99")


def test_unwritable_database_directory_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = run_cli("runs", "--db", str(blocker / "sub" / "results.db"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert os.path.isfile(blocker)


def test_resume_schedule_skips_stored_trials_and_reuses_calibrated_sizes():
    from sshbench.measure.payload import size_for_rate
    from sshbench.measure.plan import schedule
    from sshbench.store import resume

    a = Combination("aes128-ctr", "hmac-sha2-256", "k")
    b = Combination("aes256-ctr", "hmac-sha2-256", "k")
    plan = schedule([a, b], [a], runs=2, warmup=1, calibrate=True)
    probe = Trial(
        combination=a,
        kind="transfer",
        repetition=0,
        warmup=True,
        payload_bytes=4 << 20,
        started_at=1.0,
        valid=True,
        data_s=0.01,
    )  # 400 MiB/s
    measured = Trial(
        combination=b,
        kind="transfer",
        repetition=0,
        warmup=False,
        payload_bytes=64 << 20,
        started_at=2.0,
        valid=False,
        invalid_reason="x",
    )  # invalid still counts as measured
    left = resume.remaining(plan, [probe, measured])
    assert len(left) == len(plan) - 2
    assert all(
        (i.combination, i.kind, i.repetition, i.warmup) not in {(a, "transfer", 0, True), (b, "transfer", 0, False)}
        for i in left
    )
    settings = RunSettings(seconds=1.0)
    sizes = resume.calibrated_sizes([a, b], [probe, measured], settings)
    assert sizes == {a: size_for_rate(400.0, 1.0, settings.max_size), b: 64 << 20}
    assert resume.calibrated_sizes([a], [probe], RunSettings(size=1 << 20)) == {}  # fixed size: nothing to reuse


@pytest.mark.fast
def test_runs_listing_names_every_axis_a_run_swept() -> None:
    """`sshbench runs` showed a --link sweep as one cipher (issue 28): every axis of Combination that varied is named."""
    from sshbench.store.listing import swept

    base = Combination("aes128-ctr", "umac-64-etm@openssh.com", "curve25519-sha256")
    links = [base, Combination(base.cipher, base.mac, base.kex, link="lan100m")]
    assert swept(links) == "2 links; cipher aes128-ctr, MAC umac-64-etm@openssh.com, kex curve25519-sha256"
    mixed = [base, Combination(base.cipher, base.mac, base.kex, server="dropbear", sink="tmpfs", payload="zero")]
    assert swept(mixed).startswith("2 sinks x 2 payloads x 2 servers;")
