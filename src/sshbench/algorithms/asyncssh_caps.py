"""What the installed AsyncSSH and `cryptography` can still run: availability probed by running each
primitive (a `cryptography` without OpenSSL's legacy provider lists RC4, Blowfish and CAST5 but cannot run them)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

# The `cryptography` primitive behind each AsyncSSH cipher that OpenSSL keeps in its legacy provider
# (3DES stays in the default provider of OpenSSL 3.0; SEED is legacy too).
LEGACY_PRIMITIVE_OF: dict[str, str] = {
    "arcfour": "RC4",
    "arcfour128": "RC4",
    "arcfour256": "RC4",
    "blowfish-cbc": "Blowfish",
    "cast128-cbc": "CAST5",
    "seed-cbc@ssh.com": "SEED",
    "3des-cbc": "3DES",
}

ASYNCSSH_INSTALL_HINT = "install it: pip install 'asyncssh>=2.14' cryptography (or pip install -e .)"


def _probe_primitive(name: str) -> str | None:
    """Encrypt one block with `cryptography`'s primitive; None if it works, else why not."""
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, modes
    except ImportError:
        return "the cryptography package is not installed"
    try:
        try:
            from cryptography.hazmat.decrepit.ciphers import (
                algorithms as old,  # cryptography >= 43
            )
        except ImportError:
            from cryptography.hazmat.primitives.ciphers import algorithms as old  # type: ignore[no-redef]
        from cryptography.hazmat.primitives.ciphers import algorithms as current

        makers = {
            "RC4": lambda: Cipher(old.ARC4(bytes(16)), None),
            "Blowfish": lambda: Cipher(old.Blowfish(bytes(16)), modes.CBC(bytes(8))),
            "CAST5": lambda: Cipher(old.CAST5(bytes(16)), modes.CBC(bytes(8))),
            "SEED": lambda: Cipher(old.SEED(bytes(16)), modes.CBC(bytes(16))),
            "3DES": lambda: Cipher(
                (getattr(old, "TripleDES", None) or current.TripleDES)(bytes(24)), modes.CBC(bytes(8))
            ),
        }
        makers[name]().encryptor().update(bytes(16))
    except AttributeError:
        return f"this cryptography build has no {name}"
    except Exception as err:  # UnsupportedAlgorithm and friends: the OpenSSL under it lacks the cipher
        why = str(err).strip() or type(err).__name__
        hint = (
            " (CRYPTOGRAPHY_OPENSSL_NO_LEGACY is set)"
            if os.environ.get("CRYPTOGRAPHY_OPENSSL_NO_LEGACY")
            else " (its OpenSSL has no legacy provider)"
        )
        return f"cryptography cannot run {name}: {why}{hint if name != '3DES' else ''}"
    return None


@functools.cache
def primitive_problem(name: str) -> str | None:
    return _probe_primitive(name)


@dataclass
class AsyncsshAlgorithms:
    """What the installed AsyncSSH (and the cryptography under it) can negotiate, both ends alike."""

    version: str | None
    ciphers: list[str] = field(default_factory=list)
    macs: list[str] = field(default_factory=list)
    kex: list[str] = field(default_factory=list)
    compression: list[str] = field(default_factory=list)
    aead_ciphers: set[str] = field(default_factory=set)
    default_ciphers: list[str] = field(default_factory=list)
    default_macs: list[str] = field(default_factory=list)
    default_kex: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)  # name -> why this install cannot run it
    missing_reason: str | None = None  # AsyncSSH itself is not importable


# Key exchanges AsyncSSH lists that a private loopback server cannot use: GSS needs a Kerberos realm.
_UNUSABLE_KEX_PREFIXES = ("gss-",)


def asyncssh_algorithms() -> AsyncsshAlgorithms:
    try:
        import asyncssh
        from asyncssh import compression as a_comp
        from asyncssh import encryption as a_enc
        from asyncssh import kex as a_kex
        from asyncssh import mac as a_mac
    except ImportError as err:
        return AsyncsshAlgorithms(
            version=None, missing_reason=f"AsyncSSH is not installed ({err}); {ASYNCSSH_INSTALL_HINT}"
        )

    def names(items: list[bytes]) -> list[str]:
        return [x.decode("ascii") for x in items]

    out = AsyncsshAlgorithms(version=getattr(asyncssh, "__version__", None))
    for cipher in names(a_enc.get_encryption_algs()):
        primitive = LEGACY_PRIMITIVE_OF.get(cipher)
        problem = primitive_problem(primitive) if primitive else None
        if problem:
            out.unavailable[cipher] = problem
        else:
            out.ciphers.append(cipher)
    out.aead_ciphers = {c for c in out.ciphers if c.startswith("chacha20-poly1305") or "-gcm" in c}
    out.macs = names(a_mac.get_mac_algs())
    out.kex = [k for k in names(a_kex.get_kex_algs()) if not k.startswith(_UNUSABLE_KEX_PREFIXES)]
    out.compression = names(a_comp.get_compression_algs())
    out.default_ciphers = [c for c in names(a_enc.get_default_encryption_algs()) if c in out.ciphers]
    out.default_macs = names(a_mac.get_default_mac_algs())
    out.default_kex = [k for k in names(a_kex.get_default_kex_algs()) if k in out.kex]
    return out
