"""The crypto ceiling: how fast one core runs the primitive behind an SSH cipher (and MAC).

SSH algorithm names map to the primitives OpenSSH calls in libcrypto; `openssl speed` measures
each primitive's single-core rate on 32 KiB buffers (the size of an SSH packet's payload) per
second of its own CPU time (not -elapsed: robust to a busy machine), and
the figure is cached per machine, OpenSSL version and OPENSSL_ia32cap value, so that only the
first run on a machine pays for it (about one second per primitive).

Where a combination has a separate MAC, both run one after the other on the same core, so its
ceiling is 1 / (1/cipher + 1/mac). umac has no OpenSSL primitive (OpenSSH carries its own
implementation): the ceiling is then the cipher's alone, an upper bound, and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from sshbench.host.osfiles import atomic_write
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.units import MIB

# `openssl speed` buffer: SSH packets carry at most 32 KiB of payload (OpenSSH's channel packet size).
SPEED_BYTES = 32768
SPEED_SECONDS = 1  # the shortest run OpenSSL 3.0 accepts (-seconds takes a positive integer)
SPEED_TIMEOUT_S = 30.0
METHOD = "speed-cpu-time-32k-v1"  # part of the cache key: a change of method re-measures
LEGACY_PROVIDER = ("-provider", "legacy", "-provider", "default")


@dataclass(frozen=True)
class Primitive:
    """A libcrypto primitive as `openssl speed` names it."""

    name: str  # display and JSON key, e.g. "AES-128-GCM", "HMAC-SHA256"
    speed_args: tuple[str, ...]  # what follows `openssl speed`, e.g. ("-evp", "aes-128-gcm")


def _evp(name: str, evp: str, legacy: bool = False) -> Primitive:
    return Primitive(name, (*(LEGACY_PROVIDER if legacy else ()), "-evp", evp))


def _hmac(name: str, digest: str, legacy: bool = False) -> Primitive:
    return Primitive(name, (*(LEGACY_PROVIDER if legacy else ()), "-hmac", digest))


AES_128_CBC, AES_192_CBC, AES_256_CBC = (_evp(f"AES-{b}-CBC", f"aes-{b}-cbc") for b in (128, 192, 256))
AES_128_CTR, AES_192_CTR, AES_256_CTR = (_evp(f"AES-{b}-CTR", f"aes-{b}-ctr") for b in (128, 192, 256))
AES_128_GCM = _evp("AES-128-GCM", "aes-128-gcm")
AES_256_GCM = _evp("AES-256-GCM", "aes-256-gcm")
CHACHA20_POLY1305 = _evp("ChaCha20-Poly1305", "chacha20-poly1305")
TRIPLE_DES_CBC = _evp("DES-EDE3-CBC", "des-ede3-cbc")
RC4 = _evp("RC4", "rc4", legacy=True)
BLOWFISH_CBC = _evp("BF-CBC", "bf-cbc", legacy=True)
CAST5_CBC = _evp("CAST5-CBC", "cast5-cbc", legacy=True)
HMAC_SHA1 = _hmac("HMAC-SHA1", "sha1")
HMAC_SHA256 = _hmac("HMAC-SHA256", "sha256")
HMAC_SHA512 = _hmac("HMAC-SHA512", "sha512")
HMAC_MD5 = _hmac("HMAC-MD5", "md5")
HMAC_RIPEMD160 = _hmac("HMAC-RIPEMD160", "ripemd160", legacy=True)

UMAC_REASON = "umac has no OpenSSL primitive (OpenSSH carries its own UMAC code)"

# Every cipher OpenSSH has spoken (`ssh -Q cipher` of 6.x-9.x). None would mean "no primitive";
# every cipher has one. OpenSSH's chacha20-poly1305@openssh.com is its own construction from
# ChaCha20 and Poly1305, close to (not identical with) the IETF AEAD measured here.
CIPHER_PRIMITIVES: dict[str, Primitive | None] = {
    "3des-cbc": TRIPLE_DES_CBC,
    "aes128-cbc": AES_128_CBC,
    "aes192-cbc": AES_192_CBC,
    "aes256-cbc": AES_256_CBC,
    "rijndael-cbc@lysator.liu.se": AES_256_CBC,
    "aes128-ctr": AES_128_CTR,
    "aes192-ctr": AES_192_CTR,
    "aes256-ctr": AES_256_CTR,
    "aes128-gcm@openssh.com": AES_128_GCM,
    "aes256-gcm@openssh.com": AES_256_GCM,
    "chacha20-poly1305@openssh.com": CHACHA20_POLY1305,
    "arcfour": RC4,
    "arcfour128": RC4,
    "arcfour256": RC4,
    "blowfish-cbc": BLOWFISH_CBC,
    "cast128-cbc": CAST5_CBC,
}

# Every MAC of `ssh -Q mac`: -96 variants compute the full HMAC and truncate it; -etm variants
# MAC the ciphertext instead of the plaintext, the same work. umac: None, see UMAC_REASON.
MAC_PRIMITIVES: dict[str, Primitive | None] = {}
for _suffix in ("", "-etm@openssh.com"):
    MAC_PRIMITIVES.update(
        {
            f"hmac-sha1{_suffix}": HMAC_SHA1,
            f"hmac-sha1-96{_suffix}": HMAC_SHA1,
            f"hmac-sha2-256{_suffix}": HMAC_SHA256,
            f"hmac-sha2-512{_suffix}": HMAC_SHA512,
            f"hmac-md5{_suffix}": HMAC_MD5,
            f"hmac-md5-96{_suffix}": HMAC_MD5,
        }
    )
MAC_PRIMITIVES.update(
    {
        "hmac-ripemd160": HMAC_RIPEMD160,
        "hmac-ripemd160@openssh.com": HMAC_RIPEMD160,
        "hmac-ripemd160-etm@openssh.com": HMAC_RIPEMD160,
        "umac-64@openssh.com": None,
        "umac-128@openssh.com": None,
        "umac-64-etm@openssh.com": None,
        "umac-128-etm@openssh.com": None,
    }
)


def unmapped_reason(kind: str, name: str) -> str | None:
    """Why `name` has no primitive to measure, or None when it has one."""
    table = CIPHER_PRIMITIVES if kind == "cipher" else MAC_PRIMITIVES
    if name not in table:
        return f"{name} is not in sshbench's {kind} -> primitive mapping"
    if table[name] is None:
        return UMAC_REASON if name.startswith("umac-") else f"{name} has no OpenSSL primitive"
    return None


def primitives_for(combo: Combination) -> tuple[Primitive | None, Primitive | None]:
    """(cipher primitive, MAC primitive); the MAC one is None for AEAD ciphers and unmapped MACs."""
    cipher = CIPHER_PRIMITIVES.get(combo.cipher)
    mac = None if combo.mac == IMPLICIT_MAC else MAC_PRIMITIVES.get(combo.mac)
    return cipher, mac


def combined_ceiling(cipher_mib_s: float | None, mac_mib_s: float | None) -> float | None:
    """Cipher and MAC run in turn on one core: their times per byte add up."""
    if cipher_mib_s is None or cipher_mib_s <= 0:
        return None
    if mac_mib_s is None or mac_mib_s <= 0:
        return cipher_mib_s
    return 1.0 / (1.0 / cipher_mib_s + 1.0 / mac_mib_s)


# --- measuring ---------------------------------------------------------------------------------

_SPEED_RESULT = re.compile(r"^\+F\d*:\d+:([^:]+):([\d.eE+-]+)", re.M)


def parse_speed_mr(output: str) -> float | None:
    """Bytes per second from `openssl speed -mr` output (the `+F:...:NAME:RATE` line, one buffer size)."""
    found = _SPEED_RESULT.findall(output)
    if not found:
        return None
    try:
        return float(found[-1][1])
    except ValueError:
        return None


def speed_argv(primitive: Primitive, openssl: str = "openssl") -> list[str]:
    # No -elapsed: divided by the process's own CPU time, the rate is what one core does even while
    # the machine is busy. With -elapsed, AES-128-GCM read 2000 instead of 4600 MB/s at load 4 on
    # 2 cores here, and that figure would have been cached.
    return [openssl, "speed", "-mr", "-seconds", str(SPEED_SECONDS), "-bytes", str(SPEED_BYTES), *primitive.speed_args]


def measure(primitive: Primitive, env: dict[str, str] | None = None, openssl: str = "openssl") -> float | None:
    """Single-core MiB/s of `primitive` (`openssl speed` without -multi runs one process), or None
    where openssl is missing or lacks it."""
    try:
        done = subprocess.run(
            speed_argv(primitive, openssl),
            capture_output=True,
            text=True,
            env=env,
            timeout=SPEED_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            errors="replace",
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    rate = parse_speed_mr(done.stdout)
    return rate / MIB if rate else None


# --- the cache ---------------------------------------------------------------------------------


def cache_dir() -> Path:
    """$SSHBENCH_CACHE_DIR, else $XDG_CACHE_HOME/sshbench, else ~/.cache/sshbench."""
    if env := os.environ.get("SSHBENCH_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sshbench"


def openssl_version(openssl: str = "openssl", env: dict[str, str] | None = None) -> str | None:
    try:
        done = subprocess.run(
            [openssl, "version"], capture_output=True, text=True, timeout=10, env=env, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def machine_key(openssl_ver: str | None, ia32cap: str | None) -> str:
    """Same machine (machine-id, CPU model and flags), same OpenSSL, same capability mask."""
    machine_id = None
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            machine_id = Path(path).read_text().strip()
            break
        except OSError:
            continue
    try:
        cpu = [
            ln
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith(("model name", "flags", "Features"))
        ][:2]
    except OSError:
        cpu = []
    return key_of(platform.machine(), machine_id, cpu, openssl_ver, ia32cap)


def key_of(
    machine: str | None, machine_id: str | None, cpu_lines: list[str], openssl_ver: str | None, ia32cap: str | None
) -> str:
    """The cache key from its parts (a remote host's are read over ssh: crypto_server.py), so the
    same machine and OpenSSL give the same key whichever side reads them."""
    parts = [machine or "", *([machine_id] if machine_id else []), *cpu_lines]
    parts += [openssl_ver or "no-openssl", f"ia32cap={ia32cap or ''}", METHOD]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


class CeilingCache:
    """A JSON file {machine key: {primitive name: {"mib_s": ..., "measured_at": ...}}}."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_dir() / "crypto-ceiling.json"

    def load(self) -> dict[str, dict[str, dict]]:
        try:
            data = json.loads(self.path.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def save(self, data: dict) -> None:
        """Best effort: a read-only home only costs a re-measurement next time."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True))
        except OSError:
            pass


def ceilings(
    primitives: list[Primitive],
    env: dict[str, str] | None = None,
    openssl: str = "openssl",
    cache: CeilingCache | None = None,
) -> dict[str, dict]:
    """{primitive name: {"mib_s", "openssl_args", "measured_at", "cached"}}: from the cache where it
    has the figure, else measured now (and stored). `env` carries OPENSSL_ia32cap for --no-aesni."""
    cache = cache or CeilingCache()
    version = openssl_version(openssl, env)
    key = machine_key(version, (env or os.environ).get("OPENSSL_ia32cap"))
    data = cache.load()
    entries = data.setdefault(key, {})
    out: dict[str, dict] = {}
    changed = False
    for primitive in dict.fromkeys(primitives):  # each once, in order
        cached = entries.get(primitive.name)
        if isinstance(cached, dict) and isinstance(cached.get("mib_s"), (int, float)):
            out[primitive.name] = {**cached, "cached": True}
            continue
        rate = measure(primitive, env, openssl) if version else None
        entry = {
            "mib_s": rate,
            "openssl_args": " ".join(primitive.speed_args),
            "measured_at": time.time(),
            "openssl_version": version,
        }
        if rate is not None:
            entries[primitive.name] = entry
            changed = True
        out[primitive.name] = {**entry, "cached": False}
    if changed:
        cache.save(data)
    return out


def primitives_needed(combos: list[Combination]) -> list[Primitive]:
    needed: list[Primitive] = []
    for combo in combos:
        for p in primitives_for(combo):
            if p is not None and p not in needed:
                needed.append(p)
    return needed


def ceiling_for(combo: Combination, measured: dict[str, dict]) -> tuple[float | None, str | None]:
    """(single-core MiB/s this combination's crypto allows, a note where it is only partly known)."""
    cipher_p, mac_p = primitives_for(combo)
    note = unmapped_reason("cipher", combo.cipher)
    if cipher_p is None:
        return None, note
    cipher_rate = (measured.get(cipher_p.name) or {}).get("mib_s")
    mac_rate = None
    if combo.mac != IMPLICIT_MAC:
        if mac_p is None:
            note = unmapped_reason("mac", combo.mac) + "; ceiling is the cipher's alone"  # type: ignore[operator]
        else:
            mac_rate = (measured.get(mac_p.name) or {}).get("mib_s")
            if mac_rate is None:
                note = f"{mac_p.name} was not measured; ceiling is the cipher's alone"
    return combined_ceiling(cipher_rate, mac_rate), note
