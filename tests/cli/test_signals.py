"""Repeated stop signals (a held-down Ctrl-C repeats every ~20 ms): the first starts the cleanup, the
others are acknowledged with one line and cannot interrupt it. Nothing is left behind."""

import os
import signal
import time
from pathlib import Path

import pytest

from conftest import communicate_or_dump, pid_alive, sshbench_temp_dirs, start_cli, wait_for_line, wait_until

LONG_RUN = ("run", "--ciphers", "aes128-ctr", "--size", "1M", "--runs", "200", "--warmup", "0", "-v")


def _records() -> list[Path]:
    return list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json"))


@pytest.mark.parametrize(
    "signals,code",
    [
        ((signal.SIGINT, signal.SIGINT), 130),
        ((signal.SIGINT, signal.SIGINT, signal.SIGINT), 130),
        ((signal.SIGTERM, signal.SIGINT, signal.SIGTERM), 143),
        ((signal.SIGHUP, signal.SIGHUP), 129),
    ],
    ids=["int-int", "int-int-int", "term-int-term", "hup-hup"],
)
def test_repeated_signals_cannot_interrupt_the_cleanup(signals, code):
    proc = start_cli(*LONG_RUN)
    try:
        wait_for_line(proc.stderr, "run 1:", also="transfer")
        import json

        (record,) = _records()
        data = json.loads(record.read_text())
        sshd_pids = [pid for pid, _ in data["processes"]]
        assert sshd_pids and all(pid_alive(p) for p in sshd_pids)
        for signum in signals:
            proc.send_signal(signum)
            time.sleep(0.005)  # a few ms apart, as a repeating key
        stdout, stderr = communicate_or_dump(proc)
    finally:
        proc.kill()
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert "interrupted" in stderr
    wait_until(lambda: not any(pid_alive(p) for p in sshd_pids), what="sshd to exit")
    assert not sshbench_temp_dirs()
    assert not _records()
