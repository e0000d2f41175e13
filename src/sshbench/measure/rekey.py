"""Rekeys: what they cost a long transfer, which a trial is too short to hold (docs/clock.md, "Rekeys").

OpenSSH rekeys a cipher with an 8-byte block (chacha20-poly1305@openssh.com, 3des-cbc) every 2^30 / 8 blocks, 1 GiB
each way, and one with a 16-byte block (AES) every 2^32 blocks, 64 GiB (packet.c; `RekeyLimit` can only lower it).
Dropbear (KEX_REKEY_DATA) and AsyncSSH (rekey_bytes) rekey every 1 GiB whatever the cipher. While a rekey runs no
channel data moves (RFC 4253 7.1), so each is a stall of the key exchange's time: 78-135 ms with OpenSSH 9.2's
default sntrup761x25519-sha512 on the 2-core development VM, under 20 ms with curve25519-sha256 (bench/rekey.py),
4.3% of a 4 GiB chacha20-poly1305 upload. A trial moves a few hundred MiB and holds none, so its steady rate is
the rate between rekeys; the run measures the stall once per key exchange and link (a connection with a small
`RekeyLimit`, executors.probe_rekeys) and each trial's MiB/s counts the rekeys its payload would meet in a long
transfer (Trial.rekey_s). Pure functions: tested in tests/test_rekey.py.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from sshbench.measure import steady
from sshbench.units import GIB, MIB

# Ciphers with an 8-byte block, as OpenSSH's cipher table has them (and the legacy ones AsyncSSH speaks)
SMALL_BLOCK_CIPHERS = frozenset(
    {
        "chacha20-poly1305@openssh.com",
        "3des-cbc",
        "blowfish-cbc",
        "cast128-cbc",
        "arcfour",
        "arcfour128",
        "arcfour256",
        "idea-cbc",
    }
)
OPENSSH_SMALL_BLOCK_BYTES = GIB  # 2^30 / 8 blocks of 8 bytes
OPENSSH_LARGE_BLOCK_BYTES = 64 * GIB  # 2^32 blocks of 16 bytes
EVERY_GIB_SERVERS = ("dropbear", "asyncssh")  # rekey every 1 GiB of data whatever the cipher
# A rekey every 16 GiB or more costs a long transfer under ~0.5% (a 0.1 s stall per 16 GiB at 1 GiB/s): not probed.
MATTERS_BELOW_BYTES = 16 * GIB

# The probe: a connection that rekeys every PROBE_LIMIT bytes (`-o RekeyLimit=`) for PROBE_REKEYS rekeys. Sized so
# that the data between two rekeys takes ~20 ms at the row's rate (8 MiB: 17 ms for chacha20-poly1305 at 460 MiB/s;
# 512 KiB behind a 24 Mbit/s link): ~0.8 s a probe on loopback with sntrup761x25519, whose stalls (77-135 ms each in
# 4 GiB transfers) are most of it; 4 of them put their mean within ~15 ms, ~0.6% of chacha20-poly1305's rate (7 took
# 1.1 s a probe, and with the probe in nearly every run the test suite went from ~530 to 574-645 s).
PROBE_REKEYS = 4
PROBE_SPACING_S = 0.02
PROBE_LIMIT_MAX = 8 * MIB
PROBE_LIMIT_MIN = 512 * 1024
PROBE_SAMPLE_S = 0.005  # the probe's sampling: a 100 ms stall is 20 readings, its ends within 5 ms
# A reading interval stands still when it moved under STALLED_SHARE of what the flow moves at its fast rate (the 90th
# percentile of its intervals' rates), and a stall counts from STALL_MIN_S. On loopback a rekey moves nothing at all
# for 78-135 ms (sntrup761x25519) or under 20 ms (curve25519); a 4 GiB transfer's own dips, which move a few % of
# the fast rate for 15-20 ms, summed to 0.3 s over its ~9 s with a 10% share (bench/rekey.py), none at 2%.
STALLED_SHARE = 0.02
STALL_MIN_S = 0.01


def interval_bytes(
    cipher: str, client: str = "openssh", server: str = "openssh", server_version: str | None = None
) -> int:
    """Bytes of data between two rekeys of a connection with `cipher`: the smaller of the two sides' rules."""
    own = OPENSSH_SMALL_BLOCK_BYTES if cipher in SMALL_BLOCK_CIPHERS else OPENSSH_LARGE_BLOCK_BYTES
    version = (server_version or "").lower()
    every_gib = server in EVERY_GIB_SERVERS or client in EVERY_GIB_SERVERS
    every_gib = every_gib or any(name in version for name in EVERY_GIB_SERVERS)
    return min(own, GIB) if every_gib else own


def matters(interval: int) -> bool:
    return interval < MATTERS_BELOW_BYTES


def probe_limit(rate_mib_s: float | None) -> int:
    """The probe's `RekeyLimit` (bytes): PROBE_SPACING_S of data at the row's rate, within the bounds."""
    if not rate_mib_s or rate_mib_s <= 0:
        return PROBE_LIMIT_MAX
    wanted = int(rate_mib_s * MIB * PROBE_SPACING_S)
    return max(PROBE_LIMIT_MIN, min(PROBE_LIMIT_MAX, wanted // 65536 * 65536))


def stalled_s(times: Sequence[float], counts: Sequence[int]) -> float | None:
    """Seconds the flow stood still in its data phase (from steady.data_start, after the session's start, to its
    last movement): the stretches of readings that moved under STALLED_SHARE of the flow's fast rate, each
    STALL_MIN_S or longer. None without enough readings."""
    if len(times) != len(counts) or len(counts) < 4:
        return None
    first = steady.data_start(times, counts)
    moving = [i for i in range(first + 1, len(counts)) if counts[i] > counts[i - 1]]
    if len(moving) < 3:
        return None
    last = moving[-1]
    rates = sorted(
        (counts[i] - counts[i - 1]) / (times[i] - times[i - 1])
        for i in range(first + 1, last + 1)
        if times[i] > times[i - 1]
    )
    fast = rates[min(len(rates) - 1, int(0.9 * len(rates)))]
    total = 0.0
    run_start: float | None = None
    for i in range(first + 1, last + 1):
        dt = times[i] - times[i - 1]
        still = dt > 0 and (counts[i] - counts[i - 1]) < STALLED_SHARE * fast * dt
        if still and run_start is None:
            run_start = times[i - 1]
        elif not still and run_start is not None:
            if times[i - 1] - run_start >= STALL_MIN_S:
                total += times[i - 1] - run_start
            run_start = None
    return total


def stall_per_rekey(stalled: float | None, rekeys: int | None) -> float | None:
    """The probe's stall per rekey (seconds), or None where it saw no rekey or could not tell."""
    if stalled is None or not rekeys or rekeys <= 0:
        return None
    return stalled / rekeys


def loss(mib_s: float, interval: int, stall_s: float) -> float:
    """The share of a long transfer's time its rekeys take at `mib_s` between them."""
    per_interval = interval / MIB / mib_s
    return stall_s / (per_interval + stall_s)


def median_or_none(values: Sequence[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None
