"""A private Dropbear server (Debian's dropbear-bin) behind --server dropbear: real trials on loopback with
the OpenSSH client, negotiated = requested, its receive window, and cleanup on every kind of exit."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from conftest import (
    communicate_or_dump,
    pid_alive,
    pids_whose_cmdline_has,
    run_cli,
    sshbench_temp_dirs,
    start_cli,
    wait_for_line,
    wait_until,
)


def _skip_reason() -> str | None:
    if not (shutil.which("dropbear") or os.access("/usr/sbin/dropbear", os.X_OK)):
        return "Dropbear is not installed (apt-get install dropbear-bin; `make test` installs it as root)"
    if os.geteuid() != 0:
        return "--server dropbear needs root (a private mount namespace for its authorized_keys)"
    if not shutil.which("unshare"):
        return "unshare (util-linux) is not installed"
    return None


needs_dropbear = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@needs_dropbear
def test_dropbear_trials_are_valid_and_labelled(tmp_path):
    out = tmp_path / "run.json"
    done = run_cli(
        "run",
        "--server",
        "dropbear",
        "--size",
        "2M",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--no-baselines",
        "--dropbear-window",
        "4M",
        "--json",
        str(out),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert transfers and {t["cipher"] for t in transfers} >= {"aes128-ctr", "chacha20-poly1305@openssh.com"}
    for t in transfers:
        assert t["valid"], t["invalid_reason"]
        assert (t["client"], t["server"]) == ("openssh", "dropbear")
        negotiated = t["negotiated"]
        assert (negotiated["cipher"], negotiated["mac"], negotiated["kex"]) == (t["cipher"], t["mac"], t["kex"])
        assert t["data_clock"] == "server-reader" and t["received_bytes_at_sink"] == 2 * 1024 * 1024
    assert doc["environment"]["server_ssh_version"].startswith("dropbear_")
    assert doc["target"]["receive_window"] == 4 * 1024 * 1024 and doc["target"]["receive_window_set"]
    assert "openssh/dropbear" in done.stdout and "-W 4194304" in done.stdout
    # Normal exit: no daemon, no temp dir, the real /etc/passwd untouched.
    assert not pids_whose_cmdline_has("dropbear", f"127.0.0.1:{doc['target']['port']}")
    assert not sshbench_temp_dirs()
    assert "sshbench-" not in Path("/etc/passwd").read_text()


@needs_dropbear
def test_sigterm_stops_dropbear_and_removes_its_dir():
    proc = start_cli(
        "run",
        "--server",
        "dropbear",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "1M",
        "--runs",
        "200",
        "--warmup",
        "0",
        "--no-baselines",
        "-v",
    )
    try:
        wait_for_line(proc.stderr, "run 1:", also="transfer")
        records = list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json"))
        record = json.loads(records[0].read_text())
        ((daemon, _),) = record["processes"]
        assert pid_alive(daemon) and Path(f"/proc/{daemon}/exe").resolve().name == "dropbear"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = communicate_or_dump(proc)
    finally:
        proc.kill()
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr and "Fastest here" in stdout
    wait_until(lambda: not pid_alive(daemon), what="dropbear to exit")
    assert not sshbench_temp_dirs()
    assert not list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json"))


def test_missing_dropbear_is_one_line_with_the_install_command(monkeypatch):
    monkeypatch.setenv("SSHBENCH_DROPBEAR", "/nonexistent/dropbear")
    done = run_cli("run", "--server", "dropbear", "--size", "1M", "--runs", "1", "--no-baselines")
    assert done.returncode == 1
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.startswith("sshbench: error:")]
    assert len(lines) == 1 and "apt-get install dropbear-bin" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not sshbench_temp_dirs()


def test_dropbear_window_beyond_its_maximum_is_refused():
    done = run_cli("run", "--server", "dropbear", "--dropbear-window", "20M", "--size", "1M", "--runs", "1")
    assert done.returncode == 2
    assert "--dropbear-window" in done.stderr and "10M" in done.stderr and "Traceback" not in done.stderr


@needs_dropbear
def test_kill_9_leaves_dropbear_for_the_next_run_to_stop():
    proc = start_cli(
        "run",
        "--server",
        "dropbear",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "1M",
        "--runs",
        "200",
        "--warmup",
        "0",
        "--no-baselines",
        "-v",
    )
    try:
        wait_for_line(proc.stderr, "run 1:", also="transfer")
        record = json.loads(next(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json")).read_text())
        proc.kill()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    ((daemon, _),) = record["processes"]
    assert pid_alive(daemon), "dropbear outlives a kill -9 (it runs in its own session)"
    done = run_cli("run", "--ciphers", "no-such-cipher", "--size", "1M", "--runs", "1", "--no-baselines")
    assert "removed leftovers" in done.stderr, done.stderr
    wait_until(lambda: not pid_alive(daemon), what="the leftover dropbear to be stopped")
    assert not any(os.path.exists(p) for p in record["paths"])


def test_dropbear_window_without_dropbear_is_refused():
    done = run_cli("run", "--dropbear-window", "8M", "--size", "1M", "--runs", "1")
    assert done.returncode == 2
    assert "--dropbear-window" in done.stderr and "--server dropbear" in done.stderr


def test_non_root_gets_one_line_saying_why(monkeypatch):
    """A mount namespace needs root: as another user, one line and the alternative (in-process check)."""
    from sshbench.errors import RunError
    from sshbench.targets import dropbear

    monkeypatch.setattr(dropbear, "find_dropbear", lambda: ("/usr/sbin/dropbear", "/usr/bin/dropbearkey"))
    monkeypatch.setattr(dropbear.os, "geteuid", lambda: 1000)
    with pytest.raises(RunError, match="needs root.*--server asyncssh"):
        dropbear.DropbearServer()
