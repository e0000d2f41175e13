"""The across-hosts chart of `sshbench compare --by host`: per combination (the slowest host's order),
one bar per host with its median's 95% CI as whiskers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # before pyplot: never try to open a window

import matplotlib.pyplot as plt

from sshbench.errors import RunError
from sshbench.report.charts import PNG_DPI, STYLE

if TYPE_CHECKING:  # compare.py sits beside report/ (not below it): its records are only named here
    from sshbench.answers.compare import HostComparison

COLOURS = ("#1f6fb4", "#e08a1e", "#2e9c4a", "#c0392b", "#8e5bb5", "#7f7f7f", "#17becf", "#bcbd22")


def write_hosts_chart(comparison: HostComparison, path: Path) -> None:
    """SVG or PNG by the file's suffix."""
    rows = comparison.rows[::-1]  # fastest (for the slowest host) at the top
    if not rows:
        raise RunError("no combination was measured on every host: nothing to chart")
    count = len(comparison.hosts)
    band = 0.8 / count
    with matplotlib.rc_context(STYLE):  # type: ignore[arg-type]
        fig, ax = plt.subplots(figsize=(9, max(3.0, 0.35 * len(rows) * count + 1.6)))
        for index, host in enumerate(comparison.hosts):
            ys, medians, below, above = [], [], [], []
            for y, row in enumerate(rows):
                cell = row.cells[index]
                if cell is None:
                    continue
                ys.append(y - 0.4 + band * (count - index - 0.5))
                medians.append(cell.median_mib_s)
                low, high = cell.ci95_mib_s or [cell.median_mib_s, cell.median_mib_s]
                below.append(max(0.0, cell.median_mib_s - low))
                above.append(max(0.0, high - cell.median_mib_s))
            ax.barh(
                ys,
                medians,
                height=band,
                xerr=[below, above],
                color=COLOURS[index % len(COLOURS)],
                label=host.label,
                capsize=3,
                error_kw={"elinewidth": 1.2, "ecolor": "#333333"},
            )
        ax.set_yticks(range(len(rows)), [row.label for row in rows])
        ax.set_xlabel("throughput, MiB/s (bar: median; whiskers: its 95% CI)")
        ax.set_title("Throughput per host (ordered by the slowest host)")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="lower right")
        try:
            fig.savefig(
                path, bbox_inches="tight", dpi=PNG_DPI, metadata={"Date": None} if path.suffix == ".svg" else None
            )
        except (OSError, ValueError) as err:
            raise RunError(f"cannot write {path}: {err}") from None
        finally:
            plt.close(fig)
