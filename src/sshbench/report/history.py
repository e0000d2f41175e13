"""`sshbench history`'s outputs (model/history.py's History): lines for the terminal (at most WIDTH columns), Markdown,
JSON, and an HTML page whose chart marks the change points. Text in, text out; the chart through matplotlib (Agg),
imported on first use as report/charts.py does."""

from __future__ import annotations

import datetime
import json
import math
import textwrap
from dataclasses import dataclass
from html import escape

from sshbench.model.history import ChangePoint, History, Point, Rate
from sshbench.report import charts, html

WIDTH = 100  # a terminal's columns: every line fits (tests/test_history.py)
LEVEL = "all rows"


@dataclass(frozen=True)
class SetUp:
    """What the history is of, in words (cli/history.py fills it from the reference run)."""

    host: str
    what: str  # the target and how the data moved
    reference: int | None  # the run whose set-up it is


def _short(label: str) -> str:
    return label.replace("@openssh.com", "")


def _date(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def _run(run_id: int | None) -> str:
    return f"run {run_id}" if run_id is not None else "a run"


def rate_cell(rate: Rate | None) -> str:
    """`650 (620-680)`: a median MiB/s and its 95% interval; `650` alone where there is none."""
    if rate is None:
        return "-"
    if rate.low is None or rate.high is None:
        return f"{rate.mib_s:.0f}"
    return f"{rate.mib_s:.0f} ({rate.low:.0f}-{rate.high:.0f})"


def change_words(c: ChangePoint) -> str:
    slower = 1.0 - c.ratio
    direction = f"{slower:.0%} slower" if slower > 0 else f"{-slower:.0%} faster"
    return f"between {_run(c.before)} and {_run(c.after)}: all rows {direction} ({c.ratio:.3f}), p {c.p_value:.2g}"


def header(history: History, setup: SetUp) -> str:
    points = history.points
    span = f", {_date(points[0].started_at)} to {_date(points[-1].started_at)}" if points else ""
    return f"history of {_run(setup.reference)}'s set-up on {setup.host}: {len(points)} runs{span}"


def _columns(history: History) -> tuple[list[str], list[list[str]], int]:
    """The table's header and cells, as many row columns as fit WIDTH; how many rows were left out."""
    fixed = [["run", "date", f"{LEVEL} MiB/s"]] + [
        [str(p.run_id or "-"), _date(p.started_at), rate_cell(p.level)] for p in history.points
    ]
    widths = [max(len(r[i]) for r in fixed) for i in range(3)]
    used = 2 + sum(widths) + 2 * 2
    shown = []
    for label in history.rows:
        cells = [_short(label)] + [rate_cell(p.rows.get(label)) for p in history.points]
        width = max(len(c) for c in cells)
        if used + 2 + width > WIDTH:
            break
        shown.append(cells)
        used += 2 + width
    table = [fixed[i] + [col[i] for col in shown] for i in range(len(fixed))]
    return table[0], table[1:], len(history.rows) - len(shown)


def lines(history: History, setup: SetUp) -> list[str]:
    """What `history` prints: the header, a line per run (a change point as a line between two runs), the change
    points with what differs either side, and how they were found."""
    out = [header(history, setup), f"  {setup.what}"[:WIDTH]]
    head, rows, hidden = _columns(history)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "  " + "  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    starts = {c.index: c for c in history.change_points}
    out.append(line(head))
    for index, cells in enumerate(rows):
        if index in starts:
            out.append(f"  -- change point: {change_words(starts[index])}"[:WIDTH])
        out.append(line(cells))
    out.append("  MiB/s: median (95% CI; a row of under 6 trials: their range); all rows: the rows' geometric mean")
    if hidden:
        out.append(f"  ({hidden} more rows: --markdown, --json or --html show every row)")
    if history.sigma is None:
        out.append("change points: too few runs to look for one (at least 6)")
        return out
    out.append(f"change points: {len(history.change_points) or 'none'}")
    for c in history.change_points:
        out.append(f"  {change_words(c)}"[:WIDTH])
        rows_changed = ", ".join(f"{_short(r)} {v:.3f}" for r, v in c.rows.items())
        out += _wrapped(f"rows: {rows_changed}")
        out += _wrapped("differs: " + ("; ".join(c.differences) or "nothing the store recorded"))
    out += _wrapped(f"method: {history.method}; run-to-run scatter {history.sigma:.1%}", "  ")
    return out


def _wrapped(text: str, indent: str = "    ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ", break_long_words=True)


def markdown(history: History, setup: SetUp) -> str:
    out = [f"### sshbench {header(history, setup)}", "", setup.what, ""]
    cols = ["run", "date", f"{LEVEL} MiB/s", *(_short(r) for r in history.rows)]
    out += ["| " + " | ".join(cols) + " |", "| " + " | ".join(["---:", "---", *["---:"] * (len(cols) - 2)]) + " |"]
    starts = {c.index for c in history.change_points}
    for index, p in enumerate(history.points):
        mark = " (change)" if index in starts else ""
        cells = [f"{p.run_id}{mark}", _date(p.started_at), rate_cell(p.level), *(rate_cell(p.rows.get(r)) for r in history.rows)]  # fmt: skip
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out += [
        "",
        "MiB/s: the median (its 95% CI; a row of under 6 trials: their range); all rows: the rows' geometric mean, its CI from the rounds.",
        "",
    ]
    if history.sigma is None:
        return "\n".join([*out, "Change points: too few runs to look for one."]) + "\n"
    out.append(f"Change points ({history.method}): {len(history.change_points) or 'none'}")
    for c in history.change_points:
        out.append(f"- {change_words(c)}; differs: {'; '.join(c.differences) or 'nothing recorded'}")
    return "\n".join(out) + "\n"


def to_json(history: History, setup: SetUp) -> str:
    document = {"host": setup.host, "set_up": setup.what, "reference_run": setup.reference, **history.to_json()}
    return json.dumps(document, indent=2) + "\n"


def chart(history: History, setup: SetUp) -> charts.Chart:
    """All rows' level per run with its interval, each row's median faintly, the segments' levels and a dashed line
    at each change point, labelled with its change."""
    mpl = charts.load_matplotlib()
    xs = list(range(len(history.points)))
    with mpl.rc_context(charts.STYLE):
        fig, ax = mpl.pyplot.subplots(figsize=(10, 4.8))
        for k, label in enumerate(history.rows):
            ys = [p.rows[label].mib_s if label in p.rows else float("nan") for p in history.points]
            ax.plot(xs, ys, color="#999999", linewidth=0.8, alpha=0.6, label="each row's median" if k == 0 else None)
        level = [p.level.mib_s for p in history.points]
        below = [p.level.mib_s - (p.level.low if p.level.low is not None else p.level.mib_s) for p in history.points]
        above = [(p.level.high if p.level.high is not None else p.level.mib_s) - p.level.mib_s for p in history.points]
        ax.errorbar(xs, level, yerr=[below, above], fmt="o-", color=charts.BAR_COLOUR, capsize=3, label=LEVEL)
        _segments(ax, history.points, history.change_points)
        for c in history.change_points:
            ax.axvline(c.index - 0.5, color="#c0392b", linestyle="--", linewidth=1.2)
            ax.annotate(f"{c.ratio:.2f}x", (c.index - 0.5, max(level)), color="#c0392b", ha="left", va="top")
        ax.set_xticks(xs, [str(p.run_id) for p in history.points], rotation=90 if len(xs) > 25 else 0)
        ax.set_xlabel("stored run, oldest first")
        ax.set_ylabel("MiB/s (median; all rows: 95% CI)")
        ax.set_title(f"{setup.host}: {len(xs)} runs, {len(history.change_points)} change point(s)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="lower left")
        return charts.render_chart(fig, "history", "All rows' MiB/s per run; dashed: a change point")


def _segments(ax, points: list[Point], changes: list[ChangePoint]) -> None:
    """Each segment's level (the geometric mean of its runs' levels) as a flat line."""
    edges = [0, *(c.index for c in changes), len(points)]
    for start, end in zip(edges, edges[1:]):
        mean = math.exp(sum(p.log_level for p in points[start:end]) / (end - start))
        ax.hlines(mean, start - 0.3, end - 0.7, color="#c0392b", linewidth=1.5, alpha=0.7)


def page(history: History, setup: SetUp) -> str:
    title = f"sshbench {header(history, setup)}"
    cols = ["run", "date", f"{LEVEL} MiB/s", *(_short(r) for r in history.rows)]
    rows = [
        [str(p.run_id), _date(p.started_at), rate_cell(p.level), *(rate_cell(p.rows.get(r)) for r in history.rows)]
        for p in history.points
    ]
    found = "".join(
        f"<li>{escape(change_words(c))}; differs: {escape('; '.join(c.differences) or 'nothing recorded')}</li>"
        for c in history.change_points
    )
    parts = [
        f"<h1>{escape(title)}</h1>",
        f"<p>{escape(setup.what)}</p>",
        html.figure(chart(history, setup)) if history.points else "<p>Nothing to chart.</p>",
        "<h2>Change points</h2>",
        f"<ul>{found}</ul>" if found else "<p>None found.</p>",
        f"<p>{escape(history.method)}</p>",
        "<h2>Runs, oldest first</h2>",
        html.table(cols, rows, [True, False, *[True] * (len(cols) - 2)], table_id="history"),
    ]
    return html.page(title, parts)
