"""Parse what `ssh -v` / `ssh -vv` prints: negotiated algorithms, byte counts, versions, KEXINIT.

Pure functions over text, so they are unit-tested on recorded output and never raise
on odd input (a property test feeds them arbitrary text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# `debug1: kex: algorithm: sntrup761x25519-sha512`
_KEX_RE = re.compile(r"^debug1: kex: algorithm: (\S+)", re.M)
# `debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: none`
_DIR_RE = re.compile(r"^debug1: kex: (client->server|server->client) cipher: (\S+) MAC: (\S+) compression: (\S+)", re.M)
# `Transferred: sent 4972864, received 6464 bytes, in 0.7 seconds`
_TRANSFERRED_RE = re.compile(r"^Transferred: sent (\d+), received (\d+) bytes, in (\d+(?:\.\d+)?) seconds", re.M)
# `Bytes per second: sent 7364384.9, received 9572.6`
_BPS_RE = re.compile(r"^Bytes per second: sent (\d+(?:\.\d+)?), received (\d+(?:\.\d+)?)", re.M)
_REMOTE_VERSION_RE = re.compile(r"^debug1: Remote protocol version [\d.]+, remote software version (.+?)\s*$", re.M)
_LOCAL_VERSION_RE = re.compile(r"^debug1: Local version string (SSH-\S+(?: .*?)?)\s*$", re.M)
_CLIENT_BANNER_RE = re.compile(r"^(OpenSSH_\S+(?: [^,\n]+)?), (\S+ [\d.]+\S*)", re.M)
_EXIT_STATUS_RE = re.compile(r"^debug1: Exit status (-?\d+)", re.M)
# `debug1: compress outgoing: raw data 16781957, compressed 4961549, factor 0.30`
_COMPRESS_OUT_RE = re.compile(r"^debug1: compress outgoing: raw data (\d+), compressed (\d+)", re.M)
# one per key exchange this client started or answered: the first, then each rekey (sshbench.measure.rekey)
_KEXINIT_SENT_RE = re.compile(r"^debug1: SSH2_MSG_KEXINIT sent", re.M)

_KEXINIT_KEYS = {
    "KEX algorithms": "kex",
    "host key algorithms": "hostkey",
    "ciphers ctos": "ciphers_ctos",
    "ciphers stoc": "ciphers_stoc",
    "MACs ctos": "macs_ctos",
    "MACs stoc": "macs_stoc",
    "compression ctos": "compression_ctos",
    "compression stoc": "compression_stoc",
}


@dataclass
class NegotiatedAlgorithms:
    kex: str | None = None
    cipher: str | None = None
    mac: str | None = None
    compression: str | None = None
    # The other direction, which must agree for a symmetric trial.
    cipher_stoc: str | None = None
    mac_stoc: str | None = None
    compression_stoc: str | None = None


@dataclass
class KexInit:
    """A peer's KEXINIT proposal as `ssh -vv` prints it."""

    kex: list[str] = field(default_factory=list)
    hostkey: list[str] = field(default_factory=list)
    ciphers_ctos: list[str] = field(default_factory=list)
    ciphers_stoc: list[str] = field(default_factory=list)
    macs_ctos: list[str] = field(default_factory=list)
    macs_stoc: list[str] = field(default_factory=list)
    compression_ctos: list[str] = field(default_factory=list)
    compression_stoc: list[str] = field(default_factory=list)

    @property
    def strict_kex(self) -> bool:
        # The server's Terrapin countermeasure marker travels in its kex list.
        return "kex-strict-s-v00@openssh.com" in self.kex


@dataclass
class SshLog:
    negotiated: NegotiatedAlgorithms
    sent_bytes: int | None = None
    received_bytes: int | None = None
    transferred_s: float | None = None
    sent_bytes_per_s: float | None = None
    remote_version: str | None = None
    local_version: str | None = None
    exit_status: int | None = None
    compress_raw_bytes: int | None = None
    compress_out_bytes: int | None = None
    rekeys: int | None = None  # key exchanges after the first (None: no KEXINIT logged, e.g. not OpenSSH's -v)


def _normalise_mac(mac: str) -> str:
    # AEAD ciphers print `MAC: <implicit>`.
    return "implicit" if mac == "<implicit>" else mac


def parse_negotiated(text: str) -> NegotiatedAlgorithms:
    neg = NegotiatedAlgorithms()
    kex = _KEX_RE.findall(text)
    if kex:
        neg.kex = kex[-1]
    for direction, cipher, mac, comp in _DIR_RE.findall(text):
        if direction == "client->server":
            neg.cipher, neg.mac, neg.compression = cipher, _normalise_mac(mac), comp
        else:
            neg.cipher_stoc, neg.mac_stoc, neg.compression_stoc = cipher, _normalise_mac(mac), comp
    return neg


def parse_ssh_log(text: str) -> SshLog:
    log = SshLog(negotiated=parse_negotiated(text))
    if m := _TRANSFERRED_RE.findall(text):
        sent, received, seconds = m[-1]
        log.sent_bytes, log.received_bytes, log.transferred_s = int(sent), int(received), float(seconds)
    if m := _BPS_RE.findall(text):
        log.sent_bytes_per_s = float(m[-1][0])
    if version := _REMOTE_VERSION_RE.search(text):
        log.remote_version = version.group(1)
    if local := _LOCAL_VERSION_RE.search(text):
        log.local_version = local.group(1)
    if m := _EXIT_STATUS_RE.findall(text):
        log.exit_status = int(m[-1])
    if m := _COMPRESS_OUT_RE.findall(text):
        log.compress_raw_bytes, log.compress_out_bytes = int(m[-1][0]), int(m[-1][1])
    if exchanges := len(_KEXINIT_SENT_RE.findall(text)):
        log.rekeys = exchanges - 1
    return log


def parse_peer_kexinit(text: str) -> KexInit | None:
    """The server's proposal from `ssh -vv` output, or None if it is not there."""
    return _parse_kexinit(text, "debug2: peer server KEXINIT proposal")


def parse_local_kexinit(text: str) -> KexInit | None:
    """The client's own proposal from `ssh -vv` output (its kex list carries kex-strict-c-v00@openssh.com
    when the client does strict kex), or None if it is not there."""
    return _parse_kexinit(text, "debug2: local client KEXINIT proposal")


def _parse_kexinit(text: str, header: str) -> KexInit | None:
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == header)
    except StopIteration:
        return None
    kexinit = KexInit()
    for line in lines[start + 1 : start + 16]:
        # The local and the peer proposal follow each other: stop at the next one's header.
        if not line.startswith("debug2: ") or line.rstrip().endswith("KEXINIT proposal"):
            break
        key, sep, value = line[len("debug2: ") :].partition(": ")
        if not sep and line.endswith(":"):
            key, value = line[len("debug2: ") : -1], ""
        attr = _KEXINIT_KEYS.get(key)
        if attr:
            setattr(kexinit, attr, [v for v in value.strip().split(",") if v])
    return kexinit


def client_version_banner(text: str) -> tuple[str | None, str | None]:
    """`OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL 3.0.19 27 Jan 2026` -> (ssh, crypto library)."""
    m = _CLIENT_BANNER_RE.search(text)
    if not m:
        return None, None
    return m.group(1), m.group(2)


# What ssh says when it fails, mapped to one line a user can act on.
_FAILURES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"Unable to negotiate with .*?: no matching (\S+(?: \S+)?) found\. Their offer: (\S+)"),
        "the server refuses it: no matching {0} (server offers: {1})",
    ),
    (
        re.compile(r"Bad SSH2 (cipher|mac|KexAlgorithms) spec '([^']*)'", re.I),
        "this ssh client does not support {0} '{1}'",
    ),
    (re.compile(r"ssh: connect to host (\S+) port (\d+): (.+)"), "cannot connect to {0} port {1}: {2}"),
    (re.compile(r"ssh: Could not resolve hostname (\S+): (.+)"), "cannot resolve host {0}: {1}"),
    (
        re.compile(r"Permission denied \(([^)]*)\)"),
        "authentication failed (server allows: {0}); "
        "sshbench runs ssh in BatchMode, so it needs a key or an agent that logs in without a prompt",
    ),
    (re.compile(r"Host key verification failed"), "host key verification failed (check known_hosts)"),
    (re.compile(r"Connection (?:closed|reset) by (\S+)"), "connection closed by {0}"),
    (re.compile(r"Connection timed out during banner exchange"), "connection timed out during banner exchange"),
]


def explain_failure(stderr: str) -> str | None:
    """A one-line reason for a failed ssh run, or None if nothing recognisable was printed."""
    for pattern, template in _FAILURES:
        m = pattern.search(stderr)
        if m:
            return template.format(*m.groups())
    return None


def failure_reason(log: str) -> str:
    """One line for a failed ssh run: the recognised cause, else ssh's last line."""
    return explain_failure(log) or (log.strip().splitlines() or ["no output"])[-1]
