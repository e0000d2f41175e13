#!/usr/bin/env python3
"""Would reusing one authenticated connection per combination make trials cheaper without changing
the numbers? (issue 12, "Cheaper trials")

Every sshbench repetition pays a full key exchange and login for a ~1 s data phase. OpenSSH's
connection multiplexing (a master per combination, `ControlMaster`/`ControlPath`; each repetition a
new session over it) would skip that, but the master then does the crypto, and the data goes through
one more process hop on the client (mux client -> master over a unix socket). This script measures,
interleaved in one run, for each cipher:

  fresh: `ssh -c C host '<sshbench's server-side reader>' < payload` (a new connection each time)
  mux:   `ssh -S master.sock host '<the same reader>' < payload` over a master started with `-c C`

and prints two data-phase rates of each: the whole command's wall time minus that of `ssh host true`
in the same mode and round (mode-neutral: each mode's own connection cost is taken off), and the
server-side reader's raw clock (dd's own time; uncorrected, because the kernel's byte counters that
sshbench's correction reads belong to the connection, and a master's connection carries every
earlier session too); their paired ratio with its 95% CI, and the wall time per trial. The decision rule: adopt multiplexing
only if the two rates agree within 2% (the CI of mux/fresh inside [0.98, 1.02]).

Usage: .venv/bin/python bench/mux.py [--size 64M] [--rounds 7] [--link wan100m] [--link-size 8M]
(`--link ''` skips the shaped link; it needs root for the namespaces.)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.host.cleanup import Cleanup
from sshbench.measure.payload import PayloadStore
from sshbench.measure.trial import algorithm_options
from sshbench.model import intervals
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.settings import RunSettings
from sshbench.targets import make_target
from sshbench.targets.base import Target
from sshbench.tools.pipe import PipeTool
from sshbench.tools.remote_report import parse_marked
from sshbench.units import MIB, parse_size

CIPHERS = ("aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr")
TIMEOUT_S = 300


@dataclass
class Series:
    rates: dict[int, float] = field(default_factory=dict)  # round -> MiB/s (server-side reader, raw clock)
    walls: dict[int, float] = field(default_factory=dict)  # round -> whole command, seconds

    def wall_rates(self, size_mib: float, connection_s: dict[int, float]) -> dict[int, float]:
        """round -> MiB/s by wall time minus this mode's `ssh host true` of the same round."""
        return {r: size_mib / (w - connection_s[r]) for r, w in self.walls.items() if w > connection_s.get(r, w)}


def _run(argv: list[str], stdin: str, transfer: bool = True) -> tuple[float | None, float]:
    """(MiB/s by the server-side reader's raw clock, wall seconds) of one command."""
    with open(stdin, "rb") as source:
        start = time.perf_counter()
        done = subprocess.run(argv, stdin=source, capture_output=True, text=True, timeout=TIMEOUT_S)
        wall = time.perf_counter() - start
    if not transfer:
        return None, wall
    report = parse_marked(done.stdout)
    if done.returncode != 0 or not report.reader_s or not report.received_bytes:
        print(f"  a trial failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None, wall
    return report.received_bytes / MIB / report.reader_s, wall


def _start_master(target: Target, combo: Combination, socket: str, cleanup: Cleanup) -> list[str]:
    """A master connection for this cipher (ssh -f: back in the background once authenticated);
    returns the argv prefix of a session over it. Stopped by `-O exit` at cleanup."""
    prefix = [*target.client_prefix(), "ssh", *target.client_options()]
    dest = target.destination()
    master = [*prefix, *algorithm_options(combo), "-M", "-S", socket, "-o", "ControlPersist=no", "-f", "-N", *dest]
    subprocess.run(master, check=True, capture_output=True, timeout=60)
    cleanup.push(lambda: subprocess.run([*prefix, "-S", socket, "-O", "exit", *dest], capture_output=True, timeout=30))
    return [*prefix, "-S", socket, "-o", "ControlMaster=no", *dest]


def measure(target: Target, link: str, size: int, rounds: int, cleanup: Cleanup, workdir: str) -> None:
    payload = str(PayloadStore(Path(workdir)).path_for(size))
    empty = os.path.join(workdir, "empty")
    open(empty, "wb").close()
    kex = target.client_algorithms().default_kex[0]
    reader = PipeTool().remote_command()
    fresh: dict[str, Series] = {}
    mux: dict[str, Series] = {}
    mux_prefix: dict[str, list[str]] = {}
    handshake_fresh: dict[int, float] = {}
    handshake_mux: dict[int, float] = {}
    combos = {
        c: Combination(c, IMPLICIT_MAC if "gcm" in c or "chacha" in c else "hmac-sha2-256", kex, link=link)
        for c in CIPHERS
    }
    for cipher, combo in combos.items():
        target.before_trial(combo)
        mux_prefix[cipher] = _start_master(target, combo, os.path.join(workdir, f"mux-{len(mux_prefix)}"), cleanup)
        fresh[cipher], mux[cipher] = Series(), Series()
    rng = random.Random(12)
    for r in range(rounds + 1):  # round 0 warms up and is dropped
        jobs = [(cipher, kind) for cipher in CIPHERS for kind in ("fresh", "mux")]
        rng.shuffle(jobs)
        for cipher, kind in jobs:
            combo = combos[cipher]
            target.before_trial(combo)
            if kind == "fresh":
                base = [
                    *target.client_prefix(),
                    "ssh",
                    *target.client_options(),
                    *algorithm_options(combo),
                    *target.destination(),
                ]
            else:
                base = mux_prefix[cipher]
            rate, wall = _run([*base, reader], payload)
            series = fresh[cipher] if kind == "fresh" else mux[cipher]
            if r and rate:
                series.rates[r] = rate
                series.walls[r] = wall
        # the connection's fixed cost alone: `true` fresh vs over the first master
        first = CIPHERS[0]
        target.before_trial(combos[first])
        _, wall_fresh = _run(
            [
                *target.client_prefix(),
                "ssh",
                *target.client_options(),
                *algorithm_options(combos[first]),
                *target.destination(),
                "true",
            ],
            empty,
            transfer=False,
        )
        _, wall_mux = _run([*mux_prefix[first], "true"], empty, transfer=False)
        if r:
            handshake_fresh[r], handshake_mux[r] = wall_fresh, wall_mux
    print(f"\nlink {link}: payload {size / MIB:.0f} MiB random, kex {kex}, {rounds} interleaved rounds (medians)")
    size_mib = size / MIB
    print(f"  {'cipher':30} {'clock':13} {'fresh MiB/s':>11} {'mux MiB/s':>9} {'mux/fresh (95% CI)':>21}  verdict")
    for cipher in CIPHERS:
        f, m = fresh[cipher], mux[cipher]
        clocks = {
            "wall - true": (f.wall_rates(size_mib, handshake_fresh), m.wall_rates(size_mib, handshake_mux)),
            "reader (raw)": (f.rates, m.rates),
        }
        for clock, (fresh_rates, mux_rates) in clocks.items():
            if len(fresh_rates) < 3 or len(mux_rates) < 3:
                print(f"  {cipher:30} {clock:13} too few valid trials")
                continue
            e = intervals.paired_ratio_ci(mux_rates, fresh_rates)
            agree = e.low >= 0.98 and e.high <= 1.02
            verdict = (
                "agree within 2%" if agree else "differ" if e.low > 1.02 or e.high < 0.98 else "not shown to agree"
            )
            print(
                f"  {cipher:30} {clock:13} {statistics.median(fresh_rates.values()):11.1f} "
                f"{statistics.median(mux_rates.values()):9.1f} {e.ratio:7.3f} ({e.low:.3f}-{e.high:.3f})  {verdict}"
            )
        print(
            f"  {'':30} wall per trial: fresh {statistics.median(f.walls.values()):.2f} s, "
            f"mux {statistics.median(m.walls.values()):.2f} s"
        )
    print(
        f"  connection cost (`ssh host true`): fresh {statistics.median(handshake_fresh.values()) * 1000:.0f} ms, "
        f"over the master {statistics.median(handshake_mux.values()) * 1000:.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("64M"), help="loopback payload")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--link", default="wan100m", help="a shaped link profile ('' to skip)")
    parser.add_argument("--link-size", type=parse_size, default=parse_size("8M"))
    args = parser.parse_args()
    plans = [("loopback", args.size)] + ([(args.link, args.link_size)] if args.link else [])
    for link, size in plans:
        cleanup = Cleanup()
        try:
            target = make_target(RunSettings(link=link))
            target.start(cleanup)
            workdir = str(cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=2 * size))
            measure(target, link, size, args.rounds, cleanup, workdir)
        finally:
            cleanup.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
