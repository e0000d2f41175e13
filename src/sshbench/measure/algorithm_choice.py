"""Which algorithms a run measures: the user's patterns resolved against what both ends speak (select_algorithms),
the client's default combination (default_algorithms, defaults_json), and the notices of what was left out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms, would_negotiate
from sshbench.algorithms import select as select_all
from sshbench.errors import UsageError
from sshbench.results import IMPLICIT_MAC

if TYPE_CHECKING:
    from sshbench.settings import RunSettings


def notice_once(notices: list[str], notice: str) -> None:
    if notice not in notices:
        notices.append(notice)


def select_algorithms(
    settings: RunSettings,
    client: ClientAlgorithms,
    server: ServerAlgorithms,
    label: str,
    skipped: list[str] | None = None,
    every_cipher: bool = False,
) -> tuple[list[str], list[str], list[str]]:
    """The ciphers, MACs and kex to measure between this client and server. With `skipped` (several
    client/server pairs), a name this pair cannot speak is left out and listed there instead of
    failing: another pair (an AsyncSSH client for arcfour) may run it.

    With no --ciphers: the ciphers the client offers by default (its `ssh -G` list, the user's ssh_config
    included) that the server speaks, which is what the config line reorders; `--ciphers all`, --full and
    `every_cipher` (a pair whose point is the legacy ciphers: AsyncSSH) take every cipher both ends speak.
    Why not all by default: OpenSSH 9.2 also speaks three CBC ciphers and 3des-cbc (weak and broken,
    never offered unless configured); their 4 of 10 rows cost a default run a third of each round, and the
    rounds they took are what decided the fastest row against the rest (issue 23: 3 rounds in 60 s)."""
    s = settings

    def select(kind: str, spec: str, client: ClientAlgorithms, server: ServerAlgorithms, label: str) -> list[str]:
        if skipped is None:
            return select_all(kind, spec, client, server, label)
        chosen: list[str] = []
        first_error: UsageError | None = None
        for token in (t.strip() for t in spec.split(",") if t.strip()):
            try:
                chosen += [n for n in select_all(kind, token, client, server, label) if n not in chosen]
            except UsageError as err:
                first_error = first_error or err
                skipped.append(f"{kind} {token}")
        if not chosen:
            raise first_error or UsageError(f"--{kind}s {spec!r} selects nothing")
        return chosen

    offered = [c for c in client.default_ciphers if c in server.ciphers and c in client.ciphers]
    every = s.full or every_cipher or not offered
    ciphers = select("cipher", s.ciphers or ("all" if every else "default"), client, server, label)
    if s.macs:
        macs = select("mac", s.macs, client, server, label)
    elif s.full:
        macs = select("mac", "all", client, server, label)
    else:
        default_mac = would_negotiate(client.default_macs, server.macs)
        macs = [default_mac] if default_mac else select("mac", "all", client, server, label)[:1]
    if s.kex:
        kexes = select("kex", s.kex, client, server, label)
    else:
        default_kex = would_negotiate(client.default_kex, server.kex)
        kexes = [default_kex] if default_kex else select("kex", "all", client, server, label)[:1]
    return ciphers, macs, kexes


def default_algorithms(client: ClientAlgorithms, server: ServerAlgorithms) -> dict[str, str] | None:
    """What a connection with no options negotiates between this client and this server: the client's first
    default the server offers, per kind (the MAC `implicit` for an AEAD cipher). None where one is missing."""
    cipher = would_negotiate(client.default_ciphers, server.ciphers)
    mac = IMPLICIT_MAC if cipher in client.aead_ciphers else would_negotiate(client.default_macs, server.macs)
    kex = would_negotiate(client.default_kex, server.kex)
    if not (cipher and mac and kex):
        return None
    return {"cipher": cipher, "mac": mac, "kex": kex}


def defaults_json(client: ClientAlgorithms, server: ServerAlgorithms) -> dict:
    """The environment's `client_default_algorithms`: the client's default lists (what `^`/`-` config lines
    change, security/config_lines.py) and what they negotiate with this server (the conclusion's default)."""
    return {
        "negotiated": default_algorithms(client, server),
        "lists": {"cipher": client.default_ciphers, "mac": client.default_macs, "kex": client.default_kex},
    }


def note_ciphers_left_out(
    settings: RunSettings,
    ciphers: list[str],
    client: ClientAlgorithms,
    server: ServerAlgorithms,
    notices: list[str],
) -> None:
    """The default selection (the client's offered ciphers) left some out: say which, and how to add them."""
    if settings.ciphers or settings.full:
        return
    left_out = [c for c in client.ciphers if c in server.ciphers and c not in ciphers and c != "none"]
    if left_out:
        notice_once(
            notices,
            f"ciphers: the {len(ciphers)} your ssh offers by default; --ciphers all adds {', '.join(left_out)}",
        )


def note_idle_mac_options(
    settings: RunSettings, ciphers: list[str], aead_ciphers: set[str], notices: list[str]
) -> None:
    """A MAC option that changes nothing because every selected cipher is AEAD (its own integrity): said once."""
    if not ciphers or not all(c in aead_ciphers for c in ciphers):
        return
    if settings.macs:
        notice_once(notices, "every selected cipher is AEAD (it carries its own integrity): --macs has no effect")
    elif settings.full:
        notice_once(notices, "every selected cipher is AEAD (it carries its own integrity): --full sweeps no MACs")
