"""Where the client and the private server run: on separate CPUs of this machine (`--pin`, the default).

Why: on a 2-core VM the scheduler moves ssh, sshd and its reader between the cores from one connection
to the next, and the GCM ciphers' rate moves with it. 8 interleaved rounds of aes128-gcm and
chacha20-poly1305, unpinned then split (ssh on one core, sshd and everything it forks on the other),
back to back: the rates did not move (aes128-gcm 1111 vs 1156 MiB/s, chacha20 633 vs 631) but
aes128-gcm's coefficient of variation halved (0.142 to 0.073) and the ratio's 95% CI narrowed from
1.43-2.00 to 1.69-2.04. The same placement in every trial is what makes runs agree with each other.

Both sides still get a whole core each, as a bulk transfer between two machines would; everything
on one core measures something else (ratio ~2.0 instead of ~1.6). With fewer than two usable CPUs, or
with more parallel streams (-P) than one side's share of them, nothing is pinned (streams sharing a
core would measure the pin, not the cipher), and the run says so.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Placement:
    """The CPUs of the client's process tree and of the private server's (each a taskset list)."""

    client_cpus: tuple[int, ...]
    server_cpus: tuple[int, ...]

    def client_prefix(self) -> list[str]:
        """argv prefix for a client: taskset execs it, so the pid (and wait4's rusage) stay the client's."""
        return ["taskset", "-c", _cpu_list(self.client_cpus)]

    def server_prefix(self) -> list[str]:
        """argv prefix for the daemon: every session it forks inherits its CPUs."""
        return ["taskset", "-c", _cpu_list(self.server_cpus)]

    def describe(self) -> dict:
        return {"client_cpus": list(self.client_cpus), "server_cpus": list(self.server_cpus)}

    def text(self) -> str:
        return f"ssh on CPU {_cpu_list(self.client_cpus)}, server on CPU {_cpu_list(self.server_cpus)}"

    @classmethod
    def from_json(cls, described: object) -> Placement | None:
        """The placement a run's target described (describe()), None when it was not pinned or unreadable."""
        if not isinstance(described, dict):
            return None
        client, server = described.get("client_cpus"), described.get("server_cpus")
        if not (isinstance(client, list) and isinstance(server, list) and client and server):
            return None
        return cls(tuple(int(c) for c in client), tuple(int(c) for c in server))


def _cpu_list(cpus: tuple[int, ...]) -> str:
    return ",".join(str(c) for c in cpus)


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity mask: a container's or a user's taskset)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return []


def choose(pin: bool, max_streams: int, cpus: list[int] | None = None) -> tuple[Placement | None, str | None]:
    """The placement for a run, or None with the reason nothing is pinned (None: not asked for).
    `cpus`: the usable CPUs (default: this process's mask). The client gets the first half."""
    if not pin:
        return None, None
    cpus = usable_cpus() if cpus is None else sorted(cpus)
    if len(cpus) < 2:
        return None, f"not pinned: {len(cpus) or 'no'} usable CPU (the client and the server share it)"
    if shutil.which("taskset") is None:
        return None, "not pinned: taskset not found (apt-get install util-linux)"
    half = len(cpus) // 2
    if max_streams > half:
        return None, (
            f"not pinned: {max_streams} parallel streams need more than {half} CPU(s) a side "
            f"of the {len(cpus)} usable (--no-pin hides this notice)"
        )
    return Placement(client_cpus=tuple(cpus[:half]), server_cpus=tuple(cpus[half:])), None
