"""compare: ratios of medians with hyperfine's propagated uncertainty; nothing hidden; two stored runs."""

from __future__ import annotations

import json
import math

import pytest

from conftest import run_cli
from sshbench import summary
from sshbench.compare import compare_runs, only_in_lines, ratio
from sshbench.results import Combination, RunResult
from sshbench.settings import RunSettings
from sshbench.store import open_store
from sshbench.summary import Summary

AES = Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256")
GCM = Combination("aes128-gcm@openssh.com", "implicit", "curve25519-sha256")
CHACHA = Combination("chacha20-poly1305@openssh.com", "implicit", "curve25519-sha256")


def _summary(combo: Combination, median: float | None, cv: float | None) -> Summary:
    return Summary(
        combination=combo,
        valid_trials=5,
        invalid_trials=0,
        payload_bytes=1,
        median_mib_s=median,
        min_mib_s=median,
        max_mib_s=median,
        q1_mib_s=median,
        q3_mib_s=median,
        iqr_mib_s=0.0,
        cv=cv,
        relative_to_fastest=None,
        client_cpu_s_per_gib=None,
        server_cpu_s_per_gib=None,
        median_data_s=None,
        median_wall_s=None,
        wide_spread=False,
    )


class _Fixed(RunResult):
    """A RunResult whose summaries are given (compare is pure: it needs only summaries + environment)."""

    def __init__(self, run_id: int, summaries: list[Summary], host: str) -> None:
        super().__init__(settings=RunSettings(), environment={"hostname": host}, run_id=run_id)
        summary.cached(self, "summaries", lambda: summaries)  # as if computed from trials


def test_ratio_propagates_relative_spread_like_hyperfine():
    r = ratio(_summary(AES, 300.0, 0.04), _summary(AES, 200.0, 0.03))
    assert r is not None
    assert r.value == pytest.approx(1.5)
    assert r.uncertainty == pytest.approx(1.5 * math.sqrt(0.04**2 + 0.03**2))  # = 0.075
    single = ratio(_summary(AES, 300.0, None), _summary(AES, 200.0, 0.03))
    assert single is not None and single.uncertainty is None  # one trial: no spread to propagate
    assert ratio(_summary(AES, None, None), _summary(AES, 200.0, 0.03)) is None


def test_combinations_in_only_one_run_are_listed_not_hidden():
    a = _Fixed(1, [_summary(AES, 400.0, 0.02), _summary(GCM, 800.0, 0.02)], "fast")
    b = _Fixed(2, [_summary(AES, 100.0, 0.05), _summary(CHACHA, 150.0, 0.05)], "old")
    comparison = compare_runs([a, b])
    assert comparison.run_labels == ["1", "2"]
    (row,) = comparison.rows
    assert row.combination == AES and row.medians == [400.0, 100.0]
    assert row.ratios[0].value == pytest.approx(0.25)
    assert comparison.only_in == {"1": [GCM], "2": [CHACHA]}
    lines = only_in_lines(comparison)
    assert any(line.startswith("only in run 1: aes128-gcm@openssh.com") for line in lines)
    assert any(line.startswith("only in run 2: chacha20-poly1305@openssh.com") for line in lines)


def test_three_runs_baseline_is_the_first():
    runs = [_Fixed(i, [_summary(AES, m, 0.01)], f"h{i}") for i, m in ((3, 100.0), (7, 200.0), (9, 50.0))]
    (row,) = compare_runs(runs).rows
    assert [r.value for r in row.ratios] == pytest.approx([2.0, 0.5])


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
    assert "0.50 ±" in done.stdout
    assert f"only in run {first_id}: aes128-gcm@openssh.com" in done.stdout
    assert "slowbox" in done.stdout
    same = run_cli("compare", str(first_id), str(first_id))
    assert same.returncode == 2 and "two different runs" in same.stderr
