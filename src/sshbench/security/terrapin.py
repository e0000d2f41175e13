"""Terrapin (CVE-2023-48795): which combinations it affects, and whether strict kex protects them.

Each side appends a pseudo-algorithm to its first KEXINIT kex list: `kex-strict-c-v00@openssh.com` (client),
`kex-strict-s-v00@openssh.com` (server). Strict kex is in force only when both markers are present; then
the prefix-truncation attack fails. `ssh -vv` prints both proposals ("local client KEXINIT proposal" and
"peer server KEXINIT proposal"), which is where sshbench reads them (sshlog.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sshbench.algorithms import threaded
from sshbench.algorithms.kexinit import (
    CLIENT_STRICT_KEX_MARKER,
    SERVER_STRICT_KEX_MARKER,
)
from sshbench.openssh.sshlog import parse_local_kexinit, parse_peer_kexinit

CLIENT_MARKER = CLIENT_STRICT_KEX_MARKER
SERVER_MARKER = SERVER_STRICT_KEX_MARKER
CHACHA20 = "chacha20-poly1305@openssh.com"
ETM_SUFFIX = "-etm@openssh.com"


def affected(cipher: str, mac: str) -> bool:
    """The combinations the Terrapin paper attacks: ChaCha20-Poly1305 with any MAC, any CBC cipher with an
    encrypt-then-MAC MAC (GCM, and CTR with any MAC, are not affected in practice). A threaded twin
    (chacha20-poly1305-mt@hpnssh.org, algorithms/threaded.py) is affected as its serial cipher."""
    cipher = threaded.serial(cipher)
    return cipher == CHACHA20 or (cipher.endswith("-cbc") and mac.endswith(ETM_SUFFIX))


@dataclass(frozen=True)
class StrictKex:
    """Whether each side offers strict kex; None where it was not seen."""

    client: bool | None
    server: bool | None

    @property
    def negotiated(self) -> bool | None:
        """True only when both sides offer it; False when either is known not to; None when unknown."""
        if self.client is False or self.server is False:
            return False
        if self.client and self.server:
            return True
        return None

    def describe(self) -> str:
        def side(value: bool | None) -> str:
            return {True: "yes", False: "no", None: "unknown"}[value]

        state = {True: "in force", False: "NOT in force", None: "unknown"}[self.negotiated]
        return f"strict kex {state} (client {side(self.client)}, server {side(self.server)})"


def from_ssh_log(text: str) -> StrictKex:
    """Both sides' strict-kex support from one `ssh -vv` log."""
    local, peer = parse_local_kexinit(text), parse_peer_kexinit(text)
    return StrictKex(
        client=None if local is None else CLIENT_MARKER in local.kex,
        server=None if peer is None else SERVER_MARKER in peer.kex,
    )


def from_environment(environment: dict) -> StrictKex:
    """From a RunResult's environment (`client_strict_kex`, `server_strict_kex`)."""
    return StrictKex(client=environment.get("client_strict_kex"), server=environment.get("server_strict_kex"))
