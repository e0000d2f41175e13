"""Charts of a run (matplotlib, Agg backend: no display needed), each rendered as SVG and PNG.

- throughput: median MiB/s per combination, error bars from min to max (seed 004's chart, done right);
- heatmap: cipher x MAC median MiB/s (seed 001's matrix), when the run has at least two cells;
- cpu: CPU seconds per GiB moved, client and server, when measured;
- links: MiB/s against link bandwidth with and without compression (seed 000's crossover), only when
  the run's combinations carry a link dimension with two or more bandwidths.

Charts are drawn only from the data present, so a dimension a run did not sweep gives no empty chart.
Sizes and fonts are chosen to stay readable on a phone screen (PNG at 150 dpi) and in print (SVG).
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sshbench import links
from sshbench.compression import NO_COMPRESSION
from sshbench.errors import RunError
from sshbench.model import summary
from sshbench.model.summary import Summary
from sshbench.results import (
    AXES,
    IMPLICIT_MAC,
    Combination,
    RunResult,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def load_matplotlib():
    """matplotlib, imported on first use: it takes ~1 s to import (0.9 s measured on a busy 2-core VM),
    which every `sshbench` command would otherwise pay, charts or not."""
    import matplotlib

    matplotlib.use("Agg")  # before pyplot: never try to open a window
    import matplotlib.pyplot
    import matplotlib.ticker

    return matplotlib


STYLE = {
    "font.size": 12,
    "axes.titlesize": 14,
    "axes.labelsize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "sshbench",  # stable ids: the same run gives the same SVG
}
PNG_DPI = 150
BAR_COLOUR = "#1f6fb4"
CLIENT_COLOUR, SERVER_COLOUR = "#1f6fb4", "#e08a1e"


@dataclass
class Chart:
    name: str  # file stem: throughput, heatmap, cpu, links
    title: str
    svg: str
    png: bytes


def _labeller(combos: list[Combination]):
    """Row labels: the cipher (+ MAC), then whatever else varies in this run (kex, compression, link, ...),
    so that no two bars read the same."""
    names = [axis.name for axis in AXES if axis.name not in ("cipher", "mac", "remedy")]
    varying = [n for n in names if len({getattr(c, n, None) for c in combos}) > 1]

    def label(combo: Combination) -> str:
        extras = []
        for name in varying:
            value = getattr(combo, name, None)
            if name == "compression":
                extras.append("uncompressed" if value == NO_COMPRESSION else "compressed")
            elif name == "streams":  # "-P 2" once, in the brackets (the label's own "-P 2" left out)
                extras.append(f"-P {value}")
            else:
                extras.append(str(value))
        builds_same = "ssh_build" not in varying and "sshd_build" not in varying  # one pairing: not named on each bar
        named = [*varying, "builds"] if builds_same else varying
        return combo.label_beside(named) + (f" [{', '.join(extras)}]" if extras else "")

    return label


def render_chart(fig: Figure, name: str, title: str) -> Chart:
    svg, png = io.StringIO(), io.BytesIO()
    fig.savefig(svg, format="svg", bbox_inches="tight", metadata={"Date": None})
    fig.savefig(png, format="png", dpi=PNG_DPI, bbox_inches="tight")
    load_matplotlib().pyplot.close(fig)
    return Chart(name=name, title=title, svg=svg.getvalue(), png=png.getvalue())


def _bar_height(count: int) -> float:
    return max(2.8, 0.45 * count + 1.4)


def throughput_chart(summaries: list[Summary]) -> Chart | None:
    rows = [s for s in summaries if s.median_mib_s is not None]
    if not rows:
        return None
    rows = rows[::-1]  # fastest at the top
    label = _labeller([s.combination for s in rows])
    fig, ax = load_matplotlib().pyplot.subplots(figsize=(9, _bar_height(len(rows))))
    medians = [s.median_mib_s or 0.0 for s in rows]
    below = [s.median_mib_s - s.min_mib_s for s in rows]  # type: ignore[operator]
    above = [s.max_mib_s - s.median_mib_s for s in rows]  # type: ignore[operator]
    ax.barh(
        range(len(rows)),
        medians,
        xerr=[below, above],
        color=BAR_COLOUR,
        capsize=4,
        error_kw={"elinewidth": 1.5, "ecolor": "#333333"},
    )
    ax.set_yticks(range(len(rows)), [label(s.combination) for s in rows])
    for y, s in enumerate(rows):
        ax.annotate(
            f"{s.median_mib_s:.0f}",
            (s.max_mib_s, y),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=10,
        )
    ax.set_xlabel("throughput, MiB/s (bar: median; whiskers: min to max)")
    ax.set_xlim(0, max(s.max_mib_s or 0.0 for s in rows) * 1.15)
    ax.set_title("Throughput per combination")
    ax.grid(axis="x", alpha=0.3)
    return render_chart(fig, "throughput", "Throughput per combination (median, min-max)")


def _main_slice(summaries: list[Summary]) -> list[Summary]:
    """The summaries sharing the most common shape (kex, compression, tool, link, ...): one heatmap, one
    meaning."""
    groups: dict[tuple, list[Summary]] = defaultdict(list)
    for s in summaries:
        c = s.combination
        groups[c.shape].append(s)
    return max(groups.values(), key=len) if groups else []


def heatmap_chart(summaries: list[Summary]) -> Chart | None:
    cells = {(s.combination.cipher, s.combination.mac): s.median_mib_s for s in _main_slice(summaries)}
    if len(cells) < 2:
        return None
    ciphers = list(dict.fromkeys(c for c, _ in cells))
    macs = list(dict.fromkeys(m for _, m in cells))
    grid = [[cells.get((c, m)) for m in macs] for c in ciphers]
    values = [v for row in grid for v in row if v is not None]
    if not values:
        return None
    masked = [[float("nan") if v is None else v for v in row] for row in grid]
    fig, ax = load_matplotlib().pyplot.subplots(
        figsize=(max(6.0, 1.6 * len(macs) + 4), max(3.0, 0.55 * len(ciphers) + 1.8))
    )
    cmap = load_matplotlib().colormaps["viridis"].with_extremes(bad="#dddddd")  # grey: a cell the run did not measure
    image = ax.imshow(masked, cmap=cmap, aspect="auto", vmin=0, vmax=max(values))
    ax.set_xticks(range(len(macs)), ["(implicit)" if m == IMPLICIT_MAC else m for m in macs], rotation=30, ha="right")
    ax.set_yticks(range(len(ciphers)), ciphers)
    for y, row in enumerate(grid):
        for x, v in enumerate(row):
            text = "-" if v is None else f"{v:.0f}"
            dark = v is not None and v < 0.6 * max(values)
            ax.text(x, y, text, ha="center", va="center", fontsize=10, color="white" if dark else "black")
    ax.spines[:].set_visible(False)
    fig.colorbar(image, ax=ax, label="median MiB/s")
    ax.set_xlabel("MAC")
    ax.set_ylabel("cipher")
    ax.set_title("Cipher x MAC, median MiB/s")
    return render_chart(fig, "heatmap", "Cipher x MAC matrix (median MiB/s)")


def cpu_chart(summaries: list[Summary]) -> Chart | None:
    rows = [s for s in summaries if s.client_cpu_s_per_gib is not None or s.server_cpu_s_per_gib is not None]
    if not rows:
        return None
    rows = rows[::-1]
    label = _labeller([s.combination for s in rows])
    fig, ax = load_matplotlib().pyplot.subplots(figsize=(9, _bar_height(len(rows)) * 1.2))
    ys = range(len(rows))
    height = 0.38
    ax.barh(
        [y + height / 2 for y in ys],
        [s.client_cpu_s_per_gib or 0 for s in rows],
        height,
        label="client (ssh)",
        color=CLIENT_COLOUR,
    )
    ax.barh(
        [y - height / 2 for y in ys],
        [s.server_cpu_s_per_gib or 0 for s in rows],
        height,
        label="server (sshd session)",
        color=SERVER_COLOUR,
    )
    ax.set_yticks(list(ys), [label(s.combination) for s in rows])
    ax.set_xlabel("CPU seconds per GiB moved (user + system; lower is better)")
    ax.set_title("CPU cost per combination")
    ax.legend(loc="best")
    ax.grid(axis="x", alpha=0.3)
    return render_chart(fig, "cpu", "CPU seconds per GiB, client and server")


_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kmg]?)(?:bit|bps|b)?(?:/s)?\s*$", re.IGNORECASE)


def link_mbit_s(combo: Combination) -> float | None:
    """The link bandwidth a combination was measured over, in Mbit/s, when it has a link dimension
    (its `link`: a profile of sshbench.links, a number of Mbit/s or a rate such as '100mbit'); None for
    loopback, unshaped or unknown links."""
    if (rate := links.rate_mbit_s(combo.link)) is not None:
        return rate  # a profile name ("lan1g") or a custom profile's canonical name
    if m := _RATE.match(combo.link):
        scale = {"k": 0.001, "": 1.0, "m": 1.0, "g": 1000.0}[m.group(2).lower()]
        return float(m.group(1)) * scale
    return None


def links_chart(summaries: list[Summary]) -> Chart | None:
    """Per compression setting, the fastest combination's median at each link bandwidth."""
    best: dict[str, dict[float, float]] = defaultdict(dict)
    for s in summaries:
        mbit = link_mbit_s(s.combination)
        if mbit is None or s.median_mib_s is None:
            continue
        series = "without compression" if s.combination.compression == NO_COMPRESSION else "with compression"
        best[series][mbit] = max(best[series].get(mbit, 0.0), s.median_mib_s)
    bandwidths = {b for points in best.values() for b in points}
    if len(bandwidths) < 2:
        return None
    fig, ax = load_matplotlib().pyplot.subplots(figsize=(8, 5))
    for series, style in (("without compression", "o-"), ("with compression", "s--")):
        points = sorted(best.get(series, {}).items())
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], style, label=series, linewidth=2, markersize=7)
    ax.set_xscale("log")
    # Ticks at the measured bandwidths, written as plain numbers (100, 1000), not powers of ten.
    ax.set_xticks(sorted(bandwidths), [f"{b:g}" for b in sorted(bandwidths)])
    ax.xaxis.set_minor_formatter(load_matplotlib().ticker.NullFormatter())
    ax.set_xlabel("link bandwidth, Mbit/s (log scale)")
    ax.set_ylabel("throughput, MiB/s (fastest combination)")
    ax.set_title("Throughput against link bandwidth")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    return render_chart(fig, "links", "Throughput against link bandwidth, with and without compression")


def make_charts(result: RunResult) -> list[Chart]:
    # the user's rows: --remedies' rows are answered in a block of their own (answers.remedies), as in the table
    summaries = [s for s in summary.summaries(result) if not s.combination.remedy]
    with load_matplotlib().rc_context(STYLE):
        charts = [throughput_chart(summaries), heatmap_chart(summaries), cpu_chart(summaries), links_chart(summaries)]
    return [c for c in charts if c is not None]


def write_charts(result: RunResult, directory: Path) -> list[Path]:
    """Each chart as NAME.svg and NAME.png in `directory`; the paths written."""
    written = []
    for chart in make_charts(result):
        for suffix, data in ((".svg", chart.svg.encode()), (".png", chart.png)):
            path = directory / f"{chart.name}{suffix}"
            try:
                path.write_bytes(data)
            except OSError as err:
                raise RunError(f"cannot write {path}: {err.strerror}") from None
            written.append(path)
    return written
