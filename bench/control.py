"""Benchmark (not a test): is sshbench's raw TCP control as fast as iperf3 on loopback?

In one run, interleaved: sshbench's raw TCP control (the payload file through a plain TCP
connection to an in-process sink, receiver-timed; sshbench.baselines.raw_tcp) and `iperf3`
with a single stream, both on 127.0.0.1. Prints the medians and their ratio (goal >= 0.95).

    .venv/bin/python bench/control.py [--size 1G] [--runs 7]

iperf3 moves the same number of bytes (`-n SIZE`), so that both include the same connection
ramp-up; a busy machine makes single runs swing by 2x, hence interleaved pairs and medians.

Needs iperf3 (apt-get install iperf3).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from sshbench.baselines.raw_tcp import run_raw_tcp_trial
from sshbench.host.cleanup import kill_tree
from sshbench.units import MIB, parse_size


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def iperf3_once(size: int, extra: tuple[str, ...] = ()) -> float:
    """One single-stream iperf3 run on loopback moving `size` bytes (as the control does): received MiB/s."""
    port = free_port()
    server = subprocess.Popen(
        ["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # The client retries its connect for a moment; the server binds within milliseconds.
        for _ in range(50):  # bounded
            done = subprocess.run(
                ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-P", "1", "-n", str(size), *extra, "-J"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            try:
                return json.loads(done.stdout)["end"]["sum_received"]["bits_per_second"] / 8 / MIB
            except (ValueError, KeyError):
                pass  # not up yet ("unable to connect"): retry
            try:
                server.wait(timeout=0.1)  # bounded wait while the server comes up
            except subprocess.TimeoutExpired:
                pass
        else:
            raise SystemExit(f"iperf3 client failed: {done.stdout[-300:]} {done.stderr[-300:]}")
    finally:
        kill_tree(server.pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=parse_size, default=parse_size("1G"), help="raw TCP payload (default 1G)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if shutil.which("iperf3") is None:
        print("bench/control.py: iperf3 not found; install it: apt-get install iperf3", file=sys.stderr)
        return 1
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="sshbench-control-", dir=base) as tmp:
        payload = Path(tmp) / "payload"
        with open(payload, "wb") as f:
            for _ in range(args.size // (8 * MIB)):
                f.write(os.urandom(8 * MIB))
            f.write(os.urandom(args.size % (8 * MIB)))
        # One warm-up of each, then interleaved pairs.
        run_raw_tcp_trial(payload=payload, payload_bytes=args.size, repetition=0, warmup=True, timeout_s=60)
        iperf3_once(args.size)
        ours, theirs, theirs_1m = [], [], []
        for rep in range(args.runs):
            trial = run_raw_tcp_trial(
                payload=payload, payload_bytes=args.size, repetition=rep, warmup=False, timeout_s=60
            )
            if not trial.valid or trial.mib_s is None:
                print(f"raw TCP trial invalid: {trial.invalid_reason}", file=sys.stderr)
                return 1
            ours.append(trial.mib_s)
            theirs.append(iperf3_once(args.size))
            theirs_1m.append(iperf3_once(args.size, ("-l", "1M")))
            print(
                f"run {rep + 1}: sshbench raw TCP {ours[-1]:.0f} MiB/s, iperf3 {theirs[-1]:.0f} MiB/s, "
                f"iperf3 -l 1M {theirs_1m[-1]:.0f} MiB/s"
            )
    ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
    ratio = ours_median / theirs_median
    print(
        f"sshbench raw TCP control: {ours_median:.0f} MiB/s median of {args.runs} "
        f"({min(ours):.0f}-{max(ours):.0f}), payload {args.size // MIB} MiB"
    )
    print(
        f"iperf3 single stream:     {theirs_median:.0f} MiB/s median of {args.runs} "
        f"({min(theirs):.0f}-{max(theirs):.0f}), -n {args.size // MIB} MiB each"
    )
    print(f"ratio sshbench / iperf3:  {ratio:.2f} (goal >= 0.95): {'met' if ratio >= 0.95 else 'NOT met'}")
    # The control writes 1 MiB at a time; iperf3 with the same write size, for reference.
    print(
        f"iperf3 -l 1M (same write size as the control): {statistics.median(theirs_1m):.0f} MiB/s median; "
        f"ratio {ours_median / statistics.median(theirs_1m):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
