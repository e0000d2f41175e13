"""`sshbench latency`: the command end to end on the private sshd (loopback) and over an emulated link."""

import json

import pytest

from conftest import run_cli
from sshbench.cli.latency import connect_summary
from sshbench.links import LINKS, parse_links
from sshbench.links.namespaces import missing_requirement

CIPHERS = "aes128-gcm@openssh.com,aes128-ctr"


def test_connect_summary():
    assert connect_summary([]) == {"median_ms": None, "min_ms": None, "max_ms": None, "n": 0}
    s = connect_summary([0.1, 0.3, 0.2])
    assert s["n"] == 3 and s["median_ms"] == pytest.approx(200) and s["min_ms"] == pytest.approx(100)
    assert s["max_ms"] == pytest.approx(300)


def test_latency_on_loopback_per_cipher_table_and_json(tmp_path):
    out = tmp_path / "lat.json"
    done = run_cli("latency", "--ciphers", CIPHERS, "--chars", "50", "--connects", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "Keystroke echo" in done.stdout and "aes128-ctr" in done.stdout and "│     50 │" in done.stdout
    doc = json.loads(out.read_text())
    assert doc["command"] == "latency" and doc["settings"]["chars"] == 50
    assert [r["cipher"] for r in doc["results"]] == CIPHERS.split(",")
    for row in doc["results"]:
        assert row["error"] is None and row["link"] == "loopback"
        echo = row["echo"]
        assert echo["n"] == 50
        assert 0 < echo["median_us"] <= echo["p90_us"] <= echo["p99_us"] <= echo["max_us"]
        assert echo["median_us"] < 50_000  # loopback: well under 50 ms
        assert row["connect"]["n"] == 2 and row["connect"]["min_ms"] <= row["connect"]["median_ms"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chars", "0"], "--chars must be between"),
        (["--connects", "-1"], "--connects must be between"),
        (["--ciphers", "nope"], "nope"),
        (["--kex", "a,b"], "one key exchange"),
        (["--link", "nosuchlink"], "nosuchlink"),
        (["--ssh-config", "/dev/null"], "--ssh-config"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message):
    done = run_cli("latency", "--chars", "5", "--connects", "0", *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sshbench: error:") and message in lines[0], done.stderr


_NO_LINKS = missing_requirement(parse_links("wan24m"))


@pytest.mark.skipif(_NO_LINKS is not None, reason=_NO_LINKS or "")
@pytest.mark.timed  # runs alone (`make test`): the echo RTT against the link's delay and its own RTT plus loopback's
def test_wan24m_echo_rtt_is_link_rtt_plus_loopback(tmp_path):
    """Every echo crosses the link both ways: never under its two delays (the shaper holds each packet that long,
    whatever the load). A busy minute only adds to a median of round trips, a few ms on this machine; what breaks
    the command adds a whole RTT or more (the link left out: ~0.2 ms; a delay applied twice, or Nagle against a
    delayed ACK: +20 to +40 ms), so the upper bound is half as much again as the link's RTT plus loopback's."""
    out = tmp_path / "lat.json"
    done = run_cli(
        "latency",
        "--link",
        "loopback,wan24m",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--chars",
        "100",
        "--connects",
        "1",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    rows = {r["link"]: r for r in json.loads(out.read_text())["results"]}
    loop, wan = rows["loopback"], rows["wan24m"]
    floor_us = 2 * LINKS["wan24m"].delay_ms * 1000  # 10 ms each way
    assert wan["link_rtt_s"] and wan["link_rtt_s"] * 1e6 >= 0.95 * floor_us, wan
    expected_us = wan["link_rtt_s"] * 1e6 + loop["echo"]["median_us"]
    assert 0.95 * floor_us <= wan["echo"]["median_us"] < 1.5 * expected_us, (wan["echo"], floor_us, expected_us)


# --- latency runs in the store --------------------------------------------------------------------


def _throughput_document() -> dict:
    from sshbench.results import Combination, RunResult, Trial
    from sshbench.settings import RunSettings
    from sshbench.store.document import to_document
    from sshbench.units import MIB

    combo = Combination(cipher="aes128-ctr", mac="hmac-sha2-256-etm@openssh.com", kex="curve25519-sha256")
    trials = [
        Trial(combo, "transfer", r, False, 2 * MIB, started_at=float(r), valid=True, data_s=0.01) for r in range(2)
    ]
    result = RunResult(settings=RunSettings(), environment={"hostname": "a"}, trials=trials, status="complete")
    return to_document(result)


@pytest.fixture(scope="module")
def latency_store(tmp_path_factory):
    """Two small latency runs (one cipher in common) recorded by the command, and a throughput run."""
    base = tmp_path_factory.mktemp("latency-store")
    db = base / "results.db"
    for ciphers in ("aes128-gcm@openssh.com,aes128-ctr", "aes128-gcm@openssh.com"):
        done = run_cli("latency", "--db", str(db), "--ciphers", ciphers, "--chars", "30", "--connects", "1")
        assert done.returncode == 0, done.stderr
        assert "stored as run " in done.stderr
    throughput = base / "throughput.json"
    throughput.write_text(json.dumps(_throughput_document()))
    assert run_cli("import", str(throughput), "--db", str(db)).returncode == 0
    return base, db


def test_runs_lists_latency_runs_labelled(latency_store):
    _, db = latency_store
    done = run_cli("runs", "--db", str(db))
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    assert "latency: 2 ciphers" in lines["1"] and " 2  " in lines["1"] and "complete" in lines["1"]
    assert "latency: cipher aes128-gcm@openssh.com" in lines["2"]
    assert "latency" not in lines["3"]


@pytest.mark.parametrize(
    ("fmt", "needle"),
    [
        ("table", "Keystroke echo round trip (30 characters"),
        ("markdown", "| aes128-ctr | loopback |"),
        ("csv", "cipher,kex,link,link_rtt_s,echo_median_us"),
        ("json", '"command": "latency"'),
        ("html", '<table id="latency">'),
    ],
)
def test_report_renders_a_latency_run_in_every_format(latency_store, fmt, needle):
    _, db = latency_store
    done = run_cli("report", "1", "--db", str(db), "--format", fmt)
    assert done.returncode == 0, done.stderr
    assert needle in done.stdout and "aes128-ctr" in done.stdout


def test_latest_is_of_the_kind_the_command_reads(latency_store):
    _, db = latency_store
    # report latest: the latest run of either kind (the imported throughput run, 3)
    latest = run_cli("report", "--db", str(db), "--format", "csv").stdout
    assert "hmac-sha2-256-etm@openssh.com" in latest and "echo_median_us" not in latest
    # a latency run where a throughput run is needed: one line, exit 2
    done = run_cli("recommend", "1", "--db", str(db))
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "sshbench: error: run 1 is a latency run (`sshbench latency`): this reads throughput runs "
        "(`sshbench report 1` shows it)"
    ]


def test_export_and_import_carry_a_latency_run_whole(latency_store, tmp_path):
    base, db = latency_store
    exported = tmp_path / "run1.json"
    assert run_cli("export", "1", "--db", str(db), "-o", str(exported)).returncode == 0
    doc = json.loads(exported.read_text())
    assert doc["command"] == "latency" and doc["status"] == "complete" and doc["environment"]["hostname"]
    assert [len(row["rtts_us"]) for row in doc["results"]] == [30, 30]
    other = tmp_path / "other.db"
    done = run_cli("import", str(exported), "--db", str(other))
    assert done.returncode == 0, done.stderr
    listing = run_cli("runs", "--db", str(other)).stdout
    assert "latency: 2 ciphers" in listing and "complete (imported)" in listing
    again = run_cli("export", "1", "--db", str(other))
    assert json.loads(again.stdout)["results"] == doc["results"]
    # twice: refused; a broken one: one line, nothing stored
    assert "already in" in run_cli("import", str(exported), "--db", str(other)).stderr
    doc["results"][0]["echo"] = "fast"
    exported.write_text(json.dumps(doc))
    done = run_cli("import", str(exported), "--db", str(tmp_path / "third.db"))
    assert done.returncode == 2 and "results[0].echo is missing or has the wrong type" in done.stderr
    assert "latency" not in run_cli("runs", "--db", str(tmp_path / "third.db")).stdout


def test_compare_puts_latency_runs_side_by_side_and_refuses_mixed_kinds(latency_store):
    _, db = latency_store
    done = run_cli("compare", "1", "2", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "Keystroke echo round trip" in done.stdout and "2 / 1" in done.stdout
    (row,) = [line for line in done.stdout.splitlines() if "aes128-gcm@openssh.com" in line]
    assert any(verdict in row for verdict in ("faster", "slower", "tied", "undecided")), row
    assert "only in run 1: aes128-ctr" in done.stdout
    mixed = run_cli("compare", "1", "3", "--db", str(db))
    assert mixed.returncode == 2 and "runs of one kind" in mixed.stderr


def test_an_interrupted_latency_run_keeps_the_rows_it_measured(tmp_path):
    """SIGTERM while the second cipher is measured: the first cipher's row is in the store, the run
    reads as interrupted (bounded waits; ~5 s)."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sshbench", "latency", "--db", str(db), "--chars", "20", "--connects", "4"]
        + ["--ciphers", "aes128-gcm@openssh.com,aes128-ctr,aes256-ctr"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    deadline = time.monotonic() + 60
    rows = 0
    while time.monotonic() < deadline and rows == 0 and proc.poll() is None:
        time.sleep(0.1)  # bounded poll of the store
        if db.exists():
            with sqlite3.connect(db) as con:
                try:
                    found = con.execute("SELECT json_array_length(extra_json, '$.results') FROM runs").fetchone()
                except sqlite3.OperationalError:  # the file is there, its tables not yet (created in a moment)
                    found = None
            rows = found[0] if found else 0
    assert rows == 1, "the first cipher's row never reached the store"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    listing = run_cli("runs", "--db", str(db)).stdout
    assert "latency: cipher aes128-gcm@openssh.com" in listing and "interrupted" in listing, listing
    report = run_cli("report", "--db", str(db))
    assert report.returncode == 0 and "run 1 interrupted" in report.stdout and "│     20 │" in report.stdout
