"""The report formats, one registry: `sshbench report --format NAME` renders a stored run with FORMATS[NAME].

To add a format: a module in report/ with `render(result: RunResult) -> str`, and one ReportFormat here."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from sshbench.report import csv_export, dashboards, html, json_export, markdown, table
from sshbench.results import RunResult

TABLE_WIDTH = 160  # the terminal table written to a file: wide enough that no column is folded


@dataclass(frozen=True)
class ReportFormat:
    name: str
    what: str  # one line for --help
    render: Callable[[RunResult], str]


def table_text(result: RunResult, wide: bool = False, quiet: bool = False) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=TABLE_WIDTH, highlight=False, force_terminal=False)
    table.print_report(result, console, wide=wide, quiet=quiet)
    return buffer.getvalue()


def _table_text(result: RunResult) -> str:
    return table_text(result)


def _json_text(result: RunResult) -> str:
    return json.dumps(json_export.to_document(result), indent=2) + "\n"


FORMATS: dict[str, ReportFormat] = {
    f.name: f
    for f in (
        ReportFormat("table", "the terminal report", _table_text),
        ReportFormat("markdown", "environment header and ranked table in Markdown", markdown.render),
        ReportFormat("csv", "one row per combination, full precision", csv_export.render),
        ReportFormat("json", "the run's JSON document (docs/results-json.md)", _json_text),
        ReportFormat("html", "one self-contained HTML file with charts", html.render),
        ReportFormat(
            "bmf", "Bencher Metric Format: each row's MiB/s and CPU with their 95% CIs", dashboards.render_bmf
        ),
        ReportFormat(
            "gab", "github-action-benchmark's customBiggerIsBetter list: MiB/s per row", dashboards.render_gab
        ),
    )
}


def render(result: RunResult, name: str) -> str:
    return FORMATS[name].render(result)
