#!/usr/bin/env python3
"""Is a trial's start slow because its CPUs were idle before it? (issue 23, point 1; docs/clock.md "Within one long
transfer")

Between two trials both CPUs idle (this VM's idle driver is haltpoll: an idle vCPU halts and the host may run
something else on its core). A long transfer keeps them busy. If waking them were part of a trial's start-up, a
trial would read below what the same transfer gets later whatever the clock leaves out.

Interleaved, per cipher and round (the order alternating): A, a 2 GiB upload as a trial runs it (pinned as a run
pins); B, the same right after both CPUs were kept busy for --spin seconds (a shell loop pinned to each). Per
transfer: the headline clock's rate (sshbench.measure.steady, its 0.3 s omit and a 0.25 s window, as a default run's trial)
over the mean rate of the same transfer's half-second bins from 1.5 s to its end (bench/decay.py), and the client's
CPU time per MiB in its first bin and later. Printed: geometric means per cipher and variant, and pooled.

Usage: .venv/bin/python bench/prewarm.py [--rounds 3] [--spin 1.0] [--size 2G]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decay import mac_for, one
from sshbench.host import placement
from sshbench.host.cleanup import Cleanup
from sshbench.measure.payload import PayloadStore
from sshbench.measure.trial import algorithm_options
from sshbench.results import Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.units import MIB, parse_size

CIPHERS = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr"]
LATE_FROM_S = 1.5


def spin(cpus: list[int], seconds: float) -> None:
    """Keep each of `cpus` busy for `seconds` (bounded: timeout ends the loops)."""
    loops = [
        subprocess.Popen(["taskset", "-c", str(cpu), "timeout", str(seconds), "sh", "-c", "while :; do :; done"])
        for cpu in cpus
    ]
    for loop in loops:
        loop.wait(timeout=seconds + 10)


def geo(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spin", type=float, default=1.0)
    parser.add_argument("--size", type=parse_size, default=parse_size("2G"))
    args = parser.parse_args()
    cleanup = Cleanup()
    ratios: dict[tuple[str, str], list[float]] = {}
    try:
        target = PrivateOpenSSH()
        target.placement = placement.choose(True, 1)[0]
        target.start(cleanup)
        assert target.process is not None
        cpus = sorted(os.sched_getaffinity(0))[:2]
        kex = target.client_algorithms().default_kex[0]
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.size + 64 * MIB)
        payload = str(PayloadStore(workdir).path_for(args.size))
        for rnd in range(args.rounds):
            for cipher in CIPHERS:
                for variant in ("A", "B") if rnd % 2 == 0 else ("B", "A"):
                    combo = Combination(cipher, mac_for(cipher), kex)
                    argv = [*target.client_prefix(), "ssh", *target.client_options(), *algorithm_options(combo)]
                    argv += [*target.destination(), "dd of=/dev/null bs=1M 2>/dev/null"]
                    if variant == "B":
                        spin(cpus, args.spin)
                    got = one(argv, payload, args.size, target.process.pid)
                    late = [b for b in got["bins"] if b["t"] >= LATE_FROM_S and b["mib_s"]]
                    if not late or not got["bins"]:
                        print(f"round {rnd + 1} {cipher} {variant}: too short for a late rate")
                        continue
                    late_mib_s = statistics.fmean(b["mib_s"] for b in late)
                    ratio = got["head"] / late_mib_s
                    ratios.setdefault((cipher, variant), []).append(ratio)
                    first_ns = got["bins"][0]["client_ns_mib"]
                    late_ns = statistics.fmean(b["client_ns_mib"] for b in late if b["client_ns_mib"])
                    print(
                        f"round {rnd + 1} {cipher:<30} {variant} headline {got['head']:5.0f} late {late_mib_s:5.0f}"
                        f" ratio {ratio:.3f}  client ms/MiB first bin {(first_ns or 0) / 1e6:.2f} late"
                        f" {late_ns / 1e6:.2f}  load {os.getloadavg()[0]:.2f}",
                        flush=True,
                    )
    finally:
        cleanup.close()
    print("\nheadline clock / the same transfer's rate from 1.5 s on (geometric means)")
    for (cipher, variant), values in sorted(ratios.items()):
        print(f"  {cipher:<30} {variant} {geo(values):.3f}  ({', '.join(f'{v:.2f}' for v in values)})")
    for variant, name in (("A", "as a trial runs"), ("B", f"after {args.spin:g} s of busy CPUs")):
        pooled = [v for (_, var), values in ratios.items() if var == variant for v in values]
        if pooled:
            print(f"  pooled {variant} ({name}): {geo(pooled):.3f} of {len(pooled)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
