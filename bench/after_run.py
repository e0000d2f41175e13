#!/usr/bin/env python3
"""Is the first bulk transfer after a default run slow, and is it the run's why experiments? (docs/clock.md, "Three
long sets")

In bench/fidelity.py's 48-round set the first 4 GiB upload after each default run read 5.9% (2.6-9.4%) slower than
the round's other three, even after a 2 GiB throwaway transfer. A default run ends with its why experiments
(docs/why.md): ~15 s of trials with the client's, then the server's, CPU throttled by a cgroup quota.

Alternating per repetition (the order swapped every other one): `sshbench run` as a user runs it, and the same with
`--no-why`; after each, --bulks uploads of --size of one cipher, back to back, with the bare command timed from
outside (bench/fidelity.py: the same CPUs, the same options). Per run: ln(first bulk rate) minus the mean ln of the
rest. Printed: its geometric mean per variant with a 95% t interval, and the difference between the variants paired
by repetition (they share a minute of this VM's swings).

Usage: .venv/bin/python bench/after_run.py [--reps 12] [--bulks 3] [--size 2G] [--cipher aes128-gcm@openssh.com]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fidelity import bare_ssh, default_run, pooled_text, row_of, start_target, timed
from sshbench.host.cleanup import Cleanup
from sshbench.measure.payload import PayloadStore
from sshbench.results import Combination
from sshbench.units import MIB, parse_size

VARIANTS = {"default run": [], "run --no-why": ["--no-why"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--bulks", type=int, default=3, help="uploads after each run (the first against the rest)")
    parser.add_argument("--size", type=parse_size, default=parse_size("2G"))
    parser.add_argument("--cipher", default="aes128-gcm@openssh.com")
    args = parser.parse_args()
    args.link, args.no_pin = None, False  # start_target's arguments: loopback, pinned as a run pins
    if args.bulks < 2:
        parser.error("--bulks: at least 2 (the first against the rest)")
    first_over_rest: dict[str, list[float]] = {name: [] for name in VARIANTS}
    cleanup = Cleanup()
    try:
        target = start_target(args, cleanup)
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.size + 64 * MIB)
        payload = str(PayloadStore(workdir).path_for(args.size))
        with tempfile.TemporaryDirectory(prefix="sshbench-after-run-") as tmp_name:
            for rep in range(args.reps):
                order = list(VARIANTS) if rep % 2 == 0 else list(reversed(VARIANTS))
                for name in order:
                    doc, wall = default_run(VARIANTS[name], Path(tmp_name), rep * 10 + len(first_over_rest[name]))
                    row = row_of(doc, args.cipher)
                    if row is None:
                        print(f"{args.cipher} not in the run's results", file=sys.stderr)
                        return 1
                    command = [
                        *bare_ssh(target, Combination(args.cipher, row["mac"], row["kex"])),
                        "dd of=/dev/null bs=1M",
                    ]
                    rates = [args.size / MIB / timed(command, payload) for _ in range(args.bulks)]
                    logs = [math.log(r) for r in rates]
                    first_over_rest[name].append(math.exp(logs[0] - statistics.fmean(logs[1:])))
                    print(
                        f"rep {rep + 1} {name:<13} run {wall:4.0f} s, headline {row['median_mib_s']:5.0f};"
                        f" bulk {', '.join(f'{r:.0f}' for r in rates)} MiB/s; first/rest {first_over_rest[name][-1]:.3f}",
                        flush=True,
                    )
    finally:
        cleanup.close()
    print(f"\n{args.reps} repetitions, {args.bulks} uploads of {args.size // MIB} MiB ({args.cipher}) after each run")
    for name, ratios in first_over_rest.items():
        if len(ratios) >= 2:
            print(f"  first upload / the rest, after a {name:<13} {pooled_text(ratios)}")
    a, b = first_over_rest["default run"], first_over_rest["run --no-why"]
    paired = [x / y for x, y in zip(a, b)]
    if len(paired) >= 2:
        print(f"  the same, default over --no-why, paired      {pooled_text(paired)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
