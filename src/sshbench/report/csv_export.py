"""A run's summaries as CSV: one row per combination, every summary field at full precision
(for spreadsheets, gnuplot as in seeds 003/004, pandas)."""

from __future__ import annotations

import csv
import io

from sshbench.report.json_export import to_document
from sshbench.results import RunResult

# Run-level columns repeated on each row so that several runs' files can be concatenated.
RUN_COLUMNS = ("run_id", "hostname", "client_ssh_version", "server_ssh_version")


def render(result: RunResult) -> str:
    summaries = to_document(result)["summaries"]
    keys: list[str] = []
    for s in summaries:  # the union, in first-seen order: features add keys to some summaries only
        keys.extend(k for k, v in s.items() if k not in keys and not isinstance(v, (dict, list)))
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
        writer.writerow({**run_values, "rank": rank, **{k: ("" if s.get(k) is None else s.get(k)) for k in keys}})
    return buffer.getvalue()
