"""Leave nothing behind, for every server of the registry (targets.SERVERS): SIGTERM stops its daemon and
removes its dirs; after kill -9 the daemon outlives sshbench (its own session) and the next run stops it.
A server added to the registry is tested here without a line of its own (tests/test_lifecycle.py has the
rest for the default one: SIGINT, sshd dying mid-run)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from conftest import (
    communicate_or_dump,
    pid_alive,
    run_cli,
    sshbench_temp_dirs,
    start_cli,
    wait_for_line,
    wait_until,
)
from sshbench.errors import RunError, UsageError
from sshbench.settings import TargetSpec
from sshbench.targets import SERVERS, check_spec


def _skip_reason(server: str) -> str | None:
    """Why this server cannot start here (its program missing, not root, ...), as sshbench itself says it."""
    spec = TargetSpec(servers=(server,))
    try:
        check_spec(spec)
        SERVERS[server].from_spec(spec)  # finds its program; starts nothing
    except (RunError, UsageError) as err:
        return f"--server {server}: {err}"
    return None


def _long_run(server: str):
    argv = ("run", "--server", server, "--ciphers", "aes128-ctr", "--size", "1M", "--runs", "200", "--warmup", "0")
    proc = start_cli(*argv, "--no-baselines", "-v")
    wait_for_line(proc.stderr, "run 1:", also="transfer")
    records = list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json"))
    assert len(records) == 1, records
    record = json.loads(records[0].read_text())
    ((daemon, _),) = record["processes"]
    assert pid_alive(daemon) and all(os.path.isdir(p) for p in record["paths"])
    return proc, daemon, record["paths"]


@pytest.mark.parametrize("server", list(SERVERS))
def test_sigterm_stops_the_server_and_removes_its_dirs(server: str) -> None:
    if reason := _skip_reason(server):
        pytest.skip(reason)
    proc, daemon, _ = _long_run(server)
    try:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = communicate_or_dump(proc)
    finally:
        proc.kill()
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr and "Fastest here" in stdout  # what was measured is reported
    wait_until(lambda: not pid_alive(daemon), what=f"the {server} server to exit")
    assert not sshbench_temp_dirs()
    assert not list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json"))


@pytest.mark.parametrize("server", list(SERVERS))
def test_kill_9_leaves_the_server_for_the_next_run_to_stop(server: str) -> None:
    if reason := _skip_reason(server):
        pytest.skip(reason)
    proc, daemon, paths = _long_run(server)
    try:
        proc.kill()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert pid_alive(daemon), f"the {server} server outlives a kill -9 (it runs in its own session)"
    done = run_cli("run", "--ciphers", "no-such-cipher", "--size", "1M", "--runs", "1", "--no-baselines")
    assert "removed leftovers" in done.stderr, done.stderr
    wait_until(lambda: not pid_alive(daemon), what=f"the leftover {server} server to be stopped")
    assert not any(os.path.exists(p) for p in paths)
