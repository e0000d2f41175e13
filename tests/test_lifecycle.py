"""Leave nothing behind: normal exit, SIGINT, SIGTERM, sshd dying. kill -9 (cleaned by the next run), and
SIGTERM again, for every server of the registry: tests/targets/test_lifecycle_per_server.py."""

import json
import os
import signal
from pathlib import Path

import pytest

from conftest import (
    communicate_or_dump,
    pid_alive,
    start_cli,
    wait_for_line,
    wait_until,
)

LONG_RUN = ("run", "--ciphers", "aes128-ctr", "--size", "1M", "--runs", "200", "--warmup", "0", "-v")


def _record() -> dict:
    runtime = Path(os.environ["SSHBENCH_RUNTIME_DIR"])
    records = list(runtime.glob("run-*.json"))
    assert len(records) == 1, records
    return json.loads(records[0].read_text())


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_stops_everything_and_keeps_results(signum, code):
    proc = start_cli(*LONG_RUN)
    try:
        wait_for_line(proc.stderr, "run 1:", also="transfer")
        record = _record()
        ((sshd_pid, _),) = record["processes"]
        paths = record["paths"]
        assert pid_alive(sshd_pid) and all(os.path.isdir(p) for p in paths)
        proc.send_signal(signum)
        stdout, stderr = communicate_or_dump(proc)
    finally:
        proc.kill()
    assert proc.returncode == code, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert "Fastest here" in stdout  # the trials measured so far are reported
    wait_until(lambda: not pid_alive(sshd_pid), what="sshd to exit")
    assert not any(os.path.exists(p) for p in paths)
    assert not list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json"))


def test_sshd_dying_mid_run_is_reported_and_results_kept(tmp_path):
    out = tmp_path / "r.json"
    proc = start_cli(*LONG_RUN, "--json", str(out))
    try:
        wait_for_line(proc.stderr, "run 2:", also="transfer")
        ((sshd_pid, _),) = _record()["processes"]
        os.kill(sshd_pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1, stderr
    assert "private sshd killed by signal 9" in stderr and "Traceback" not in stderr
    assert "Fastest here" in stdout
    doc = json.loads(out.read_text())
    assert doc["status"] == "failed"
    assert sum(1 for t in doc["trials"] if t["valid"] and t["kind"] == "transfer") >= 2
