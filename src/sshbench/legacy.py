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

import functools
import os
import time
from dataclasses import dataclass, field

# Every cipher named in ../shared/seeds (SSH names), in the order a reader meets them.
SEED_CIPHERS: tuple[str, ...] = (
    "aes128-ctr", "aes192-ctr", "aes256-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com", "aes128-cbc", "aes192-cbc", "aes256-cbc", "3des-cbc",
    "arcfour", "arcfour128", "arcfour256", "blowfish-cbc", "cast128-cbc", "rijndael-cbc@lysator.liu.se",
)
# Every MAC named in the seeds.
SEED_MACS: tuple[str, ...] = (
    "umac-64-etm@openssh.com", "umac-128-etm@openssh.com", "umac-64@openssh.com", "umac-128@openssh.com",
    "hmac-sha1", "hmac-sha1-etm@openssh.com", "hmac-sha1-96", "hmac-sha1-96-etm@openssh.com",
    "hmac-sha2-256", "hmac-sha2-256-etm@openssh.com", "hmac-sha2-512", "hmac-sha2-512-etm@openssh.com",
    "hmac-md5", "hmac-md5-etm@openssh.com", "hmac-md5-96", "hmac-md5-96-etm@openssh.com",
    "hmac-ripemd160", "hmac-ripemd160@openssh.com", "hmac-ripemd160-etm@openssh.com",
)

# The `cryptography` primitive behind each AsyncSSH cipher that OpenSSL keeps in its legacy provider
# (3DES stays in the default provider of OpenSSL 3.0; SEED is legacy too).
LEGACY_PRIMITIVE_OF: dict[str, str] = {
    "arcfour": "RC4", "arcfour128": "RC4", "arcfour256": "RC4",
    "blowfish-cbc": "Blowfish", "cast128-cbc": "CAST5", "seed-cbc@ssh.com": "SEED", "3des-cbc": "3DES",
}

# Names no implementation sshbench can drive speaks any more: the reason shown for them.
NOBODY_SPEAKS: dict[str, str] = {
    "rijndael-cbc@lysator.liu.se": "removed from OpenSSH in 7.6 (an old alias of aes256-cbc); "
                                   "neither Dropbear nor AsyncSSH has it",
    "hmac-ripemd160": "removed from OpenSSH in 7.6; neither Dropbear nor AsyncSSH has it",
    "hmac-ripemd160@openssh.com": "removed from OpenSSH in 7.6; neither Dropbear nor AsyncSSH has it",
    "hmac-ripemd160-etm@openssh.com": "removed from OpenSSH in 7.6; neither Dropbear nor AsyncSSH has it",
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
            from cryptography.hazmat.decrepit.ciphers import algorithms as old  # cryptography >= 43
        except ImportError:
            from cryptography.hazmat.primitives.ciphers import algorithms as old  # type: ignore[no-redef]
        from cryptography.hazmat.primitives.ciphers import algorithms as current

        makers = {
            "RC4": lambda: Cipher(old.ARC4(bytes(16)), None),
            "Blowfish": lambda: Cipher(old.Blowfish(bytes(16)), modes.CBC(bytes(8))),
            "CAST5": lambda: Cipher(old.CAST5(bytes(16)), modes.CBC(bytes(8))),
            "SEED": lambda: Cipher(old.SEED(bytes(16)), modes.CBC(bytes(16))),
            "3DES": lambda: Cipher((getattr(old, "TripleDES", None) or current.TripleDES)(bytes(24)), modes.CBC(bytes(8))),
        }
        makers[name]().encryptor().update(bytes(16))
    except AttributeError:
        return f"this cryptography build has no {name}"
    except Exception as err:  # UnsupportedAlgorithm and friends: the OpenSSL under it lacks the cipher
        why = str(err).strip() or type(err).__name__
        hint = " (CRYPTOGRAPHY_OPENSSL_NO_LEGACY is set)" if os.environ.get("CRYPTOGRAPHY_OPENSSL_NO_LEGACY") else \
            " (its OpenSSL has no legacy provider)"
        return f"cryptography cannot run {name}: {why}{hint if name != '3DES' else ''}"
    return None


@functools.lru_cache(maxsize=None)
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
        return AsyncsshAlgorithms(version=None, missing_reason=f"AsyncSSH is not installed ({err}); "
                                                              f"{ASYNCSSH_INSTALL_HINT}")

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


def legacy_hint(kind: str, name: str) -> str:
    """The end of the error for a name the OpenSSH client cannot speak: who can, and how."""
    if name in NOBODY_SPEAKS:
        return f" ({NOBODY_SPEAKS[name]})"
    algs = asyncssh_algorithms()
    listed = algs.ciphers if kind == "cipher" else algs.macs if kind == "mac" else algs.kex
    if name in listed:
        return (" (removed from OpenSSH in 7.6; this ssh client cannot speak it: `--server asyncssh` runs it "
                "between AsyncSSH's own client and server)")
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
    from sshbench.algorithms import LEGACY_CIPHERS, LEGACY_MACS

    reasons = [f"{o.pair}: {o.reason}" for o in offers if o.reason]
    legacy = name in LEGACY_CIPHERS or name in LEGACY_MACS
    base = "removed from OpenSSH in 7.6" if legacy else "no installed implementation offers it"
    if asyncssh_algs.missing_reason and (name in LEGACY_PRIMITIVE_OF or legacy):
        base += f"; {asyncssh_algs.missing_reason}"
    return "; ".join([base, *reasons]) if reasons and not legacy else base


# --- raw crypto rows: the primitives behind the legacy ciphers, one core -------------------------

# RC4, Blowfish, CAST5 and 3DES beside the modern references, so "arcfour wins hands down" (seed 002)
# can be checked at the primitive level on this CPU.
LEGACY_SPEED_PRIMITIVES = ("RC4", "BF-CBC", "CAST5-CBC", "DES-EDE3-CBC", "AES-128-CTR", "AES-128-GCM",
                           "ChaCha20-Poly1305")
CRYPTOGRAPHY_SPEED_BYTES = 32768
CRYPTOGRAPHY_SPEED_SECONDS = 0.3


@dataclass
class PrimitiveSpeed:
    primitive: str
    ssh_names: list[str]
    mib_s: float | None
    source: str  # "openssl speed (legacy provider)", "cryptography", ...
    note: str | None = None


def _cryptography_speed(primitive: str) -> float | None:
    """MiB/s of one core encrypting 32 KiB buffers with `cryptography` (what AsyncSSH runs), by CPU time."""
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        try:
            from cryptography.hazmat.decrepit.ciphers import algorithms as old
        except ImportError:
            old = algorithms  # type: ignore[assignment]
        makers = {
            "RC4": lambda: Cipher(old.ARC4(bytes(16)), None),
            "BF-CBC": lambda: Cipher(old.Blowfish(bytes(16)), modes.CBC(bytes(8))),
            "CAST5-CBC": lambda: Cipher(old.CAST5(bytes(16)), modes.CBC(bytes(8))),
            "DES-EDE3-CBC": lambda: Cipher((getattr(old, "TripleDES", None) or algorithms.TripleDES)(bytes(24)),
                                           modes.CBC(bytes(8))),
            "AES-128-CTR": lambda: Cipher(algorithms.AES(bytes(16)), modes.CTR(bytes(16))),
            "AES-128-GCM": lambda: Cipher(algorithms.AES(bytes(16)), modes.GCM(bytes(12))),
            "ChaCha20-Poly1305": lambda: Cipher(algorithms.ChaCha20(bytes(32), bytes(16)), None),
        }
        encryptor = makers[primitive]().encryptor()
    except Exception:
        return None
    buffer = bytes(CRYPTOGRAPHY_SPEED_BYTES)
    done = 0
    start = time.process_time()
    while time.process_time() - start < CRYPTOGRAPHY_SPEED_SECONDS:
        for _ in range(16):
            encryptor.update(buffer)
        done += 16 * len(buffer)
    elapsed = time.process_time() - start
    return done / elapsed / (1024 * 1024) if elapsed > 0 else None


def primitive_speeds(openssl_env: dict[str, str] | None = None,
                     names: tuple[str, ...] = LEGACY_SPEED_PRIMITIVES) -> list[PrimitiveSpeed]:
    """Two rows per primitive: `openssl speed` (OpenSSL 3's legacy provider for RC4, BF, CAST5; cached by
    the crypto ceiling module) and the `cryptography` package, which AsyncSSH uses."""
    from sshbench.baselines import crypto_ceiling as cc

    by_name = {p.name: p for p in cc.CIPHER_PRIMITIVES.values() if p is not None}
    chosen = [by_name[n] for n in names if n in by_name]
    measured = cc.ceilings(chosen, env=openssl_env)
    rows: list[PrimitiveSpeed] = []
    for primitive in chosen:
        ssh_names = [s for s, p in cc.CIPHER_PRIMITIVES.items() if p == primitive and s in SEED_CIPHERS]
        rate = (measured.get(primitive.name) or {}).get("mib_s")
        legacy = "-provider" in primitive.speed_args
        rows.append(PrimitiveSpeed(primitive.name, ssh_names, rate,
                                   "openssl speed" + (" -provider legacy" if legacy else ""),
                                   None if rate is not None else "openssl lacks it here (no legacy provider?)"))
        note = {"AES-128-GCM": "GHASH per update, final tag not included",
                "ChaCha20-Poly1305": "ChaCha20 alone (no Poly1305)"}.get(primitive.name)
        rows.append(PrimitiveSpeed(primitive.name, ssh_names, _cryptography_speed(primitive.name), "cryptography",
                                   note))
    return rows


def seed_002_check(rows: list[PrimitiveSpeed]) -> str | None:
    """One sentence on seed 002's "arcfour wins hands down", from the openssl rows of this CPU."""
    rates = {r.primitive: r.mib_s for r in rows if r.source.startswith("openssl") and r.mib_s}
    rc4 = rates.get("RC4")
    others = {k: v for k, v in rates.items() if k != "RC4"}
    if not rc4 or not others:
        return None
    best_name, best = max(others.items(), key=lambda kv: kv[1])
    legacy_best = max((v for k, v in others.items() if k in ("BF-CBC", "CAST5-CBC", "DES-EDE3-CBC")), default=None)
    verdict = "still wins" if rc4 >= best else f"no longer wins: {best_name} is {best / rc4:.1f}x faster"
    beside = f"; among the legacy ciphers it is {rc4 / legacy_best:.1f}x the next" if legacy_best else ""
    return f"seed 002's \"arcfour wins hands down\" at the primitive level on this CPU: RC4 runs {rc4:.0f} MiB/s and {verdict}{beside}"


# --- what the report says about rows from other implementations ---------------------------------

ASYNCSSH_NOTE = ("AsyncSSH is Python: the absolute rates of asyncssh/* rows are not comparable with OpenSSH's "
                 "(or Dropbear's), while its relative ordering of ciphers is informative")


def implementation_notes(result) -> list[str]:
    """Lines for the report when a run had rows from more than OpenSSH (a RunResult; never raises)."""
    try:
        pairs = list(dict.fromkeys((c.client, c.server) for c in result.combinations))
        if not any(p != ("openssh", "openssh") for p in pairs):
            return []
        notes = ["each client/server pair is ranked on its own (# and 'x fastest' restart per pair): "
                 + ", ".join(f"{c}/{s}" for c, s in pairs)]
        target = result.target or {}
        servers = target.get("servers") or {target.get("kind"): target}
        for info in servers.values():
            if isinstance(info, dict) and info.get("kind") == "private-dropbear":
                window = info.get("receive_window")
                how = "set with --dropbear-window" if info.get("receive_window_set") else \
                    "Dropbear's default; set it with --dropbear-window, up to 10M"
                notes.append(f"openssh/dropbear ran with Dropbear's receive window -W {window} ({how}): a small "
                             "window caps uploads on fast links")
        return notes
    except Exception:
        return []
