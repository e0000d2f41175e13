"""Benchmark (not a test): what parallel streams (`run -P N`) reach, side by side, in one run per path.

1. Loopback (the private sshd, this machine's cores): -P 1,2,4 of one cipher, interleaved with the raw TCP
   control at the same stream counts; per N the aggregate, its ceiling (baselines/stream_ceiling.py) and
   the verdict: where more streams stop scaling, and why (on 2 cores: the cores).
2. The emulated `lfn1g` link (1 Gbit/s, 167 ms RTT; needs root: namespaces, tc, and on kernels without
   sch_netem the userspace delay relay): -P 1 (~ window / RTT) vs -P 8 vs min(raw TCP with 8 streams,
   8 x the single-stream rate).

    .venv/bin/python bench/parallel.py [--size 128M] [--runs 3] [--lfn-size 128M] [--lfn-runs 2] [--skip-lfn]

Each stream moves 1/N of the payload; the aggregate is all bytes over the common data phase (first
stream's start to the last one's end, on the server's clock). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CIPHER = "aes128-gcm@openssh.com"


def run(args: list[str], timeout_s: float) -> dict:
    """One `sshbench run` with --json into a temp file and its own throwaway database: the document."""
    with tempfile.TemporaryDirectory(prefix="sshbench-bench-") as tmp:
        out = Path(tmp) / "run.json"
        env = {**os.environ, "SSHBENCH_DB": str(Path(tmp) / "results.db")}
        done = subprocess.run(
            [sys.executable, "-m", "sshbench", "run", *args, "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
        )
        if not out.exists():
            raise SystemExit(f"sshbench run {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
        return json.loads(out.read_text())


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def print_sweep(doc: dict, title: str) -> None:
    print(f"\n== {title}")
    env = doc["environment"]
    print(
        f"   {env.get('cpu_model')} ({env.get('cores')} cores), {env.get('client_ssh_version')}, payload {env.get('payload_size')}"
    )
    sweeps = doc["baselines"].get("stream_ceiling") or []
    raw = {(r["link"], r["streams"]): r["median_mib_s"] for r in doc["baselines"].get("raw_tcp_streams") or []}
    raw1 = (doc["baselines"].get("raw_tcp") or {}).get("median_mib_s")
    summaries = {s["streams"]: s for s in doc["summaries"]}
    for sweep in sweeps:
        print(
            f"   {'-P':>3} {'MiB/s':>8} {'ceiling':>8} {'limit':>8} {'of ceil':>8} {'raw TCP':>8} {'N x one':>8} "
            f"{'cores':>7} {'stream':>7} {'spread s':>8} {'imbal':>6} {'cpu cores':>9}"
        )
        for row in sweep["rows"]:
            n = row["streams"]
            block = summaries.get(n, {}).get("per_stream") or {}
            raw_n = raw1 if n == 1 else raw.get((sweep["link"], n))
            print(
                f"   {n:>3} {_fmt(row['mib_s']):>8} {_fmt(row['ceiling_mib_s']):>8} {row['limited_by'] or '-':>8} "
                f"{_fmt(row['of_ceiling'], '.0%'):>8} {_fmt(raw_n):>8} {_fmt(row['terms'].get('streams')):>8} "
                f"{_fmt(row['terms'].get('cores'), '.0f'):>7} {_fmt(block.get('median_stream_mib_s')):>7} "
                f"{_fmt(block.get('median_start_spread_s'), '.2f'):>8} {_fmt(block.get('median_imbalance'), '.2f'):>6} "
                f"{_fmt(row.get('cpu_cores'), '.2f'):>9}"
            )
        print(f"   verdict: {sweep['conclusion']}")
    invalid = [t for t in doc["trials"] if not t["valid"]]
    if invalid:
        print(f"   {len(invalid)} invalid trial(s), e.g. {invalid[0]['invalid_reason']}")


def print_lfn(doc: dict) -> None:
    print_sweep(doc, "lfn1g (1 Gbit/s, 167 ms RTT): -P 1 vs -P 8")
    summaries = {s["streams"]: s for s in doc["summaries"]}
    raw8 = next((r["median_mib_s"] for r in doc["baselines"].get("raw_tcp_streams") or [] if r["streams"] == 8), None)
    one, eight = (summaries.get(n, {}).get("median_mib_s") for n in (1, 8))
    links = doc["baselines"].get("links") or {}
    rtt = (links.get("lfn1g") or {}).get("rtt_s")
    window = (links.get("lfn1g") or {}).get("window_bytes")
    if rtt and window:
        print(
            f"   window / RTT = {window / 2**20 / rtt:.1f} MiB/s (window {window / 2**20:.0f} MiB, measured RTT {rtt * 1000:.0f} ms)"
        )
    if one and eight and raw8:
        bound = min(raw8, 8 * one)
        print(
            f"   -P 1 {one:.1f} MiB/s; -P 8 {eight:.1f} MiB/s = {eight / bound:.2f} x min(raw TCP 8 streams {raw8:.1f}, "
            f"8 x single {8 * one:.1f}) = {bound:.1f} MiB/s (goal >= 0.9)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="128M")
    parser.add_argument("--runs", default="3")
    parser.add_argument("--lfn-size", default="128M")
    parser.add_argument("--lfn-runs", default="2")
    parser.add_argument("--skip-lfn", action="store_true")
    args = parser.parse_args()
    common = ["--ciphers", CIPHER, "--warmup", "1"]
    loop = run([*common, "-P", "1,2,4", "--size", args.size, "--runs", args.runs], timeout_s=900)
    print_sweep(loop, "loopback: -P 1,2,4")
    if not args.skip_lfn:
        if os.geteuid() != 0:
            print("\n== lfn1g: skipped (needs root: network namespaces and tc)")
        else:
            lfn = run([*common, "--link", "lfn1g", "-P", "1,8", "--size", args.lfn_size, "--runs", args.lfn_runs], 1800)
            print_lfn(lfn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
