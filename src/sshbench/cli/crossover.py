"""`sshbench crossover`: the link rate below which compression pays off (engine: sshbench.measure.crossover)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sshbench.cli.common import add_db_option, add_wait_option, check_writable, check_writable_dir, write_output
from sshbench.links import LinkProfile, parse_rate
from sshbench.links.namespaces import require_support
from sshbench.measure.crossover import GRID_POINTS, CrossoverSpec, MeasuredRate, search
from sshbench.report.link_table import SEED_CROSSOVER, CrossoverPoint, crossover_rate
from sshbench.units import MIB


def add_commands(sub: argparse._SubParsersAction) -> None:
    cross = sub.add_parser(
        "crossover",
        help="the link rate below which compression pays off (emulated links, root)",
        description="Measure with and without compression over emulated links (network namespaces + tc: needs root) and bisect the link rate below which compression pays off for this payload on this CPU.",
    )
    cross.set_defaults(handler=cmd_crossover)
    add_db_option(cross)
    add_wait_option(cross)
    cross.add_argument("--payload", default="text", help="random, zero or text (default text)")
    cross.add_argument("--file", metavar="PATH", help="your own payload instead (never modified)")
    cross.add_argument("--cipher", default="aes128-gcm@openssh.com", help="cipher (default aes128-gcm@openssh.com)")
    cross.add_argument("--kex", help="key exchange (default: what a default connection negotiates)")
    cross.add_argument("--low", default="10mbit", help="lowest rate to try (default 10mbit)")
    cross.add_argument("--high", default="1gbit", help="highest rate to try (default 1gbit)")
    cross.add_argument(
        "--points",
        type=int,
        default=GRID_POINTS,
        help=f"rates in the first, geometric grid from --low to --high (default {GRID_POINTS})",
    )
    cross.add_argument("--steps", type=int, default=3, help="bisection steps after the grid (default 3)")
    cross.add_argument("--runs", type=int, default=2, help="measured repetitions per rate (default 2)")
    cross.add_argument(
        "--seconds",
        type=float,
        default=1.0,
        help="about this long per compressed transfer; uncompressed ~3x (default 1)",
    )
    cross.add_argument("--json", metavar="FILE", help="write every measured rate and the result")
    cross.add_argument("--charts", metavar="DIR", help="write the chart (crossover.svg, .png) into DIR")


def cmd_crossover(args: argparse.Namespace, out: Console, err: Console) -> int:
    check_writable(args.json)  # output paths before the (long) search
    check_writable_dir(args.charts)
    require_support([LinkProfile("rate", rate_bit_s=parse_rate(args.low))])
    spec = CrossoverSpec(
        low=args.low,
        high=args.high,
        cipher=args.cipher,
        kex=args.kex,
        payload=args.payload,
        file=args.file,
        points=args.points,
        steps=args.steps,
        runs=args.runs,
        seconds=args.seconds,
        db=args.db,
    )
    points = search(spec, err)
    table = Table(
        title=f"Compression crossover: {args.cipher}, payload {'file ' + args.file if args.file else args.payload}",
        title_justify="left",
    )
    for name in ("link Mbit/s", "raw TCP Mbit/s", "none MiB/s", "zlib MiB/s", "zlib / none"):
        table.add_column(name, justify="right")
    for p in points:
        table.add_row(
            f"{p.mbit_s:g}",
            "-" if p.raw_tcp_mib_s is None else f"{p.raw_tcp_mib_s * MIB * 8 / 1e6:.1f}",
            "-" if p.plain_mib_s is None else f"{p.plain_mib_s:.1f}",
            "-" if p.zlib_mib_s is None else f"{p.zlib_mib_s:.1f}",
            "-" if p.ratio is None else f"{p.ratio:.2f}",
        )
    out.print(table)
    usable = [
        CrossoverPoint(p.link, p.mbit_s, p.plain_mib_s, p.zlib_mib_s) for p in points if p.plain_mib_s and p.zlib_mib_s
    ]
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
        write_output(
            json.dumps(
                {
                    "cipher": args.cipher,
                    "payload": args.payload,
                    "file": args.file,
                    "points": [asdict(p) for p in points],
                    "crossover_mbit_s": crossing,
                    "verdict": verdict,
                    "reference": SEED_CROSSOVER,
                },
                indent=2,
            )
            + "\n",
            args.json,
            out,
        )
    if args.charts:
        _write_chart(points, Path(args.charts), err)
    return 0


def _write_chart(points: list[MeasuredRate], directory: Path, err: Console) -> None:
    """Both lines, MiB/s against Mbit/s (report/charts.py's links chart on these summaries' figures)."""
    import matplotlib  # ~1 s to import: only for the chart, as report/charts.py does

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    directory.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, values, style in (
        ("without compression", [p.plain_mib_s for p in points], "o-"),
        ("with compression", [p.zlib_mib_s for p in points], "s--"),
    ):
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
