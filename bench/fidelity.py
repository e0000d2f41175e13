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
measured times (goal: within 10%), medians over rounds, with the load average. Pooled: the geometric mean of every
ratio with its 95% t interval, the same over rounds (a round's ratios share one default run, so this interval is
the honest one), by place after the default run, and the bulk transfers' own time against its prediction (set-up +
start-up + size / headline: the outside clock holds the start-up, which the steady headline leaves out), and each
run against the bulk transfers on both sides of it (those after run r-1 and after run r: drift between minutes
cancels to first order; neighbouring runs share half their bulk transfers, so the interval allows for a lag-1
correlation). `--records FILE`: every bulk transfer's figures, a JSON object a line, for analyses of your own.

`--per-cipher`: instead of one default run per round (~45 s, long enough for this machine's rate to swing
1.5-2x between it and the bulk transfers), each cipher's own short run (`sshbench run --ciphers C --runs 3
--no-baselines --no-reference`: the default run's sizing and clock) right before its bulk transfer.

Placement: the runs pin the client and the private sshd to CPUs of their own (`--pin`, the default), and so do
B and C (the same CPUs, through the same taskset prefixes): the comparison is of the clock, not of the
placement. `--no-pin` runs everything unpinned.

`--inside`: the clock against the same bulk transfer, paired inside one connection, which takes this machine's
swings between minutes out of the comparison (a default run and a 4 GiB transfer a minute apart read 0.66-1.56x
of each other here). Each bulk transfer is sampled as a trial is (TCP_INFO every 20 ms); the steady-state
estimator (sshbench.measure.steady, the headline's clock) is given only its first part, cut where a default trial's data
phase ends (`--trial-s`: the omitted start, steady.OMIT_S, plus the 0.25 s steady part the budget fits); that rate is
compared with the whole transfer timed from outside (wall time minus a same-shape `ssh host true`). Printed: the
geometric mean of those ratios per cipher and pooled, each with its 95% t interval over the transfers (goal:
within 3% of 1), and the rest of the transfer from the sampler against the outside clock (the sampler's check).

`--link PROFILE`: the same comparisons behind one emulated link (sshbench.links: a namespace pair, shaped with tc, as
`sshbench run --link PROFILE` makes it; the runs get `--link PROFILE`). The bulk transfers go through a namespace pair of
the bench's own with the same profile; the default bulk is then 256 MiB (4 GiB at 100 Mbit/s would take 6 minutes a
transfer) and the predicted sizes 32 and 128 MiB. Not pinned, as a run behind a link is not (the link's relays share
the CPUs).

Usage: .venv/bin/python bench/fidelity.py [--rounds 2] [--bulk 4G] [--ciphers a,b,c] [--link PROFILE] [--per-cipher | --inside [--trial-s S]] [--prewarm SIZE] [--no-pin] [--records FILE] [-- RUN OPTIONS]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sshbench.errors import UsageError
from sshbench.host import placement
from sshbench.host.cleanup import Cleanup
from sshbench.links import LinkProfile, parse_links
from sshbench.measure import steady
from sshbench.measure.payload import PayloadStore
from sshbench.measure.progress import Sampler
from sshbench.measure.trial import algorithm_options
from sshbench.model.intervals import paired_ratio_ci, t_critical
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import NetnsOpenSSH, PrivateOpenSSH
from sshbench.tools.pipe import PipeTool
from sshbench.units import MIB, parse_size

DEFAULT_CIPHERS = "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr"
SMALL_SIZES = (32 * MIB, 1024 * MIB)
LINK_BULK = 256 * MIB  # ~22 s at 100 Mbit/s: long against a link's start-up (slow start: a few RTTs)
LINK_SMALL_SIZES = (32 * MIB, 128 * MIB)
SSHBENCH = str(Path(sys.executable).with_name("sshbench"))


def bare_ssh(target: PrivateOpenSSH, combo: Combination) -> list[str]:
    """The bare client command a user would time: ssh with the combination's options, placed as a run places it."""
    return [*target.client_prefix(), "ssh", *target.client_options(), *algorithm_options(combo), *target.destination()]


def fmt_rate(mib_s: float, width: int) -> str:
    """A rate to 3-4 significant figures: behind a 100 Mbit/s link it is ~11.4 MiB/s."""
    return f"{mib_s:{width}.0f}" if mib_s >= 100 else f"{mib_s:{width}.2f}"


def start_target(args: argparse.Namespace, cleanup: Cleanup) -> PrivateOpenSSH:
    """The bench's own private sshd for the bare commands: on loopback pinned as a run pins it, or behind
    `--link` in a namespace pair of its own (not pinned, as a run behind a link is not)."""
    target: PrivateOpenSSH
    if args.link is not None:
        target = NetnsOpenSSH([args.link])
        target.start(cleanup)
        target.path.switch(args.link.name)
        target.current_link = args.link.name
        print(f"link: {args.link.name}, not pinned (a namespace pair of the bench's own)", flush=True)
        return target
    target = PrivateOpenSSH()
    target.placement = placement.choose(not args.no_pin, 1)[0]  # as make_target places a run's server
    target.start(cleanup)
    print(f"placement: {target.placement.text() if target.placement else 'not pinned'}", flush=True)
    return target


def link_profile(text: str) -> LinkProfile:
    try:
        profiles = parse_links(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if len(profiles) != 1 or not profiles[0].emulated:
        raise argparse.ArgumentTypeError("one emulated link profile, e.g. wan100m or rate=100mbit,delay=20ms")
    return profiles[0]


def timed(argv: list[str], stdin_path: str, env: dict[str, str] | None = None) -> float:
    with open(stdin_path, "rb") as stdin:
        start = time.perf_counter()
        subprocess.run(
            argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=900, env=env
        )
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


def row_of(doc: dict, cipher: str, link: str = "loopback") -> dict | None:
    """The combination of this cipher (its MAC, kex as the run had it), pipe upload, plain, on `link`."""
    rows = [
        s
        for s in doc["summaries"]
        if s["cipher"] == cipher and s["median_mib_s"] and s["streams"] == 1 and s.get("link", "loopback") == link
    ]
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
        same_link = h.get("link", "loopback") == row.get("link", "loopback")
        if h["kex"] == row["kex"] and h.get("tool", "pipe") == row["tool"] and same_link and h["median_ms"] is not None:
            return h["median_ms"] / 1000
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bulk", type=parse_size, default=None, help="default 4G, 256M behind --link")
    parser.add_argument("--link", type=link_profile, default=None, help="behind this emulated link (one profile)")
    parser.add_argument("--ciphers", default=DEFAULT_CIPHERS)
    parser.add_argument("--per-cipher", action="store_true", help="a short run per cipher next to its bulk transfer")
    parser.add_argument(
        "--no-pin", action="store_true", help="runs and bulk transfers unpinned (sshbench.host.placement)"
    )
    parser.add_argument("--inside", action="store_true", help="the clock on the start of each bulk transfer")
    parser.add_argument(
        "--prewarm",
        type=parse_size,
        default=0,
        help="a throwaway transfer this size before each bulk transfer (--inside) or after each default run (the"
        " first bulk transfer after a run read 5-11%% slow in three sets; a 2G one did not take that away in one)",
    )
    parser.add_argument(
        "--trial-s", type=float, default=round(steady.OMIT_S + 0.25, 3), help="--inside: the data phase a trial has"
    )
    parser.add_argument(
        "--records", type=Path, default=None, help="write each bulk transfer's figures here, a JSON object a line"
    )
    parser.add_argument("run_options", nargs="*", help="after --: options for `sshbench run`")
    args = parser.parse_args()
    ciphers = args.ciphers.split(",")
    if args.bulk is None:
        args.bulk = LINK_BULK if args.link is not None else parse_size("4G")
    small_sizes = LINK_SMALL_SIZES if args.link is not None else SMALL_SIZES
    link_name = args.link.name if args.link is not None else "loopback"
    if args.link is not None:
        args.run_options = ["--link", link_name, *args.run_options]
    if args.inside:
        return inside(args, ciphers)
    if args.no_pin:
        args.run_options = ["--no-pin", *args.run_options]
    cleanup = Cleanup()
    headline: dict[str, list[float]] = {c: [] for c in ciphers}
    weighted: dict[str, list[float]] = {c: [] for c in ciphers}
    bulk: dict[str, list[float]] = {c: [] for c in ciphers}
    predicted: dict[tuple[str, int], list[float]] = {}
    measured: dict[tuple[str, int], list[float]] = {}
    # per round, each ratio's log and its place after the default run: the ratios of a round share one run
    by_round: list[list[tuple[int, float]]] = []
    # per round, each cipher's headline and bulk rate: the bulk transfers after run r are also those before run r+1
    heads_of_round: list[dict[str, float]] = []
    bulks_of_round: list[dict[str, float]] = []
    records = args.records.open("w") if args.records is not None else None
    loads, run_walls = [], []
    try:
        target = start_target(args, cleanup)
        workdir = cleanup.make_temp_dir(
            prefer_shm=True, min_free_bytes=args.bulk + sum(small_sizes) + args.prewarm + 64 * MIB
        )
        store = PayloadStore(workdir)
        payloads = {size: str(store.path_for(size)) for size in (args.bulk, *small_sizes)}
        prewarm = str(store.path_for(args.prewarm)) if args.prewarm else ""
        with tempfile.TemporaryDirectory(prefix="sshbench-fidelity-") as tmp_name:
            tmp = Path(tmp_name)
            for rnd in range(args.rounds):
                loads.append(os.getloadavg()[0])
                if not args.per_cipher:
                    doc, wall = default_run(args.run_options, tmp, rnd)
                    run_walls.append(wall)
                    if prewarm:  # a throwaway transfer between the run and its bulk transfers (the first read slow)
                        first = row_of(doc, ciphers[0], link_name)
                        if first is not None:
                            combo = Combination(ciphers[0], first["mac"], first["kex"], link=link_name)
                            timed([*bare_ssh(target, combo), "dd of=/dev/null bs=1M 2>/dev/null"], prewarm)
                # each round starts its bulk transfers at the next cipher: the first transfer after a default run
                # is not always the same cipher's (a position effect then shows as one, not as that cipher's)
                shift = rnd % len(ciphers)
                by_round.append([])
                heads_of_round.append({})
                bulks_of_round.append({})
                for position, cipher in enumerate(ciphers[shift:] + ciphers[:shift]):
                    index = ciphers.index(cipher)
                    if args.per_cipher:
                        own = ["--ciphers", cipher, "--runs", "3", "--no-baselines", "--no-reference"]
                        doc, wall = default_run([*own, *args.run_options], tmp, rnd * 100 + index)
                        run_walls.append(wall)
                    row = row_of(doc, cipher, link_name)
                    if row is None:
                        print(f"round {rnd + 1}: {cipher} not in the run's results", file=sys.stderr)
                        continue
                    combo = Combination(cipher, row["mac"], row["kex"], link=link_name)
                    base = bare_ssh(target, combo)
                    reader = "dd of=/dev/null bs=1M 2>/dev/null"
                    trues = sorted(timed([*base, "true"], "/dev/null") for _ in range(3))
                    true_s = trues[1]
                    big = timed([*base, reader], payloads[args.bulk])
                    headline[cipher].append(row["median_mib_s"])
                    weighted[cipher].append(time_weighted_mib_s(doc, row) or row["median_mib_s"])
                    bulk[cipher].append(args.bulk / MIB / (big - true_s))
                    by_round[-1].append((position, math.log(row["median_mib_s"] / bulk[cipher][-1])))
                    heads_of_round[-1][cipher] = row["median_mib_s"]
                    bulks_of_round[-1][cipher] = bulk[cipher][-1]
                    set_up = setup_s(doc, row)
                    if set_up is not None and row.get("median_startup_s") is not None:  # the bulk transfer's own time
                        measured.setdefault((cipher, args.bulk), []).append(big)
                        guess = set_up + row["median_startup_s"] + args.bulk / MIB / row["median_mib_s"]
                        predicted.setdefault((cipher, args.bulk), []).append(guess)
                    for size in small_sizes:
                        took = timed([*base, reader], payloads[size])
                        measured.setdefault((cipher, size), []).append(took)
                        if set_up is not None and row.get("median_startup_s") is not None:
                            guess = set_up + row["median_startup_s"] + size / MIB / row["median_mib_s"]
                            predicted.setdefault((cipher, size), []).append(guess)
                    if records is not None:
                        record = {
                            "round": rnd + 1,
                            "place": position + 1,
                            "cipher": cipher,
                            "headline_mib_s": row["median_mib_s"],
                            "time_weighted_mib_s": weighted[cipher][-1],
                            "bulk_mib_s": bulk[cipher][-1],
                            "bulk_s": big,
                            "true_s": true_s,
                            "startup_s": row.get("median_startup_s"),
                            "setup_s": set_up,
                            "small_s": {str(size): measured[(cipher, size)][-1] for size in small_sizes},
                            "run_wall_s": run_walls[-1] if run_walls else None,
                            "load": os.getloadavg()[0],
                            "time": time.time(),
                        }
                        records.write(json.dumps(record) + "\n")
                        records.flush()
                    print(
                        f"round {rnd + 1} #{position + 1} {cipher:<30} headline {fmt_rate(row['median_mib_s'], 6)}  bulk {fmt_rate(bulk[cipher][-1], 6)}"
                        f"  ratio {row['median_mib_s'] / bulk[cipher][-1]:.3f}  time-weighted {fmt_rate(weighted[cipher][-1], 6)}"
                        f" ratio {weighted[cipher][-1] / bulk[cipher][-1]:.3f}  (true {true_s * 1000:.0f} ms,"
                        f" start-up {1000 * (row.get('median_startup_s') or 0):.0f} ms)",
                        flush=True,
                    )
                loads.append(os.getloadavg()[0])
    finally:
        cleanup.close()
        if records is not None:
            records.close()
    print(
        f"\n{args.rounds} rounds on {link_name}; {'per-cipher' if args.per_cipher else 'default'} runs took {', '.join(f'{w:.0f}' for w in run_walls)} s; "
        f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    )
    print(f"{'combination':<30} {'headline':>8} {'bulk':>7} {'ratio':>6}   (medians of per-round ratios)")
    for cipher in ciphers:
        if not bulk[cipher]:
            continue
        ratios = [h / b for h, b in zip(headline[cipher], bulk[cipher])]
        print(
            f"{cipher:<30} {fmt_rate(statistics.median(headline[cipher]), 8)} {fmt_rate(statistics.median(bulk[cipher]), 7)}"
            f" {statistics.median(ratios):6.3f}   per round: {', '.join(f'{r:.3f}' for r in ratios)}"
        )
        w_ratios = [w / b for w, b in zip(weighted[cipher], bulk[cipher])]
        print(
            f"{'  time-weighted':<30} {fmt_rate(statistics.median(weighted[cipher]), 8)} {'':>7}"
            f" {statistics.median(w_ratios):6.3f}   per round: {', '.join(f'{r:.3f}' for r in w_ratios)}"
        )
    every = [h / b for c in ciphers for h, b in zip(headline[c], bulk[c])]
    every_weighted = [w / b for c in ciphers for w, b in zip(weighted[c], bulk[c])]
    if len(every) >= 2:
        print(f"{'pooled, every cipher and round':<30} {'':>8} {'':>7} {pooled_text(every)}")
        print(f"{'  time-weighted':<30} {'':>8} {'':>7} {pooled_text(every_weighted)}")
    rounds_means = [math.exp(statistics.fmean(x for _, x in r)) for r in by_round if r]
    if len(rounds_means) >= 2:  # a round's ratios share its default run: the interval over rounds is the honest one
        print(f"{'  over rounds (a mean a round)':<30} {'':>8} {'':>7} {pooled_text(rounds_means)}")
    if not args.per_cipher:  # each run against the bulk transfers on both sides of it: drift between minutes cancels
        sandwiched = sandwich_logs(heads_of_round, bulks_of_round)
        if len(sandwiched) >= 3:
            print(f"{'  sandwiched (before and after)':<30} {'':>8} {'':>7} {lag1_text(sandwiched)}")
    for place in range(len(ciphers)):  # the first bulk transfer after a default run has read slow in some sets
        at = [math.exp(x) for r in by_round for p, x in r if p == place]
        if len(at) >= 2:
            print(f"{f'  bulk #{place + 1} after the run':<30} {'':>8} {'':>7} {pooled_text(at)}")
    # the same, paired in each round (the round's other bulk transfers share its run and its minute): the first
    # transfer over the rest read 1.059 (1.026-1.094) in a 48-round set, with a 2 GiB throwaway transfer before it
    firsts = [
        math.exp(dict(r)[0] - statistics.fmean(x for p, x in r if p > 0))
        for r in by_round
        if len(r) == len(ciphers) > 1 and 0 in dict(r)
    ]
    if len(firsts) >= 2:
        print(f"{'  #1 over the rest, per round':<30} {'':>8} {'':>7} {pooled_text(firsts)}")
    # the bulk transfers' own times too: their wall time holds set-up and start-up, which the headline (a steady rate)
    # leaves out and the prediction adds back (at ~1000 MiB/s, 0.1 s of start-up is 2.4% of a 4 GiB upload's time)
    bulk_time = [
        m / g for c in ciphers for g, m in zip(predicted.get((c, args.bulk), []), measured.get((c, args.bulk), []))
    ]
    if len(bulk_time) >= 2:
        print(f"{f'{args.bulk // MIB} MiB time, measured/predicted':<30} {'':>8} {'':>7} {pooled_text(bulk_time)}")
    print(f"\n{'combination':<30} {'size':>6} {'predicted s':>11} {'measured s':>10} {'ratio':>6}")
    for (cipher, size), guesses in sorted(predicted.items(), key=lambda kv: (ciphers.index(kv[0][0]), kv[0][1])):
        times_taken = measured[(cipher, size)][: len(guesses)]
        ratios = [g / m for g, m in zip(guesses, times_taken)]
        print(
            f"{cipher:<30} {size // MIB:>5}M {statistics.median(guesses):11.3f} {statistics.median(times_taken):10.3f}"
            f" {statistics.median(ratios):6.3f}"
        )
    return 0


def sandwich_logs(heads: list[dict[str, float]], bulks: list[dict[str, float]]) -> list[float]:
    """Per default run from the second on, the mean over its ciphers of ln(headline / geometric mean of the bulk
    transfers before and after it). The bulk transfers after run r-1 are those before run r: a round's mean shares
    half its bulk rates with its neighbour's (see lag1_text)."""
    means = []
    for r in range(1, len(heads)):
        logs = [
            math.log(h / math.sqrt(bulks[r - 1][c] * bulks[r][c]))
            for c, h in heads[r].items()
            if c in bulks[r - 1] and c in bulks[r]
        ]
        if logs:
            means.append(statistics.fmean(logs))
    return means


def lag1_text(logs: list[float]) -> str:
    """The geometric mean of exp(logs) with a 95% interval that allows for neighbours sharing half their bulk
    transfers: a Newey-West variance with one lag, var(mean) = (s2 + 2 c1) / n, c1 the lag-1 autocovariance
    (a negative one not credited), t with n - 1 degrees of freedom."""
    n = len(logs)
    centre = statistics.fmean(logs)
    s2 = sum((x - centre) ** 2 for x in logs) / (n - 1)
    c1 = sum((logs[i] - centre) * (logs[i + 1] - centre) for i in range(n - 1)) / (n - 1)
    half = t_critical(0.95, n - 1) * math.sqrt((s2 + 2 * max(c1, 0.0)) / n)
    return (
        f"{math.exp(centre):6.3f}   ({math.exp(centre - half):.3f}-{math.exp(centre + half):.3f}, geometric mean of {n}"
        f" runs; lag-1 autocorrelation {c1 / s2 if s2 else 0:+.2f})"
    )


def pooled_text(ratios: list[float]) -> str:
    """The geometric mean of `ratios` with its 95% t interval, and how many."""
    logs = [math.log(r) for r in ratios]
    centre = statistics.fmean(logs)
    half = t_critical(0.95, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return f"{math.exp(centre):6.3f}   ({math.exp(centre - half):.3f}-{math.exp(centre + half):.3f}, geometric mean of {len(logs)})"


def sampled(
    argv: list[str], stdin_path: str, env: dict[str, str] | None = None
) -> tuple[float, list[float], list[int]]:
    """Wall time of one transfer, and its client connection's bytes_acked sampled as a trial samples it."""
    with open(stdin_path, "rb") as stdin:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        sampler = Sampler(proc.pid, start).start()
        try:
            proc.wait(timeout=900)
        finally:
            progress = sampler.stop()
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"fidelity: the bulk transfer exited {proc.returncode}")
    return wall, [s.t for s in progress.samples], [s.acked for s in progress.samples]


def trial_clock(
    times: list[float], counts: list[int], trial_s: float, payload_per_wire: float, omit_s: float = steady.OMIT_S
) -> float | None:
    """What the headline's clock reads on this transfer's first `trial_s` of data phase, as if the trial's
    payload had ended there (a trial is a fresh connection's first bytes, like this one's), in payload MiB/s."""
    first = steady.data_start(times, counts)
    cut = next((i for i in range(first, len(times)) if times[i] >= times[first] + trial_s), None)
    if cut is None:
        return None
    head_t, head_c = times[: cut + 1], counts[: cut + 1]
    moved = head_c[-1] - head_c[0]
    rate = steady.estimate(head_t, head_c, moved, omit_s).mib_s  # the cut's wire bytes as payload: wire MiB/s
    return rate * payload_per_wire if rate is not None else None


def rest_of_transfer(times: list[float], counts: list[int], after_s: float, per_wire: float) -> float | None:
    """The sampler's rate (payload MiB/s) from `after_s` into the data phase to the transfer's end (its last 64 KiB
    left out, as the steady clock leaves them out); None when the transfer ends before `after_s`."""
    first = steady.data_start(times, counts)
    end = max(i for i, c in enumerate(counts) if c < counts[-1] - steady.END_SLACK_BYTES)
    after = next((i for i in range(first, len(times)) if times[i] >= times[first] + after_s), end)
    if end <= after:
        return None
    return (counts[end] - counts[after]) / MIB / (times[end] - times[after]) * per_wire


def inside(args: argparse.Namespace, ciphers: list[str]) -> int:
    cleanup = Cleanup()
    clock: dict[str, dict[int, float]] = {c: {} for c in ciphers}
    rest: dict[str, dict[int, float]] = {c: {} for c in ciphers}
    outside: dict[str, dict[int, float]] = {c: {} for c in ciphers}
    # other omits and trial lengths on the same transfers: would a longer omit, or a longer trial, agree?
    variants: dict[tuple[float, float], dict[int, float]] = {
        (omit, cut): {} for omit in (0.2, 0.3, 0.4, 0.6) for cut in (omit + 0.25, omit + 0.5, omit + 1.0)
    }
    variants_outside: dict[int, float] = {}
    loads = [os.getloadavg()[0]]
    try:
        target = start_target(args, cleanup)
        kex = target.client_algorithms().default_kex[0]
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=args.bulk + 64 * MIB)
        payload = str(PayloadStore(workdir).path_for(args.bulk))
        prewarm = str(PayloadStore(workdir).path_for(args.prewarm)) if args.prewarm else ""
        for rnd in range(args.rounds):
            for cipher in ciphers:
                combo = Combination(cipher, IMPLICIT_MAC, kex)  # no -m: the MAC a default connection takes
                base = bare_ssh(target, combo)
                true_s = sorted(timed([*base, "true"], "/dev/null") for _ in range(3))[1]
                if args.prewarm:  # both CPUs busy right before, as in a run's back-to-back trials
                    timed([*base, "dd of=/dev/null bs=1M 2>/dev/null"], prewarm)
                # the trial's own remote command (sshbench.tools.pipe: the reader between two /proc and ss snapshots)
                wall, times, counts = sampled([*base, "-v", PipeTool().remote_command("up")], payload)
                per_wire = args.bulk / max(counts[-1] - counts[0], 1)
                head = trial_clock(times, counts, args.trial_s, per_wire)
                after_head = rest_of_transfer(times, counts, args.trial_s, per_wire)
                if head is None or after_head is None or len(times) < 10:
                    print(f"round {rnd + 1} {cipher}: too few samples", file=sys.stderr)
                    continue
                outside[cipher][rnd] = args.bulk / MIB / (wall - true_s)
                clock[cipher][rnd] = head
                key = ciphers.index(cipher) * 10_000 + rnd
                variants_outside[key] = outside[cipher][rnd]
                for (omit, cut), values in variants.items():
                    if (value := trial_clock(times, counts, cut, per_wire, omit)) is not None:
                        values[key] = value
                rest[cipher][rnd] = after_head
                print(
                    f"round {rnd + 1} {cipher:<30} trial clock {fmt_rate(head, 6)}  outside {fmt_rate(outside[cipher][rnd], 6)}"
                    f"  ratio {head / outside[cipher][rnd]:.3f}  rest (sampler) {fmt_rate(rest[cipher][rnd], 6)}",
                    flush=True,
                )
            loads.append(os.getloadavg()[0])
    finally:
        cleanup.close()
    print(
        f"\n{args.rounds} rounds of {args.bulk // MIB} MiB transfers; trial clock on the first {args.trial_s} s of data phase;"
        f" load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    )
    print(f"{'combination':<30} {'clock':>6} {'outside':>7} {'clock/outside (95% CI)':>24} {'rest/outside':>13}")
    pooled_clock: dict[int, float] = {}
    pooled_outside: dict[int, float] = {}
    for index, cipher in enumerate(ciphers):
        if len(clock[cipher]) < 2:
            continue
        est = paired_ratio_ci(clock[cipher], outside[cipher])
        sampler_check = paired_ratio_ci(rest[cipher], outside[cipher])
        print(
            f"{cipher:<30} {fmt_rate(statistics.median(clock[cipher].values()), 6)} {fmt_rate(statistics.median(outside[cipher].values()), 7)}"
            f" {est.ratio:10.3f} ({est.low:.3f}-{est.high:.3f}) {sampler_check.ratio:13.3f}"
        )
        for rnd, value in clock[cipher].items():
            pooled_clock[index * 10_000 + rnd] = value
            pooled_outside[index * 10_000 + rnd] = outside[cipher][rnd]
    if len(pooled_clock) >= 2:
        est = paired_ratio_ci(pooled_clock, pooled_outside)
        print(
            f"{'pooled (' + str(len(pooled_clock)) + ' transfers)':<30} {'':>6} {'':>7} {est.ratio:10.3f} ({est.low:.3f}-{est.high:.3f})"
        )
    print("\nthe same transfers with other omits and trial lengths (pooled clock/outside, 95% CI):")
    for (omit, cut), values in variants.items():
        if len(values) >= 2:
            est = paired_ratio_ci(values, variants_outside)
            per_cipher = []
            for index in range(len(ciphers)):
                mine = {k: v for k, v in values.items() if k // 10_000 == index}
                if len(mine) >= 2:
                    per_cipher.append(f"{paired_ratio_ci(mine, variants_outside).ratio:.3f}")
            print(
                f"  omit {omit:.1f} s, data phase {cut:.2f} s: {est.ratio:.3f} ({est.low:.3f}-{est.high:.3f})"
                f"   per cipher {', '.join(per_cipher)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
