"""The default results table: the columns that decide, fitted to the terminal without cutting a name.

rank (`=1` shared by ties), cipher, MAC, MiB/s ± CI, x fastest (paired CI), CPU s/GiB (client + server),
bound by, verdict; kex, implementation and setup columns only where they vary. Names drop the
`@openssh.com` suffix (OpenSSH's own algorithms; said once under the table) and are never truncated: when
the terminal is narrower than the table, it degrades in this order until it fits: the ratio's interval
as ±%, single-space gaps, no CPU column, no bound-by column, the ratio without interval, no verdict column.
`--wide` prints every column instead (report/table.py's results_table).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text

from sshbench import summary
from sshbench.baselines import analysis as baseline_analysis
from sshbench.results import IMPLICIT_MAC, OPENSSH_SUFFIX, RunResult
from sshbench.security import report_hooks as security_hooks

SUFFIX = OPENSSH_SUFFIX
AEAD_MAC = "(AEAD)"  # the MAC cell of an AEAD cipher: its integrity is built in


def short(name: str) -> str:
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


@dataclass
class Column:
    header: str
    justify: str
    cells: list[str | Text]
    drop_step: int | None = None  # the degradation step that removes it (None: always shown)
    compact: list[str] | None = None  # narrower cells from step 1 (the ratio's interval as ±%)
    bare: list[str] | None = None  # narrowest cells (the ratio alone)
    style: list[str | None] = field(default_factory=list)

    def width(self, cells: list[str | Text]) -> int:
        return max([*(len(part) for part in self.header.split("\n")), *(len(str(c)) for c in cells)])


# Degradation steps (see the module docstring); a step applies when the table is still too wide.
COMPACT_RATIO, SINGLE_GAP, NO_CPU, NO_BOUND_BY, BARE_RATIO, NO_VERDICT = range(1, 7)


def _rate(s: summary.Summary) -> str:
    if s.median_mib_s is None:
        return "-"
    median = f"{s.median_mib_s:.0f}" if s.median_mib_s >= 100 else f"{s.median_mib_s:.1f}"
    if not s.ci95_mib_s or s.valid_trials < 2:
        return median
    low, high = s.ci95_mib_s
    half = (high - low) / 2
    mark = "~" if (s.ci_coverage or 0.0) < 0.95 else ""
    return f"{median} ±{half:.0f}{mark}" if half >= 10 else f"{median} ±{half:.1f}{mark}"


def _factor(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _ratio(s: summary.Summary, form: str) -> str:
    """`1.69 (1.62-1.75)` (full), `1.69 ±4%` (compact: the wider side of the interval, in % of the ratio)
    or `1.69` (bare)."""
    r = s.relative_to_fastest
    if r is None:
        return "-"
    ci = s.relative_to_fastest_ci95
    if form == "bare" or not ci or ci == [1.0, 1.0]:
        return _factor(r)
    if form == "full":
        return f"{_factor(r)} ({_factor(ci[0])}-{_factor(ci[1])})"
    spread = max(ci[1] / r - 1, 1 - ci[0] / r)
    return f"{_factor(r)} ±{spread:.0%}"


def _cpu(s: summary.Summary) -> str:
    if s.client_cpu_s_per_gib is None or s.server_cpu_s_per_gib is None:
        return "-"
    return f"{s.client_cpu_s_per_gib + s.server_cpu_s_per_gib:.2f}"


def columns(result: RunResult) -> list[Column]:
    from sshbench.report.table import build_columns, short_build, varying_setup

    rows = summary.summaries(result)
    comparisons = baseline_analysis.compare(result)
    cols = [
        Column("#", "right", [s.rank_label or "-" for s in rows]),
        Column("cipher", "left", [short(s.combination.cipher) for s in rows]),
        Column(
            "MAC", "left", [AEAD_MAC if s.combination.mac == IMPLICIT_MAC else short(s.combination.mac) for s in rows]
        ),
    ]
    if len({s.combination.kex for s in rows}) > 1:
        cols.append(Column("kex", "left", [short(s.combination.kex) for s in rows]))
    if any(s.combination.server != "openssh" or s.combination.client != "openssh" for s in rows):
        cols.append(Column("client/server", "left", [f"{s.combination.client}/{s.combination.server}" for s in rows]))
    for header, side in build_columns([s.combination for s in rows]):  # a build sweep: the builds that vary
        cols.append(Column(header, "left", [short_build(getattr(s.combination, side)) for s in rows]))
    varying = varying_setup(rows)
    if varying:
        cols.append(Column("/".join(varying), "left", [s.combination.setup_label(varying) for s in rows]))
    cols.append(Column("MiB/s", "right", [_rate(s) for s in rows]))
    cols.append(
        Column(
            "x fastest",
            "right",
            [_ratio(s, "full") for s in rows],
            compact=[_ratio(s, "compact") for s in rows],
            bare=[_ratio(s, "bare") for s in rows],
        )
    )
    # Two header lines: the column is as narrow as its figures (the full ratio interval then fits 100 columns).
    cols.append(Column("CPU\ns/GiB", "right", [_cpu(s) for s in rows], drop_step=NO_CPU))
    if any(c.verdict is not None for c in comparisons.values()):
        bound = [comparisons[s.combination].verdict if s.combination in comparisons else None for s in rows]
        cols.append(Column("bound by", "left", [v.bound_by if v else "-" for v in bound], drop_step=NO_BOUND_BY))
    cols.append(
        Column(
            "verdict",
            "left",
            [security_hooks.styled_cell(s, result.environment) for s in rows],
            drop_step=NO_VERDICT,
        )
    )
    return cols


def fit(cols: list[Column], width: int) -> tuple[list[tuple[Column, list[str | Text]]], int, int]:
    """The columns (with the cells to show) and the gap that fit `width`, and the step reached."""
    step = 0
    while True:
        gap = 1 if step >= SINGLE_GAP else 2
        shown = []
        for col in cols:
            if col.drop_step is not None and step >= col.drop_step:
                continue
            cells: list[str | Text] = col.cells
            if col.bare is not None and step >= BARE_RATIO:
                cells = list(col.bare)
            elif col.compact is not None and step >= COMPACT_RATIO:
                cells = list(col.compact)
            shown.append((col, cells))
        needed = sum(col.width(cells) for col, cells in shown) + gap * (len(shown) - 1)
        if needed <= width or step >= NO_VERDICT:
            return shown, gap, step
        step += 1


def results_table(result: RunResult, width: int) -> Table:
    shown, gap, _ = fit(columns(result), width)
    table = Table(box=None, padding=(0, gap, 0, 0), pad_edge=False, show_edge=False, header_style="bold")
    for col, cells in shown:
        table.add_column(col.header, justify=col.justify, no_wrap=True, min_width=col.width(cells), overflow="fold")  # type: ignore[arg-type]
    rows = summary.summaries(result)
    for i, s in enumerate(rows):
        table.add_row(*(cells[i] for _, cells in shown), style=None if s.valid_trials else "red")
    return table


def legend(result: RunResult) -> list[str]:
    """What the compact table abbreviates, one line."""
    rows = summary.summaries(result)
    parts = []
    if any(
        name.endswith(SUFFIX) for s in rows for name in (s.combination.cipher, s.combination.mac, s.combination.kex)
    ):
        parts.append(f"without {SUFFIX}")
    if any(s.combination.mac == IMPLICIT_MAC for s in rows):
        parts.append(f"{AEAD_MAC}: integrity in the cipher")
    parts.append("CPU: ssh + sshd s/GiB; --wide: every column")
    return ["; ".join(parts)]
