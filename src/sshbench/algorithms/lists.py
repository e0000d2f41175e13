"""What each end supports, and turning --ciphers/--macs/--kex specs into concrete lists.

Client lists come from `ssh -Q`, defaults from `ssh -G`; server lists come from the target
(`sshd -T` for the private sshd, the KEXINIT proposal for a remote host). The matrix is their
intersection, in the client's order.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from sshbench.errors import RunError

# Names in a KEXINIT kex list that are protocol markers, not key exchanges.
KEX_PSEUDO_PREFIXES = ("ext-info-", "kex-strict-")

# Removed from OpenSSH 7.6 (2017) but measured by the seeds; named so the error says why.
LEGACY_CIPHERS = {"arcfour", "arcfour128", "arcfour256", "blowfish-cbc", "cast128-cbc", "rijndael-cbc@lysator.liu.se"}
LEGACY_MACS = {"hmac-ripemd160", "hmac-ripemd160@openssh.com", "hmac-ripemd160-etm@openssh.com"}

KINDS = ("cipher", "mac", "kex")


@dataclass
class ClientAlgorithms:
    ciphers: list[str]
    macs: list[str]
    kex: list[str]
    aead_ciphers: set[str]
    # What a connection with no options would offer, in preference order.
    default_ciphers: list[str] = field(default_factory=list)
    default_macs: list[str] = field(default_factory=list)
    default_kex: list[str] = field(default_factory=list)
    # Terrapin countermeasure: kex-strict-c-v00@openssh.com in the client's own KEXINIT; None where not seen.
    strict_kex: bool | None = None

    def supported(self, kind: str) -> list[str]:
        return {"cipher": self.ciphers, "mac": self.macs, "kex": self.kex}[kind]

    def defaults(self, kind: str) -> list[str]:
        return {"cipher": self.default_ciphers, "mac": self.default_macs, "kex": self.default_kex}[kind]


@dataclass
class ServerAlgorithms:
    ciphers: list[str]
    macs: list[str]
    kex: list[str]
    compression: list[str] = field(default_factory=list)
    strict_kex: bool | None = None  # from the KEXINIT; None where not seen

    def supported(self, kind: str) -> list[str]:
        return {"cipher": self.ciphers, "mac": self.macs, "kex": self.kex}[kind]


def strip_kex_pseudo(names: list[str]) -> list[str]:
    return [n for n in names if not n.startswith(KEX_PSEUDO_PREFIXES)]


def _ssh_query(ssh: str, what: str) -> list[str]:
    try:
        out = subprocess.run([ssh, "-Q", what], capture_output=True, text=True, timeout=10, check=True)
    except FileNotFoundError:
        raise RunError(f"ssh client not found ({ssh}); install it: apt-get install openssh-client") from None
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
        raise RunError(f"'{ssh} -Q {what}' failed: {err}") from None
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def parse_ssh_G(text: str) -> dict[str, str]:
    """`ssh -G` output (one `key value` per line) as a dict; repeated keys keep the first value."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key and key not in out:
            out[key] = value.strip()
    return out


def client_algorithms(
    ssh: str = "ssh", config_args: list[str] | None = None, host: str = "127.0.0.1"
) -> ClientAlgorithms:
    """The local ssh's supported and default algorithms. `config_args` (e.g. ['-F', '/dev/null'])
    decide whose defaults: the bare client's, or those a user's ssh_config gives `host`."""
    aead = set(_ssh_query(ssh, "cipher-auth"))
    algs = ClientAlgorithms(
        ciphers=_ssh_query(ssh, "cipher"),
        macs=_ssh_query(ssh, "mac"),
        kex=strip_kex_pseudo(_ssh_query(ssh, "kex")),
        aead_ciphers=aead,
    )
    try:
        out = subprocess.run(
            [ssh, *(config_args or ["-F", "/dev/null"]), "-G", host], capture_output=True, text=True, timeout=10
        )
        effective = parse_ssh_G(out.stdout)
    except (OSError, subprocess.TimeoutExpired):
        effective = {}
    algs.default_ciphers = effective.get("ciphers", "").split(",") if effective.get("ciphers") else list(algs.ciphers)
    algs.default_macs = effective.get("macs", "").split(",") if effective.get("macs") else list(algs.macs)
    algs.default_kex = strip_kex_pseudo(effective.get("kexalgorithms", "").split(",")) or list(algs.kex)
    return algs


def would_negotiate(client_preference: list[str], server: list[str]) -> str | None:
    """SSH picks the client's first algorithm that the server also offers."""
    return next((a for a in client_preference if a in server), None)
