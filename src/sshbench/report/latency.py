"""A latency run (`sshbench latency`, stored as a latency run: store/latency_runs.py) in every format of
`sshbench report`: the terminal table `latency` prints, Markdown, CSV (full precision), the JSON document
and one self-contained HTML page. Reads the document only (the rows may come from an import: a missing
figure is shown as '-', never a traceback)."""

from __future__ import annotations

import csv
import datetime
import io
import json
from html import escape

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sshbench.report.html import CSS

COLUMNS = (
    ("cipher", False),
    ("link", False),
    ("median µs", True),
    ("p90 µs", True),
    ("p99 µs", True),
    ("max µs", True),
    ("echoed", True),
    ("connect median ms", True),
    ("connect min-max ms", True),
)
TABLE_WIDTH = 160


def _fmt(value: object, digits: int = 0) -> str:
    return f"{value:,.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def _title(document: dict) -> str:
    settings = document.get("settings") or {}
    target = (document.get("target") or {}).get("label") or settings.get("host") or "private sshd"
    run = f"run {document['run_id']}: " if document.get("run_id") is not None else ""
    return (
        f"{run}Keystroke echo round trip ({settings.get('chars', '?')} characters, one at a time) "
        f"and connect time: {target}"
    )


def _rows(document: dict) -> list[list[str]]:
    chars = (document.get("settings") or {}).get("chars", "?")
    rows = []
    for row in document.get("results") or []:
        e, c = row.get("echo") or {}, row.get("connect") or {}
        span = f"{_fmt(c.get('min_ms'), 1)}-{_fmt(c.get('max_ms'), 1)}" if c.get("n") else "-"
        rows.append(
            [
                str(row.get("cipher")) + (" (failed)" if row.get("error") else ""),
                str(row.get("link")),
                _fmt(e.get("median_us")),
                _fmt(e.get("p90_us")),
                _fmt(e.get("p99_us")),
                _fmt(e.get("max_us")),
                f"{e.get('n', 0)}/{chars}",
                _fmt(c.get("median_ms"), 1),
                span,
            ]
        )
    return rows


def render_table(document: dict) -> Table:
    """The terminal's table: names without @openssh.com and never cut (at 100 columns "aes128-c…" was aes128-cbc
    or aes128-ctr), the connect span in whole ms, and the link column only where the run had several links (the
    title names a single one)."""
    rows = _rows(document)
    links = {cells[1] for cells in rows}
    shown = [i for i, (name, _) in enumerate(COLUMNS) if not (name == "link" and len(links) <= 1)]
    title = _title(document) + (f" over {next(iter(links))}" if len(links) == 1 else "")
    table = Table(title=title)
    for i in shown:
        name, numeric = COLUMNS[i]
        table.add_column(name, justify="right" if numeric else "left", no_wrap=name in ("cipher", "link"))
    span = COLUMNS.index(("connect min-max ms", True))
    echoed_at = COLUMNS.index(("echoed", True))
    for cells in rows:
        cells = [*cells]
        cells[span] = _whole_ms_span(cells[span])
        echoed, _, sent = cells[echoed_at].partition("/")
        cells[echoed_at] = echoed if echoed == sent else cells[echoed_at]  # "1000", or "998/1000" where some were lost
        first = Text(cells[0].removesuffix(" (failed)").replace("@openssh.com", ""))
        if cells[0].endswith(" (failed)"):
            first.append(" (failed)", style="red")
        table.add_row(first, *(cells[i] for i in shown[1:]))
    return table


def conclusion_lines(document: dict) -> list[str]:
    """Under the table, one line per link: the ciphers' echo medians as a range and how far apart they are (does
    the cipher matter for typing here?), the link's round trip as a share of the lowest where the link has a
    delay, and the connect medians' range. Ranges only: the ciphers were measured one after the other, so a
    ranking of medians 10-80 µs apart would be the machine's moment as much as the cipher's."""
    by_link: dict[str, list[dict]] = {}
    for row in document.get("results") or []:
        echo = (row.get("echo") or {}).get("median_us")
        if isinstance(echo, (int, float)) and not isinstance(echo, bool) and not row.get("error"):
            by_link.setdefault(str(row.get("link")), []).append(row)
    lines = []
    for link, rows in by_link.items():
        echoes = [float(r["echo"]["median_us"]) for r in rows]
        low, high = min(echoes), max(echoes)
        text = f"{link}: echo {low:,.0f}-{high:,.0f} µs median" if high > low else f"{link}: echo {low:,.0f} µs median"
        if len(rows) > 1:
            text += f" over {len(rows)} ciphers, {high - low:,.0f} µs ({(high - low) / 1000:.2f} ms) apart"
        rtt = rows[0].get("link_rtt_s")
        if isinstance(rtt, (int, float)) and rtt > 0 and low > 0:
            text += f"; the link's round trip, {rtt * 1e6:,.0f} µs, is {min(rtt * 1e6 / low, 1.0):.1%} of the lowest"
        connects = [float(c) for r in rows if isinstance(c := (r.get("connect") or {}).get("median_ms"), (int, float))]
        if connects:
            fastest, slowest = f"{min(connects):.0f}", f"{max(connects):.0f}"
            text += f"; connect {fastest if fastest == slowest else f'{fastest}-{slowest}'} ms median"
        lines.append(text)
    return lines


def _whole_ms_span(span: str) -> str:
    """'208.6-240.1' -> '209-240' (the median keeps its tenth)."""
    low, sep, high = span.partition("-")
    try:
        return f"{float(low.replace(',', '')):.0f}-{float(high.replace(',', '')):.0f}" if sep else span
    except ValueError:
        return span


def _status_line(document: dict) -> str | None:
    status = document.get("status", "complete")
    if status == "complete":
        return None
    return f"status: {status}" + (f" ({document['error']})" if document.get("error") else "")


def table_text(document: dict) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=TABLE_WIDTH, highlight=False, force_terminal=False)
    console.print(render_table(document))
    return buffer.getvalue()


def markdown(document: dict) -> str:
    names = [name for name, _ in COLUMNS]
    lines = [f"# {_title(document)}", ""]
    env = document.get("environment") or {}
    lines += [f"- client: {env.get('hostname') or '?'}, {env.get('client_ssh_version') or '?'}"]
    lines += [f"- server: {env.get('server_ssh_version') or '?'}"]
    if status := _status_line(document):
        lines.append(f"- {status}")
    lines += ["", "| " + " | ".join(names) + " |", "|" + "|".join("---:" if n else "---" for _, n in COLUMNS) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in _rows(document)]
    return "\n".join(lines) + "\n"


def csv_text(document: dict) -> str:
    """One row per cipher and link, every figure at full precision."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    echo_keys = ("median_us", "p90_us", "p99_us", "max_us", "n")
    connect_keys = ("median_ms", "min_ms", "max_ms", "n")
    writer.writerow(
        ["cipher", "kex", "link", "link_rtt_s"]
        + [f"echo_{k}" for k in echo_keys]
        + ["chars", "setup_s"]
        + [f"connect_{k}" for k in connect_keys]
        + ["error"]
    )
    chars = (document.get("settings") or {}).get("chars")
    for row in document.get("results") or []:
        e, c = row.get("echo") or {}, row.get("connect") or {}
        writer.writerow(
            [row.get("cipher"), row.get("kex"), row.get("link"), row.get("link_rtt_s")]
            + [e.get(k) for k in echo_keys]
            + [chars, row.get("setup_s")]
            + [c.get(k) for k in connect_keys]
            + [row.get("error")]
        )
    return buffer.getvalue()


def json_text(document: dict) -> str:
    return json.dumps({k: v for k, v in document.items() if k != "run_id"}, indent=2) + "\n"


def html(document: dict) -> str:
    title = _title(document)
    started = document.get("started_at")
    when = datetime.datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M") if started else "?"
    head = "".join(f"<th{' class=num' if n else ''}>{escape(name)}</th>" for name, n in COLUMNS)
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=num' if n else ''}>{escape(cell)}</td>" for cell, (_, n) in zip(row, COLUMNS))
        + "</tr>"
        for row in _rows(document)
    )
    env = document.get("environment") or {}
    facts = [
        ("when", when),
        ("client", f"{env.get('hostname') or '?'}, {env.get('client_ssh_version') or '?'}"),
        ("server", str(env.get("server_ssh_version") or "?")),
        ("CPU", str(env.get("cpu_model") or "?")),
    ]
    if status := _status_line(document):
        facts.append(("status", status))
    env_rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in facts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n"
        f'<table class="env" id="environment">{env_rows}</table>\n'
        f'<div class="scroll"><table id="latency"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>\n'
        "<p>Each keystroke is one byte written to a remote <code>cat</code> in a raw-mode pty and timed until it "
        "comes back (sshping's echo test); connect is the wall time of <code>ssh ... true</code>.</p>\n"
        "</body></html>\n"
    )


RENDERERS = {"table": table_text, "markdown": markdown, "csv": csv_text, "json": json_text, "html": html}


def render(document: dict, name: str) -> str:
    return RENDERERS[name](document)
