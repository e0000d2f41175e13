"""The one report model every format renders: the terminal's default table, --wide, Markdown, HTML and CSV.

`build(result)` gathers, once per state of a run's trials, what a report says about each ranked row: its
summary, the baseline comparison (x raw TCP, what bounds it), the security verdict and the document's summary
entry (CSV's columns). A format chooses columns from `Report.identity_columns()` and `COLUMNS` and lays them
out; the cells' text comes from report/cells.py, so a figure reads the same in every format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sshbench.baselines import analysis as baseline_analysis
from sshbench.model import summary
from sshbench.model.handshake_summary import HandshakeSummary
from sshbench.model.summary import Summary
from sshbench.naming import swept_setup
from sshbench.report import cells
from sshbench.results import Combination, RunResult
from sshbench.security import report_hooks as security_hooks
from sshbench.store import document


@dataclass(frozen=True)
class Row:
    """One ranked row: a combination's summary with what other features say about it."""

    summary: Summary
    comparison: baseline_analysis.Comparison | None  # None: no baseline was measured for it
    verdict: str  # the security verdict's label, `unpinned`, or `?` (no verdict could be given)
    entry: dict  # the JSON document's summary (store/document.summary_entry): every figure at full precision

    @property
    def combination(self) -> Combination:
        return self.summary.combination

    @property
    def rank(self) -> str:
        """`3`, or `=1` shared by tied neighbours; `-` for a row with no valid trial."""
        return self.summary.rank_label or "-"

    @property
    def bound_by(self) -> str | None:
        found = self.comparison.verdict if self.comparison else None
        return found.bound_by if found else None

    @property
    def vs_raw_tcp(self) -> float | None:
        return self.comparison.vs_raw_tcp if self.comparison else None


@dataclass(frozen=True)
class Column:
    """A column any format may show: its header, whether it holds figures (right-aligned) and its cell."""

    key: str
    title: str
    numeric: bool
    cell: Callable[[Row], str]


@dataclass(frozen=True)
class Report:
    result: RunResult
    rows: tuple[Row, ...]
    handshakes: tuple[HandshakeSummary, ...]
    remedy_rows: tuple[Row, ...] = ()  # --remedies' rows: the CSV's, not the tables' (answers.remedies)

    @property
    def kexes(self) -> list[str]:
        return list(dict.fromkeys(r.combination.kex for r in self.rows))

    @property
    def varying_setup(self) -> list[str]:
        """The setup axes that differ between rows (a single value is said in the header instead)."""
        return swept_setup(r.combination for r in self.rows)

    @property
    def build_sides(self) -> list[str]:
        """`ssh_build` / `sshd_build` where a build sweep (--ssh A,B / --sshd A,B) made them differ."""
        return [f for f in ("ssh_build", "sshd_build") if len({getattr(r.combination, f) for r in self.rows}) > 1]

    @property
    def other_implementations(self) -> bool:
        """Implementations are part of the combination and shown once more than OpenSSH is involved: numbers
        from different implementations are never silently mixed in one ranking."""
        return any(r.combination.server != "openssh" or r.combination.client != "openssh" for r in self.rows)

    @property
    def any_bound_by(self) -> bool:
        return any(r.bound_by is not None for r in self.rows)

    @property
    def any_wire_ratio(self) -> bool:
        return any(r.summary.wire_ratio is not None for r in self.rows)

    def identity_columns(self, compact: bool = False) -> list[Column]:
        """What tells the rows apart: rank, cipher, MAC, then kex, implementations, builds and the setup where
        they vary. `compact`: OpenSSH's names without their `@openssh.com`."""
        name = cells.short if compact else str
        out = [
            Column("rank", "#", True, lambda r: r.rank),
            Column("cipher", "cipher", False, lambda r: name(r.combination.cipher)),
            Column("mac", "MAC", False, lambda r: cells.mac(r.combination.mac, compact)),
        ]
        if len(self.kexes) > 1:
            out.append(Column("kex", "kex", False, lambda r: name(r.combination.kex)))
        if self.other_implementations:
            out.append(
                Column(
                    "implementations",
                    "client/server",
                    False,
                    lambda r: f"{r.combination.client}/{r.combination.server}",
                )
            )
        out += [Column(side, side.removesuffix("_build"), False, _build_cell(side)) for side in self.build_sides]
        varying = self.varying_setup
        if varying:
            out.append(Column("setup", "/".join(varying), False, lambda r: r.combination.setup_label(varying)))
        return out


def _build_cell(side: str) -> Callable[[Row], str]:
    """The cell of a build column: `ssh_build` or `sshd_build`, short (`10.0p2`)."""
    return lambda r: cells.build(getattr(r.combination, side))


# The figures' columns; each format picks its own (report/table.py, compact.py, ranked.py).
COLUMNS: dict[str, Column] = {
    c.key: c
    for c in (
        Column("wire_ratio", "wire/payload", True, lambda r: cells.number(r.summary.wire_ratio, ".3f")),
        Column("median_mib_s", "MiB/s", True, lambda r: cells.rate(r.summary)),
        Column("min_mib_s", "min", True, lambda r: cells.number(r.summary.min_mib_s)),
        Column("max_mib_s", "max", True, lambda r: cells.number(r.summary.max_mib_s)),
        # time each connection's start lost against the steady rate (docs/clock.md)
        Column("startup", "start-up ms", True, lambda r: cells.startup(r.summary)),
        Column("cv", "CV", True, lambda r: cells.cv(r.summary, mark=True)),
        Column("relative_to_fastest", "x fastest", True, lambda r: cells.ratio(r.summary)),
        Column(
            "client_cpu_s_per_gib",
            "client CPU s/GiB",
            True,
            lambda r: cells.number(r.summary.client_cpu_s_per_gib, ".2f"),
        ),
        Column(
            "server_cpu_s_per_gib",
            "server CPU s/GiB",
            True,
            lambda r: cells.number(r.summary.server_cpu_s_per_gib, ".2f"),
        ),
        Column("valid", "valid", True, lambda r: cells.valid(r.summary)),
        Column("vs_raw_tcp", "x raw TCP", True, lambda r: cells.number(r.vs_raw_tcp, ".2f")),
        Column("bound_by", "bound by", False, lambda r: r.bound_by or "-"),
        Column("verdict", "verdict", False, lambda r: r.verdict),
    )
}


def build(result: RunResult) -> Report:
    """The model of `result`'s report, computed once per state of its trials."""
    return summary.cached(result, "report-model", lambda: _build(result))


def _build(result: RunResult) -> Report:
    comparisons = baseline_analysis.compare(result)
    rows = tuple(
        Row(
            summary=s,
            comparison=comparisons.get(s.combination),
            verdict=security_hooks.table_cell(s, result.environment),
            entry=document.summary_entry(result, s, comparisons),
        )
        for s in summary.summaries(result)
    )
    # The remedy rows (--remedies) are answered in a block of their own (answers.remedies), against the user's
    # setup: in the table their ssh/sshd/-P columns pushed the rates past a 100-column terminal.
    return Report(
        result=result,
        rows=tuple(r for r in rows if not r.combination.remedy),
        handshakes=tuple(summary.handshakes(result)),
        remedy_rows=tuple(r for r in rows if r.combination.remedy),
    )
