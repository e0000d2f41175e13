"""`algorithms --all --speed`: raw single-core rates of the primitives behind the legacy ciphers."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sshbench.algorithms.legacy import SEED_CIPHERS
from sshbench.baselines import crypto_ceiling as cc

# --- raw crypto rows: the primitives behind the legacy ciphers, one core -------------------------

# RC4, Blowfish, CAST5 and 3DES beside the modern references, so "arcfour wins hands down" (seed 002)
# can be checked at the primitive level on this CPU.
LEGACY_SPEED_PRIMITIVES = (
    "RC4",
    "BF-CBC",
    "CAST5-CBC",
    "DES-EDE3-CBC",
    "AES-128-CTR",
    "AES-128-GCM",
    "ChaCha20-Poly1305",
)
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
            old = algorithms  # type: ignore[misc]
        makers = {
            "RC4": lambda: Cipher(old.ARC4(bytes(16)), None),
            "BF-CBC": lambda: Cipher(old.Blowfish(bytes(16)), modes.CBC(bytes(8))),
            "CAST5-CBC": lambda: Cipher(old.CAST5(bytes(16)), modes.CBC(bytes(8))),
            "DES-EDE3-CBC": lambda: Cipher(
                (getattr(old, "TripleDES", None) or algorithms.TripleDES)(bytes(24)), modes.CBC(bytes(8))
            ),
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


def primitive_speeds(
    openssl_env: dict[str, str] | None = None, names: tuple[str, ...] = LEGACY_SPEED_PRIMITIVES
) -> list[PrimitiveSpeed]:
    """Two rows per primitive: `openssl speed` (OpenSSL 3's legacy provider for RC4, BF, CAST5; cached by
    the crypto ceiling module) and the `cryptography` package, which AsyncSSH uses."""
    by_name = {p.name: p for p in cc.CIPHER_PRIMITIVES.values() if p is not None}
    chosen = [by_name[n] for n in names if n in by_name]
    measured = cc.ceilings(chosen, env=openssl_env)
    rows: list[PrimitiveSpeed] = []
    for primitive in chosen:
        ssh_names = [s for s, p in cc.CIPHER_PRIMITIVES.items() if p == primitive and s in SEED_CIPHERS]
        rate = (measured.get(primitive.name) or {}).get("mib_s")
        legacy = "-provider" in primitive.speed_args
        rows.append(
            PrimitiveSpeed(
                primitive.name,
                ssh_names,
                rate,
                "openssl speed" + (" -provider legacy" if legacy else ""),
                None if rate is not None else "openssl lacks it here (no legacy provider?)",
            )
        )
        note = {
            "AES-128-GCM": "GHASH per update, final tag not included",
            "ChaCha20-Poly1305": "ChaCha20 alone (no Poly1305)",
        }.get(primitive.name)
        rows.append(
            PrimitiveSpeed(primitive.name, ssh_names, _cryptography_speed(primitive.name), "cryptography", note)
        )
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
    return f'seed 002\'s "arcfour wins hands down" at the primitive level on this CPU: RC4 runs {rc4:.0f} MiB/s and {verdict}{beside}'
