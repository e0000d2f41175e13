"""A private Dropbear server (Debian's dropbear-bin) behind --server dropbear: real trials on loopback with
the OpenSSH client, negotiated = requested, its receive window, and cleanup (SIGTERM and kill -9: the
per-server harness, tests/targets/test_lifecycle_per_server.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import (
    pids_whose_cmdline_has,
    run_cli,
    run_json,
    sshbench_temp_dirs,
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
    done, doc = run_json(
        tmp_path,
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
        timeout=120,
    )
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
    # The conclusion's lines (at least `KexAlgorithms ^curve25519-sha256`: this Dropbear has no sntrup761) were
    # checked against a Dropbear of their own, as the run measured, not an OpenSSH sshd
    checked = doc["answer"]["config_checked"]
    assert checked.startswith("checked: a new private dropbear like the run's took these lines"), checked
    # Normal exit: no daemon, no temp dir, the real /etc/passwd untouched.
    assert not pids_whose_cmdline_has("dropbear", f"127.0.0.1:{doc['target']['port']}")
    assert not sshbench_temp_dirs()
    assert "sshbench-" not in Path("/etc/passwd").read_text()


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
