#!/usr/bin/env python3
"""Does sshbench's data-phase clock agree with an external stopwatch?

In one run, interleaved (this machine is shared and noisy):
  A. the bare command  `ssh <same options> -c aes128-gcm@openssh.com 127.0.0.1 'cat >/dev/null' < payload`,
     timed from outside, minus the same command with no data (`ssh <same options> 127.0.0.1 true`):
     the external estimate of the data phase;
  B. sshbench's own trial of the same combination (server-side reader clock).
Prints both rates and their ratio (goal: within 2%). With hyperfine installed, its figures for A
are printed as well.

Usage: .venv/bin/python bench/fidelity.py [--size 512M] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sshbench.cleanup import Cleanup
from sshbench.payload import PayloadStore
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.tools.pipe import PipeTool
from sshbench.trial import algorithm_options, run_trial
from sshbench.units import MIB, parse_size

CIPHER = "aes128-gcm@openssh.com"


def timed(argv: list[str], stdin_path: str) -> float:
    with open(stdin_path, "rb") as stdin:
        start = time.perf_counter()
        subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=600)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("512M"))
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        kex = target.client_algorithms().default_kex[0]
        combo = Combination(CIPHER, IMPLICIT_MAC, kex)
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=2 * args.size)
        payload = str(PayloadStore(workdir).path_for(args.size))
        base = ["ssh", *target.client_options(), *algorithm_options(combo), *target.destination()]
        bare_transfer, bare_dd, bare_true, ours, ours_wall = [], [], [], [], []
        for i in range(args.runs + 1):  # the first round warms up and is dropped
            t_transfer = timed([*base, "cat >/dev/null"], payload)
            # the same bare command with sshbench's reader, to tell a clock error from a reader difference
            t_dd = timed([*base, "dd of=/dev/null bs=1048576 2>/dev/null"], payload)
            t_true = timed([*base, "true"], "/dev/null")
            trial = run_trial(
                ssh="ssh",
                target=target,
                tool=PipeTool(),
                combo=combo,
                kind="transfer",
                repetition=i,
                warmup=i == 0,
                payload=Path(payload),
                payload_bytes=args.size,
                workdir=workdir,
                timeout_s=600,
            )
            if not trial.valid:
                print(f"sshbench trial invalid: {trial.invalid_reason}", file=sys.stderr)
                return 1
            if i:
                bare_transfer.append(t_transfer)
                bare_dd.append(t_dd)
                bare_true.append(t_true)
                ours.append(trial.mib_s)
                ours_wall.append(trial.wall_s)
        mib = args.size / MIB
        external = mib / (statistics.median(bare_transfer) - statistics.median(bare_true))
        wall_only = mib / statistics.median(bare_transfer)
        sshbench_rate = statistics.median(ours)
        print(f"payload {mib:.0f} MiB random, {CIPHER}, kex {kex}, {args.runs} interleaved runs (medians)")
        print(f"  bare ssh, whole wall clock            {wall_only:8.1f} MiB/s")
        print(
            f"  bare ssh, wall minus 'ssh ... true'   {external:8.1f} MiB/s   (handshake {statistics.median(bare_true) * 1000:.0f} ms)"
        )
        print(
            f"  sshbench data phase (server reader)   {sshbench_rate:8.1f} MiB/s   (min {min(ours):.1f}, max {max(ours):.1f})"
        )
        own_wall = mib / (statistics.median(ours_wall) - statistics.median(bare_true))
        external_dd = mib / (statistics.median(bare_dd) - statistics.median(bare_true))
        print(f"  sshbench trial, wall minus 'true'     {own_wall:8.1f} MiB/s   (same connections as the line above)")
        print(f"  bare ssh 'dd of=/dev/null', minus 'true' {external_dd:7.1f} MiB/s   (sshbench's own reader, bare)")
        print(f"  ratio sshbench / external (cat)       {sshbench_rate / external:8.3f}")
        print(f"  ratio sshbench / external (dd)        {sshbench_rate / external_dd:8.3f}")
        print(f"  ratio whole wall / external           {wall_only / external:8.3f}")
        if shutil.which("hyperfine"):
            with tempfile.TemporaryDirectory(prefix="sshbench-hf-") as tmp:
                export = Path(tmp) / "hf.json"
                q = " ".join(f"'{a}'" for a in base)
                subprocess.run(
                    [
                        "hyperfine",
                        "--style",
                        "none",
                        "--warmup",
                        "1",
                        "--runs",
                        str(args.runs),
                        "--export-json",
                        str(export),
                        f"{q} 'cat >/dev/null' < {payload}",
                        f"{q} true",
                    ],
                    check=True,
                    capture_output=True,
                    timeout=1200,
                )
                results = json.loads(export.read_text())["results"]
                hf_rate = mib / (results[0]["median"] - results[1]["median"])
                print(
                    f"  hyperfine: wall minus 'true'          {hf_rate:8.1f} MiB/s   ratio sshbench / hyperfine "
                    f"{sshbench_rate / hf_rate:.3f}"
                )
    finally:
        cleanup.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
