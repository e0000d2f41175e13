"""Who else used this machine's CPU while a trial ran: every process that is not this sshbench's (not this process nor
one it started: its ssh clients, its private sshd and their children), from /proc, read before and after the trial and
never during it. A trial records the cores they used and the busiest of them (`Trial.others_cores`, `others_busiest`),
so that the report can say which rounds were disturbed and by what (another sshbench measurement, `make test`, a
compiler) instead of guessing from the rows' scatter (docs/reliability.md).

Reading /proc/*/stat of a few hundred processes takes a few ms, outside the trial's clock.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

_TICKS_S = os.sysconf("SC_CLK_TCK")
MEASURING_COMMANDS = ("run", "check", "crossover", "latency")  # sshbench's subcommands that measure


@dataclass(frozen=True)
class _Process:
    comm: str
    ppid: int
    cpu_ticks: int  # utime + stime


@dataclass(frozen=True)
class CpuSnapshot:
    """Every process's CPU ticks at one moment (monotonic seconds `at`)."""

    at: float
    processes: dict[int, _Process]


@dataclass(frozen=True)
class Neighbours:
    """The CPU others used between two snapshots: cores on average, and the busiest process in words."""

    cores: float
    busiest: str | None


def _read(pid: int) -> _Process | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    close = raw.rfind(")")
    fields = raw[close + 2 :].split()
    if close < 0 or len(fields) < 13:
        return None
    return _Process(raw[raw.find("(") + 1 : close], int(fields[1]), int(fields[11]) + int(fields[12]))


def snapshot(at: float) -> CpuSnapshot:
    processes = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (process := _read(int(entry))) is not None:
            processes[int(entry)] = process
    return CpuSnapshot(at, processes)


def _ours(pid: int, processes: dict[int, _Process], me: int) -> bool:
    """`pid` is this process or one of its descendants (by the parent chain, at most 64 steps)."""
    for _ in range(64):
        if pid == me:
            return True
        process = processes.get(pid)
        if process is None or process.ppid <= 1:
            return False
        pid = process.ppid
    return False


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return " ".join(f.read().decode(errors="replace").split())
    except OSError:
        return ""


def describe(pid: int, comm: str) -> str:
    """A process in a few words: another sshbench measurement is named as such."""
    cmdline = _cmdline(pid)
    if "sshbench" in cmdline and any(word in cmdline.split() for word in MEASURING_COMMANDS):
        return f"another sshbench measurement (pid {pid})"
    shown = cmdline[:60] or comm
    return f"{comm} (pid {pid}: {shown})" if shown != comm else f"{comm} (pid {pid})"


def between(before: CpuSnapshot, after: CpuSnapshot, me: int | None = None) -> Neighbours | None:
    """What processes that are not ours used from `before` to `after` (a process that started meanwhile counts from
    its start). None when no time passed."""
    elapsed = after.at - before.at
    if elapsed <= 0:
        return None
    me = os.getpid() if me is None else me
    used: dict[int, int] = {}
    for pid, process in after.processes.items():
        if pid == 2 or process.ppid == 2 or _ours(pid, after.processes, me):
            continue  # kernel threads (kthreadd's children) move our own packets: loopback's softirq work
        earlier = before.processes.get(pid)
        ticks = process.cpu_ticks - (earlier.cpu_ticks if earlier is not None and earlier.comm == process.comm else 0)
        if ticks > 0:
            used[pid] = ticks
    cores = sum(used.values()) / _TICKS_S / elapsed
    if not used:
        return Neighbours(0.0, None)
    pid = max(used, key=lambda p: used[p])
    busiest = f"{describe(pid, after.processes[pid].comm)} {used[pid] / _TICKS_S / elapsed:.2f} core"
    return Neighbours(round(cores, 3), busiest)
