"""Target registry: how sshbench reaches an SSH server."""

from __future__ import annotations

from sshbench.errors import UsageError
from sshbench.targets.base import Target
from sshbench.targets.private_openssh import PrivateOpenSSH
from sshbench.targets.remote import RemoteHost

TARGETS: dict[str, type[Target]] = {
    PrivateOpenSSH.kind: PrivateOpenSSH,
    RemoteHost.kind: RemoteHost,
}


# Private server implementations, for `--server` (each started by sshbench on this machine).
SERVERS: dict[str, type[Target]] = {
    "openssh": PrivateOpenSSH,
}


def make_target(host: str | None, *, sshd: str | None = None, ssh: str = "ssh",
                ssh_config: str | None = None, env: dict[str, str] | None = None, server: str = "openssh",
                links: list | None = None) -> Target:
    """No host: a private server (`server`, default OpenSSH) on loopback. A host: the user's own ssh
    configuration for it. `env`: the private server's environment (--no-aesni); a remote sshd's
    cannot be set. `links`: the link profiles the run sweeps (emulated links need namespaces)."""
    if host is not None:
        if server != "openssh":
            raise UsageError(f"--server {server} starts a private server; it cannot be combined with a HOST")
        return RemoteHost(host, ssh=ssh, ssh_config=ssh_config)
    if server not in SERVERS:
        raise UsageError(f"unknown server {server!r}; known: {', '.join(SERVERS)}")
    if server == "openssh":
        return PrivateOpenSSH(sshd=sshd, ssh=ssh, env=env)
    return SERVERS[server](ssh=ssh, env=env)  # type: ignore[call-arg]


__all__ = ["SERVERS", "TARGETS", "Target", "make_target", "PrivateOpenSSH", "RemoteHost"]
