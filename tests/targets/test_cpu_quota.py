"""--server-cpu's cgroup, for real: a busy process under a 0.1-core quota gets about 0.1 s of CPU per
second of wall time. Skipped, with the reason, where no cgroup cpu controller can be used."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conftest import pid_alive, wait_for_line
from sshbench.targets import cpu_quota
from sshbench.targets.cpu_quota import CpuQuota, sweep_stale

REASON = cpu_quota.missing_requirement()
needs_cgroup = pytest.mark.skipif(REASON is not None, reason=REASON or "")

# Waits for a line, then spins for 1 s of wall time and prints the CPU time it got.
BUSY = (
    "import sys, time; sys.stdin.readline(); t = time.monotonic()\n"
    "while time.monotonic() - t < 1.0: pass\n"
    "print(time.process_time(), flush=True)"
)


def test_quota_arithmetic():
    # A 10 ms period (a slow core's pace, not 100 ms bursts); longer only to keep the quota >= 1 ms.
    assert (CpuQuota(0.1).quota_us, CpuQuota(0.1).period_us) == (1_000, 10_000)
    assert (CpuQuota(2.5).quota_us, CpuQuota(2.5).period_us) == (25_000, 10_000)
    assert (CpuQuota(0.05).quota_us, CpuQuota(0.05).period_us) == (1_000, 20_000)
    assert (CpuQuota(0.001).quota_us, CpuQuota(0.001).period_us) == (1_000, 1_000_000)
    assert CpuQuota(0.0001).quota_us == 1_000  # the kernel's minimum, in its longest period
    assert CpuQuota(0.5, period_us=100_000).quota_us == 50_000
    with pytest.raises(ValueError):
        CpuQuota(0)


@needs_cgroup
# e2e by hand: it starts processes in a CPU quota group of its own (the tier detector sees sshd and namespaces only),
# and a quota group is what another test's teardown (clean_leftovers) sweeps when it looks stale
@pytest.mark.e2e
def test_quota_limits_a_busy_process_and_its_children():
    with CpuQuota(0.1) as quota:
        assert quota.path is not None and quota.path.is_dir()
        shell = subprocess.Popen(
            ["sh", "-c", f"read go; cat /proc/self/cgroup; exec {sys.executable} -c '{BUSY}'"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            quota.add(shell.pid)
            assert quota.pids() == [shell.pid]
            out, _ = shell.communicate("go\ngo\n", timeout=20)
        finally:
            if shell.poll() is None:
                shell.kill()
                shell.wait(timeout=10)
        assert quota.path.name in out  # `cat`, forked after the move, was born inside the group
        cpu_s = float(out.strip().splitlines()[-1])
        stats = quota.throttled()
        print(f"0.1-core quota ({quota.version}): {cpu_s:.3f} s CPU in 1 s wall; cpu.stat {stats}")
        assert cpu_s < 0.3  # unlimited it would be ~1.0
        assert stats.get("nr_throttled", 0) > 0
        path = quota.path
    assert not path.exists()


@needs_cgroup
# e2e by hand: it starts processes in a CPU quota group of its own (the tier detector sees sshd and namespaces only),
# and a quota group is what another test's teardown (clean_leftovers) sweeps when it looks stale
@pytest.mark.e2e
def test_destroy_moves_live_processes_out_or_kills_them():
    for kill in (False, True):
        proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
        try:
            quota = CpuQuota(0.5).create()
            quota.add(proc.pid)
            quota.destroy(kill=kill)
            assert not quota.path.exists()
            assert pid_alive(proc.pid) is (not kill)
            quota.destroy()  # idempotent
        finally:
            proc.kill()
            proc.wait(timeout=10)


@needs_cgroup
# e2e by hand: it starts processes in a CPU quota group of its own (the tier detector sees sshd and namespaces only),
# and a quota group is what another test's teardown (clean_leftovers) sweeps when it looks stale
@pytest.mark.e2e
@pytest.mark.serial  # a run on the other core would sweep the dead owner's group before this test's sweep
def test_stale_group_of_a_dead_owner_is_swept():
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; from sshbench.targets.cpu_quota import CpuQuota\n"
            "q = CpuQuota(0.2).create()\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True: time.sleep(1)'], start_new_session=True)\n"
            "q.add(p.pid); print(q.path, p.pid, flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        path, child = wait_for_line(owner.stdout, "sshbench-cpu-", timeout=20).split()
        assert sweep_stale() == []  # the owner is alive: left alone
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait(timeout=10)
    assert pid_alive(int(child))
    assert sweep_stale() == [f"cgroup {path}"]
    assert not os.path.exists(path) and not pid_alive(int(child))


def test_default_data_phase_under_a_quota():
    # 3x the fixed ~0.1 CPU-second a transfer costs the session, in wall time at that quota.
    assert cpu_quota.data_phase_seconds(None) == 1.0 and cpu_quota.data_phase_seconds(0.5) == 1.0
    assert cpu_quota.data_phase_seconds(0.1) == 3.0 and cpu_quota.data_phase_seconds(0.05) == 6.0
    assert cpu_quota.data_phase_seconds(0.001) == 10.0 and cpu_quota.data_phase_seconds(-1) == 1.0
