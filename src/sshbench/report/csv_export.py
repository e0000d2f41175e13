"""A run's summaries as CSV: one row per row of the report model, every field of its JSON summary at full
precision (for spreadsheets, gnuplot as in seeds 003/004, pandas)."""

from __future__ import annotations

import csv
import io

from sshbench.report import model
from sshbench.results import RunResult

# Run-level columns repeated on each row so that several runs' files can be concatenated.
RUN_COLUMNS = ("run_id", "hostname", "client_ssh_version", "server_ssh_version")


def render(result: RunResult) -> str:
    report = model.build(result)
    summaries = [_flat(row.entry) for row in (*report.rows, *report.remedy_rows)]  # every row, remedies too
    keys: list[str] = []
    for s in summaries:  # the union, in first-seen order: features add keys to some summaries only
        keys.extend(k for k, v in s.items() if k not in keys and k != "rank" and not isinstance(v, (dict, list)))
    env = result.environment
    run_values = {
        "run_id": result.run_id,
        "hostname": env.get("hostname"),
        "client_ssh_version": env.get("client_ssh_version"),
        "server_ssh_version": env.get("server_ssh_version"),
    }
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=[*RUN_COLUMNS, "rank", *keys], extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for rank, s in enumerate(summaries, start=1):
        values = {k: ("" if s.get(k) is None else s.get(k)) for k in keys}
        writer.writerow({**run_values, **values, "rank": s.get("rank_label") or rank})
    return buffer.getvalue()


def _flat(summary: dict) -> dict:
    """Each [low, high] interval (ci95_mib_s, relative_to_fastest_ci95, ...) as two columns, `_low` and
    `_high`, so that a spreadsheet gets the confidence intervals too."""
    flat = dict(summary)
    for key, value in summary.items():
        if "ci95" in key and isinstance(value, list) and len(value) == 2:
            flat[f"{key}_low"], flat[f"{key}_high"] = value
    return flat
