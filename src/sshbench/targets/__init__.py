"""Targets: how sshbench reaches an SSH server, behind one interface (targets/base.py) and one registry.

SERVERS names the private server implementations (`--server`, each started by sshbench on this machine);
a HOST is a RemoteHost read from the user's ssh_config. Each class builds itself from the run's TargetSpec
(`from_spec`) and checks its own options (`check_spec`)."""

from __future__ import annotations

from sshbench.errors import UsageError
from sshbench.host import placement
from sshbench.settings import TargetSpec
from sshbench.targets import cpu_quota
from sshbench.targets.asyncssh_server import AsyncsshServer
from sshbench.targets.base import Target
from sshbench.targets.dropbear import DropbearServer
from sshbench.targets.local import LocalServer
from sshbench.targets.netns_openssh import NetnsOpenSSH
from sshbench.targets.private_openssh import PrivateOpenSSH
from sshbench.targets.remote import RemoteHost

SERVERS: dict[str, type[Target]] = {
    "openssh": PrivateOpenSSH,
    "dropbear": DropbearServer,
    "asyncssh": AsyncsshServer,
}
# A --server behind emulated links (--link): the same server in a namespace pair. A run with any emulated
# link starts this class instead of SERVERS' (check_spec refuses a server missing here).
LINK_SERVERS: dict[str, type[Target]] = {
    "openssh": NetnsOpenSSH,
}


def check_spec(spec: TargetSpec) -> None:
    """Every target option of a run, refused with one line before anything starts."""
    servers = list(spec.servers)
    emulated = [p for p in spec.links if p.emulated]
    if spec.host is not None:
        if servers != ["openssh"]:
            raise UsageError("--server starts private servers on this machine; it cannot be combined with a HOST")
        if emulated:
            raise UsageError(
                "--link emulates a link between two namespaces on this machine; it cannot be combined with a HOST"
            )
    for name in servers:
        if spec.host is None and name not in SERVERS:
            raise UsageError(f"unknown server {name!r}; known: {', '.join(SERVERS)}")
    if emulated and servers != ["openssh"]:  # LINK_SERVERS has OpenSSH only
        raise UsageError(f"--link {emulated[0].name} works with the private OpenSSH server only for now")
    if spec.server_cpu is not None:
        if spec.host is not None or servers != ["openssh"]:
            raise UsageError(
                "--server-cpu limits the private OpenSSH server started here; it cannot be combined "
                "with a HOST or another --server"
            )
        if reason := cpu_quota.missing_requirement():
            raise UsageError(reason)
    if spec.dropbear_window is not None and "dropbear" not in servers:
        raise UsageError("--dropbear-window sets the receive window of --server dropbear; add that server")
    for name in servers:
        if name in SERVERS:
            SERVERS[name].check_spec(spec)


def make_target(spec: TargetSpec, server: str = "openssh", env: dict[str, str] | None = None) -> Target:
    """No host: the private server `server` (default OpenSSH) on loopback, or between two namespaces when the
    run sweeps emulated links. A host: the user's own ssh configuration for it. `env`: the private server's
    environment (--no-aesni); a remote sshd's cannot be set."""
    check_spec(spec)
    if spec.host is not None:
        return RemoteHost.from_spec(spec, env)
    if spec.emulated:
        return LINK_SERVERS[server].from_spec(spec, env)  # not pinned: the link's relays share the CPUs
    target = SERVERS[server].from_spec(spec, env)
    if isinstance(target, LocalServer):
        target.placement = placement.choose(spec.pin, spec.most_streams)[0]
    return target


__all__ = [
    "LINK_SERVERS",
    "SERVERS",
    "NetnsOpenSSH",
    "PrivateOpenSSH",
    "RemoteHost",
    "Target",
    "check_spec",
    "make_target",
]
