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

import math
from dataclasses import dataclass

from rich.console import Console

from sshbench.baselines.analysis import raw_tcp_by_link
from sshbench.errors import RunError, UsageError
from sshbench.links import parse_rate
from sshbench.measure.runner import Runner
from sshbench.measure.spec import RunSpec
from sshbench.model import summary
from sshbench.report.link_table import (
    CrossoverPoint,
    crossover_points,
)
from sshbench.settings import RunSettings
from sshbench.store import open_store
from sshbench.store.recorder import RunRecorder
from sshbench.units import MIB

GRID_POINTS = 4  # the coarse grid, geometric from --low to --high
MIN_BRACKET = 1.25  # stop bisecting when high/low rate is below this
SIZE_FACTOR = 3


def _round_rate(bits: float) -> int:
    """Whole Mbit/s (whole kbit/s below 10 Mbit/s), so that rates read well and name stable links."""
    step = 1_000_000 if bits >= 10_000_000 else 1_000
    return max(step, round(bits / step) * step)


@dataclass(frozen=True)
class CrossoverSpec:
    """What `sshbench crossover` was asked (its options, parsed by the command line): each measured rate is one
    ordinary run of these settings over a link of that rate."""

    low: str  # --low/--high: rates as the options take them (e.g. 20mbit)
    high: str
    cipher: str
    kex: str | None = None
    payload: str = "text"
    file: str | None = None
    points: int = GRID_POINTS
    steps: int = 3
    runs: int = 2
    seconds: float = 1.0
    db: str | None = None  # the results store (None: the default one)


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


def _settings(args: CrossoverSpec, rate_bit_s: int):
    # Size for about --seconds of the *compressed* transfer (text compresses ~3:1; uncompressed then
    # takes ~3x as long): both clocks leave out what ssh sends while the remote shell starts (~70 ms
    # here), which would flatter a short compressed transfer.
    size = int(min(max(rate_bit_s / 8 * args.seconds * SIZE_FACTOR, 4 * MIB), 512 * MIB)) // MIB * MIB
    return RunSettings(
        ciphers=args.cipher,
        kex=args.kex,
        link=f"rate={rate_bit_s}bit",
        compression="both",
        payload=args.payload,
        file=args.file,
        size=None if args.file else size,
        runs=args.runs,
        warmup=1,
        default_reference=False,  # each rate: compression on vs off only (a reference would double it)
    )


def measure(args: CrossoverSpec, rate_bit_s: int, err: Console) -> MeasuredRate:
    """One ordinary run at this rate, recorded in the results store like any `sshbench run`."""
    settings = _settings(args, rate_bit_s)
    err.print(f"crossover: measuring at {rate_bit_s / 1e6:g} Mbit/s ...", highlight=False)
    recorder = RunRecorder(open_store(args.db))
    runner: Runner | None = None
    on_plan, on_trial = recorder.runner_hooks(lambda: runner.result if runner else None)  # type: ignore[arg-type,return-value]
    runner = Runner(RunSpec.check(settings), on_trial=on_trial, on_plan=on_plan)
    recorder.started(runner.result)
    result = runner.run()
    recorder.finished(result, err)
    if result.status != "complete":
        raise RunError(f"crossover at {rate_bit_s / 1e6:g} Mbit/s: {result.error or result.status}")
    link = settings.axes.links[0].name
    points = crossover_points(summary.summaries(result)).get(settings.axes.payloads[0], [])
    raw = raw_tcp_by_link(result.trials).get(link)
    point: CrossoverPoint | None = points[0] if points else None
    return MeasuredRate(
        rate_bit_s / 1e6,
        link,
        point.plain_mib_s if point else None,
        point.zlib_mib_s if point else None,
        raw.median_mib_s if raw else None,
    )


def search(args: CrossoverSpec, err: Console) -> list[MeasuredRate]:
    low, high = parse_rate(args.low), parse_rate(args.high)
    if low >= high:
        raise UsageError(f"--low {args.low} must be below --high {args.high}")
    if not (
        2 <= args.points <= 50 and 0 <= args.steps <= 50 and 1 <= args.runs <= 1000 and 0.05 <= args.seconds <= 600
    ):
        raise UsageError("crossover needs --points 2-50, --steps 0-50, --runs 1-1000 and --seconds 0.05-600")
    grid = sorted({_round_rate(low * (high / low) ** (i / (args.points - 1))) for i in range(args.points)})
    measured = {r: measure(args, r, err) for r in grid}
    for _ in range(args.steps):
        ordered = sorted(measured.items())
        bracket = next(
            (
                (a, b)
                for (a, ma), (b, mb) in zip(ordered, ordered[1:])
                if ma.ratio and mb.ratio and ma.ratio > 1 >= mb.ratio
            ),
            None,
        )
        if bracket is None or bracket[1] / bracket[0] < MIN_BRACKET:
            break
        middle = _round_rate(math.sqrt(bracket[0] * bracket[1]))
        if middle in measured:
            break
        measured[middle] = measure(args, middle, err)
    return [measured[r] for r in sorted(measured)]
