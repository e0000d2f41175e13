#!/usr/bin/env python3
"""One answer, run after run (issue 24): N consecutive default runs (`sshbench run`, as `make bench` runs it)
in a 100-column terminal, and for each:

- the config lines of the conclusion (goal: the same lines in N of N);
- the "x fastest" column: the first row exactly 1.00 and never decreasing down the table (goal: N of N);
- the lines printed, stdout and stderr together, each wrapped at 100 columns as a terminal would (goal: at
  most 50);
- the wall time, the headline and the "limited by" line, to see what else moved between runs.

Each run has its own store in a temp dir; nothing else is touched. Speeds are not asserted anywhere: this
script prints figures for the closing note.

Usage: .venv/bin/python bench/one_answer.py [--runs 5] [--columns 100] [--keep DIR] [-- EXTRA RUN OPTIONS]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def terminal_lines(text: str, columns: int) -> int:
    """Lines the text takes in a terminal of `columns` (a longer line wraps)."""
    return sum(max(1, math.ceil(len(line.rstrip()) / columns)) for line in text.splitlines())


def x_fastest_ok(doc: dict) -> tuple[bool, str]:
    """The first row of each client/server pair reads 1.00, and the column never decreases down the table."""
    by_pair: dict[tuple[str, str], list[float]] = {}
    for s in doc["summaries"]:
        if s.get("relative_to_fastest") is not None:
            by_pair.setdefault((s["client"], s["server"]), []).append(s["relative_to_fastest"])
    for pair, column in by_pair.items():
        shown = [round(v, 2) for v in column]
        if shown[0] != 1.0 or shown != sorted(shown):
            return False, f"{pair}: {shown}"
    return True, ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--keep", metavar="DIR", help="keep each run's JSON and output here (default: thrown away)")
    parser.add_argument("extra", nargs="*", help="more `sshbench run` options (after --)")
    args = parser.parse_args()
    sshbench = str(Path(sys.executable).with_name("sshbench"))
    env = {**os.environ, "COLUMNS": str(args.columns), "TERM": "xterm-256color"}
    rows = []
    with tempfile.TemporaryDirectory(prefix="sshbench-one-answer-") as tmp:
        for i in range(args.runs):
            doc_path = Path(tmp) / f"run{i}.json"
            load = os.getloadavg()[0]
            start = time.monotonic()
            done = subprocess.run(
                [sshbench, "run", "--db", f"{tmp}/run{i}.db", "--json", str(doc_path), *args.extra],
                capture_output=True,
                text=True,
                env=env,
                timeout=600,
            )
            wall = time.monotonic() - start
            if done.returncode != 0 or not doc_path.exists():
                print(f"run {i + 1}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
                continue
            doc = json.loads(doc_path.read_text())
            if args.keep:
                keep = Path(args.keep)
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"run{i + 1}.json").write_text(doc_path.read_text())
                (keep / f"run{i + 1}.txt").write_text(done.stdout + done.stderr)
            answer = doc.get("answer") or {}
            lines = terminal_lines(done.stdout + done.stderr, args.columns)
            ok, why = x_fastest_ok(doc)
            limited = next((line.strip() for line in answer.get("lines", []) if "limited by" in line), "-")
            rows.append((answer.get("config"), ok, lines, wall))
            print(f"run {i + 1}: {wall:.1f} s, load {load:.1f}, {lines} lines at {args.columns} columns")
            print(f"  {answer.get('lines', ['-'])[0]}")
            print(f"  {limited}")
            print("  config: " + " | ".join((answer.get("config") or "(none)").splitlines()))
            print(f"  x fastest: {'first 1.00, never decreasing' if ok else 'BROKEN ' + why}")
    if not rows:
        print("no run finished")
        return 1
    configs = [r[0] for r in rows]
    most = max(configs.count(c) for c in configs)
    print()
    print(f"same config lines: {most} of {len(rows)} ({len(set(configs))} distinct)")
    print(f"x fastest first 1.00 and never decreasing: {sum(r[1] for r in rows)} of {len(rows)}")
    print(
        f"fit {50} lines at {args.columns} columns: {sum(r[2] <= 50 for r in rows)} of {len(rows)} "
        f"(lines: {', '.join(str(r[2]) for r in rows)})"
    )
    print(f"wall time: {', '.join(f'{r[3]:.1f}' for r in rows)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
