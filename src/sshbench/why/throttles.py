"""The throttles of the `--why` experiments: each slows one resource by a known fraction for one trial
and undoes it after. Which ones are possible depends on the target; each that is not says why.

- client-cpu: every experiment trial's ssh client (its whole process tree) is born in a cgroup of
  ours (a `sh` that writes its own pid to the group's cgroup.procs, then execs the client), with no
  limit for the unthrottled trials and a CFS quota of (1 - f) of one core for the throttled ones:
  ssh is one thread per connection, so its capacity is one core, and a quota of (1 - f) core is
  what a core (1 - f) as fast could do for it.
- server-cpu: the private server's listener is moved into a cgroup of ours for the experiments
  (every session it forks is born inside), with no limit, and (1 - f) of one core when throttled;
  under `--server-cpu F` its own quota group is used and F becomes F x (1 - f). Moved back out
  when the experiments end, so the rest of the run is as before. A remote host: not ours to change.
- link: the emulated link's rate (tc on both veth ends, links/path.py) at (1 - f) of the path's rate
  (the profile's rate, else the raw TCP control's median on that link). Loopback (127.0.0.1) is
  the `lo` device every process on the machine shares: shaping it would slow them too, so it is
  not throttled and the raw TCP control's headroom is reported instead. A remote host's path
  crosses interfaces others use: not throttled either.
- disk: `--sink disk` would need io.max (the cgroup v2 io controller) on the receiver's writes;
  cgroup v1's blkio throttles only direct I/O, not the sink's buffered writes.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.baselines import sensitivity
from sshbench.host.cleanup import Cleanup
from sshbench.links import LINKS
from sshbench.results import Combination
from sshbench.targets import cpu_quota
from sshbench.targets.base import Target
from sshbench.targets.cpu_quota import CpuQuota, CpuQuotaError
from sshbench.targets.netns_openssh import NetnsOpenSSH


@dataclass
class Throttle:
    """One resource's throttle. `reason` set: not possible here (never applied)."""

    resource: str
    slowdown: float = sensitivity.SLOWDOWN
    setting: str = ""
    reason: str | None = None

    @property
    def possible(self) -> bool:
        return self.reason is None

    def setup(self, cleanup: Cleanup) -> None:
        """Before the first experiment trial."""

    def teardown(self) -> None:
        """After the last (idempotent)."""

    def prefix(self) -> list[str]:
        """argv before every experiment trial's client (throttled or not)."""
        return []

    def apply(self, target: Target, combo: Combination) -> None:
        """Right before a throttled trial, after the target's own before_trial()."""

    def undo(self, target: Target, combo: Combination) -> None:
        """Right after it."""

    def to_json(self) -> dict:
        out: dict = {"resource": self.resource, "possible": self.possible}
        if self.possible:
            out.update(setting=self.setting, slowdown=self.slowdown)
        else:
            out["reason"] = self.reason
        return out


def _unlimited_group() -> CpuQuota:
    group = CpuQuota(1.0).create()
    group.set_fraction(None)
    return group


@dataclass
class ClientCpu(Throttle):
    resource: str = "client-cpu"
    group: CpuQuota | None = None

    def setup(self, cleanup: Cleanup) -> None:
        self.group = _unlimited_group()
        cleanup.push(self.teardown)
        self.setting = (
            f"cgroup {self.group.version} CPU quota {1 - self.slowdown:g} core "
            f"({self.group.period_us // 1000} ms period) around the ssh client"
        )

    def prefix(self) -> list[str]:
        assert self.group is not None and self.group.path is not None
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.group.path / "cgroup.procs")]

    def apply(self, target: Target, combo: Combination) -> None:
        assert self.group is not None
        self.group.set_fraction(1 - self.slowdown)

    def undo(self, target: Target, combo: Combination) -> None:
        assert self.group is not None
        self.group.set_fraction(None)

    def teardown(self) -> None:
        if self.group is not None:
            self.group.destroy(kill=True)  # only clients of ended trials were ever inside


@dataclass
class ServerCpu(Throttle):
    resource: str = "server-cpu"
    target: Target | None = None
    group: CpuQuota | None = None
    own: bool = False  # a group of ours (else the target's --server-cpu group)
    base_fraction: float | None = None

    def setup(self, cleanup: Cleanup) -> None:
        assert self.target is not None
        quota = self.target.quota
        if quota is not None:
            self.group, self.base_fraction = quota, quota.fraction
            limit = quota.fraction * (1 - self.slowdown)
            self.setting = f"the --server-cpu quota {quota.fraction:g} -> {limit:g} core"
            return
        self.group, self.own = _unlimited_group(), True
        cleanup.push(self.teardown)
        pid = self.target.server_pid()
        assert pid is not None  # plan_for gives a reason (no throttle) for a server sshbench did not start
        self.group.add(pid)  # sessions forked from now on are born inside
        self.setting = (
            f"cgroup {self.group.version} CPU quota {1 - self.slowdown:g} core "
            f"({self.group.period_us // 1000} ms period) around the server's sessions"
        )

    def apply(self, target: Target, combo: Combination) -> None:
        assert self.group is not None
        self.group.set_fraction((self.base_fraction or 1.0) * (1 - self.slowdown))

    def undo(self, target: Target, combo: Combination) -> None:
        assert self.group is not None
        self.group.set_fraction(self.base_fraction)

    def teardown(self) -> None:
        if self.group is None:
            return
        if self.own:
            self.group.destroy(kill=False)  # the listener (and any session left) back where it was
        else:
            with contextlib.suppress(CpuQuotaError):
                self.group.set_fraction(self.base_fraction)


@dataclass
class LinkRate(Throttle):
    resource: str = "link"
    capacity_bit_s: int = 0

    @property
    def rate_bit_s(self) -> int:
        return int(self.capacity_bit_s * (1 - self.slowdown))

    def apply(self, target: Target, combo: Combination) -> None:
        assert isinstance(target, NetnsOpenSSH)  # plan_for offers this throttle for such a target only
        self.setting = (
            target.path.throttle_rate(self.rate_bit_s)
            + f" at {self.rate_bit_s / 1e6:.0f} Mbit/s ({1 - self.slowdown:g} x the path's {self.capacity_bit_s / 1e6:.0f})"
        )

    def undo(self, target: Target, combo: Combination) -> None:
        target.before_trial(combo)  # the profile back at once (switch() re-applies after a throttle)


@dataclass
class Plan:
    """The throttles of one target: those possible and, for the rest, why not."""

    throttles: list[Throttle] = field(default_factory=list)

    @property
    def possible(self) -> list[Throttle]:
        return [t for t in self.throttles if t.possible]


def _cgroup_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (a cgroup with a CPU quota)"
    found = cpu_quota.detect()
    if found is None:
        return "no cgroup cpu controller with CFS bandwidth control here"
    if not os.access(found[1], os.W_OK):
        return f"the cgroup hierarchy at {found[1]} is read-only here"
    return None


def _is_remote(target: Target) -> bool:
    return target.facts is not None or not target.shares_local_filesystem


def plan_for(target: Target, combo: Combination, raw_tcp_mib_s: float | None) -> Plan:
    """Which throttles apply to `combo` on `target` (`raw_tcp_mib_s`: the control's median on its link)."""
    cg = _cgroup_reason()
    remote = _is_remote(target)
    client = ClientCpu(reason=cg)
    server = ServerCpu(target=target, reason=cg)
    if remote:
        server.reason = "the server is another machine: sshbench puts no cgroup there"
    elif server.reason is None and target.server_pid() is None:
        server.reason = "the server's process is not one sshbench started"
    link = LinkRate()
    if remote:
        link.reason = "the path to another machine crosses interfaces other processes use: not shaped"
    elif isinstance(target, NetnsOpenSSH) and combo.link in target.path.states:
        profile = target.path.states[combo.link].profile
        if profile.rate_bit_s:
            link.capacity_bit_s = profile.rate_bit_s
        elif raw_tcp_mib_s:
            link.capacity_bit_s = int(raw_tcp_mib_s * 8 * 1024 * 1024)
        else:
            link.reason = "the path's rate is unknown (no raw TCP control on this link)"
        if os.geteuid() != 0:
            link.reason = "needs root (tc)"
    else:
        headroom = ""
        known = LINKS.get(combo.link)
        if raw_tcp_mib_s:
            headroom = f"; raw TCP ran at {raw_tcp_mib_s:.0f} MiB/s on it"
        link.reason = (
            f"127.0.0.1 is the lo device every process on this machine shares; shaping it would slow them too{headroom}"
            if known is None or not known.emulated
            else "the link is not an emulated one"
        )
    throttles: list[Throttle] = [client, server, link]
    if combo.sink == "disk":
        throttles.append(Throttle("disk", reason=_disk_reason()))
    return Plan(throttles)


def _disk_reason() -> str:
    v2 = [p for t, p, _ in cpu_quota._mounts() if t == "cgroup2"]
    io = False
    for point in v2:
        with contextlib.suppress(OSError):
            io = io or "io" in Path(point, "cgroup.controllers").read_text().split()
    if not io:
        return (
            "io.max needs the cgroup v2 io controller, which this machine's unified hierarchy does not offer "
            "(cgroup v1 blkio throttles only direct I/O, not the sink's buffered writes)"
        )
    return "io.max on the sink's writes is not implemented yet (the io controller is there)"
