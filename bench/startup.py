#!/usr/bin/env python3
"""What does the start of a transfer cost, how long does it last, and why? (issue 23; docs/clock.md)

Long uploads (default 2 GiB) through one private sshd on loopback, the client connection's TCP counters
sampled every 10 ms (sshbench.measure.progress, the steady-state clock's own sampler). Variants, interleaved
round by round (this machine is shared and noisy):

  plain   `ssh -c CIPHER host 'dd of=/dev/null bs=1M'` < payload, as a trial runs it
  pinned  the same with ssh on core 0 and the sshd session process and its reader on core 1 (taskset)
  warm    one connection moving the payload twice: the second half starts after the first one was
          acknowledged by the reader and a 0.3 s pause (a warm session's burst: issue 23, point 6)

Per transfer: the set-up before the data starts (the remote shell starting while the first channel
window waits), the steady rate (sshbench.measure.steady: steady.OMIT_S omitted, to the last sample), the start-up cost
(the whole data phase minus bytes / steady rate), the transient's length (where the time lost reaches
90% of its final value), and the rate in the first 50 ms bins relative to the steady rate.

Usage: .venv/bin/python bench/startup.py [--size 2G] [--rounds 3] [--ciphers a,b] [--variants plain,pinned,warm]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

from sshbench.host.cleanup import Cleanup
from sshbench.measure import steady
from sshbench.measure.payload import PayloadStore
from sshbench.measure.progress import Sampler
from sshbench.measure.trial import algorithm_options
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.units import MIB, parse_size

DEFAULT_CIPHERS = "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr"
BIN_S = 0.05


def mac_for(cipher: str) -> str:
    return IMPLICIT_MAC if ("gcm" in cipher or "chacha" in cipher) else "hmac-sha2-256-etm@openssh.com"


def analyse(times: list[float], counts: list[int], payload: int) -> dict | None:
    """The figures of one transfer's samples (None without a steady part)."""
    est = steady.estimate(times, counts, payload)
    if est.mib_s is None or est.start_s is None or est.wire_rate_bytes_s is None or est.window_end_s is None:
        return None
    first = times.index(est.start_s)
    b0, rate = counts[first], est.wire_rate_bytes_s
    end = max(i for i, t in enumerate(times) if t <= est.window_end_s)
    # time lost against the steady rate, as the transfer goes: it grows during the transient, then stays
    lost = [(times[i] - est.start_s) - (counts[i] - b0) / rate for i in range(first, end + 1)]
    final = lost[-1]
    settle = next((i for i, v in enumerate(lost) if final > 0 and v >= 0.9 * final), 0)
    bins = []
    for k in range(6):
        lo, hi = est.start_s + k * BIN_S, est.start_s + (k + 1) * BIN_S
        i = next((j for j in range(first, len(times)) if times[j] >= lo), None)
        j = next((j for j in range(first, len(times)) if times[j] >= hi), None)
        if i is None or j is None or times[j] <= times[i]:
            break
        bins.append((counts[j] - counts[i]) / (times[j] - times[i]) / rate)
    return {
        "setup_s": est.start_s,
        "steady_mib_s": est.mib_s,
        "lost_s": final,
        "transient_s": times[first + settle] - est.start_s,
        "transient_mib": (counts[first + settle] - b0) / MIB,
        "bins": bins,
    }


def one(argv: list[str], payload: str, size: int, warm: bool) -> list[dict | None]:
    """Run one connection; the analysis of each transfer in it (two for `warm`)."""
    if not warm:
        with open(payload, "rb") as stdin:
            start = time.perf_counter()
            proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            sampler = Sampler(proc.pid, start, interval_s=0.01).start()
            proc.wait(timeout=600)
            samples = sampler.stop().samples
        return [analyse([s.t for s in samples], [s.acked for s in samples], size)]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    sampler = Sampler(proc.pid, start, interval_s=0.01).start()
    assert proc.stdin is not None and proc.stdout is not None
    cut: list[float] = []

    def feed() -> None:
        assert proc.stdin is not None and proc.stdout is not None
        with open(payload, "rb") as src:
            for burst in range(2):
                src.seek(0)
                while chunk := src.read(1 << 20):
                    proc.stdin.write(chunk)
                proc.stdin.flush()
                proc.stdout.readline()  # the reader has every byte of this burst
                if burst == 0:
                    time.sleep(0.3)
                    cut.append(time.perf_counter() - start)
        proc.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    writer.join(timeout=600)
    proc.wait(timeout=60)
    samples = sampler.stop().samples
    if not cut:
        return [None, None]
    halves = [[s for s in samples if s.t < cut[0]], [s for s in samples if s.t >= cut[0] - 0.02]]
    return [analyse([s.t for s in h], [s.acked for s in h], size) for h in halves]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("2G"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ciphers", default=DEFAULT_CIPHERS)
    parser.add_argument("--variants", default="plain,pinned,warm")
    args = parser.parse_args()
    variants = args.variants.split(",")
    if "pinned" in variants and (shutil.which("taskset") is None or (os.cpu_count() or 1) < 2):
        variants.remove("pinned")
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        kex = target.client_algorithms().default_kex[0]
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.size + 64 * MIB)
        payload = str(PayloadStore(workdir).path_for(args.size))
        count = args.size // MIB
        results: dict[tuple[str, str], list[dict]] = {}
        print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
        for rnd in range(args.rounds):
            for cipher in args.ciphers.split(","):
                combo = Combination(cipher, mac_for(cipher), kex)
                base = ["ssh", *target.client_options(), *algorithm_options(combo), *target.destination()]
                for variant in variants:
                    if variant == "plain":
                        got = one([*base, "dd of=/dev/null bs=1M 2>/dev/null"], payload, args.size, False)
                    elif variant == "pinned":
                        remote = "taskset -cp 1 $PPID >/dev/null; exec taskset -c 1 dd of=/dev/null bs=1M 2>/dev/null"
                        got = one(["taskset", "-c", "0", *base, remote], payload, args.size, False)
                    else:
                        burst = f"dd of=/dev/null bs=1M count={count} iflag=fullblock 2>/dev/null; echo done"
                        got = one([*base, f"{burst}; {burst}"], payload, args.size, True)
                    names = [variant] if variant != "warm" else ["warm-1st", "warm-2nd"]
                    for name, figures in zip(names, got):
                        if figures is not None:
                            results.setdefault((cipher, name), []).append(figures)
                            print(
                                f"round {rnd + 1} {cipher:<30} {name:<9} steady {figures['steady_mib_s']:6.0f} MiB/s"
                                f"  lost {figures['lost_s'] * 1000:5.0f} ms  transient {figures['transient_s']:.2f} s"
                                f" / {figures['transient_mib']:.0f} MiB  set-up {figures['setup_s']:.2f} s",
                                flush=True,
                            )
        print(f"load after: {os.getloadavg()[0]:.2f}")
        print("\nmedians over rounds (bins: the rate in the first 50 ms intervals after the data starts / steady rate)")
        print(f"{'cipher':<30} {'variant':<9} {'steady':>7} {'lost ms':>8} {'trans s':>8} {'MiB':>5}  bins")
        for (cipher, name), rows in results.items():

            def med(key: str, rows: list[dict] = rows) -> float:
                return statistics.median(r[key] for r in rows)

            nbins = min(len(r["bins"]) for r in rows)
            bins = " ".join(f"{statistics.median(r['bins'][k] for r in rows):.2f}" for k in range(nbins))
            print(
                f"{cipher:<30} {name:<9} {med('steady_mib_s'):7.0f} {med('lost_s') * 1000:8.0f}"
                f" {med('transient_s'):8.2f} {med('transient_mib'):5.0f}  {bins}"
            )
    finally:
        cleanup.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
