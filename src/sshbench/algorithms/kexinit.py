"""The server's and the client's own KEXINIT proposals, as printed by `ssh -vv`, turned into algorithm
lists: what every target reads from its login probe."""

from __future__ import annotations

from sshbench.algorithms.lists import ServerAlgorithms, strip_kex_pseudo
from sshbench.openssh.sshlog import KexInit, parse_local_kexinit, parse_peer_kexinit

# The pseudo-algorithm a client appends to its kex list when it offers strict kex (Terrapin countermeasure).
CLIENT_STRICT_KEX_MARKER = "kex-strict-c-v00@openssh.com"
SERVER_STRICT_KEX_MARKER = "kex-strict-s-v00@openssh.com"


def server_algorithms(kexinit: KexInit) -> ServerAlgorithms:
    """What the server offers in both directions (a cipher or MAC offered one way only cannot be pinned)."""
    return ServerAlgorithms(
        ciphers=[c for c in kexinit.ciphers_ctos if c in kexinit.ciphers_stoc],
        macs=[m for m in kexinit.macs_ctos if m in kexinit.macs_stoc],
        kex=strip_kex_pseudo(kexinit.kex),
        compression=kexinit.compression_ctos,
        strict_kex=kexinit.strict_kex,
    )


def server_algorithms_from_log(log: str) -> ServerAlgorithms | None:
    """The server's proposal in an `ssh -vv` log, or None when it is not there."""
    kexinit = parse_peer_kexinit(log)
    return None if kexinit is None else server_algorithms(kexinit)


def server_strict_kex_from_log(log: str) -> bool | None:
    kexinit = parse_peer_kexinit(log)
    return None if kexinit is None else kexinit.strict_kex


def client_strict_kex_from_log(log: str) -> bool | None:
    """Whether the client's own KEXINIT offered strict kex; None where it was not printed."""
    local = parse_local_kexinit(log)
    return None if local is None else CLIENT_STRICT_KEX_MARKER in local.kex
