"""Every cipher and MAC the seed write-ups measured, and which implementation installed here can still
negotiate each one.

OpenSSH 7.6 removed arcfour*, blowfish-cbc, cast128-cbc, rijndael-cbc@lysator.liu.se and
hmac-ripemd160*; the seeds measured them. Dropbear never had most of them; AsyncSSH still speaks the
ciphers through the `cryptography` package, whose OpenSSL may or may not carry the legacy provider
(`CRYPTOGRAPHY_OPENSSL_NO_LEGACY=1`, or a distribution build without it, takes RC4, Blowfish and CAST5
away while AsyncSSH keeps listing them). So availability is probed by running the primitive, not read
from a list.

Nothing here starts a server: the callers pass what the servers offer (from their KEXINIT).
"""

from __future__ import annotations

from dataclasses import dataclass

from sshbench.algorithms.asyncssh_caps import (
    LEGACY_PRIMITIVE_OF,
    AsyncsshAlgorithms,
    asyncssh_algorithms,
)
from sshbench.algorithms.lists import LEGACY_CIPHERS, LEGACY_MACS

# Every cipher named in ../shared/seeds (SSH names), in the order a reader meets them.
SEED_CIPHERS: tuple[str, ...] = (
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-cbc",
    "aes192-cbc",
    "aes256-cbc",
    "3des-cbc",
    "arcfour",
    "arcfour128",
    "arcfour256",
    "blowfish-cbc",
    "cast128-cbc",
    "rijndael-cbc@lysator.liu.se",
)
# Every MAC named in the seeds.
SEED_MACS: tuple[str, ...] = (
    "umac-64-etm@openssh.com",
    "umac-128-etm@openssh.com",
    "umac-64@openssh.com",
    "umac-128@openssh.com",
    "hmac-sha1",
    "hmac-sha1-etm@openssh.com",
    "hmac-sha1-96",
    "hmac-sha1-96-etm@openssh.com",
    "hmac-sha2-256",
    "hmac-sha2-256-etm@openssh.com",
    "hmac-sha2-512",
    "hmac-sha2-512-etm@openssh.com",
    "hmac-md5",
    "hmac-md5-etm@openssh.com",
    "hmac-md5-96",
    "hmac-md5-96-etm@openssh.com",
    "hmac-ripemd160",
    "hmac-ripemd160@openssh.com",
    "hmac-ripemd160-etm@openssh.com",
)

# Names no implementation sshbench can drive speaks any more: the reason shown for them.
NOBODY_SPEAKS: dict[str, str] = {
    "rijndael-cbc@lysator.liu.se": "removed from OpenSSH in 7.6 (an old alias of aes256-cbc); "
    "neither Dropbear nor AsyncSSH has it",
    "hmac-ripemd160": "removed from OpenSSH in 7.6; neither Dropbear nor AsyncSSH has it",
    "hmac-ripemd160@openssh.com": "removed from OpenSSH in 7.6; neither Dropbear nor AsyncSSH has it",
    "hmac-ripemd160-etm@openssh.com": "removed from OpenSSH in 7.6; neither Dropbear nor AsyncSSH has it",
}


def legacy_hint(kind: str, name: str) -> str:
    """The end of the error for a name the OpenSSH client cannot speak: who can, and how."""
    if name in NOBODY_SPEAKS:
        return f" ({NOBODY_SPEAKS[name]})"
    algs = asyncssh_algorithms()
    listed = algs.ciphers if kind == "cipher" else algs.macs if kind == "mac" else algs.kex
    if name in listed:
        return (
            " (removed from OpenSSH in 7.6; this ssh client cannot speak it: `--server asyncssh` runs it "
            "between AsyncSSH's own client and server)"
        )
    if name in algs.unavailable:
        return f" (removed from OpenSSH in 7.6; AsyncSSH could run it, but {algs.unavailable[name]})"
    if algs.missing_reason:
        return f" (removed from OpenSSH in 7.6; `--server asyncssh` could run it, but {algs.missing_reason})"
    return " (removed from OpenSSH in 7.6; this ssh client cannot speak it)"


# --- `sshbench algorithms --all` -------------------------------------------------------------------


@dataclass
class Offer:
    """One implementation pair's lists (None with a reason where it cannot be used here)."""

    pair: str  # "client/server", e.g. "openssh/dropbear"
    ciphers: list[str] | None
    macs: list[str] | None
    reason: str | None = None


@dataclass
class AvailabilityRow:
    kind: str  # cipher | mac
    name: str
    in_seeds: bool
    pairs: dict[str, bool]  # pair -> negotiable there
    status: str  # "runs as a/b, c/d" or "unavailable here: why"


def availability(offers: list[Offer], asyncssh_algs: AsyncsshAlgorithms | None = None) -> list[AvailabilityRow]:
    """A row for every cipher and MAC any pair offers or any seed named; those no pair can run say why."""
    asyncssh_algs = asyncssh_algs or asyncssh_algorithms()
    rows: list[AvailabilityRow] = []
    for kind, seeds in (("cipher", SEED_CIPHERS), ("mac", SEED_MACS)):
        names: list[str] = list(seeds)
        for offer in offers:
            names += (offer.ciphers if kind == "cipher" else offer.macs) or []
        for name in dict.fromkeys(names):
            pairs = {o.pair: name in ((o.ciphers if kind == "cipher" else o.macs) or []) for o in offers}
            runnable = [p for p, ok in pairs.items() if ok]
            if runnable:
                status = "runs as " + ", ".join(runnable)
            else:
                status = "unavailable here: " + _why_unavailable(kind, name, offers, asyncssh_algs)
            rows.append(AvailabilityRow(kind, name, name in seeds, pairs, status))
    return rows


def _why_unavailable(kind: str, name: str, offers: list[Offer], asyncssh_algs: AsyncsshAlgorithms) -> str:
    if name in NOBODY_SPEAKS:
        return NOBODY_SPEAKS[name]
    if name in asyncssh_algs.unavailable:
        return asyncssh_algs.unavailable[name]
    reasons = [f"{o.pair}: {o.reason}" for o in offers if o.reason]
    legacy = name in LEGACY_CIPHERS or name in LEGACY_MACS
    base = "removed from OpenSSH in 7.6" if legacy else "no installed implementation offers it"
    if asyncssh_algs.missing_reason and (name in LEGACY_PRIMITIVE_OF or legacy):
        base += f"; {asyncssh_algs.missing_reason}"
    return "; ".join([base, *reasons]) if reasons and not legacy else base
