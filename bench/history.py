"""`sshbench history` on real runs (issue 65): does it name an injected slowdown where it is, and nothing in an A/A
history? Root (a CPU quota on the private sshd).

1. A history of --runs real runs of one set-up in a temporary store, every run's sshd started through one wrapper that
   puts it in a cgroup (bench/gate.py's): without a quota up to run --step-at, with a quota of --quota cores from
   that run on (0.81 core cost ~15% in bench/gate.py's side-by-side checks). The set-up (the sshd's path, the rows,
   the options) is the same throughout: the quota is a change of the machine the store cannot see, as a slower
   kernel or a noisy neighbour would be. Then `sshbench history` on it: the change point should be at run
   --step-at +-1.
2. An A/A history: --runs runs of the same set-up, no quota; `sshbench history` should name no change point.

Each run is `sshbench run` with RUN OPTIONS (after --; default: two ciphers, 5 rounds, no baselines, no --why).
Prints each run's all-rows MiB/s and wall time, each history's change points, and the wall times.

    python bench/history.py                          # 2 x 20 runs (~2 x 10 min on this 2-core VM)
    python bench/history.py --runs 4 --step-at 3     # the mechanics only (a history under 6 runs is not searched)
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

from gate import cgroup_dir, clean_up, set_quota, slow_wrapper

DEFAULT_RUN = [
    "--ciphers", "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com", "--kex", "curve25519-sha256",
    "--runs", "5", "--no-baselines", "--no-why",
]  # fmt: skip
RUN_TIMEOUT_S = 600


def no_quota(d: Path) -> None:
    """The cgroup without a CPU limit (cgroup v1 or v2)."""
    if (d / "cpu.cfs_quota_us").exists():
        (d / "cpu.cfs_quota_us").write_text("-1")
    else:
        (d / "cpu.max").write_text("max 10000")


def sshbench(*args: str, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sshbench", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def one_history(name: str, db: Path, wrapper: Path, cg: Path, opts: argparse.Namespace) -> dict:
    """--runs runs into `db` (the quota from run `opts.step_at` on unless A/A), then `sshbench history` on them."""
    walls = []
    for i in range(1, opts.runs + 1):
        slowed = name == "step" and i >= opts.step_at
        if slowed:
            set_quota(cg, opts.quota)
        else:
            no_quota(cg)
        start = time.monotonic()
        done = sshbench("run", *opts.run_options, "--sshd", str(wrapper), "--db", str(db), "-q")
        walls.append(time.monotonic() - start)
        state = "quota" if slowed else "no quota"
        print(f"{name} run {i:2d} ({state}): exit {done.returncode}, {walls[-1]:.0f} s", flush=True)
        if done.returncode != 0:
            print(done.stderr.strip()[-2000:], file=sys.stderr)
            raise SystemExit(f"bench/history.py: run {i} of the {name} history failed")
    out = db.with_suffix(".json")
    done = sshbench("history", "--db", str(db), "--last", str(opts.runs), "--json", str(out), timeout=300)
    print(done.stdout, flush=True)
    if done.returncode != 0:
        raise SystemExit(f"bench/history.py: sshbench history failed: {done.stderr.strip()}")
    found = json.loads(out.read_text())
    found["walls"] = walls
    return found


def summary(name: str, found: dict, expect: int | None) -> str:
    runs = found["runs"]
    levels = ", ".join(f"{r['all_rows']['mib_s']:.0f}" for r in runs)
    walls = found["walls"]
    where = [f"before run {c['after']} ({c['ratio']:.3f}, p {c['p_value']:.2g})" for c in found["change_points"]] or [
        "none"
    ]
    verdict = ""
    if expect is not None:  # the change point is named at the first slowed run +-1 (by position in the store)
        ids = [r["run_id"] for r in runs]
        hits = [c for c in found["change_points"] if abs(ids.index(c["after"]) + 1 - expect) <= 1]
        verdict = f"; at run {expect} +-1: {'yes' if hits and len(found['change_points']) == 1 else 'NO'}"
    else:
        verdict = f"; none expected: {'yes' if not found['change_points'] else 'NO'}"
    scatter = found.get("run_to_run_scatter")
    return (
        f"{name}: {len(runs)} runs, all rows MiB/s {levels}\n"
        f"  change points: {'; '.join(where)}{verdict}; run-to-run scatter "
        f"{'-' if scatter is None else f'{scatter:.1%}'}\n"
        f"  wall: {sum(walls) / 60:.1f} min, {min(walls):.0f}-{max(walls):.0f} s a run (median "
        f"{statistics.median(walls):.0f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="runs in each history (default 20)")
    parser.add_argument("--step-at", type=int, default=12, help="the first run under the quota (default 12)")
    parser.add_argument("--quota", type=float, default=0.81, help="the quota from --step-at on, in cores (0.81)")
    parser.add_argument("--no-aa", action="store_true", help="the step history only")
    parser.add_argument("--keep", metavar="DIR", help="copy the two stores into DIR at the end")
    parser.add_argument("run_options", nargs="*", metavar="-- RUN OPTIONS", help=f"default: {' '.join(DEFAULT_RUN)}")
    opts = parser.parse_args()
    opts.run_options = opts.run_options or DEFAULT_RUN
    if os.geteuid() != 0:
        print("bench/history.py: root needed (a CPU quota on the private sshd)", file=sys.stderr)
        return 2
    if not 1 < opts.step_at <= opts.runs:
        print(f"bench/history.py: --step-at {opts.step_at} must be within 2..--runs ({opts.runs})", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="sshbench-history-"))
    cg, procs = cgroup_dir(f"sshbench-history-{os.getpid()}")
    started = time.monotonic()
    results = []
    try:
        wrapper = slow_wrapper(tmp, cg, procs)  # every run's sshd, quota or not: one set-up
        step = one_history("step", tmp / "step.db", wrapper, cg, opts)
        results.append(summary(f"step (a quota of {opts.quota:g} cores from run {opts.step_at})", step, opts.step_at))
        if not opts.no_aa:
            aa = one_history("aa", tmp / "aa.db", wrapper, cg, opts)
            results.append(summary("A/A (no quota)", aa, None))
    finally:
        clean_up(tmp, cg, opts.keep)
    print("\n".join(["", "summary:", *results, f"total wall: {(time.monotonic() - started) / 60:.1f} min"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
