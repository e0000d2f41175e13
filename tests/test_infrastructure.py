"""The infrastructure written once (issue 28): osfiles' atomic write and process identity, and the sshd
hardening every sshd sshbench starts shares. Fast: nothing starts but this test's own child."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sshbench.host import osfiles
from sshbench.links import nshost_config
from sshbench.openssh import sshd_options


def test_an_atomic_write_replaces_whole_and_a_failed_one_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "doc.json"
    osfiles.atomic_write(target, "old")
    osfiles.atomic_write(target, b"new")
    assert target.read_bytes() == b"new"

    def full_disk(self, other):  # the rename is the step that fails on a full disk or a read-only mount
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(target), "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        osfiles.atomic_write(target, "lost")
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["doc.json"]


def test_a_failed_atomic_write_removes_its_temp_file(tmp_path):
    target = tmp_path / "is-a-dir"
    target.mkdir()  # renaming a file over a directory fails after the temp file was written
    with pytest.raises(OSError):
        osfiles.atomic_write(target, "x")
    assert [p.name for p in tmp_path.iterdir()] == ["is-a-dir"]


def test_a_process_is_known_by_its_start_time_until_it_is_gone():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        started = osfiles.process_start_time(child.pid)
        assert started is not None and started == osfiles.process_start_time(child.pid)
        assert started >= (osfiles.process_start_time(os.getpid()) or 0)  # started after this process
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=10)
    assert osfiles.process_start_time(child.pid) is None


def test_the_namespace_hosts_sshd_config_carries_every_hardening_line(tmp_path):
    config = nshost_config.sshd_config(tmp_path, ["10.0.0.1"], 22, "root", {})
    lines = dict(line.split(" ", 1) for line in config.splitlines() if not line.startswith("ListenAddress"))
    for option, value in {**sshd_options.HARDENING, "PermitUserRC": sshd_options.OPTIONAL["PermitUserRC"]}.items():
        assert lines.get(option) == value, option
    assert lines["SetEnv"] == sshd_options.session_env(os.environ.get("PATH"))
    without = nshost_config.sshd_config(tmp_path, ["10.0.0.1"], 22, "root", {}, session_env=False)
    assert "SetEnv" not in without  # for a system sshd before 8.7


def test_the_session_environment_quotes_path_or_leaves_it_out():
    assert sshd_options.session_env("/usr/bin:/opt/my tools/bin") == 'SHLVL=1 "PATH=/usr/bin:/opt/my tools/bin"'
    assert sshd_options.session_env('/usr/bin:/opt/"q"') == "SHLVL=1"
    assert sshd_options.session_env(None) == "SHLVL=1"
