"""A run as one self-contained HTML file: environment header, ranked table, charts, baselines and how it
was measured. Charts are inlined as base64 SVG data URIs and the CSS is inline, so the file opens
offline, can be mailed, and the page makes no network request at all."""

from __future__ import annotations

import base64
import datetime
import json
from html import escape

from sshbench import __version__
from sshbench.baselines import analysis as baseline_analysis
from sshbench.baselines import sensitivity
from sshbench.model import rate_clock
from sshbench.report import charts, conclusion, model, ranked
from sshbench.report.run_warnings import warnings
from sshbench.report.table import decision_lines
from sshbench.results import RunResult

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5rem auto; max-width: 84rem;
       padding: 0 1rem; color: #1d1d1d; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.95rem; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #e3e3e3; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.env th { font-weight: 600; white-space: nowrap; }
.scroll { overflow-x: auto; }
#results { font-size: 0.85rem; } #results th, #results td { padding: 0.2rem 0.4rem; }
#results td { white-space: nowrap; }  /* a name or a figure is never broken across lines */
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9rem; color: #555; }
.warn { color: #8a5300; }
code { background: #f4f4f4; padding: 0 0.2rem; }
/* a config line (--full: a MACs line of ~180 characters) wraps in the window; a copy still takes it as one line */
#answer pre { white-space: pre-wrap; overflow-wrap: anywhere; }
"""

HOW_MEASURED = (
    "Each trial is one real <code>ssh</code> connection with the cipher, MAC and key exchange forced on the "
    "command line and checked against what <code>ssh -v</code> says was negotiated. The payload (random, "
    "incompressible data unless the run chose another) goes through the connection to a reader on the server, "
    "which counts what arrived. {clock} Trials are interleaved round-robin (every combination once, then all "
    "again) so that a burst of load spreads over all combinations; warm-up trials are not counted. Each row "
    "shows the median of its valid trials, the min-max range and the coefficient of variation (CV); CPU is the "
    "user+system time of the client's ssh and the server's session process, per GiB moved."
)
STEADY_CLOCK_TEXT = (
    "The rate is the steady state of the data phase, what a bulk transfer gets: the client connection's TCP "
    "byte counters are sampled every 20 ms while it runs, the first {omit} after the data starts are left out "
    "(every connection's start runs slow, whatever the cipher) and the rate is taken over the rest. What the "
    "start cost is kept as a figure of its own; a trial too short for a steady part says so and is not counted "
    "beside steady ones."
)
EARLIER_CLOCK_TEXT = (
    "This run was measured by the earlier clock (an sshbench before the steady-state one): each rate is the "
    "whole data phase as the server's reader timed it, the connection's start-up included, so it reads lower "
    "than a steady-state run's."
)


def _how_measured(result: RunResult) -> str:
    """HOW_MEASURED with the clock this run's rates were taken on (docs/clock.md)."""
    if rate_clock.run_clock(result.trials) == rate_clock.EARLIER_CLOCK:
        return HOW_MEASURED.format(clock=EARLIER_CLOCK_TEXT)
    omit = rate_clock.steady_omit_s(result)  # a run stored before it recorded its omit: the 0.2 s it left out
    return HOW_MEASURED.format(clock=STEADY_CLOCK_TEXT.format(omit=f"{omit:g} s" if omit else "fraction of a second"))


def table(
    header: list[str], rows: list[list[str]], numeric: list[bool], table_id: str = "", css_class: str = ""
) -> str:
    attrs = (f' id="{table_id}"' if table_id else "") + (f' class="{css_class}"' if css_class else "")
    head = "".join(f"<th{' class=num' if n else ''}>{escape(h)}</th>" for h, n in zip(header, numeric))
    body = "".join(
        "<tr>" + "".join(f"<td{' class=num' if n else ''}>{escape(c)}</td>" for c, n in zip(row, numeric)) + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _env_table(result: RunResult) -> str:
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in ranked.environment_rows(result))
    return f'<table class="env" id="environment">{rows}</table>'


def figure(chart: charts.Chart) -> str:
    data = base64.b64encode(chart.svg.encode()).decode()
    return (
        f'<figure class="chart" id="chart-{escape(chart.name)}"><img alt="{escape(chart.title)}" '
        f'src="data:image/svg+xml;base64,{data}"><figcaption>{escape(chart.title)}</figcaption></figure>'
    )


def _baselines(baselines: dict | None) -> str:
    """Whatever baselines the run measured (raw TCP, crypto ceilings, disk), if any."""
    if not baselines or not isinstance(baselines, dict) or not baselines.get("enabled", True):
        return "<p>No baselines were measured in this run.</p>"
    rows = [
        [key, json.dumps(value, indent=None, default=str) if isinstance(value, (dict, list)) else str(value)]
        for key, value in baselines.items()
        if value not in (None, {}, []) and key != "why"
    ]
    # `run --why`: each resource's sensitivity with its 95% CI, one line per row experimented on (the
    # rounds' rates stay in the JSON)
    rows += [["why (sensitivity)", line] for line in sensitivity.summary_lines(baselines.get("why"))]
    return table(["baseline", "value"], rows, [False, False], table_id="baselines")


def render(result: RunResult) -> str:
    report = model.build(result)
    when = datetime.datetime.fromtimestamp(result.started_at).strftime("%Y-%m-%d %H:%M")
    run = f"run {result.run_id}" if result.run_id is not None else "run"
    title = f"sshbench {run} on {result.environment.get('hostname') or '?'}, {when}"
    parts = [f"<h1>{escape(title)}</h1>", conclusion.html(result), "<h2>Environment</h2>", _env_table(result)]

    parts.append("<h2>Results, fastest first</h2>")
    if report.rows:
        cols, rows = ranked.ranked(report)
        parts.append(table([c.title for c in cols], rows, [c.numeric for c in cols], table_id="results"))
        notes = "".join(f"<li>{escape(line)}</li>" for line in decision_lines(result, wide=True))
        parts.append(f'<ul class="decisions">{notes}</ul>')
    else:
        parts.append("<p>No valid transfer was measured.</p>")
    for line in warnings(result):
        parts.append(f'<p class="warn">warning: {escape(line)}</p>')

    chart_list = charts.make_charts(result)
    parts.append("<h2>Charts</h2>")
    parts += [figure(c) for c in chart_list] or ["<p>Nothing to chart.</p>"]

    if report.handshakes:
        parts.append("<h2>Connection set-up (ssh with no data)</h2>")
        header, numeric = ranked.HANDSHAKE_HEADER, [False, True, True, True, True]
        parts.append(table(header, ranked.handshake_rows(report), numeric, table_id="handshakes"))

    parts.append("<h2>Baselines</h2>")
    parts.append(_baselines(baseline_analysis.document(result)))

    parts.append("<h2>How it was measured</h2>")
    parts.append(f"<p>{_how_measured(result)}</p>")
    settings = [[k, "-" if v is None else str(v)] for k, v in result.settings_json().items()]
    parts.append(table(["setting", "value"], settings, [False, False], table_id="settings"))
    parts.append(f"<p>sshbench {escape(__version__)}; {len(result.trials)} trials stored.</p>")

    return page(title, parts)


def page(title: str, parts: list[str]) -> str:
    """A self-contained page (a run's report, `history --html`): inline CSS, charts as data: URIs."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # No network at view time: forbid every fetch except inline styles and data: images.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n<body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )
