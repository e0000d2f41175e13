#!/usr/bin/env python3
"""What do rekeys cost a bulk transfer? (issue 23: why chacha20-poly1305 read 6-29% above its 4 GiB transfers)

OpenSSH rekeys a cipher with an 8-byte block (chacha20-poly1305@openssh.com, 3des-cbc) every 2^30 / 8 blocks, 1 GiB
of data each way; `RekeyLimit` can only lower that (packet.c: the smaller of the two). A 16-byte block (AES) rekeys
every 2^32 blocks, 64 GiB. While a rekey runs no channel data moves (RFC 4253 7.1: after KEXINIT only key exchange
messages until NEWKEYS), so each rekey is a stall of the key exchange's time: a 4 GiB chacha20-poly1305 upload has
four, a default run's trials (at most a few hundred MiB) none.

4 GiB uploads through one private sshd on loopback (pinned, as a run pins it), ciphers x key exchanges interleaved
round by round; the client's TCP counters sampled every 5 ms (sshbench.measure.progress). Per transfer: the rate timed from
outside (wall minus a same-shape `ssh host true`), how many key exchanges `ssh -v` logged, and the stalls (no 64 KiB
of progress for 20 ms or more) after the first 8 MiB, with where they fell (MiB into the transfer) and how long.

Each round also runs the run's rekey probe (sshbench.measure.rekey_probe: `-o RekeyLimit=8M`, 7.5 x 8 MiB) for the same cipher
and kex, and prints the stall per rekey the run's estimator (sshbench.measure.rekey.stalled_s) reads on the probe and on the
bulk transfer's own rekeys: the probe must predict the bulk's.

Usage: .venv/bin/python bench/rekey.py [--rounds 3] [--ciphers a,b] [--kex default,curve25519-sha256] [--size 4G]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from sshbench.host import placement
from sshbench.host.cleanup import Cleanup
from sshbench.measure import rekey
from sshbench.measure.payload import PayloadStore
from sshbench.measure.progress import Sampler
from sshbench.measure.trial import algorithm_options
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.units import MIB, parse_size

STALL_BYTES = 64 * 1024
STALL_S = 0.02
PROBE = "probe"  # the run's rekey probe (sshbench.measure.rekey_probe): RekeyLimit=8M, 7.5 x 8 MiB


def stalls(times: list[float], counts: list[int]) -> list[tuple[int, float]]:
    """(MiB into the transfer, seconds) of every stretch without STALL_BYTES of growth for STALL_S or more, after
    the first 8 MiB (the session's start) and before the last MiB (its end)."""
    found = []
    i = 0
    while i < len(counts) - 1:
        j = i
        while j + 1 < len(counts) and counts[j + 1] - counts[i] < STALL_BYTES:
            j += 1
        if j > i and times[j] - times[i] >= STALL_S and 8 * MIB < counts[i] - counts[0] < counts[-1] - MIB:
            found.append(((counts[i] - counts[0]) // MIB, times[j] - times[i]))
        i = max(j, i + 1)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ciphers", default="chacha20-poly1305@openssh.com,aes128-gcm@openssh.com")
    parser.add_argument("--kex", default="default,curve25519-sha256", help="'default': what the client offers first")
    parser.add_argument("--size", type=parse_size, default=parse_size("4G"))
    args = parser.parse_args()
    cleanup = Cleanup()
    rows: dict[tuple[str, str], list[tuple[float, int, list[tuple[int, float]]]]] = {}
    # per (cipher, kex): the run's estimator (rekey.stalled_s / rekeys) on the bulk transfer's own rekeys and on the probe
    per_rekey: dict[tuple[str, str, str], list[float]] = {}
    try:
        target = PrivateOpenSSH()
        target.placement = placement.choose(True, 1)[0]
        target.start(cleanup)
        default_kex = target.client_algorithms().default_kex[0]
        kexes = [default_kex if k == "default" else k for k in args.kex.split(",")]
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.size + 64 * MIB)
        payload = str(PayloadStore(workdir).path_for(args.size))
        print(
            f"placement: {target.placement.text() if target.placement else 'not pinned'}; {args.size // MIB} MiB uploads"
        )

        def argv(cipher: str, kex: str, remote: str, extra: tuple[str, ...] = ()) -> list[str]:
            combo = Combination(cipher, IMPLICIT_MAC if "gcm" in cipher or "chacha" in cipher else "hmac-sha2-256", kex)
            options = [*target.client_options(), *algorithm_options(combo), *extra, "-v", *target.destination()]
            return [*target.client_prefix(), "ssh", *options, remote]

        def transfer(command: list[str], offset: int = 0) -> tuple[float, str, list[float], list[int]]:
            with open(payload, "rb") as stdin:
                os.lseek(stdin.fileno(), offset, os.SEEK_SET)
                start = time.perf_counter()
                proc = subprocess.Popen(
                    command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
                )
                sampler = Sampler(proc.pid, start, interval_s=rekey.PROBE_SAMPLE_S).start()
                _, log = proc.communicate(timeout=600)
                wall = time.perf_counter() - start
                samples = sampler.stop().samples
            if proc.returncode != 0:
                raise SystemExit(f"rekey: the transfer exited {proc.returncode}")
            return wall, log, [s.t for s in samples], [s.acked for s in samples]

        def estimate(key: tuple[str, str, str], log: str, times: list[float], counts: list[int]) -> float | None:
            got = rekey.stall_per_rekey(rekey.stalled_s(times, counts), log.count("SSH2_MSG_KEXINIT sent") - 1)
            if got is not None:
                per_rekey.setdefault(key, []).append(got)
            return got

        setup = {}
        for kex in kexes:
            walls = []
            for _ in range(3):
                start = time.perf_counter()
                subprocess.run(
                    argv(args.ciphers.split(",")[0], kex, "true"), capture_output=True, check=True, timeout=60
                )
                walls.append(time.perf_counter() - start)
            setup[kex] = statistics.median(walls)
        for rnd in range(args.rounds):
            for cipher in args.ciphers.split(","):
                for kex in kexes:
                    wall, log, times, counts = transfer(argv(cipher, kex, "dd of=/dev/null bs=1M 2>/dev/null"))
                    kexes_logged = log.count("SSH2_MSG_KEXINIT sent")
                    found = stalls(times, counts)
                    bulk_each = estimate((cipher, kex, "bulk"), log, times, counts)
                    limit = rekey.PROBE_LIMIT_MAX
                    probe_size = limit * rekey.PROBE_REKEYS + limit // 2
                    extra = ("-o", f"RekeyLimit={limit}")
                    _, plog, ptimes, pcounts = transfer(
                        argv(cipher, kex, "dd of=/dev/null bs=1M 2>/dev/null", extra), args.size - probe_size
                    )
                    probe_each = estimate((cipher, kex, PROBE), plog, ptimes, pcounts)
                    mib_s = args.size / MIB / (wall - setup[kex])
                    rows.setdefault((cipher, kex), []).append((mib_s, kexes_logged, found))
                    shown = ", ".join(f"{at}: {s * 1000:.0f}" for at, s in found[:6])
                    print(
                        f"round {rnd + 1} {cipher.split('@')[0]:<18} {kex:<34} {mib_s:5.0f} MiB/s  key exchanges"
                        f" {kexes_logged}  stalls (MiB: ms) {shown or 'none'}; per rekey: bulk"
                        f" {(bulk_each or 0) * 1000:.0f} ms, probe {(probe_each or 0) * 1000:.0f} ms"
                        f"  (load {os.getloadavg()[0]:.2f})",
                        flush=True,
                    )
        print("\nset-up (ssh true, median of 3): " + ", ".join(f"{k} {s * 1000:.0f} ms" for k, s in setup.items()))
        print(f"{'cipher':<18} {'kex':<34} {'MiB/s':>6} {'rekeys':>6} {'stalls':>6} {'ms each':>8} {'share':>6}")
        for (cipher, kex), got in rows.items():
            rate = statistics.median(m for m, _, _ in got)
            rekeys = statistics.median(k - 1 for _, k, _ in got)
            each = [s for _, _, found in got for _, s in found]
            stalled = statistics.median(sum(s for _, s in found) for _, _, found in got)
            share = stalled / (args.size / MIB / rate) if rate else 0.0
            print(
                f"{cipher.split('@')[0]:<18} {kex:<34} {rate:6.0f} {rekeys:6.0f} {len(each) / len(got):6.1f}"
                f" {statistics.median(each) * 1000 if each else 0:8.0f} {share:6.1%}"
            )
        print("\nper rekey, the run's estimator (sshbench.measure.rekey.stalled_s / rekeys), medians over rounds:")
        for (cipher, kex), _ in rows.items():
            bulk = per_rekey.get((cipher, kex, "bulk"), [])
            probe = per_rekey.get((cipher, kex, PROBE), [])
            text = [
                f"{name} {statistics.median(v) * 1000:.0f} ms ({len(v)})"
                for name, v in (("bulk", bulk), (PROBE, probe))
                if v
            ]
            print(f"  {cipher.split('@')[0]:<18} {kex:<34} " + ", ".join(text))
    finally:
        cleanup.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
