"""What each end supports and what a run selects: the client's and server's lists (`lists`), their
KEXINIT proposals (`kexinit`), spec resolution (`select`), the ciphers OpenSSH removed (`legacy`) and
what AsyncSSH can still run (`asyncssh_caps`)."""

from __future__ import annotations

from sshbench.algorithms.lists import (
    KEX_PSEUDO_PREFIXES,
    KINDS,
    LEGACY_CIPHERS,
    LEGACY_MACS,
    ClientAlgorithms,
    ServerAlgorithms,
    client_algorithms,
    parse_ssh_G,
    strip_kex_pseudo,
    would_negotiate,
)
from sshbench.algorithms.select import select

__all__ = [
    "KEX_PSEUDO_PREFIXES",
    "KINDS",
    "LEGACY_CIPHERS",
    "LEGACY_MACS",
    "ClientAlgorithms",
    "ServerAlgorithms",
    "client_algorithms",
    "parse_ssh_G",
    "select",
    "strip_kex_pseudo",
    "would_negotiate",
]
