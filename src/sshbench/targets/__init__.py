"""Target registry: how sshbench reaches an SSH server."""

from __future__ import annotations

from sshbench.targets.base import Target
from sshbench.targets.private_openssh import PrivateOpenSSH
from sshbench.targets.remote import RemoteHost

TARGETS: dict[str, type[Target]] = {
    PrivateOpenSSH.kind: PrivateOpenSSH,
    RemoteHost.kind: RemoteHost,
}


def make_target(host: str | None, *, sshd: str | None = None, ssh: str = "ssh",
                ssh_config: str | None = None, env: dict[str, str] | None = None) -> Target:
    """No host: a private sshd on loopback. A host: the user's own ssh configuration for it.
    `env`: the private sshd's environment (--no-aesni); a remote sshd's cannot be set."""
    if host is None:
        return PrivateOpenSSH(sshd=sshd, ssh=ssh, env=env)
    return RemoteHost(host, ssh=ssh, ssh_config=ssh_config)


__all__ = ["TARGETS", "Target", "make_target", "PrivateOpenSSH", "RemoteHost"]
