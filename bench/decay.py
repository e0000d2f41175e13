#!/usr/bin/env python3
"""Does a long transfer slow down after its first second, and what moves with it? (issue 23, point 4; docs/clock.md)

The fidelity sets (bench/fidelity.py) read a default run's headline 5-25% above 4 GiB transfers timed from outside
in most rounds, and docs/clock.md has a 4 GiB upload whose first 1.3 s ran 1.09x its whole. A trial's steady window
is 0.25-0.55 s right after the omitted start: if the rate falls later in a long transfer, short trials cannot see it.

Long uploads through one private sshd on loopback, pinned as a run pins (ssh on one CPU, the server on the other),
`ssh host 'dd of=/dev/null bs=1M' < payload`. Sampled every 20 ms by the steady clock's own sampler (the client
connection's acknowledged bytes, the client's on-CPU time) and, in a thread of this script every 100 ms, the server
side's on-CPU time (the sshd listener's descendants: the session and its reader, /proc/PID/schedstat) and the
machine's steal time (/proc/stat). Per half-second bin after the start the clock finds: the wire rate, the client's
and the server's CPU (cores busy, and ns per MiB), and the steal share of the two CPUs. Printed relative to the bin
the headline's window falls in (0.3-0.8 s), with the transfer's whole rate (its bytes over its data phase) and the
headline clock's own estimate (sshbench.measure.steady with a 0.25 s window, as a default run's trial).

Usage: .venv/bin/python bench/decay.py [--size 4G] [--rounds 2] [--ciphers a,b] [--no-pin]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import threading
import time

from sshbench.host import placement
from sshbench.host.cleanup import Cleanup, descendants
from sshbench.measure import steady
from sshbench.measure.payload import PayloadStore
from sshbench.measure.progress import Sampler, tree_cpu_ns
from sshbench.measure.trial import algorithm_options
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.units import MIB, parse_size

DEFAULT_CIPHERS = "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr"
BIN_S = 0.5
SERVER_EVERY_S = 0.1
WINDOW_S = 0.25  # a default run's steady window


def mac_for(cipher: str) -> str:
    return IMPLICIT_MAC if ("gcm" in cipher or "chacha" in cipher) else "hmac-sha2-256-etm@openssh.com"


def steal_and_total() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return fields[7], sum(fields[:8])


class ServerSampler(threading.Thread):
    """The server side's on-CPU time and the machine's steal, every SERVER_EVERY_S (bounded by stop())."""

    def __init__(self, listener: int, started: float) -> None:
        super().__init__(daemon=True)
        self.listener, self.started = listener, started
        self.readings: list[tuple[float, int, int, int]] = []  # t, server ns, steal ticks, all ticks
        self.done = threading.Event()
        self.pids: set[int] = set()

    def run(self) -> None:
        finished_ns = 0  # on-CPU time of processes that exited (counted once, at their last reading)
        last: dict[int, int] = {}
        while not self.done.wait(SERVER_EVERY_S):
            live = descendants(self.listener)
            now = {pid: ns for pid in live if (ns := tree_cpu_ns([pid])) is not None}
            for pid, ns in last.items():
                if pid not in now:
                    finished_ns += ns
            last = now
            steal, total = steal_and_total()
            self.readings.append((time.perf_counter() - self.started, finished_ns + sum(now.values()), steal, total))

    def stop(self) -> list[tuple[float, int, int, int]]:
        self.done.set()
        self.join(timeout=5)
        return self.readings


def at(readings: list, t: float, index: int) -> float | None:
    """Linear interpolation of readings[index] at time t (readings[0] is the time)."""
    for a, b in zip(readings, readings[1:]):
        if a[0] <= t <= b[0] and b[0] > a[0]:
            return a[index] + (b[index] - a[index]) * (t - a[0]) / (b[0] - a[0])
    return None


def one(argv: list[str], payload: str, size: int, listener: int) -> dict:
    with open(payload, "rb") as stdin:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sampler = Sampler(proc.pid, start).start()
        server = ServerSampler(listener, start)
        server.start()
        try:
            proc.wait(timeout=600)
        finally:
            samples = sampler.stop().samples
            readings = server.stop()
        wall = time.perf_counter() - start
    if proc.returncode != 0 or not samples:
        raise SystemExit(f"decay: a transfer exited {proc.returncode}")
    times = [s.t for s in samples]
    counts = [s.acked for s in samples]
    head = steady.estimate(times, counts, size, max_window_s=WINDOW_S)
    whole = steady.estimate(times, counts, size)  # the window to the transfer's end
    if head.start_s is None or head.mib_s is None:
        raise SystemExit("decay: no steady part")
    t0 = head.start_s
    per_payload = size / (counts[-1] - counts[0])
    bins = []
    t = t0
    client = [(s.t, s.client_cpu_ns) for s in samples if s.client_cpu_ns is not None]
    while t + BIN_S <= times[-1]:
        lo = max(i for i, x in enumerate(times) if x <= t)
        hi = max(i for i, x in enumerate(times) if x <= t + BIN_S)
        mib = (counts[hi] - counts[lo]) * per_payload / MIB
        dt = times[hi] - times[lo]
        c0, c1 = at(client, times[lo], 1), at(client, times[hi], 1)
        s0, s1 = at(readings, times[lo], 1), at(readings, times[hi], 1)
        st0, st1 = at(readings, times[lo], 2), at(readings, times[hi], 2)
        a0, a1 = at(readings, times[lo], 3), at(readings, times[hi], 3)
        bins.append(
            {
                "t": t - t0,
                "mib_s": mib / dt if dt > 0 else None,
                "client_cores": (c1 - c0) / 1e9 / dt if c0 is not None and c1 is not None and dt > 0 else None,
                "server_cores": (s1 - s0) / 1e9 / dt if s0 is not None and s1 is not None and dt > 0 else None,
                "client_ns_mib": (c1 - c0) / mib if c0 is not None and c1 is not None and mib > 0 else None,
                "server_ns_mib": (s1 - s0) / mib if s0 is not None and s1 is not None and mib > 0 else None,
                "steal": (st1 - st0) / (a1 - a0) if None not in (st0, st1, a0, a1) and a1 != a0 else None,
            }
        )
        t += BIN_S
    whole_s = size / MIB / wall / whole.mib_s if whole.mib_s else None
    return {"head": head.mib_s, "whole_window": whole.mib_s, "bins": bins, "wall": wall, "whole_s": whole_s}


def fmt(x: float | None, spec: str) -> str:
    return format(x, spec) if x is not None else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("4G"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ciphers", default=DEFAULT_CIPHERS)
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    cleanup = Cleanup()
    early: dict[str, list[float]] = {}  # per cipher: the bins' rates from 1 s on, over the headline clock's rate
    ratios: dict[str, list[tuple[float, float]]] = {}  # per cipher: headline / the window to the end; whole / it
    correlations: list[float] = []  # per transfer: bins' rate against the client's ns per MiB
    try:
        target = PrivateOpenSSH()
        target.placement = placement.choose(not args.no_pin, 1)[0]
        target.start(cleanup)
        assert target.process is not None
        kex = target.client_algorithms().default_kex[0]
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.size + 64 * MIB)
        payload = str(PayloadStore(workdir).path_for(args.size))
        print(f"placement: {target.placement.text() if target.placement else 'not pinned'}; {args.size // MIB} MiB")
        for rnd in range(args.rounds):
            for cipher in args.ciphers.split(","):
                combo = Combination(cipher, mac_for(cipher), kex)
                argv = [
                    *target.client_prefix(),
                    "ssh",
                    *target.client_options(),
                    *algorithm_options(combo),
                    *target.destination(),
                    "dd of=/dev/null bs=1M 2>/dev/null",
                ]
                got = one(argv, payload, args.size, target.process.pid)
                bins = got["bins"]
                base = got["head"]  # the headline clock's own rate: what a default run's trial would read here
                print(
                    f"\nround {rnd + 1} {cipher}: headline clock {got['head']:.0f} MiB/s, the window to the end "
                    f"{fmt(got['whole_window'], '.0f')}, whole {args.size / MIB / got['wall']:.0f} "
                    f"(wall {got['wall']:.1f} s, load {os.getloadavg()[0]:.2f})"
                )
                print("   t s   MiB/s  x headline  client cores  ns/MiB  server cores  ns/MiB  steal")
                for b in bins:
                    rel = b["mib_s"] / base if b["mib_s"] and base else None
                    print(
                        f"  {b['t']:4.1f}  {fmt(b['mib_s'], '6.0f')}  {fmt(rel, '9.3f')}  {fmt(b['client_cores'], '12.2f')}"
                        f"  {fmt(b['client_ns_mib'], '6.0f')}  {fmt(b['server_cores'], '12.2f')}  {fmt(b['server_ns_mib'], '6.0f')}"
                        f"  {fmt(b['steal'], '5.3f')}"
                    )
                    if rel is not None and b["t"] >= 1.0:
                        early.setdefault(cipher, []).append(rel)
                if got["whole_window"]:
                    ratios.setdefault(cipher, []).append((got["head"] / got["whole_window"], got["whole_s"]))
                fast = [b for b in bins if b["mib_s"] and b["client_ns_mib"]]
                if len(fast) >= 4:  # does a bin's rate move with the client's CPU time per MiB?
                    rates = [b["mib_s"] for b in fast]
                    cost = [b["client_ns_mib"] for b in fast]
                    correlations.append(statistics.correlation(rates, cost))
        print("\nper cipher: headline clock / the steady window to the transfer's end; whole (wall) / it")
        for cipher, pairs in ratios.items():
            print(f"  {cipher:<32} " + ", ".join(f"{h:.3f} / {w:.3f}" for h, w in pairs))
        if correlations:
            print(
                "bins' rate against the client's CPU ns per MiB, correlation per transfer: "
                + ", ".join(f"{c:.2f}" for c in correlations)
            )
        print("\nbins from 1 s on over the headline clock's rate, per cipher: median (p10-p90)")
        for cipher, rels in early.items():
            rels.sort()
            print(
                f"  {cipher:<32} {statistics.median(rels):.3f} ({rels[len(rels) // 10]:.3f}-{rels[len(rels) * 9 // 10]:.3f})"
                f" of {len(rels)}"
            )
    finally:
        cleanup.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
