"""A remote target for real: `sshbench run ALIAS` against the namespace host (its own network namespace,
address and sshd on port 22, reached through an ssh_config alias), and what a kill -9'd run leaves on
it. Root only (skipped with the reason otherwise; tests/targets/test_remote_and_bad_input.py keeps the
loopback alias)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from conftest import communicate_or_dump, pids_whose_cmdline_has, run_cli, start_cli, wait_for_line
from sshbench.links import nshost
from sshbench.links.nshost import NamespaceHost

REASON = nshost.missing_requirement()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture
def host():
    with NamespaceHost() as h:
        yield h


def test_run_against_the_namespace_host_gives_valid_trials(host, tmp_path):
    out = tmp_path / "r.json"
    done = run_cli(
        "run",
        host.alias,
        "--ssh-config",
        str(host.ssh_config),
        "--ciphers",
        "aes128-gcm@openssh.com,aes128-ctr",
        "--size",
        "4M",
        "--runs",
        "2",
        "--json",
        str(out),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["target"]["kind"] == "remote" and doc["target"]["hostname"] == host.address
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer" and not t["warmup"]]
    assert {t["cipher"] for t in transfers} == {"aes128-gcm@openssh.com", "aes128-ctr"}
    assert len(transfers) == 4 and all(t["valid"] for t in transfers), [t["invalid_reason"] for t in transfers]
    assert not list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("remote-*.json"))  # nothing left to sweep
    # The raw TCP control, its sink started on the namespace host over ssh, the sender connecting directly.
    raw = [t for t in doc["trials"] if t["kind"] == "raw-tcp" and not t["warmup"]]
    assert len(raw) == 2 and all(t["valid"] for t in raw), [t["invalid_reason"] for t in raw]
    assert all(t["received_bytes_at_sink"] == t["payload_bytes"] for t in raw)
    assert not pids_whose_cmdline_has("sys.argv.pop(1)", host.address)  # the remote sinks stopped by themselves


def test_latency_against_the_namespace_host(host, tmp_path):
    out = tmp_path / "lat.json"
    args = ("latency", host.alias, "--ssh-config", str(host.ssh_config), "--ciphers", "aes128-gcm@openssh.com")
    done = run_cli(*args, "--chars", "100", "--connects", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(out.read_text())["results"]
    assert row["error"] is None and row["link"] == "direct" and row["echo"]["n"] == 100


def test_a_killed_download_run_leaves_nothing_on_the_remote_after_the_next_run(host):
    runtime = Path(os.environ["SSHBENCH_RUNTIME_DIR"])
    common = ("run", host.alias, "--ssh-config", str(host.ssh_config), "--ciphers", "aes128-ctr", "--direction", "down")
    proc = start_cli(*common, "--size", "8M", "--runs", "50", "--no-baselines", "-v")
    left: list[str] = []
    try:
        assert proc.stderr is not None
        wait_for_line(proc.stderr, "trial 1/", timeout=120)
        records = list(runtime.glob("remote-*.json"))
        assert records, "no remote scratch record while the run is going"
        paths = [p for r in records for p in json.loads(r.read_text())["paths"]]
        left = [p for p in paths if os.path.isdir(p)]  # the namespace host shares this filesystem
        assert left, paths
        proc.send_signal(signal.SIGKILL)
        communicate_or_dump(proc, timeout=30)
        assert all(os.path.isdir(p) for p in left)  # what kill -9 leaves

        done = run_cli(*common, "--size", "4M", "--runs", "1", "--warmup", "0", "--no-baselines", timeout=300)
        assert done.returncode == 0, done.stderr
        assert "removed leftovers of an earlier run that was killed" in done.stderr and left[0] in done.stderr
        assert not any(os.path.exists(p) for p in left)
        assert not list(runtime.glob("remote-*.json"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for p in left:
            shutil.rmtree(p, ignore_errors=True)
