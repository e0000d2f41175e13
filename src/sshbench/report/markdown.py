"""A run as Markdown: the environment header then the ranked table, as in seed 000's hand-made tables
(paste into a wiki, an issue or a README)."""

from __future__ import annotations

import datetime

from sshbench.report import conclusion, model, ranked
from sshbench.report.run_warnings import warnings
from sshbench.report.table import decision_lines
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
    report = model.build(result)
    when = datetime.datetime.fromtimestamp(result.started_at).strftime("%Y-%m-%d %H:%M")
    run = f"run {result.run_id}" if result.run_id is not None else "run"
    lines = [f"## sshbench {run}, {when}", "", *conclusion.markdown(result)]
    lines += _table(["", ""], [[k, v] for k, v in ranked.environment_rows(result)], [False, False])
    lines.append("")
    if report.rows:
        cols, rows = ranked.ranked(report)
        lines += ["### Throughput (steady state), fastest first", ""]
        lines += _table([c.title for c in cols], rows, [c.numeric for c in cols])
        lines += ["", *(f"- {_escape(line)}" for line in decision_lines(result, wide=True)), ""]
    if report.handshakes:
        lines += ["### Connection set-up (ssh with no data)", ""]
        lines += _table(ranked.HANDSHAKE_HEADER, ranked.handshake_rows(report), [False, True, True, True, True])
        lines.append("")
    notes = warnings(result)
    if notes:
        lines += ["### Warnings", ""] + [f"- {_escape(n)}" for n in notes] + [""]
    return "\n".join(lines)
