#!/usr/bin/env python3
"""Does sshbench decide, fast? The goals of issue 12, measured as a user runs them, printed as figures.

1. N consecutive default runs (`--runs N`, default 2; `sshbench run`, every cipher, default MAC, `--runs
   auto`): wall time of each (goal: at most 60 s on 2 cores), the median CI half-width, how many
   neighbouring pairs each decided, and issue 23's two decisions: the fastest group (the first row and
   whatever the run grouped with it) decided faster than every other row, and aes128-gcm decided against
   chacha20-poly1305 (goal: both in N of N). Between each two consecutive runs: every pair of combinations
   whose medians differ by 20% or more must be ordered the same way in both (goal 100%; the first run's medians
   say which pairs: a noisy row's 5-trial median alone moves it 20-34%, so the pairs 20% or more apart in both runs'
   medians, and how many of them came in opposite orders, are printed too); pairs 5-20% apart must never be
   reversed with confidence (each run ordering them, in opposite directions).
   `--from DIR` reads runs already made instead (`bench/one_answer.py --keep DIR`: its run*.json). With 3 runs
   or more, per pair: the variance of the runs' mean paired log ratios against what their rounds predict (does
   a run's interval hold the spread between runs?).
2. `--seconds` sweep (`--sweep 0.25,0.5,1`): the same default run with each data-phase target, the runs
   interleaved (A B C A B C: this machine's 30-40% swings between minutes hit each alike), printing
   the median CI half-width, the rounds run and the wall time: the efficiency figure is
   half-width x sqrt(wall time) (a CI narrows as 1/sqrt(rounds), so lower is more precision per second).
3. `--full`: `sshbench run --full` once: wall time (goal: at most 5 minutes) and every adjacent pair
   ordered, tied or named undecided.

Each run uses its own store in a temp dir; nothing else is touched. Speeds are not asserted anywhere:
this script prints figures for the closing note.

Usage: .venv/bin/python bench/precision.py [--runs N | --from DIR] [--pairs-only] [--sweep 0.25,0.5,1] [--full] [-- EXTRA RUN OPTIONS]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sshbench.model import intervals
from sshbench.model import statistics as stats

MIB = 1024 * 1024


@dataclass
class Measured:
    label: str
    wall_s: float
    doc: dict

    @property
    def summaries(self) -> list[dict]:
        return [s for s in self.doc["summaries"] if s.get("median_mib_s")]

    @property
    def rounds(self) -> int:
        return int(self.doc["stats"]["rounds_run"])

    def half_widths(self) -> list[float]:
        """CI half-width as a fraction of the median, per combination."""
        return [
            (s["ci95_mib_s"][1] - s["ci95_mib_s"][0]) / 2 / s["median_mib_s"] for s in self.summaries if s["ci95_mib_s"]
        ]

    def rates(self) -> dict[str, dict[int, float]]:
        """MiB/s per combination label per round, from the valid measured transfer trials."""
        out: dict[str, dict[int, float]] = {}
        for t in self.doc["trials"]:
            if t["kind"] == "transfer" and t["valid"] and not t["warmup"] and t.get("data_s"):
                key = f"{t['cipher']} {t['mac']}"
                out.setdefault(key, {})[t["repetition"]] = t["payload_bytes"] / MIB / t["data_s"]
        return out

    def positions(self) -> dict[str, int]:
        """Each combination's place in the reported ranking (summaries are in the ranking's order)."""
        return {f"{s['cipher']} {s['mac']}": i for i, s in enumerate(self.summaries)}

    def by_round(self) -> dict[str, dict[int, float]]:
        """MiB/s per combination per round as the run ranked them (each trial's own rate)."""
        out: dict[str, dict[int, float]] = {}
        for t in self.doc["trials"]:
            if t["kind"] == "transfer" and t["valid"] and not t["warmup"] and t.get("mib_s"):
                out.setdefault(f"{t['cipher']} {t['mac']}", {})[t["repetition"]] = t["mib_s"]
        return out

    def fastest_group_decided(self) -> tuple[bool, str]:
        """Every row of the first group decided faster than every row outside it (paired, the run's tie margin)."""
        rates, tie = self.by_round(), self.doc["stats"]["tie_margin"]
        keys = [f"{s['cipher']} {s['mac']}" for s in self.summaries]
        groups = [s.get("group", 0) for s in self.summaries]
        first = [k for k, g in zip(keys, groups) if g == groups[0]]
        for inside in first:
            for outside in (k for k in keys if k not in first):
                estimate = intervals.paired_ratio_ci(rates[inside], rates[outside])
                if not (stats.compare_pair(estimate, tie) == "ordered" and estimate.ratio > 1):
                    return (
                        False,
                        f"{inside.split()[0]} vs {outside.split()[0]} {estimate.ratio:.2f} ({estimate.low:.2f}-{estimate.high:.2f})",
                    )
        return True, f"{len(first)} row(s)"

    def gcm_vs_chacha(self) -> tuple[bool, str]:
        rates, tie = self.by_round(), self.doc["stats"]["tie_margin"]
        gcm = next((k for k in rates if k.startswith("aes128-gcm")), None)
        chacha = next((k for k in rates if k.startswith("chacha20-poly1305")), None)
        if gcm is None or chacha is None:
            return False, "not both measured"
        estimate = intervals.paired_ratio_ci(rates[gcm], rates[chacha])
        decided = stats.compare_pair(estimate, tie) == "ordered"
        return decided, f"{estimate.ratio:.2f} ({estimate.low:.2f}-{estimate.high:.2f})"

    def against_the_first(self) -> dict[str, int]:
        """Every other row against the first (paired, the run's tie margin): how many are decided slower, tied with
        it, or undecided. What `--full` answers a user ("is anything as fast as the first, and how far behind is
        each"), where neighbours among 115 rows are mostly a few percent apart and need ~100 rounds each."""
        rates, tie = self.by_round(), self.doc["stats"]["tie_margin"]
        keys = [f"{s['cipher']} {s['mac']}" for s in self.summaries]
        counts = {"ordered": 0, "tied": 0, "undecided": 0}
        for key in keys[1:]:
            estimate = intervals.paired_ratio_ci(rates[keys[0]], rates[key])
            decision = stats.compare_pair(estimate, tie)
            counts["undecided" if decision == "ordered" and estimate.ratio < 1 else decision] += 1
        return counts

    def undecided(self) -> int:
        return len(self.doc["stats"]["undecided_pairs"])

    def neighbours(self) -> int:
        return max(0, len(self.summaries) - 1)


def run(label: str, options: list[str], store: Path) -> Measured:
    out = store / f"{label}.json"
    env = {**os.environ, "SSHBENCH_DB": str(store / "results.db")}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sshbench", "run", *options, "--json", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        stdin=subprocess.DEVNULL,
    )
    wall = time.monotonic() - start
    if done.returncode not in (0, 1) or not out.exists():
        sys.exit(f"sshbench run {' '.join(options)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return Measured(label, wall, json.loads(out.read_text()))


def describe(m: Measured) -> str:
    widths = m.half_widths()
    return (
        f"{m.label:>14}: {m.wall_s:6.1f} s wall, {m.rounds} rounds, median CI half-width "
        f"{statistics.median(widths) * 100:5.1f}% (max {max(widths) * 100:.0f}%), "
        f"{m.neighbours() - m.undecided()}/{m.neighbours()} neighbouring pairs decided, "
        f"efficiency {statistics.median(widths) * math.sqrt(m.wall_s) * 100:.1f}; against the first row: "
        + ", ".join(f"{n} {decision}" for decision, n in m.against_the_first().items())
    )


def agreement(a: Measured, b: Measured) -> None:
    """Every pair of combinations (not only neighbours) across two runs."""
    ra, rb = a.rates(), b.rates()
    ma = {k: statistics.median(v.values()) for k, v in ra.items()}
    mb = {k: statistics.median(v.values()) for k, v in rb.items()}
    pa, pb = a.positions(), b.positions()
    far_same = far_total = near_reversed = near_total = ranked_same = both_far = both_far_reversed = 0
    for x, y in itertools.combinations(sorted(ma.keys() & mb.keys()), 2):
        gap = max(ma[x], ma[y]) / min(ma[x], ma[y]) - 1
        if gap >= 0.20 and max(mb[x], mb[y]) / min(mb[x], mb[y]) - 1 >= 0.20:
            # 20% apart in both runs' medians, not only in the first's (whose 5 trials alone move a row by 20-34%)
            both_far += 1
            both_far_reversed += (ma[x] > ma[y]) != (mb[x] > mb[y])
        if gap >= 0.20:
            far_total += 1
            same = (ma[x] > ma[y]) == (mb[x] > mb[y])
            far_same += same
            ranked_same += x in pa and y in pa and x in pb and y in pb and (pa[x] < pa[y]) == (pb[x] < pb[y])
            if not same:
                print(f"  reversed: {x} {ma[x]:.0f} vs {y} {ma[y]:.0f} MiB/s, then {mb[x]:.0f} vs {mb[y]:.0f}")
        elif gap >= 0.05:
            near_total += 1
            ea, eb = intervals.paired_ratio_ci(ra[x], ra[y]), intervals.paired_ratio_ci(rb[x], rb[y])
            ordered_a, ordered_b = stats.compare_pair(ea) == "ordered", stats.compare_pair(eb) == "ordered"
            near_reversed += ordered_a and ordered_b and (ea.ratio > 1) != (eb.ratio > 1)
    print(
        f"  pairs >= 20% apart ordered the same in both runs: {far_same}/{far_total}"
        + (f" ({far_same / far_total:.0%}; goal 100%)" if far_total else "")
        + f"; in the same order in both reported rankings: {ranked_same}/{far_total}"
    )
    print(f"  pairs >= 20% apart in both runs, in opposite orders: {both_far_reversed}/{both_far}")
    print(f"  pairs 5-20% apart reversed with confidence: {near_reversed}/{near_total} (goal 0)")


def consecutive_runs(args: argparse.Namespace, store: Path) -> list[Measured]:
    if args.from_dir:
        paths = sorted(Path(args.from_dir).glob("run*.json"), key=lambda p: int(p.stem[3:] or 0))
        print(
            f"{len(paths)} default runs read from {args.from_dir} (wall: the run's own, without the command around it):"
        )
        docs = [json.loads(p.read_text()) for p in paths]
        return [Measured(f"default #{i + 1}", d["finished_at"] - d["started_at"], d) for i, d in enumerate(docs)]
    print(f"{args.runs} consecutive default runs (`sshbench run`):")
    return [run(f"default #{i + 1}", args.extra, store) for i in range(args.runs)]


def between_runs(runs: list[Measured]) -> None:
    """Does a run's paired interval hold the spread between runs? Per pair of combinations measured in every run: the
    variance of the runs' mean paired log ratios against what each run's own rounds predict (their variance over
    the rounds / the rounds), pooled. A ratio near 1: the rounds hold the spread; well above 1: something constant
    within a run and not between runs moves the pair, and a run's interval is too narrow for it (F(runs-1, rounds)
    puts a ratio of 1 at up to ~2.2 with 10 runs by chance)."""
    common = set.intersection(*(set(m.by_round()) for m in runs))
    order = [k for k in (f"{s['cipher']} {s['mac']}" for s in runs[0].summaries) if k in common]
    print(f"between runs ({len(runs)} runs): variance of the runs' mean log ratios / what their rounds predict")
    for a, b in itertools.combinations(order, 2):
        means, predicted = [], []
        for m in runs:
            rates = m.by_round()
            logs = [math.log(rates[a][r] / rates[b][r]) for r in rates[a] if r in rates[b]]
            if len(logs) > 1:
                means.append(statistics.mean(logs))
                predicted.append(statistics.variance(logs) / len(logs))
        if len(means) > 2:
            ratio = statistics.variance(means) / statistics.mean(predicted)
            print(
                f"  {a.split()[0]:<30} vs {b.split()[0]:<30} {math.exp(statistics.mean(means)):.3f}x, "
                f"between/predicted {ratio:.1f} (runs' spread {100 * math.sqrt(statistics.variance(means)):.1f}%,"
                f" rounds predict {100 * math.sqrt(statistics.mean(predicted)):.1f}%)"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sweep", default="", help="comma list of --seconds targets to compare, e.g. 0.25,0.5,1")
    parser.add_argument("--sweep-rounds", type=int, default=2, help="runs of each --seconds value, interleaved")
    parser.add_argument("--full", action="store_true", help="also time `sshbench run --full` (minutes)")
    parser.add_argument("--pairs-only", action="store_true", help="skip the default runs")
    parser.add_argument("--runs", type=int, default=2, help="consecutive default runs (default 2; issue 23 asks 10)")
    parser.add_argument("--from", dest="from_dir", metavar="DIR", help="read run*.json there instead of running")
    parser.add_argument("extra", nargs="*", help="options added to every run (after --)")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="sshbench-precision-") as tmp:
        store = Path(tmp)
        if not args.pairs_only:
            runs = consecutive_runs(args, store)
            group_ok = gcm_ok = 0
            for m in runs:
                print(describe(m))
                grouped, group_why = m.fastest_group_decided()
                split, split_why = m.gcm_vs_chacha()
                group_ok, gcm_ok = group_ok + grouped, gcm_ok + split
                print(
                    f"{'':>16}fastest group ordered against every other row: {'yes' if grouped else 'NO'} ({group_why}); "
                    f"aes128-gcm vs chacha20-poly1305 {'decided' if split else 'UNDECIDED'}: {split_why}"
                )
            for a, b in itertools.pairwise(runs):
                print(f"  {a.label} vs {b.label}:")
                agreement(a, b)
            if len(runs) > 2:
                between_runs(runs)
            walls = [m.wall_s for m in runs]
            if runs:  # (--runs 0: only the other parts)
                print(
                    f"{len(runs)} runs: fastest group ordered in {group_ok} of {len(runs)}, aes128-gcm vs chacha20 "
                    f"decided in {gcm_ok} of {len(runs)}, wall {min(walls):.0f}-{max(walls):.0f} s "
                    f"({sum(w <= 60 for w in walls)} of {len(runs)} within 60 s)"
                )
        if args.sweep:
            targets = [float(x) for x in args.sweep.split(",")]
            print(f"--seconds sweep, interleaved x{args.sweep_rounds}:")
            by_target: dict[float, list[Measured]] = {t: [] for t in targets}
            for _ in range(args.sweep_rounds):
                for target in targets:
                    m = run(f"--seconds {target:g}", ["--seconds", f"{target:g}", *args.extra], store)
                    by_target[target].append(m)
                    print(describe(m))
            for target, runs in by_target.items():
                eff = statistics.median(statistics.median(m.half_widths()) * math.sqrt(m.wall_s) for m in runs)
                print(f"  --seconds {target:g}: median efficiency {eff * 100:.1f} (lower: more precision per second)")
        if args.full:
            print("`sshbench run --full`:")
            print(describe(run("--full", ["--full", *args.extra], store)))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
