#!/usr/bin/env python3
"""Could the reader's CPU time per MiB take the machine's speed out of each trial? (issue 23, point 5; docs/clock.md)

bench/decay.py found a transfer's rate moving with its processes' CPU time per MiB: the vCPUs run faster and slower
by 20-30% from one half-second to the next. The pipe tool's remote reader (`dd of=/dev/null`) does the same work per
MiB whatever the cipher, so its CPU time per MiB (Trial.server_sink_cpu_s over the payload) is a speedometer of the
server's CPU during the trial. This reads stored runs (`sshbench run --json`) and asks, per pair of rows measured in
the same rounds: how much does the round-to-round spread of their log ratio narrow when each trial's rate is scaled
by its reader's CPU time per MiB, and does that move the pair's ratio itself (a bias: a faster transfer could make
the reader cheaper per MiB by itself)?

Nothing here changes a figure sshbench reports: it is an offline look at recorded trials.

Usage: .venv/bin/python bench/speedometer.py RUN.json [RUN.json ...]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

MIB = 1 << 20


def trials_by_row(doc: dict) -> dict[tuple, dict[int, tuple[float, float]]]:
    """Per row, per round: log MiB/s and log reader CPU seconds per MiB (valid measured transfers with both)."""
    rows: dict[tuple, dict[int, tuple[float, float]]] = {}
    for t in doc.get("trials", []):
        if t.get("kind") != "transfer" or t.get("warmup") or not t.get("valid"):
            continue
        if not (t.get("mib_s") and t.get("server_sink_cpu_s") and t.get("payload_bytes")):
            continue
        key = (t["cipher"], t["mac"], t.get("kex"), t.get("tool"), t.get("direction"), t.get("link"))
        cost = t["server_sink_cpu_s"] / (t["payload_bytes"] / MIB)
        rows.setdefault(key, {})[t["repetition"]] = (math.log(t["mib_s"]), math.log(cost))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    raw_sd: list[float] = []
    scaled_sd: list[float] = []
    shifts: list[tuple[float, float]] = []  # (raw mean log ratio, scaled minus raw)
    for path in args.runs:
        rows = trials_by_row(json.loads(path.read_text()))
        keys = sorted(rows, key=str)
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                rounds = sorted(set(rows[a]) & set(rows[b]))
                if len(rounds) < 3:
                    continue
                raw = [rows[a][r][0] - rows[b][r][0] for r in rounds]
                scaled = [(rows[a][r][0] + rows[a][r][1]) - (rows[b][r][0] + rows[b][r][1]) for r in rounds]
                raw_sd.append(statistics.stdev(raw))
                scaled_sd.append(statistics.stdev(scaled))
                shifts.append((abs(statistics.fmean(raw)), abs(statistics.fmean(scaled)) - abs(statistics.fmean(raw))))
    if not raw_sd:
        print("no pair of rows with 3 rounds and the reader's CPU in these runs")
        return 1
    narrower = sum(s < r for s, r in zip(scaled_sd, raw_sd)) / len(raw_sd)
    print(f"{len(raw_sd)} pairs of rows from {len(args.runs)} run(s)")
    print(
        f"round-to-round spread of a pair's log ratio (median sd): as measured {statistics.median(raw_sd):.3f},"
        f" scaled by the reader's CPU per MiB {statistics.median(scaled_sd):.3f}; narrower for {narrower:.0%} of pairs"
    )
    far = [shift for apart, shift in shifts if apart >= math.log(1.3)]
    near = [shift for apart, shift in shifts if apart < math.log(1.1)]
    for name, values in (("pairs 1.3x or more apart", far), ("pairs under 1.1x apart", near)):
        if values:
            print(
                f"  {name}: the scaled ratio's distance from 1 minus the measured one's, median {statistics.median(values):+.3f}"
                f" (log; negative: scaling pulls the pair together) of {len(values)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
