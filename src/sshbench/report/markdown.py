"""A run as Markdown: the environment header then the ranked table, as in seed 000's hand-made tables
(paste into a wiki, an issue or a README)."""

from __future__ import annotations

import datetime

from sshbench.report import ranked
from sshbench.report.json_export import to_document
from sshbench.results import RunResult


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]], right: list[bool]) -> list[str]:
    lines = [
        "| " + " | ".join(_escape(h) for h in header) + " |",
        "| " + " | ".join("---:" if r else "---" for r in right) + " |",
    ]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]
    return lines


def render(result: RunResult) -> str:
    doc = to_document(result)
    when = datetime.datetime.fromtimestamp(result.started_at).strftime("%Y-%m-%d %H:%M")
    run = f"run {result.run_id}" if result.run_id is not None else "run"
    from sshbench.report import conclusion

    lines = [f"## sshbench {run}, {when}", "", *conclusion.markdown(result)]
    lines += _table(["", ""], [[k, v] for k, v in ranked.environment_rows(result)], [False, False])
    lines.append("")
    summaries = doc["summaries"]
    if summaries:
        cols, rows = ranked.ranked(summaries)
        lines += ["### Throughput (data phase), fastest first", ""]
        lines += _table([c.title for c in cols], rows, [c.numeric for c in cols])
        lines.append("")
    if doc["handshakes"]:
        lines += ["### Connection set-up (ssh with no data)", ""]
        lines += _table(
            ["kex", "median ms", "min ms", "max ms", "client CPU ms"],
            [
                [
                    ranked.handshake_label(h),
                    *(
                        "-" if h[k] is None else f"{h[k]:.1f}"
                        for k in ("median_ms", "min_ms", "max_ms", "client_cpu_ms")
                    ),
                ]
                for h in doc["handshakes"]
            ],
            [False, True, True, True, True],
        )
        lines.append("")
    from sshbench.report.table import warnings

    notes = warnings(result)
    if notes:
        lines += ["### Warnings", ""] + [f"- {_escape(n)}" for n in notes] + [""]
    return "\n".join(lines)
