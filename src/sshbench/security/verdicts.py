"""Security verdicts: every algorithm and every measured combination gets broken / weak / acceptable /
recommended, with a one-line reason.

The rule (docs/security-policy.md has it in full, with sources):

1. Base: ssh-audit's rating (security/audit_adapter.py). Start at `recommended`; each of ssh-audit's
   FAIL notes lowers the level to FAIL_LEVELS[note] (unlisted: broken), each WARN note to
   WARN_LEVELS[note] (unlisted: acceptable). INFO notes never lower it. ssh-audit's "does not provide
   protection against post-quantum attacks" warning, which it puts on every classical kex, is not counted:
   on this four-level scale curve25519 is the recommended classical fallback (the reason says it is not
   post-quantum). An algorithm ssh-audit does not know is `weak` ("not rated").
2. sshbench's overrides (OVERRIDES, first match wins) replace the base where ssh-audit is silent or where
   sshbench's sources disagree (CTR not AEAD, finite-field DH, truncated SHA-2 MACs, twofish, small
   NIST curves, ssh-rsa, and the legacy names arcfour/blowfish/cast128 this ssh may no longer know).
3. Compression, which ssh-audit does not rate: none recommended, zlib@openssh.com weak, zlib broken.
4. Terrapin (CVE-2023-48795): chacha20-poly1305, and any -cbc cipher with an -etm MAC, are at most `weak`
   unless strict kex is in force on both sides (security/terrapin.py).
5. A combination's verdict is the worst of its cipher, MAC, kex and compression, then rule 4.
6. A threaded ("parallel") cipher of HPN-SSH, chacha20-poly1305-mt@hpnssh.org, is its serial twin computed in
   threads, the same bytes on the wire (algorithms/threaded.py): rated exactly as the twin, Terrapin included;
   the reason says so.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from enum import IntEnum

from sshbench.algorithms import threaded
from sshbench.compression import NO_COMPRESSION
from sshbench.results import IMPLICIT_MAC
from sshbench.security import terrapin
from sshbench.security.audit_adapter import AuditRating, load


class Level(IntEnum):
    """Ordered: a lower value is worse, so min() gives the worst."""

    INSECURE = -1  # no protection by design: the `none` cipher (HPN-SSH), measured only when named
    BROKEN = 0
    WEAK = 1
    ACCEPTABLE = 2
    RECOMMENDED = 3

    @property
    def label(self) -> str:
        return self.name.lower()


LEVEL_NAMES = [level.label for level in Level]

# ssh-audit FAIL notes -> level. Broken: a practical attack or no protection at all. Weak: deprecated
# primitives without a practical attack on their SSH use (SHA-1 and MD5 in HMAC, 64-bit-block ciphers other
# than 3DES, non-standard ciphers). Acceptable: ssh-audit's curve-provenance opinion on the NIST curves,
# which NIST and BSI approve and for which no attack is known.
FAIL_LEVELS: dict[str, Level] = {
    "FAIL_1024BIT_MODULUS": Level.BROKEN,
    "FAIL_3DES": Level.BROKEN,
    "FAIL_BLOWFISH": Level.WEAK,
    "FAIL_CAST": Level.WEAK,
    "FAIL_DES": Level.BROKEN,
    "FAIL_IDEA": Level.WEAK,
    "FAIL_LOGJAM_ATTACK": Level.BROKEN,
    "FAIL_MD5": Level.WEAK,
    "FAIL_NSA_BACKDOORED_CURVE": Level.ACCEPTABLE,
    "FAIL_PLAINTEXT": Level.BROKEN,
    "FAIL_RC4": Level.BROKEN,
    "FAIL_RIJNDAEL": Level.WEAK,
    "FAIL_RIPEMD": Level.WEAK,
    "FAIL_SEED": Level.WEAK,
    "FAIL_SERPENT": Level.WEAK,
    "FAIL_SHA1": Level.WEAK,
    "FAIL_SMALL_ECC_MODULUS": Level.BROKEN,
    "FAIL_UNKNOWN": Level.WEAK,
    "FAIL_UNPROVEN": Level.WEAK,
    "FAIL_UNTRUSTED": Level.WEAK,
}
WARN_LEVELS: dict[str, Level] = {
    "WARN_2048BIT_MODULUS": Level.ACCEPTABLE,
    "WARN_BLOCK_SIZE": Level.WEAK,
    "WARN_CIPHER_MODE": Level.WEAK,  # CBC: the 2009 plaintext-recovery attack (CPNI-957037)
    "WARN_ENCRYPT_AND_MAC": Level.ACCEPTABLE,
    "WARN_EXPERIMENTAL": Level.WEAK,
    "WARN_RNDSIG_KEY": Level.WEAK,
    "WARN_TAG_SIZE": Level.ACCEPTABLE,  # 64-bit tags (umac-64): a failed forgery ends the connection
    "WARN_TAG_SIZE_96": Level.WEAK,
}
# Not counted on the four-level scale (see rule 1); the reason still says "not post-quantum".
IGNORED_WARNINGS = {"WARN_NOT_PQ_SAFE"}


@dataclass(frozen=True)
class Verdict:
    level: Level
    reason: str
    source: str  # "ssh-audit 3.9.0", "sshbench override", "sshbench (Terrapin)", ...

    @property
    def label(self) -> str:
        return self.level.label

    def to_json(self) -> dict:
        return {"verdict": self.label, "verdict_reason": self.reason, "verdict_source": self.source}


@dataclass(frozen=True)
class Override:
    kind: str
    pattern: str  # fnmatch glob over the algorithm name
    level: Level
    reason: str
    source: str


OVERRIDE_SOURCE = "sshbench override"
OVERRIDES: tuple[Override, ...] = (
    Override(
        "cipher",
        "none",
        Level.INSECURE,
        "no encryption: anyone on the path reads the data (HPN-SSH's NONE cipher; measured only when named)",
        "sshbench",
    ),
    Override(
        "cipher",
        "arcfour*",
        Level.BROKEN,
        "RC4 keystream biases; RFC 8758 says MUST NOT; removed from OpenSSH 7.6",
        "RFC 8758, OpenSSH 7.6",
    ),
    Override(
        "cipher",
        "blowfish-cbc",
        Level.WEAK,
        "64-bit block (Sweet32) in CBC mode; removed from OpenSSH 7.6",
        "OpenSSH 7.2/7.6 release notes",
    ),
    Override(
        "cipher",
        "cast128-cbc",
        Level.WEAK,
        "64-bit block (Sweet32) in CBC mode; removed from OpenSSH 7.6",
        "OpenSSH 7.2/7.6 release notes",
    ),
    Override(
        "cipher",
        "aes*-ctr",
        Level.ACCEPTABLE,
        "no known weakness, but not AEAD: needs a separate MAC (prefer -etm); GCM is preferred",
        "Mozilla OpenSSH guidelines, BSI TR-02102-4",
    ),
    Override(
        "cipher",
        "twofish*",
        Level.WEAK,
        "non-standard and rarely analysed; removed from Dropbear 2022.82",
        "Dropbear CHANGES",
    ),
    Override("mac", "hmac-sha2-*-96*", Level.WEAK, "96-bit truncated tag; only in OpenSSH 5.9-6.0", "OpenSSH source"),
    Override(
        "kex",
        "diffie-hellman-group1[5-8]-sha*",
        Level.ACCEPTABLE,
        "finite-field DH: safe but slow; out of sshd's default list since OpenSSH 10.0",
        "OpenSSH 10.0 release notes, BSI TR-02102-4",
    ),
    Override(
        "kex",
        "diffie-hellman-group-exchange-sha256",
        Level.ACCEPTABLE,
        "finite-field DH: safe but slow (modulus at least 2048 bits since OpenSSH 7.2)",
        "OpenSSH 7.2/10.0 release notes, BSI TR-02102-4",
    ),
    Override("kex", "ecdh-sha2-nistp192", Level.WEAK, "curve below 128-bit strength", "NIST SP 800-57"),
    Override("kex", "ecdh-sha2-nistp224", Level.WEAK, "curve below 128-bit strength", "NIST SP 800-57"),
    Override(
        "hostkey",
        "ssh-rsa",
        Level.BROKEN,
        "RSA/SHA-1 signatures: chosen-prefix collisions; disabled by default in OpenSSH 8.8",
        "OpenSSH 8.2/8.8 release notes",
    ),
)

COMPRESSION_VERDICTS: dict[str, Verdict] = {
    NO_COMPRESSION: Verdict(Level.RECOMMENDED, "no compression: no length leak, no CPU cost", OVERRIDE_SOURCE),
    "no": Verdict(Level.RECOMMENDED, "no compression: no length leak, no CPU cost", OVERRIDE_SOURCE),
    "zlib@openssh.com": Verdict(
        Level.WEAK,
        "compression leaks plaintext lengths when attacker-influenced data shares the connection; "
        "prefer Compression no",
        OVERRIDE_SOURCE,
    ),
    "zlib": Verdict(
        Level.BROKEN,
        "compression before authentication: pre-auth attack surface; removed from sshd 7.4",
        OVERRIDE_SOURCE,
    ),
}
# Compression=yes asks for zlib@openssh.com (OpenSSH) or zlib.
COMPRESSION_VERDICTS["yes"] = COMPRESSION_VERDICTS["zlib@openssh.com"]

KEX_MARKER_PREFIXES = ("ext-info-", "kex-strict-", "kexguess")


def base_verdict(rating: AuditRating, audit_version: str) -> Verdict:
    """Rule 1: ssh-audit's notes mapped onto the four levels."""
    source = f"ssh-audit {audit_version}"
    if not rating.known:
        return Verdict(Level.WEAK, f"not rated by ssh-audit {audit_version} or sshbench", source)
    level, worst_note = Level.RECOMMENDED, None
    for note in rating.fails:
        note_level = FAIL_LEVELS.get(note, Level.BROKEN)
        if note_level < level or worst_note is None:
            level, worst_note = min(level, note_level), note
    for note in rating.warnings:
        if note in IGNORED_WARNINGS:
            continue
        note_level = WARN_LEVELS.get(note, Level.ACCEPTABLE)
        if note_level < level:
            level, worst_note = note_level, note
    if worst_note is not None:
        return Verdict(level, rating.texts.get(worst_note, worst_note), source)
    if any(w in IGNORED_WARNINGS for w in rating.warnings):
        return Verdict(level, "no known weakness; not post-quantum (not counted on this scale)", source)
    return Verdict(level, "no weakness known to ssh-audit", source)


def algorithm_verdict(kind: str, name: str, strict_kex: bool | None = None) -> Verdict:
    """The verdict for one algorithm. `kind` is cipher | mac | kex | compression | hostkey; `strict_kex` is
    whether strict kex is in force (only chacha20-poly1305 depends on it on its own)."""
    if kind == "compression":
        return COMPRESSION_VERDICTS.get(name, Verdict(Level.WEAK, f"unknown compression {name!r}", OVERRIDE_SOURCE))
    if kind == "mac" and name == IMPLICIT_MAC:
        return Verdict(Level.RECOMMENDED, "integrity from the AEAD cipher", OVERRIDE_SOURCE)
    if kind == "kex" and name.startswith(KEX_MARKER_PREFIXES):
        return Verdict(Level.RECOMMENDED, "protocol marker, not a key exchange", OVERRIDE_SOURCE)
    if kind == "cipher" and (twin := threaded.serial_twin(name)) is not None:
        return _threaded_verdict(twin, algorithm_verdict(kind, twin, strict_kex))
    if kind == "cipher" and name == terrapin.CHACHA20:
        return _chacha20_verdict(strict_kex)
    for override in OVERRIDES:
        if override.kind == kind and fnmatch.fnmatchcase(name, override.pattern):
            return Verdict(override.level, override.reason, f"{OVERRIDE_SOURCE} ({override.source})")
    database = load()
    return base_verdict(database.rating(kind, name), database.version)


def _threaded_verdict(twin: str, twin_verdict: Verdict) -> Verdict:
    """Rule 6: the twin's level; the reason names the twin, then gives the twin's own reason."""
    return Verdict(
        twin_verdict.level,
        f"{twin} computed in threads ({threaded.PARALLEL_LABEL}, HPN-SSH): rated as it; {twin_verdict.reason}",
        f"sshbench ({threaded.PARALLEL_LABEL} twin); {twin_verdict.source}",
    )


def _chacha20_verdict(strict_kex: bool | None) -> Verdict:
    if strict_kex:
        return Verdict(
            Level.RECOMMENDED,
            "AEAD, fast without AES-NI; Terrapin-safe because strict kex is in force",
            "sshbench (Terrapin)",
        )
    return Verdict(Level.WEAK, _terrapin_reason(strict_kex), "sshbench (Terrapin)")


def _terrapin_reason(strict_kex: bool | None) -> str:
    why = "strict kex is not in force on both sides" if strict_kex is False else "strict kex was not confirmed"
    return f"Terrapin (CVE-2023-48795): {why}"


def combination_verdict(
    cipher: str, mac: str, kex: str, compression: str = NO_COMPRESSION, strict_kex: bool | None = None
) -> Verdict:
    """Rule 5: the worst part decides; the reason names that part."""
    parts = [
        (cipher, algorithm_verdict("cipher", cipher, strict_kex)),
        (mac, algorithm_verdict("mac", mac)),
        (kex, algorithm_verdict("kex", kex)),
        (f"compression {compression}", algorithm_verdict("compression", compression)),
    ]
    name, worst = min(parts, key=lambda part: part[1].level)  # min() keeps the first of equals
    if terrapin.affected(cipher, mac) and not strict_kex and worst.level > Level.WEAK:
        return Verdict(Level.WEAK, f"{cipher} + {mac}: {_terrapin_reason(strict_kex)}", "sshbench (Terrapin)")
    if worst.level == Level.RECOMMENDED:
        return Verdict(Level.RECOMMENDED, "every part recommended", worst.source)
    return Verdict(worst.level, f"{name}: {worst.reason}", worst.source)
