"""compare: ratios across runs with a 95% CI and a decision (faster/slower/tied/undecided); nothing
hidden; two stored runs."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from sshbench.answers.compare import compare_runs, only_in_lines, ratio
from sshbench.results import Combination, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.store import open_store

AES = Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256")
GCM = Combination("aes128-gcm@openssh.com", "implicit", "curve25519-sha256")
CHACHA = Combination("chacha20-poly1305@openssh.com", "implicit", "curve25519-sha256")
MIB = 1024 * 1024


def _run(run_id: int, host: str, rates: dict[Combination, list[float]]) -> RunResult:
    """A RunResult of valid measured trials at the given MiB/s (one per round)."""
    trials = [
        Trial(combo, "transfer", rep, False, 64 * MIB, 0.0, valid=True, data_s=64 / rate)
        for combo, values in rates.items()
        for rep, rate in enumerate(values)
    ]
    return RunResult(settings=RunSettings(), environment={"hostname": host}, run_id=run_id, trials=trials)


def test_ratio_interval_and_decision():
    faster = ratio([300.0, 310.0, 295.0, 305.0], [200.0, 205.0, 198.0, 202.0], tie_margin=0.03)
    assert faster is not None
    assert faster.value == pytest.approx(1.5, rel=0.01)
    assert faster.low < faster.value < faster.high and faster.high < 1.6
    assert faster.decision == "ordered" and faster.verdict == "faster"
    slower = ratio([200.0, 205.0, 198.0, 202.0], [300.0, 310.0, 295.0, 305.0], tie_margin=0.03)
    assert slower is not None and slower.verdict == "slower"
    assert slower.low == pytest.approx(1 / faster.high) and slower.high == pytest.approx(1 / faster.low)
    tied = ratio([400.0, 401.0, 399.0, 400.5], [400.2, 399.8, 400.4, 399.9], tie_margin=0.03)
    assert tied is not None and tied.decision == "tied"
    noisy = ratio([300.0, 150.0, 420.0], [280.0, 330.0, 160.0], tie_margin=0.03)
    assert noisy is not None and noisy.decision == "undecided"
    single = ratio([300.0], [200.0, 210.0], tie_margin=0.03)
    assert single is not None and single.decision == "undecided" and not single.interval_known
    assert ratio([], [200.0], tie_margin=0.03) is None


def test_combinations_in_only_one_run_are_listed_not_hidden():
    a = _run(1, "fast", {AES: [400.0, 410.0, 395.0], GCM: [800.0, 790.0, 810.0]})
    b = _run(2, "old", {AES: [100.0, 102.0, 99.0], CHACHA: [150.0, 149.0, 151.0]})
    comparison = compare_runs([a, b])
    assert comparison.run_labels == ["1", "2"]
    (row,) = comparison.rows
    assert row.combination == AES and row.medians == pytest.approx([400.0, 100.0])
    assert row.ratios[0].value == pytest.approx(0.25, rel=0.01)
    assert comparison.only_in == {"1": [GCM], "2": [CHACHA]}
    lines = only_in_lines(comparison)
    assert any(line.startswith("only in run 1: aes128-gcm@openssh.com") for line in lines)
    assert any(line.startswith("only in run 2: chacha20-poly1305@openssh.com") for line in lines)


def test_three_runs_baseline_is_the_first():
    runs = [_run(i, f"h{i}", {AES: [m, m * 1.01, m * 0.99]}) for i, m in ((3, 100.0), (7, 200.0), (9, 50.0))]
    (row,) = compare_runs(runs).rows
    assert [r.value for r in row.ratios] == pytest.approx([2.0, 0.5], rel=0.01)
    assert [r.verdict for r in row.ratios] == ["faster", "slower"]


def test_compare_two_stored_runs(tmp_path):
    """A real run, and the same run as if measured on a machine twice as slow (imported): ratio 0.5."""
    first = run_cli(
        "run",
        "--ciphers",
        "aes128-ctr,aes128-gcm@openssh.com",
        "--size",
        "1M",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--no-baselines",
    )
    assert first.returncode == 0, first.stderr
    exported = tmp_path / "run.json"
    assert run_cli("export", "latest", "-o", str(exported)).returncode == 0
    doc = json.loads(exported.read_text())
    doc["started_at"] += 1000  # another run
    doc["environment"]["hostname"] = "slowbox"
    for trial in doc["trials"]:
        if trial["data_s"]:
            trial["data_s"] *= 2
    doc["trials"] = [t for t in doc["trials"] if t["cipher"] == "aes128-ctr"]  # slowbox lacks GCM
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(doc))
    imported = run_cli("import", str(slow))
    assert imported.returncode == 0, imported.stderr
    with open_store() as store:
        first_id, second_id = (r.id for r in store.list_runs())
        a, b = store.load_result(first_id), store.load_result(second_id)
    comparison = compare_runs([a, b])
    (row,) = comparison.rows
    assert row.ratios[0].value == pytest.approx(0.5)

    done = run_cli("compare", str(first_id), str(second_id))
    assert done.returncode == 0, done.stderr
    assert "0.50 (" in done.stdout and "slower" in done.stdout
    assert f"only in run {first_id}: aes128-gcm@openssh.com" in done.stdout
    assert "slowbox" in done.stdout
    same = run_cli("compare", str(first_id), str(first_id))
    assert same.returncode == 2 and "two different runs" in same.stderr
