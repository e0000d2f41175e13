"""`--server-cpu FRACTION`: run the server (sshd and every session it forks) under a CPU quota, to
emulate a slow far side (seed 003's Bifferboard, seed 000's Atom, a NAS) on a fast machine.

A cgroup with the CFS bandwidth limit `quota / period` = FRACTION of one core (0.1 = a tenth; above 1
= several cores):

- cgroup v2 (where the unified hierarchy has the `cpu` controller): a child of the hierarchy's root,
  `cpu` enabled in the root's `cgroup.subtree_control`, `cpu.max` = "<quota> <period>". The root is
  used rather than our own cgroup because v2 forbids enabling controllers for the children of a
  cgroup that holds processes (the root is exempt);
- cgroup v1 (where the `cpu` controller is mounted on its own hierarchy, as on hybrid systems):
  a child of that hierarchy's root with `cpu.cfs_period_us` and `cpu.cfs_quota_us`.

Processes are moved in by pid (`cgroup.procs`); everything they fork afterwards is born inside.
Names are `sshbench-cpu-<owner pid>-<owner start>-<n>`, so `sweep_stale()` can remove what a
`kill -9`'d owner left (its processes are killed, then the directory removed). Needs root.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from sshbench.host.cleanup import Made
from sshbench.host.osfiles import process_start_time

PREFIX = "sshbench-cpu-"
_NAME = re.compile(r"^sshbench-cpu-(\d+)-(\d+)-(\d+)$")
# A 10 ms period, not the kernel's default 100 ms: with 100 ms a 0.1-core server runs at full speed
# for 10 ms, then stalls 90 ms, so a short step (one handshake round trip, a shell start) finishes
# unthrottled while a transfer stalls for longer than one channel window lasts at that rate; a ~1 s
# data phase then spans only ~10 periods, and its CPU seconds / seconds swing by a period's quota.
# With 10 ms the quota is spread as a slow core would be (openssl speed in the group: the same
# bytes per CPU second with either period).
DEFAULT_PERIOD_US = 10_000
MAX_PERIOD_US = 1_000_000  # the kernel's upper bound for cfs period
MIN_QUOTA_US = 1_000  # the kernel's lower bound for cfs quota
REMOVE_TIMEOUT_S = 5.0
_counter = 0


def period_for(fraction: float) -> int:
    """DEFAULT_PERIOD_US, longer only where the quota would fall below the kernel's 1 ms minimum
    (a fraction under 0.1): the quota is then exactly the fraction of the period, not rounded up."""
    return min(MAX_PERIOD_US, max(DEFAULT_PERIOD_US, round(MIN_QUOTA_US / fraction)))


# A transfer costs the sshd session a fixed ~0.1 s of CPU beyond its per-byte work (measured at 0.1
# core, aes128-gcm, over the reader's clock: 0.09-0.14 s for 8 MiB, 0.175 s for 32 MiB, 0.28-0.30 s
# for 128 MiB; perf shows page faults and copies as its channel buffer grows): 1 s of wall time at
# 0.1 core. Adaptive sizing aims for a data phase of FIXED_CPU_S / FRACTION x 3 at least, so that the
# fixed part is at most a third of it and the per-byte cost (where the cipher matters) ranks.
FIXED_CPU_S = 0.1


def data_phase_seconds(fraction: float | None, default: float = 1.0) -> float:
    """The default --seconds under --server-cpu FRACTION: 0.3 / FRACTION (3 s at 0.1 core), at least
    `default` and at most 10 s; `default` without a quota (or for a fraction settings will refuse)."""
    if fraction is None or not fraction > 0:
        return default
    return round(min(10.0, max(default, 3 * FIXED_CPU_S / fraction)), 3)


class CpuQuotaError(RuntimeError):
    """The cgroup could not be made or used (one line)."""


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(fstype, mount point, super options) of every cgroup mount, from /proc/self/mountinfo."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            found.append((rest[0], fields[4], set(rest[2].split(","))))
    return found


def detect() -> tuple[str, Path] | None:
    """("v2", root of the unified hierarchy) when it offers the cpu controller, else ("v1", the cpu
    hierarchy's root) when there is one with CFS bandwidth control, else None."""
    mounts = _mounts()
    for fstype, point, _ in mounts:
        if fstype == "cgroup2":
            with contextlib.suppress(OSError):
                if "cpu" in Path(point, "cgroup.controllers").read_text().split():
                    return "v2", Path(point)
    for fstype, point, options in mounts:
        if fstype == "cgroup" and "cpu" in options and Path(point, "cpu.cfs_quota_us").exists():
            return "v1", Path(point)
    return None


def missing_requirement() -> str | None:
    """One line saying why --server-cpu cannot work here (None: it can)."""
    if os.geteuid() != 0:
        return "--server-cpu needs root: it creates a cgroup with a CPU quota (cpu.max or cpu.cfs_quota_us)"
    found = detect()
    if found is None:
        v2 = [p for t, p, _ in _mounts() if t == "cgroup2"]
        where = f"the unified hierarchy at {v2[0]} has no cpu controller" if v2 else "no cgroup2 mount"
        return (
            f"--server-cpu needs the cgroup cpu controller: {where}, and no cgroup v1 hierarchy has cpu "
            "with CFS bandwidth control (cpu.cfs_quota_us)"
        )
    version, base = found
    if not os.access(base, os.W_OK):
        return f"--server-cpu: the cgroup {version} hierarchy at {base} is read-only here (a container?)"
    return None


def _pids_in(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _remove_group(group: Path, parent: Path, kill: bool) -> None:
    """Empty the group (kill its processes, or move them to `parent`), then rmdir it (bounded)."""
    deadline = time.monotonic() + REMOVE_TIMEOUT_S
    while group.exists():
        pids = _pids_in(group)
        for pid in pids:
            if kill:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            else:
                with contextlib.suppress(OSError):
                    (parent / "cgroup.procs").write_text(str(pid))
        for pid in pids:  # reap our own children so they leave the group's list
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as err:
            if time.monotonic() > deadline:
                raise CpuQuotaError(f"cannot remove cgroup {group}: {err.strerror} (pids {pids})") from None
            time.sleep(0.01)  # bounded poll: killed processes leave the group once they are gone


def sweep_stale() -> list[str]:
    """Remove sshbench-cpu-* groups whose owner is gone (dead, or its pid reused), killing what is in them."""
    found = detect()
    if found is None or os.geteuid() != 0:
        return []
    _, base = found
    removed = []
    for group in base.glob(f"{PREFIX}*"):
        m = _NAME.match(group.name)
        if not m or not group.is_dir():
            continue
        if process_start_time(int(m.group(1))) == int(m.group(2)):
            continue  # its owner is alive
        with contextlib.suppress(CpuQuotaError):
            _remove_group(group, base, kill=True)
            removed.append(f"cgroup {group}")
    return removed


@dataclass
class CpuQuota(Made):
    """A cgroup limited to `fraction` of one core. `create()`, `add(pid)`, `destroy()`; or `with`."""

    fraction: float
    period_us: int = 0  # 0: period_for(fraction)
    version: str = ""
    path: Path | None = None
    _base: Path | None = None

    def __post_init__(self) -> None:
        if not self.fraction > 0:
            raise ValueError(f"--server-cpu {self.fraction}: must be above 0 (e.g. 0.1 = a tenth of one core)")
        if not self.period_us:
            self.period_us = period_for(self.fraction)

    @property
    def quota_us(self) -> int:
        return max(MIN_QUOTA_US, round(self.fraction * self.period_us))

    def create(self) -> CpuQuota:
        global _counter
        reason = missing_requirement()
        if reason:
            raise CpuQuotaError(reason)
        found = detect()
        assert found is not None
        self.version, self._base = found
        pid = os.getpid()
        _counter += 1
        self.path = self._base / f"{PREFIX}{pid}-{process_start_time(pid) or 0}-{_counter}"
        try:
            if self.version == "v2":
                control = self._base / "cgroup.subtree_control"
                if "cpu" not in control.read_text().split():
                    control.write_text("+cpu")
                self.path.mkdir()
                (self.path / "cpu.max").write_text(f"{self.quota_us} {self.period_us}")
            else:
                self.path.mkdir()
                (self.path / "cpu.cfs_period_us").write_text(str(self.period_us))
                (self.path / "cpu.cfs_quota_us").write_text(str(self.quota_us))
        except OSError as err:
            raise CpuQuotaError(f"cannot set up cgroup {self.path}: {err.strerror or err}") from None
        return self

    def set_fraction(self, fraction: float | None) -> None:
        """Change the limit of the live group (None: no limit), keeping its period: the `--why`
        experiments (sshbench.why) slow a group down for one trial and undo it after."""
        assert self.path is not None, "create() first"
        if fraction is not None:
            self.fraction = fraction
        quota = self.quota_us if fraction is not None else None
        try:
            if self.version == "v2":
                (self.path / "cpu.max").write_text(f"{quota if quota is not None else 'max'} {self.period_us}")
            else:
                (self.path / "cpu.cfs_quota_us").write_text(str(quota if quota is not None else -1))
        except OSError as err:
            raise CpuQuotaError(f"cannot set the quota of {self.path}: {err.strerror or err}") from None

    def add(self, pid: int) -> None:
        """Move process `pid` (all its threads) into the group; what it forks from now on is born inside.
        Children it already has stay where they are: add the daemon before it accepts connections."""
        assert self.path is not None, "create() first"
        try:
            (self.path / "cgroup.procs").write_text(str(pid))
        except OSError as err:
            raise CpuQuotaError(f"cannot move pid {pid} into {self.path}: {err.strerror or err}") from None

    def join(self) -> None:
        """Move the calling process in (for subprocess's preexec_fn: the child enters before it execs)."""
        self.add(os.getpid())

    def pids(self) -> list[int]:
        return _pids_in(self.path) if self.path is not None else []

    def throttled(self) -> dict[str, int]:
        """cpu.stat's bandwidth counters (nr_periods, nr_throttled, throttled time): the evidence."""
        stats: dict[str, int] = {}
        with contextlib.suppress(OSError, ValueError):
            for line in (self.path / "cpu.stat").read_text().splitlines():  # type: ignore[operator]
                key, value = line.split()
                stats[key] = int(value)
        return stats

    def describe(self) -> dict:
        return {
            "fraction": self.fraction,
            "quota_us": self.quota_us,
            "period_us": self.period_us,
            "cgroup": self.version,
            "path": str(self.path) if self.path else None,
        }

    def destroy(self, kill: bool = False) -> None:
        """Move the group's processes back to the hierarchy's root (or kill them, `kill=True`) and
        remove the group. Idempotent."""
        if self.path is not None and self._base is not None and self.path.exists():
            _remove_group(self.path, self._base, kill)
