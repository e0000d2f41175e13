"""`--no-aesni`: run the trials with AES-NI (and PCLMULQDQ) masked for both ssh and the private sshd.

OpenSSL reads its CPU capability vector from OPENSSL_ia32cap; "~0x200000200000000" clears bit 57
(AES-NI) and bit 33 (PCLMULQDQ) of the first word, so AES and GHASH fall back to software, as on
a CPU without AES hardware (seed 004: chacha20 then wins). Given without a ":word2" part, OpenSSL
3.0 also zeroes its extended-feature word (`openssl info -cpusettings` shows it), so AVX2/AVX-512
and SHA-NI code paths are off too: ChaCha20 and HMAC-SHA slow down as well (the masked crypto
ceilings in the report show by how much). That is the mask the seeds used; the check records
both vectors. ssh and sshd read it at start-up, so
the private sshd is started with it (it survives sshd's re-exec); a remote sshd cannot be.

The mask is verified before any trial: AES-128-GCM's `openssl speed` rate under the mask must
fall below MAX_MASKED_FRACTION of the unmasked rate, or the run stops with one line.
"""

from __future__ import annotations

import os
import subprocess

from sshbench.baselines import crypto_ceiling
from sshbench.errors import RunError, UsageError

ENV_VAR = "OPENSSL_ia32cap"
MASK = "~0x200000200000000"
# Measured here: AES-128-GCM 4100 MiB/s with AES-NI, ~270 without; half is a safe line between.
MAX_MASKED_FRACTION = 0.5


def masked_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment (Popen's env replaces it) plus the mask."""
    return {**(os.environ if base is None else base), ENV_VAR: MASK}


def refuse_unless_applicable(host: str | None, cpu: dict, client_crypto_library: str | None = None) -> None:
    """Raise UsageError (one line) where the mask cannot be applied or would mean nothing."""
    if host is not None:
        raise UsageError(
            f"--no-aesni needs the private sshd: sshbench cannot start the sshd on {host} with {ENV_VAR} set"
        )
    machine = str(cpu.get("machine") or "")
    if machine and machine not in ("x86_64", "amd64", "i386", "i686"):
        raise UsageError(f"--no-aesni masks x86 AES-NI with {ENV_VAR}; this CPU is {machine}")
    if not cpu.get("aes_ni"):
        raise UsageError("--no-aesni: this CPU has no AES-NI to mask (the normal run already measures software AES)")
    if client_crypto_library is not None and "openssl" not in client_crypto_library.lower():
        raise UsageError(f"--no-aesni: ssh uses {client_crypto_library}, not OpenSSL, so {ENV_VAR} would not reach it")


def cpu_settings(env: dict[str, str] | None = None, openssl: str = "openssl") -> str | None:
    """OpenSSL's effective capability vector (`openssl info -cpusettings`, OpenSSL 3.0+), for the record."""
    try:
        done = subprocess.run(
            [openssl, "info", "-cpusettings"],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def verify(
    env: dict[str, str], openssl: str = "openssl", cache: crypto_ceiling.CeilingCache | None = None
) -> tuple[float, float]:
    """(AES-128-GCM MiB/s without, with the mask); RunError unless the masked rate collapsed."""
    unmasked_env = {k: v for k, v in env.items() if k != ENV_VAR}
    plain = crypto_ceiling.ceilings([crypto_ceiling.AES_128_GCM], env=unmasked_env, openssl=openssl, cache=cache)
    masked = crypto_ceiling.ceilings([crypto_ceiling.AES_128_GCM], env=env, openssl=openssl, cache=cache)
    plain_rate = plain[crypto_ceiling.AES_128_GCM.name]["mib_s"]
    masked_rate = masked[crypto_ceiling.AES_128_GCM.name]["mib_s"]
    if plain_rate is None or masked_rate is None:
        raise RunError(
            "--no-aesni: cannot verify the AES-NI mask: `openssl speed -evp aes-128-gcm` failed "
            "(install openssl: apt-get install openssl)"
        )
    if masked_rate > MAX_MASKED_FRACTION * plain_rate:
        raise RunError(
            f"--no-aesni: {ENV_VAR}={MASK} did not take effect: AES-128-GCM ran at "
            f"{masked_rate:.0f} MiB/s masked vs {plain_rate:.0f} MiB/s unmasked"
        )
    return plain_rate, masked_rate
