"""`sshbench crossover`: below which link rate does SSH compression pay off, for this payload on this CPU?

Measures with and without compression over emulated links (sshbench.links, rate only) and searches
for the crossing instead of stopping at a fixed grid: a coarse geometric grid first, then bisection
(in log rate) of the bracket where zlib/none crosses 1, then a log-log interpolation inside the
final bracket. Each rate is one ordinary `sshbench run` (its own namespaces and sshd, the raw TCP
control over the link, interleaved none/zlib trials), sized so the uncompressed transfer takes about
`--seconds`. Seed 000's published claim (~300 Mbit/s on its 2017 Xeon) is printed beside the result;
the chart draws both curves (MiB/s against Mbit/s).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sshbench import summary
from sshbench.errors import RunError, UsageError
from sshbench.links import parse_rate
from sshbench.report.link_table import (
    SEED_CROSSOVER,
    CrossoverPoint,
    crossover_points,
    crossover_rate,
)
from sshbench.units import MIB

GRID_POINTS = 4  # the coarse grid, geometric from --low to --high
MIN_BRACKET = 1.25  # stop bisecting when high/low rate is below this
SIZE_FACTOR = 3


def _round_rate(bits: float) -> int:
    """Whole Mbit/s (whole kbit/s below 10 Mbit/s), so that rates read well and name stable links."""
    step = 1_000_000 if bits >= 10_000_000 else 1_000
    return max(step, round(bits / step) * step)


@dataclass
class MeasuredRate:
    mbit_s: float
    link: str
    plain_mib_s: float | None
    zlib_mib_s: float | None
    raw_tcp_mib_s: float | None

    @property
    def ratio(self) -> float | None:
        return self.zlib_mib_s / self.plain_mib_s if self.plain_mib_s and self.zlib_mib_s else None


def add_commands(sub: argparse._SubParsersAction) -> None:
    cross = sub.add_parser("crossover", help="the link rate below which compression pays off (emulated links, root)")
    cross.add_argument("--payload", default="text", help="random, zero or text (default text)")
    cross.add_argument("--file", metavar="PATH", help="your own payload instead (never modified)")
    cross.add_argument("--cipher", default="aes128-gcm@openssh.com", help="cipher (default aes128-gcm@openssh.com)")
    cross.add_argument("--kex", help="key exchange (default: what a default connection negotiates)")
    cross.add_argument("--low", default="10mbit", help="lowest rate to try (default 10mbit)")
    cross.add_argument("--high", default="1gbit", help="highest rate to try (default 1gbit)")
    cross.add_argument("--points", type=int, default=GRID_POINTS,
                       help=f"rates in the first, geometric grid from --low to --high (default {GRID_POINTS})")
    cross.add_argument("--steps", type=int, default=3, help="bisection steps after the grid (default 3)")
    cross.add_argument("--runs", type=int, default=2, help="measured repetitions per rate (default 2)")
    cross.add_argument("--seconds", type=float, default=1.0,
                       help="about this long per compressed transfer; uncompressed ~3x (default 1)")
    cross.add_argument("--json", metavar="FILE", help="write every measured rate and the result")
    cross.add_argument("--charts", metavar="DIR", help="write the chart (crossover.svg, .png) into DIR")


def _settings(args: argparse.Namespace, rate_bit_s: int):
    from sshbench.settings import RunSettings

    # Size for about --seconds of the *compressed* transfer (text compresses ~3:1; uncompressed then
    # takes ~3x as long): both clocks leave out what ssh sends while the remote shell starts (~70 ms
    # here), which would flatter a short compressed transfer.
    size = int(min(max(rate_bit_s / 8 * args.seconds * SIZE_FACTOR, 4 * MIB), 512 * MIB)) // MIB * MIB
    return RunSettings(ciphers=args.cipher, kex=args.kex, link=f"rate={rate_bit_s}bit", compression="both",
                       payload=args.payload, file=args.file, size=None if args.file else size,
                       runs=args.runs, warmup=1)


def measure(args: argparse.Namespace, rate_bit_s: int, err: Console) -> MeasuredRate:
    from sshbench.baselines.analysis import raw_tcp_by_link
    from sshbench.runner import Runner

    settings = _settings(args, rate_bit_s)
    err.print(f"crossover: measuring at {rate_bit_s / 1e6:g} Mbit/s ...", highlight=False)
    result = Runner(settings).run()
    if result.status != "complete":
        raise RunError(f"crossover at {rate_bit_s / 1e6:g} Mbit/s: {result.error or result.status}")
    link = settings.link_profiles()[0].name
    points = crossover_points(summary.summaries(result)).get(settings.payloads()[0], [])
    raw = raw_tcp_by_link(result.trials).get(link)
    point: CrossoverPoint | None = points[0] if points else None
    return MeasuredRate(rate_bit_s / 1e6, link, point.plain_mib_s if point else None,
                        point.zlib_mib_s if point else None, raw.median_mib_s if raw else None)


def search(args: argparse.Namespace, err: Console) -> list[MeasuredRate]:
    low, high = parse_rate(args.low), parse_rate(args.high)
    if low >= high:
        raise UsageError(f"--low {args.low} must be below --high {args.high}")
    if args.steps < 0 or args.runs < 1 or args.points < 2 or not 0.05 <= args.seconds <= 600:
        raise UsageError("crossover needs --points >= 2, --steps >= 0, --runs >= 1 and --seconds 0.05-600")
    grid = sorted({_round_rate(low * (high / low) ** (i / (args.points - 1))) for i in range(args.points)})
    measured = {r: measure(args, r, err) for r in grid}
    for _ in range(args.steps):
        ordered = sorted(measured.items())
        bracket = next(((a, b) for (a, ma), (b, mb) in zip(ordered, ordered[1:])
                        if ma.ratio and mb.ratio and ma.ratio > 1 >= mb.ratio), None)
        if bracket is None or bracket[1] / bracket[0] < MIN_BRACKET:
            break
        middle = _round_rate(math.sqrt(bracket[0] * bracket[1]))
        if middle in measured:
            break
        measured[middle] = measure(args, middle, err)
    return [measured[r] for r in sorted(measured)]


def cmd_crossover(args: argparse.Namespace, out: Console, err: Console) -> int:
    from sshbench.links import LinkProfile
    from sshbench.links.namespaces import require_support

    require_support([LinkProfile("rate", rate_bit_s=parse_rate(args.low))])
    points = search(args, err)
    table = Table(title=f"Compression crossover: {args.cipher}, payload {'file ' + args.file if args.file else args.payload}",
                  title_justify="left")
    for name in ("link Mbit/s", "raw TCP Mbit/s", "none MiB/s", "zlib MiB/s", "zlib / none"):
        table.add_column(name, justify="right")
    for p in points:
        table.add_row(f"{p.mbit_s:g}", "-" if p.raw_tcp_mib_s is None else f"{p.raw_tcp_mib_s * MIB * 8 / 1e6:.1f}",
                      "-" if p.plain_mib_s is None else f"{p.plain_mib_s:.1f}",
                      "-" if p.zlib_mib_s is None else f"{p.zlib_mib_s:.1f}",
                      "-" if p.ratio is None else f"{p.ratio:.2f}")
    out.print(table)
    usable = [CrossoverPoint(p.link, p.mbit_s, p.plain_mib_s, p.zlib_mib_s) for p in points
              if p.plain_mib_s and p.zlib_mib_s]
    crossing = crossover_rate(usable)
    if crossing is not None:
        verdict = f"compression pays off below ~{crossing:.0f} Mbit/s here"
    elif usable and all(p.ratio > 1 for p in usable):
        verdict = f"compression paid off at every rate tried (up to {usable[-1].mbit_s:g} Mbit/s)"
    elif usable and all(p.ratio <= 1 for p in usable):
        verdict = f"compression never paid off (down to {usable[0].mbit_s:g} Mbit/s)"
    else:
        verdict = "no single crossover in the measured range"
    out.print(f"{verdict}; {SEED_CROSSOVER}", highlight=False, markup=False)
    if args.json:
        Path(args.json).write_text(json.dumps({"cipher": args.cipher, "payload": args.payload, "file": args.file,
                                               "points": [asdict(p) for p in points], "crossover_mbit_s": crossing,
                                               "verdict": verdict, "reference": SEED_CROSSOVER}, indent=2))
    if args.charts:
        _write_chart(points, Path(args.charts), err)
    return 0


def _write_chart(points: list[MeasuredRate], directory: Path, err: Console) -> None:
    """Both lines, MiB/s against Mbit/s (report/charts.py's links chart on these summaries' figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    directory.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, values, style in (("without compression", [p.plain_mib_s for p in points], "o-"),
                                 ("with compression", [p.zlib_mib_s for p in points], "s--")):
        xs = [p.mbit_s for p, v in zip(points, values) if v]
        ax.plot(xs, [v for v in values if v], style, label=label, linewidth=2, markersize=7)
    ax.set_xscale("log")
    rates = sorted(p.mbit_s for p in points)
    ax.set_xticks(rates, [f"{r:g}" for r in rates])  # the measured rates, as plain numbers
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("link rate, Mbit/s (log scale)")
    ax.set_ylabel("throughput, MiB/s")
    ax.set_title("Compression crossover")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    for suffix in ("svg", "png"):
        fig.savefig(directory / f"crossover.{suffix}", format=suffix, dpi=150 if suffix == "png" else None)
    plt.close(fig)
    err.print(f"crossover: wrote {directory / 'crossover.svg'} and .png", highlight=False)


COMMANDS = {"crossover": cmd_crossover}
