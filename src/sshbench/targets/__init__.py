"""Target registry: how sshbench reaches an SSH server."""

from __future__ import annotations

from sshbench.errors import UsageError
from sshbench.targets.asyncssh_server import AsyncsshServer
from sshbench.targets.base import Target
from sshbench.targets.dropbear import DropbearServer
from sshbench.targets.private_openssh import PrivateOpenSSH
from sshbench.targets.remote import RemoteHost

TARGETS: dict[str, type[Target]] = {
    PrivateOpenSSH.kind: PrivateOpenSSH,
    RemoteHost.kind: RemoteHost,
}


# Private server implementations, for `--server` (each started by sshbench on this machine).
SERVERS: dict[str, type[Target]] = {
    "openssh": PrivateOpenSSH,
    "dropbear": DropbearServer,
    "asyncssh": AsyncsshServer,
}


def make_target(host: str | None, *, sshd: str | None = None, ssh: str = "ssh",
                ssh_config: str | None = None, env: dict[str, str] | None = None, server: str = "openssh",
                links: list | None = None, server_options: dict[str, dict] | None = None) -> Target:
    """No host: a private server (`server`, default OpenSSH) on loopback. A host: the user's own ssh
    configuration for it. `env`: the private server's environment (--no-aesni); a remote sshd's
    cannot be set. `links`: the link profiles the run sweeps (emulated links need namespaces).
    `server_options`: per server name, keyword arguments of its class (e.g. {"dropbear": {"window": N}})."""
    emulated = [p for p in (links or []) if getattr(p, "emulated", False)]
    if host is not None:
        if server != "openssh":
            raise UsageError(f"--server {server} starts a private server; it cannot be combined with a HOST")
        if emulated:
            raise UsageError("--link emulates a link between two namespaces on this machine; "
                             "it cannot be combined with a HOST")
        return RemoteHost(host, ssh=ssh, ssh_config=ssh_config)
    if server not in SERVERS:
        raise UsageError(f"unknown server {server!r}; known: {', '.join(SERVERS)}")
    if emulated:
        # Every link of the run (loopback included) through one namespace pair per server (sshbench.links).
        if server != "openssh":
            raise UsageError(f"--link {emulated[0].name} works with the private OpenSSH server only for now")
        from sshbench.targets.netns_openssh import NetnsOpenSSH

        return NetnsOpenSSH(list(links or []), sshd=sshd, ssh=ssh, env=env)
    if server == "openssh":
        return PrivateOpenSSH(sshd=sshd, ssh=ssh, env=env)
    return SERVERS[server](ssh=ssh, env=env, **(server_options or {}).get(server, {}))  # type: ignore[call-arg]


__all__ = ["SERVERS", "TARGETS", "Target", "make_target", "PrivateOpenSSH", "RemoteHost"]
