"""`sshbench run --server-cpu FRACTION`: the private sshd and its sessions under a CPU quota, end to end.
Skipped, with the reason, where no cgroup cpu controller can be used (or not root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from sshbench.targets import cpu_quota

REASON = cpu_quota.missing_requirement()


@pytest.mark.parametrize("value", ["0", "-1", "100000"])
def test_bad_fraction_is_one_line_exit_2(value):
    done = run_cli("run", "--server-cpu", value, "--size", "4M", "--runs", "1")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "--server-cpu" in done.stderr


def test_server_cpu_with_a_host_is_refused():
    done = run_cli("run", "somehost", "--server-cpu", "0.5", "--size", "4M")
    assert done.returncode == 2 and "--server-cpu" in done.stderr, done.stderr


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_server_cpu_tenth_of_a_core_limits_the_sshd(tmp_path):
    out = tmp_path / "r.json"
    done = run_cli(
        "run",
        "--server-cpu",
        "0.1",
        "--ciphers",
        "aes128-gcm@openssh.com,3des-cbc",
        "--size",
        "4M",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--no-baselines",
        "--json",
        str(out),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Server CPU" in done.stdout and "emulated: 0.1 cores" in done.stdout
    doc = json.loads(out.read_text())
    assert doc["settings"]["server_cpu"] == 0.1
    quota = doc["target"]["server_cpu"]
    assert quota["fraction"] == 0.1 and quota["quota_us"] == 10_000
    assert not Path(quota["path"]).exists()  # removed with the run
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert len(transfers) == 4 and all(t["valid"] for t in transfers), [t["invalid_reason"] for t in transfers]
    for t in transfers:
        # The session's CPU can exceed 0.1 of the wall time only by what one 100 ms period allows (10 ms).
        assert t["server_cpu_s"] <= 0.1 * t["wall_s"] + 0.011, t
    slow = [t for t in transfers if t["cipher"] == "3des-cbc"]
    for t in slow:  # 3DES needs far more than 0.1 core for 4 MiB: throttled, the data phase is long
        assert t["data_s"] > 0.5 and t["server_cpu_s"] / t["data_s"] <= 0.1 * 1.3, t
    assert quota["throttled"].get("nr_throttled", 0) > 0, quota
