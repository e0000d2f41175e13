#!/usr/bin/env python3
"""Is the start-up transient glibc malloc adapting, and would fixing its threshold give the steady rate sooner?
(issue 23; docs/clock.md, "glibc's malloc")

A fresh ssh and a fresh sshd session start with glibc's dynamic mmap threshold at 128 KiB; it rises each time a
large mmapped buffer is freed, so the growing channel buffers are mapped and unmapped anew until it has. With
`GLIBC_TUNABLES` the threshold can be fixed from the start (`--tunable`, default 32 MiB, the dynamic threshold's
ceiling on 64-bit, and a trim threshold of twice that, as the dynamic one sets it). If the fixed threshold were the
state a long transfer climbs to, a short trial with it would read a bulk transfer's rate without the climb.

Two variants of the same long upload (default 4 GiB) through two private sshds on loopback (one started with the
tunable in its environment), pinned as a run pins them, interleaved round by round with the order alternated:

  plain  ssh and sshd as shipped (what a user's transfer runs)
  both   ssh and the sshd (and so every session it forks) with the tunable

Per transfer, from the client connection's TCP counters (sshbench.measure.progress, the steady clock's own sampler): the
steady clock on the first 0.55 s of data phase (the 0.3 s omit, steady.OMIT_S, and a default run's shortest
0.25 s steady part), the same on 1.3 s, the rest of the transfer after 1.3 s, and the whole transfer timed from
outside (wall time minus a same-shape `ssh host true`). Printed per cipher (geometric means over the rounds,
95% t intervals): each variant's early clock over the plain transfer's outside rate (what the headline would
read against a user's bulk transfer), and the tunable's rest of the transfer over plain's (is it the same
steady state?); then each variant's rate in 0.5 s bins of the data phase over its own outside rate.

Usage: .venv/bin/python bench/malloc.py [--rounds 12] [--size 4G] [--ciphers a,b] [--tunable GLIBC_TUNABLES]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

from fidelity import (  # bench/fidelity.py: the same transfers and clock
    bare_ssh,
    rest_of_transfer,
    sampled,
    timed,
    trial_clock,
)
from sshbench.host import placement
from sshbench.host.cleanup import Cleanup
from sshbench.measure import steady
from sshbench.measure.payload import PayloadStore
from sshbench.model.intervals import paired_ratio_ci
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.tools.pipe import PipeTool
from sshbench.units import MIB, parse_size

DEFAULT_CIPHERS = "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr"
DEFAULT_TUNABLE = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864"
VARIANTS = ("plain", "both")
EARLY_S, MID_S, BIN_S = steady.OMIT_S + 0.25, 1.3, 0.5


def ci(a: dict[int, float], b: dict[int, float]) -> str:
    est = paired_ratio_ci(a, b)
    return f"{est.ratio:.3f} ({est.low:.3f}-{est.high:.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--size", type=parse_size, default=parse_size("4G"))
    parser.add_argument("--ciphers", default=DEFAULT_CIPHERS)
    parser.add_argument("--tunable", default=DEFAULT_TUNABLE, help="the GLIBC_TUNABLES of the `both` variant")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (paired intervals)")
    ciphers = args.ciphers.split(",")
    tuned_env = {**os.environ, "GLIBC_TUNABLES": args.tunable}
    # (cipher, variant) -> round -> (early clock, 1.3 s clock, rest after 1.3 s, outside), and the 0.5 s bins
    figures: dict[tuple[str, str], dict[int, tuple[float, float, float, float]]] = {}
    bins: dict[tuple[str, str], list[list[float]]] = {}
    loads = [os.getloadavg()[0]]
    cleanup = Cleanup()
    try:
        pinned = placement.choose(True, 1)[0]  # as make_target places a run's server
        targets = {"plain": PrivateOpenSSH(), "both": PrivateOpenSSH(env=tuned_env)}
        for target in targets.values():
            target.placement = pinned
            target.start(cleanup)
        print(f"placement: {pinned.text() if pinned else 'not pinned'}; tunable {args.tunable}", flush=True)
        kex = targets["plain"].client_algorithms().default_kex[0]
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.size + 64 * MIB)
        payload = str(PayloadStore(workdir).path_for(args.size))
        for rnd in range(args.rounds):
            for cipher in ciphers:
                for variant in VARIANTS[rnd % 2 :] + VARIANTS[: rnd % 2]:
                    target, env = targets[variant], (tuned_env if variant == "both" else None)
                    combo = Combination(cipher, IMPLICIT_MAC, kex)  # no -m: the MAC a default connection takes
                    base = bare_ssh(target, combo)
                    fixed = sorted(timed([*base, "true"], os.devnull, env) for _ in range(3))[1]
                    wall, times, counts = sampled([*base, "-v", PipeTool().remote_command("up")], payload, env)
                    per_wire = args.size / max(counts[-1] - counts[0], 1)
                    early = trial_clock(times, counts, EARLY_S, per_wire)
                    mid = trial_clock(times, counts, MID_S, per_wire)
                    rest = rest_of_transfer(times, counts, MID_S, per_wire)
                    if early is None or mid is None or rest is None:
                        print(f"round {rnd + 1} {cipher} {variant}: too short for the windows", file=sys.stderr)
                        continue
                    first = steady.data_start(times, counts)
                    end = max(i for i, c in enumerate(counts) if c < counts[-1] - steady.END_SLACK_BYTES)
                    outside = args.size / MIB / (wall - fixed)
                    figures.setdefault((cipher, variant), {})[rnd] = (early, mid, rest, outside)
                    mine = []
                    for k in range(int((times[end] - times[first]) / BIN_S)):
                        lo = next(i for i in range(first, len(times)) if times[i] >= times[first] + k * BIN_S)
                        hi = next(i for i in range(first, len(times)) if times[i] >= times[first] + (k + 1) * BIN_S)
                        mine.append((counts[hi] - counts[lo]) / MIB / (times[hi] - times[lo]) * per_wire / outside)
                    bins.setdefault((cipher, variant), []).append(mine)
                    print(
                        f"round {rnd + 1} {cipher:<30} {variant:<5} clock on {EARLY_S:.2f} s {early:6.0f}"
                        f"  on {MID_S} s {mid:6.0f}  rest {rest:6.0f}  outside {outside:6.0f} MiB/s",
                        flush=True,
                    )
            loads.append(os.getloadavg()[0])
    finally:
        cleanup.close()
    print(
        f"\n{args.rounds} rounds of {args.size // MIB} MiB uploads, load average {min(loads):.1f}-{max(loads):.1f} on"
        f" {os.cpu_count()} cores; geometric means over the rounds (95% CI)"
    )
    print(
        f"{'cipher':<30} {'variant':<7} {'clock on ' + str(EARLY_S) + ' s / plain outside':>34} {'rest / plain rest':>24}"
    )
    for cipher in ciphers:
        plain = figures.get((cipher, "plain"), {})
        for variant in VARIANTS:
            own = figures.get((cipher, variant), {})
            rounds = own.keys() & plain.keys()
            if len(rounds) < 2:
                continue
            early = ci({r: own[r][0] for r in rounds}, {r: plain[r][3] for r in rounds})
            rest = ci({r: own[r][2] for r in rounds}, {r: plain[r][2] for r in rounds}) if variant != "plain" else "-"
            print(f"{cipher:<30} {variant:<7} {early:>34} {rest:>24}")
    print(f"\nrate in {BIN_S} s bins of the data phase / the transfer's own outside rate (geometric mean over rounds)")
    for (cipher, variant), lists in bins.items():
        n = min(len(b) for b in lists)
        means = [math.exp(statistics.fmean(math.log(b[k]) for b in lists)) for k in range(n)]
        print(f"{cipher:<30} {variant:<7} " + " ".join(f"{x:.2f}" for x in means))
    return 0


if __name__ == "__main__":
    sys.exit(main())
