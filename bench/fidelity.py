#!/usr/bin/env python3
"""Does the default run's headline agree with what a bulk transfer gets? (issue 23, point 4; docs/clock.md)

Interleaved, round by round (this machine is shared and noisy: 30-40% swings between minutes):
  A. `sshbench run` as a user runs it (the default run, every cipher; or `-- OPTIONS` to pass others),
     its JSON: each combination's median MiB/s (the steady-state clock), set-up (the same-shape handshake),
     and start-up cost (`median_startup_s`);
  B. for a few of its combinations, a bulk upload (default 4 GiB) with the bare command
     `ssh <same options> host 'dd of=/dev/null bs=1M' < payload`, timed from outside, minus a bare
     `ssh <same options> host true` (median of 3): the external rate;
  C. the same bare command with 32 MiB and 1 GiB, whole wall time, against the prediction from A:
     set-up + start-up + size / steady rate.

Prints per combination: the headline, the bulk rate and their ratio (goal: within 3%), and predicted vs
measured times (goal: within 10%), medians over rounds, with the load average.

`--per-cipher`: instead of one default run per round (~45 s, long enough for this machine's rate to swing
1.5-2x between it and the bulk transfers), each cipher's own short run (`sshbench run --ciphers C --runs 3
--no-baselines --no-reference`: the default run's sizing and clock) right before its bulk transfer.

Placement: the runs pin the client and the private sshd to CPUs of their own (`--pin`, the default), and so do
B and C (the same CPUs, through the same taskset prefixes): the comparison is of the clock, not of the
placement. `--no-pin` runs everything unpinned.

Usage: .venv/bin/python bench/fidelity.py [--rounds 2] [--bulk 4G] [--ciphers a,b,c] [--per-cipher] [--no-pin] [-- RUN OPTIONS]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sshbench import placement
from sshbench.cleanup import Cleanup
from sshbench.payload import PayloadStore
from sshbench.results import Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.trial import algorithm_options
from sshbench.units import MIB, parse_size

DEFAULT_CIPHERS = "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr"
SMALL_SIZES = (32 * MIB, 1024 * MIB)
SSHBENCH = str(Path(sys.executable).with_name("sshbench"))


def timed(argv: list[str], stdin_path: str) -> float:
    with open(stdin_path, "rb") as stdin:
        start = time.perf_counter()
        subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=900)
        return time.perf_counter() - start


def default_run(extra: list[str], tmp: Path, index: int) -> tuple[dict, float]:
    out = tmp / f"run{index}.json"
    start = time.monotonic()
    subprocess.run(
        [SSHBENCH, "run", "--db", str(tmp / "runs.db"), "--json", str(out), "-q", *extra],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=900,
    )
    return json.loads(out.read_text()), time.monotonic() - start


def row_of(doc: dict, cipher: str) -> dict | None:
    """The combination of this cipher (its MAC, kex as the run had it), pipe upload, plain."""
    rows = [s for s in doc["summaries"] if s["cipher"] == cipher and s["median_mib_s"] and s["streams"] == 1]
    return rows[0] if rows else None


def time_weighted_mib_s(doc: dict, row: dict) -> float | None:
    """What the row's measured trials moved over the time their steady rates took: all their bytes over the sum
    of each trial's bytes / its rate (a harmonic mean weighted by bytes). A bulk transfer averages this machine's
    fast and slow moments by time the same way, where the median picks the typical trial."""
    keys = ("cipher", "mac", "kex", "tool", "direction", "streams", "link")
    trials = [
        t
        for t in doc["trials"]
        if t["kind"] == "transfer"
        and t["valid"]
        and not t["warmup"]
        and t.get("mib_s")
        and t.get("data_clock") == "steady-state"
        and all(t.get(k) == row.get(k) for k in keys)
    ]
    seconds = sum(t["payload_bytes"] / MIB / t["mib_s"] for t in trials)
    return sum(t["payload_bytes"] for t in trials) / MIB / seconds if seconds else None


def setup_s(doc: dict, row: dict) -> float | None:
    for h in doc.get("handshakes") or []:
        if h["kex"] == row["kex"] and h.get("tool", "pipe") == row["tool"] and h["median_ms"] is not None:
            return h["median_ms"] / 1000
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bulk", type=parse_size, default=parse_size("4G"))
    parser.add_argument("--ciphers", default=DEFAULT_CIPHERS)
    parser.add_argument("--per-cipher", action="store_true", help="a short run per cipher next to its bulk transfer")
    parser.add_argument("--no-pin", action="store_true", help="runs and bulk transfers unpinned (sshbench.placement)")
    parser.add_argument("run_options", nargs="*", help="after --: options for `sshbench run`")
    args = parser.parse_args()
    ciphers = args.ciphers.split(",")
    if args.no_pin:
        args.run_options = ["--no-pin", *args.run_options]
    cleanup = Cleanup()
    headline: dict[str, list[float]] = {c: [] for c in ciphers}
    weighted: dict[str, list[float]] = {c: [] for c in ciphers}
    bulk: dict[str, list[float]] = {c: [] for c in ciphers}
    predicted: dict[tuple[str, int], list[float]] = {}
    measured: dict[tuple[str, int], list[float]] = {}
    loads, run_walls = [], []
    try:
        target = PrivateOpenSSH()
        target.placement = placement.choose(not args.no_pin, 1)[0]  # as make_target places a run's server
        target.start(cleanup)
        print(f"placement: {target.placement.text() if target.placement else 'not pinned'}", flush=True)
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.bulk + 1100 * MIB)
        store = PayloadStore(workdir)
        payloads = {size: str(store.path_for(size)) for size in (args.bulk, *SMALL_SIZES)}
        with tempfile.TemporaryDirectory(prefix="sshbench-fidelity-") as tmp_name:
            tmp = Path(tmp_name)
            for rnd in range(args.rounds):
                loads.append(os.getloadavg()[0])
                if not args.per_cipher:
                    doc, wall = default_run(args.run_options, tmp, rnd)
                    run_walls.append(wall)
                for index, cipher in enumerate(ciphers):
                    if args.per_cipher:
                        own = ["--ciphers", cipher, "--runs", "3", "--no-baselines", "--no-reference"]
                        doc, wall = default_run([*own, *args.run_options], tmp, rnd * 100 + index)
                        run_walls.append(wall)
                    row = row_of(doc, cipher)
                    if row is None:
                        print(f"round {rnd + 1}: {cipher} not in the run's results", file=sys.stderr)
                        continue
                    combo = Combination(cipher, row["mac"], row["kex"])
                    base = [
                        *target.client_prefix(),
                        "ssh",
                        *target.client_options(),
                        *algorithm_options(combo),
                        *target.destination(),
                    ]
                    reader = "dd of=/dev/null bs=1M 2>/dev/null"
                    trues = sorted(timed([*base, "true"], "/dev/null") for _ in range(3))
                    true_s = trues[1]
                    big = timed([*base, reader], payloads[args.bulk])
                    headline[cipher].append(row["median_mib_s"])
                    weighted[cipher].append(time_weighted_mib_s(doc, row) or row["median_mib_s"])
                    bulk[cipher].append(args.bulk / MIB / (big - true_s))
                    set_up = setup_s(doc, row)
                    for size in SMALL_SIZES:
                        took = timed([*base, reader], payloads[size])
                        measured.setdefault((cipher, size), []).append(took)
                        if set_up is not None and row.get("median_startup_s") is not None:
                            guess = set_up + row["median_startup_s"] + size / MIB / row["median_mib_s"]
                            predicted.setdefault((cipher, size), []).append(guess)
                    print(
                        f"round {rnd + 1} {cipher:<30} headline {row['median_mib_s']:6.0f}  bulk {bulk[cipher][-1]:6.0f}"
                        f"  ratio {row['median_mib_s'] / bulk[cipher][-1]:.3f}  time-weighted {weighted[cipher][-1]:6.0f}"
                        f" ratio {weighted[cipher][-1] / bulk[cipher][-1]:.3f}  (true {true_s * 1000:.0f} ms,"
                        f" start-up {1000 * (row.get('median_startup_s') or 0):.0f} ms)",
                        flush=True,
                    )
                loads.append(os.getloadavg()[0])
    finally:
        cleanup.close()
    print(
        f"\n{args.rounds} rounds; {'per-cipher' if args.per_cipher else 'default'} runs took {', '.join(f'{w:.0f}' for w in run_walls)} s; "
        f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    )
    print(f"{'combination':<30} {'headline':>8} {'bulk':>7} {'ratio':>6}   (medians of per-round ratios)")
    for cipher in ciphers:
        if not bulk[cipher]:
            continue
        ratios = [h / b for h, b in zip(headline[cipher], bulk[cipher])]
        print(
            f"{cipher:<30} {statistics.median(headline[cipher]):8.0f} {statistics.median(bulk[cipher]):7.0f}"
            f" {statistics.median(ratios):6.3f}   per round: {', '.join(f'{r:.3f}' for r in ratios)}"
        )
        w_ratios = [w / b for w, b in zip(weighted[cipher], bulk[cipher])]
        print(
            f"{'  time-weighted':<30} {statistics.median(weighted[cipher]):8.0f} {'':>7}"
            f" {statistics.median(w_ratios):6.3f}   per round: {', '.join(f'{r:.3f}' for r in w_ratios)}"
        )
    print(f"\n{'combination':<30} {'size':>6} {'predicted s':>11} {'measured s':>10} {'ratio':>6}")
    for (cipher, size), guesses in predicted.items():
        took = measured[(cipher, size)][: len(guesses)]
        ratios = [g / m for g, m in zip(guesses, took)]
        print(
            f"{cipher:<30} {size // MIB:>5}M {statistics.median(guesses):11.3f} {statistics.median(took):10.3f}"
            f" {statistics.median(ratios):6.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
