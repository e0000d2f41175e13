#!/usr/bin/env python3
"""Does sshbench's own figure depend on how long it made its trials? (issue 23: "a figure must never depend on how
long sshbench made its trials")

Interleaved, pair by pair (this machine swings 30-40% between minutes): `sshbench run` with short trials
(`--size 512M`: ~0.5 s of data phase for aes128-gcm, as long as a default run's) and with long ones (`--size 4G`),
the same ciphers, `--runs N` each, no baselines, no `--why`; the order within a pair alternates. Printed per
cipher: each run's median MiB/s (the steady-state headline), the short/long ratio per pair and their geometric
mean with a 95% t interval over the pairs (goal: 1 within the interval, and the interval within a few percent).

Usage: .venv/bin/python bench/trial_length.py [--pairs 3] [--runs 3] [--short 512M] [--long 4G] [--ciphers a,b,c] [-- RUN OPTIONS]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sshbench.model.intervals import paired_ratio_ci

CIPHERS = "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr"
SSHBENCH = str(Path(sys.executable).with_name("sshbench"))


def medians(size: str, args: argparse.Namespace, tmp: Path, label: str) -> dict[str, float]:
    out = tmp / f"{label}.json"
    argv = [SSHBENCH, "run", "--db", str(tmp / "runs.db"), "--json", str(out), "-q", "--ciphers", args.ciphers]
    argv += ["--size", size, "--runs", str(args.runs), "--no-baselines", "--no-why", *args.run_options]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    doc = json.loads(out.read_text())
    return {s["cipher"]: s["median_mib_s"] for s in doc["summaries"] if s["median_mib_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--short", default="512M")
    parser.add_argument("--long", default="4G")
    parser.add_argument("--ciphers", default=CIPHERS)
    parser.add_argument("run_options", nargs="*", help="after --: options for every `sshbench run`, e.g. --no-pin")
    args = parser.parse_args()
    short_rates: dict[str, dict[int, float]] = {}  # cipher -> pair -> headline MiB/s
    long_rates: dict[str, dict[int, float]] = {}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="sshbench-trial-length-") as tmp_name:
        tmp = Path(tmp_name)
        for pair in range(args.pairs):
            order = [args.short, args.long] if pair % 2 == 0 else [args.long, args.short]
            got = {size: medians(size, args, tmp, f"{pair}-{size}") for size in order}
            loads.append(os.getloadavg()[0])
            for cipher, short in got[args.short].items():
                long_rate = got[args.long].get(cipher)
                if long_rate:
                    short_rates.setdefault(cipher, {})[pair] = short
                    long_rates.setdefault(cipher, {})[pair] = long_rate
                    print(
                        f"pair {pair + 1} {cipher:<30} {args.short} {short:6.0f}  {args.long} {long_rate:6.0f}"
                        f"  ratio {short / long_rate:.3f}",
                        flush=True,
                    )
    extra = f" ({' '.join(args.run_options)})" if args.run_options else ""
    print(f"\n{args.pairs} pairs of runs{extra}, {args.runs} rounds each; load {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'cipher':<30} {args.short}/{args.long} (geometric mean, 95% t interval over the pairs)")
    # pooled: every (cipher, pair) as one pair of its own
    keys = [(cipher, pair) for cipher, by_pair in short_rates.items() for pair in by_pair]
    pooled = (
        {i: short_rates[c][p] for i, (c, p) in enumerate(keys)},
        {i: long_rates[c][p] for i, (c, p) in enumerate(keys)},
    )
    for cipher, (shorts, longs) in [*((c, (short_rates[c], long_rates[c])) for c in short_rates), ("pooled", pooled)]:
        estimate = paired_ratio_ci(shorts, longs)
        print(
            f"{cipher:<30} {estimate.ratio:.3f} ({estimate.low:.3f}-{estimate.high:.3f})"
            f"   per pair: {', '.join(f'{shorts[k] / longs[k]:.3f}' for k in shorts)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
