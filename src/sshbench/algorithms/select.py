"""Resolve `--ciphers/--macs/--kex` specs (names, globs, `all`, `default`) against what both ends support."""

from __future__ import annotations

import fnmatch

from sshbench.algorithms.legacy import legacy_hint
from sshbench.algorithms.lists import (
    LEGACY_CIPHERS,
    LEGACY_MACS,
    ClientAlgorithms,
    ServerAlgorithms,
)
from sshbench.errors import UsageError

NONE_CIPHER = "none"


def select(kind: str, spec: str, client: ClientAlgorithms, server: ServerAlgorithms, target_label: str) -> list[str]:
    """Resolve a comma list of names, shell globs, `all` and `default` against what both ends support.

    Raises UsageError naming the offending item and what is supported.
    """
    available = [a for a in client.supported(kind) if a in server.supported(kind)]
    # `none` (HPN-SSH's unencrypted cipher) only when named itself: never from `all`, `default` or a glob
    everything = [a for a in available if a != NONE_CIPHER]
    chosen: list[str] = []
    for token in (t.strip() for t in spec.split(",")):
        if not token:
            continue
        if token == "all":
            matches = everything
        elif token == "default":
            matches = [a for a in client.defaults(kind) if a in everything]
        elif any(ch in token for ch in "*?["):
            matches = [a for a in everything if fnmatch.fnmatchcase(a, token)]
            if not matches:
                raise UsageError(f"--{kind}s {token!r} matches no {kind} both ends support: {', '.join(available)}")
        elif token in available:
            matches = [token]
        elif token in client.supported(kind):
            raise UsageError(
                f"the server at {target_label} does not offer {kind} {token!r}; it offers: "
                f"{', '.join(server.supported(kind)) or '(nothing parsed)'}"
            )
        else:
            # who can run a removed cipher instead (--server asyncssh)
            hint = legacy_hint(kind, token) if token in LEGACY_CIPHERS or token in LEGACY_MACS else ""
            raise UsageError(f"unknown {kind} {token!r}{hint}; this ssh supports: {', '.join(client.supported(kind))}")
        chosen.extend(m for m in matches if m not in chosen)
    if not chosen:
        raise UsageError(f"--{kind}s {spec!r} selects nothing")
    return chosen
