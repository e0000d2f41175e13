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

from sshbench.answers.condition_answer import swept_conditions
from sshbench.report import cells, model
from sshbench.results import IMPLICIT_MAC, OPENSSH_SUFFIX, RunResult
from sshbench.security import report_hooks as security_hooks


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


def columns(result: RunResult) -> list[Column]:
    report = model.build(result)
    rows = report.rows
    cols = [
        Column(c.title, "right" if c.numeric else "left", [c.cell(r) for r in rows])
        for c in report.identity_columns(compact=True)
    ]
    cols.append(Column("MiB/s", "right", [cells.rate(r.summary, compact=True) for r in rows]))
    cols.append(
        Column(
            "x fastest",
            "right",
            [cells.ratio(r.summary, "full") for r in rows],
            compact=[cells.ratio(r.summary, "compact") for r in rows],
            bare=[cells.ratio(r.summary, "bare") for r in rows],
        )
    )
    # Two header lines: the column is as narrow as its figures (the full ratio interval then fits 100 columns).
    cols.append(Column("CPU\ns/GiB", "right", [cells.cpu_total(r.summary) for r in rows], drop_step=NO_CPU))
    if report.any_bound_by:
        cols.append(Column("bound by", "left", [r.bound_by or "-" for r in rows], drop_step=NO_BOUND_BY))
    verdicts: list[str | Text] = [security_hooks.styled_verdict(r.verdict) for r in rows]
    cols.append(Column("verdict", "left", verdicts, drop_step=NO_VERDICT))
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
            picked: list[str | Text] = col.cells
            if col.bare is not None and step >= BARE_RATIO:
                picked = list(col.bare)
            elif col.compact is not None and step >= COMPACT_RATIO:
                picked = list(col.compact)
            shown.append((col, picked))
        needed = sum(col.width(c) for col, c in shown) + gap * (len(shown) - 1)
        if needed <= width or step >= NO_VERDICT:
            return shown, gap, step
        step += 1


def results_table(result: RunResult, width: int) -> Table:
    shown, gap, _ = fit(columns(result), width)
    table = Table(box=None, padding=(0, gap, 0, 0), pad_edge=False, show_edge=False, header_style="bold")
    for col, shown_cells in shown:
        table.add_column(
            col.header,
            justify=col.justify,  # type: ignore[arg-type]
            no_wrap=True,
            min_width=col.width(shown_cells),
            overflow="fold",
        )
    for i, row in enumerate(model.build(result).rows):
        table.add_row(*(shown_cells[i] for _, shown_cells in shown), style=None if row.summary.valid_trials else "red")
    return table


def legend(result: RunResult) -> list[str]:
    """What the compact table abbreviates, one line."""
    combos = [r.combination for r in model.build(result).rows]
    parts = []
    if any(name.endswith(OPENSSH_SUFFIX) for c in combos for name in (c.cipher, c.mac, c.kex)):
        parts.append(f"without {OPENSSH_SUFFIX}")
    if any(c.mac == IMPLICIT_MAC for c in combos):
        parts.append(f"{cells.AEAD_MAC}: integrity in the cipher")
    parts.append("CPU: ssh + sshd s/GiB; --wide: every column")
    lines = ["; ".join(parts)]
    conditions = swept_conditions(combos)
    if conditions:  # "x fastest 89.3" for a WAN row is against the loopback's fastest: say where each is answered
        words = " and ".join(conditions)
        lines.append(
            f"x fastest: against row 1 of the whole table; each {words} against its own fastest: under the answer"
        )
    return lines
