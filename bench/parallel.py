"""Benchmark (not a test): what parallel streams (`run -P N`) reach, side by side, in one run per part.

1. `loop`: loopback (the private sshd, this machine's cores): -P 1,2 of one cipher, interleaved with the raw
   TCP control at the same stream counts; per N the aggregate, its ceiling (baselines/stream_ceiling.py),
   the CPU the streams used and this machine's busy cores meanwhile, and the verdict: where more streams
   stop scaling, and why (on 2 cores: the cores).
2. `lfn`: the emulated `lfn1g` link (1 Gbit/s, 167 ms RTT; needs root: namespaces, tc, and on kernels
   without sch_netem the userspace delay relay): -P 1 (~ window / RTT) vs -P 8 vs raw TCP with 8 streams,
   interleaved in one run, and -P 8 / min(raw TCP with 8 streams, 8 x the single-stream rate) (goal >= 0.9).
3. `tools`: sshbench's split transfer vs rclone and lftp on `lfn1g`, the same N and cipher, downloads (pget
   and rclone's multi-thread copy split downloads only), interleaved in one run. rclone 1.60 cannot be told
   a cipher: its row is "unpinned" (Go's client prefers aes128-gcm@openssh.com, the cipher used here).

    .venv/bin/python bench/parallel.py [--parts loop,lfn,tools] [--size 256M] [--runs 3]
        [--lfn-size 512M] [--lfn-runs 2] [--tools split,rclone,lftp] [--tools-streams 8] [--tools-size 512M]

Each stream moves 1/N of the payload; the aggregate is all bytes over the common data phase (first
stream's start to the last one's end, on the server's clock where the tool has one). With the pipe tool
the streams start at a barrier (sshbench.measure.start_gate): their set-up is outside the data phase. Prints
figures with the load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CIPHER = "aes128-gcm@openssh.com"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def run(args: list[str], timeout_s: float) -> dict:
    """One `sshbench run` with --json into a temp file and its own throwaway database: the document."""
    with tempfile.TemporaryDirectory(prefix="sshbench-bench-") as tmp:
        out = Path(tmp) / "run.json"
        env = {**os.environ, "SSHBENCH_DB": str(Path(tmp) / "results.db")}
        print(f"\n$ sshbench run {' '.join(args)}   ({load()})", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "sshbench", "run", *args, "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
        )
        if not out.exists():
            raise SystemExit(f"sshbench run {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
        for line in done.stdout.splitlines():  # the report's own verdict lines
            if line.startswith("streams:"):
                print(f"   report: {line}")
        return json.loads(out.read_text())


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def print_sweep(doc: dict, title: str) -> None:
    print(f"\n== {title}   (ended with {load()})")
    env = doc["environment"]
    print(
        f"   {env.get('cpu_model')} ({env.get('cores')} cores), {env.get('client_ssh_version')}, payload {env.get('payload_size')}"
    )
    sweeps = doc["baselines"].get("stream_ceiling") or []
    raw = {(r["link"], r["streams"]): r["median_mib_s"] for r in doc["baselines"].get("raw_tcp_streams") or []}
    raw1 = (doc["baselines"].get("raw_tcp") or {}).get("median_mib_s")
    for sweep in sweeps:
        summaries = {
            s["streams"]: s for s in doc["summaries"] if s["cipher"] == sweep["cipher"] and s["tool"] == sweep["tool"]
        }
        print(f"   {sweep['cipher']} ({sweep['tool']}, {sweep['direction']}, {sweep['link']})")
        print(
            f"   {'-P':>3} {'MiB/s':>8} {'ceiling':>8} {'limit':>8} {'of ceil':>8} {'raw TCP':>8} {'N x one':>8} "
            f"{'stream':>7} {'spread s':>8} {'imbal':>6} {'ssh cores':>9} {'busy cores':>10}"
        )
        for row in sweep["rows"]:
            n = row["streams"]
            block = summaries.get(n, {}).get("per_stream") or {}
            raw_n = raw1 if n == 1 else raw.get((sweep["link"], n))
            print(
                f"   {n:>3} {_fmt(row['mib_s']):>8} {_fmt(row['ceiling_mib_s']):>8} {row['limited_by'] or '-':>8} "
                f"{_fmt(row['of_ceiling'], '.0%'):>8} {_fmt(raw_n):>8} {_fmt(row['terms'].get('streams')):>8} "
                f"{_fmt(block.get('median_stream_mib_s')):>7} {_fmt(block.get('median_start_spread_s'), '.3f'):>8} "
                f"{_fmt(block.get('median_imbalance'), '.2f'):>6} {_fmt(row.get('cpu_cores'), '.2f'):>9} "
                f"{_fmt(row.get('machine_cores'), '.2f'):>10}"
            )
        print(f"   verdict: {sweep['conclusion']}")
    invalid = [t for t in doc["trials"] if not t["valid"]]
    if invalid:
        print(f"   {len(invalid)} invalid trial(s), e.g. {invalid[0]['invalid_reason']}")


def print_lfn(doc: dict) -> None:
    print_sweep(doc, "lfn1g (1 Gbit/s, 167 ms RTT): -P 1 vs -P 8 vs raw TCP with 8 streams, one run")
    summaries = {s["streams"]: s for s in doc["summaries"] if s["cipher"] == CIPHER}
    raw8 = next((r["median_mib_s"] for r in doc["baselines"].get("raw_tcp_streams") or [] if r["streams"] == 8), None)
    one, eight = (summaries.get(n, {}).get("median_mib_s") for n in (1, 8))
    links = doc["baselines"].get("links") or {}
    rtt = (links.get("lfn1g") or {}).get("rtt_s")
    window = (links.get("lfn1g") or {}).get("window_bytes")
    if rtt and window:
        print(
            f"   window / RTT = {window / 2**20 / rtt:.1f} MiB/s (window {window / 2**20:.0f} MiB, measured RTT {rtt * 1000:.0f} ms)"
        )
    trials = [t for t in doc["trials"] if t["kind"] == "transfer" and t["cipher"] == CIPHER and not t["warmup"]]
    for n in (1, 8):
        rates = [round(t["mib_s"], 1) for t in trials if t["streams"] == n and t["valid"] and t["mib_s"]]
        print(f"   -P {n} trials (MiB/s): {rates}")
    spreads = [
        max(starts) - min(starts)
        for t in trials
        if t["streams"] == 8
        and len(starts := [s["data_started_s"] for s in t["per_stream"] or [] if s.get("data_started_s") is not None])
        > 1
    ]
    gates = [
        max(s["at_gate_s"] for s in t["per_stream"]) - min(s["at_gate_s"] for s in t["per_stream"])
        for t in trials
        if t["streams"] == 8 and t["per_stream"] and all(s.get("at_gate_s") is not None for s in t["per_stream"])
    ]
    if spreads:
        print(
            f"   -P 8 data phases began within {statistics.median(spreads):.3f} s of each other (median; server clock); "
            f"their set-ups reached the barrier {statistics.median(gates) if gates else float('nan'):.2f} s apart"
        )
    if one and eight and raw8:
        bound = min(raw8, 8 * one)
        print(
            f"   -P 1 {one:.1f} MiB/s; -P 8 {eight:.1f} MiB/s = {eight / bound:.2f} x min(raw TCP 8 streams {raw8:.1f}, "
            f"8 x single {8 * one:.1f}) = {bound:.1f} MiB/s (goal >= 0.9)"
        )


def print_tools(doc: dict, streams: int) -> None:
    print(f"\n== lfn1g: split vs rclone vs lftp, -P {streams}, downloads, one interleaved run   (ended with {load()})")
    print(f"   payload {doc['environment'].get('payload_size')}; {len(doc['trials'])} trials")
    print(f"   {'tool':<8} {'client':<8} {'cipher':<24} {'median MiB/s':>12} {'trials MiB/s':<34} {'verified':>8}")
    for s in sorted(doc["summaries"], key=lambda s: -(s.get("median_mib_s") or 0.0)):
        if s["streams"] != streams:
            continue
        trials = [
            t
            for t in doc["trials"]
            if t["kind"] == "transfer" and not t["warmup"] and t["tool"] == s["tool"] and t["cipher"] == s["cipher"]
        ]
        rates = [round(t["mib_s"], 1) if t["valid"] and t["mib_s"] else "invalid" for t in trials]
        verified = all(t["verified"] for t in trials if t["valid"])
        print(
            f"   {s['tool']:<8} {s['client']:<8} {s['cipher']:<24} {_fmt(s.get('median_mib_s')):>12} "
            f"{str(rates):<34} {'yes' if verified else 'no':>8}"
        )
    for t in doc["trials"]:
        if not t["valid"]:
            print(f"   invalid: {t['tool']}: {t['invalid_reason']}")
    for notice in doc.get("notices") or []:
        print(f"   note: {notice}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="loop,lfn", help="comma-separated: loop, lfn, tools")
    parser.add_argument("--size", default="256M")
    parser.add_argument("--runs", default="3")
    parser.add_argument("--loop-streams", default="1,2")
    parser.add_argument("--lfn-size", default="512M", help="each of 8 streams moves 1/8 of it")
    parser.add_argument("--lfn-runs", default="2")
    parser.add_argument("--tools", default="split,rclone,lftp")
    parser.add_argument("--tools-streams", type=int, default=8)
    parser.add_argument("--tools-size", default="512M")
    parser.add_argument("--tools-runs", default="2")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    common = ["--ciphers", CIPHER, "--warmup", "1"]
    if "loop" in parts:
        loop = run([*common, "-P", args.loop_streams, "--size", args.size, "--runs", args.runs], timeout_s=1800)
        print_sweep(loop, f"loopback: -P {args.loop_streams}")
    if parts & {"lfn", "tools"} and os.geteuid() != 0:
        print("\n== lfn1g: skipped (needs root: network namespaces and tc)")
        return 0
    if "lfn" in parts:
        lfn = run([*common, "--link", "lfn1g", "-P", "1,8", "--size", args.lfn_size, "--runs", args.lfn_runs], 3600)
        print_lfn(lfn)
    if "tools" in parts:
        tools = [t for t in args.tools.split(",") if t == "split" or shutil.which(t)]
        left_out = sorted(set(args.tools.split(",")) - set(tools))
        if left_out:
            print(f"\n   not installed, left out: {', '.join(left_out)} (apt-get install {' '.join(left_out)})")
        doc = run(
            [
                *common,
                *("--tool", ",".join(tools), "--link", "lfn1g", "--direction", "down", "--no-baselines"),
                *("-P", str(args.tools_streams), "--size", args.tools_size, "--runs", args.tools_runs),
            ],
            3600,
        )
        print_tools(doc, args.tools_streams)
    return 0


if __name__ == "__main__":
    sys.exit(main())
