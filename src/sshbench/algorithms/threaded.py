"""HPN-SSH's multi-threaded ("parallel") ciphers, and the serial cipher each one computes.

HPN-SSH (a patched OpenSSH) offers `chacha20-poly1305-mt@hpnssh.org`: OpenSSH's chacha20-poly1305@openssh.com
computed in threads. HPN-SSH's cipher table (cipher.c) gives both entries the same block size (8), key length
(64), IV (none) and tag (16), and the flag CFLAG_CHACHAPOLY; the -mt one adds only CFLAG_MT, which picks the
threaded implementation of the same construction (chachapoly_crypt_mt in cipher-chachapoly-libcrypto-mt.c: the
same computation spread over worker threads). The bytes on the wire are the same, so its security is the twin's,
Terrapin included: security/verdicts.py rates it as its twin and security/terrapin.py treats it as the twin.

HPN-SSH's threaded AES-CTR has no name of its own: it runs under aes128-ctr/aes192-ctr/aes256-ctr once the
connection is authenticated (sshd_config `DisableMTAES` turns it off), so those names are rated as they are.
`hpnssh -Q cipher` of HPN-SSH 18.8.0 lists chacha20-poly1305-mt@hpnssh.org as its only -mt name.

An explicit table, not a rule such as "strip -mt": an entry says that someone compared the two in HPN-SSH's
cipher table. A name not in it (a future -mt cipher) stays unrated until it is added.
"""

from __future__ import annotations

# What the verdict text calls a threaded twin.
PARALLEL_LABEL = "parallel"

# The threaded cipher -> the serial cipher it computes (same wire format, same security).
SERIAL_TWINS: dict[str, str] = {
    "chacha20-poly1305-mt@hpnssh.org": "chacha20-poly1305@openssh.com",
}


def serial_twin(cipher: str) -> str | None:
    """The serial cipher `cipher` computes in threads; None for a cipher that is not a threaded twin."""
    return SERIAL_TWINS.get(cipher)


def serial(cipher: str) -> str:
    """`cipher` itself, or the serial cipher it computes in threads: the name to judge its security by."""
    return SERIAL_TWINS.get(cipher, cipher)
