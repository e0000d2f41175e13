"""The one report model (report/model.py): every format shows the same rows, the same columns that tell them
apart and the same text for a figure, from the same cell functions (report/cells.py)."""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from html.parser import HTMLParser

import pytest
from rich.console import Console

from fakes import MadeUpRates, run_from_plan
from sshbench.measure.plan import schedule
from sshbench.model.summary import Summary
from sshbench.report import cells, compact, markdown, model, table
from sshbench.report.formats import FORMATS
from sshbench.results import AXES, IMPLICIT_MAC, Combination, RunResult

BASE = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256")
OTHER = Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256")


def _run(combos: list[Combination]) -> RunResult:
    ciphers = dict.fromkeys(c.cipher for c in combos)
    rates = MadeUpRates({cipher: 300.0 + 200 * i for i, cipher in enumerate(ciphers)})
    return run_from_plan(schedule(combos, [], 3, 0, calibrate=False), combos, rates)


def _swept(axis: str) -> list[Combination]:
    """Two ciphers, each with two values of `axis`."""
    one, other = {"compression": ("none", "zlib"), "streams": (1, 2), "link": ("loopback", "lan1g")}.get(
        axis, ("one", "other")
    )
    return [dataclasses.replace(c, **{axis: v}) for c in (BASE, OTHER) for v in (one, other)]


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.inside = False
        self.cell: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.inside = ("id", "results") in attrs
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if self.inside and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None
        elif tag == "table":
            self.inside = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def _markdown_rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("| #")]
    start = text.splitlines().index(lines[0])
    body = []
    for line in text.splitlines()[start:]:
        if not line.startswith("|"):
            break
        body.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return [body[0], *body[2:]]  # the header, then the rows (the alignment line left out)


def _html_rows(text: str) -> list[list[str]]:
    reader = _Cells()
    reader.feed(text)
    return reader.rows


@pytest.mark.parametrize("axis", [a.name for a in AXES if a.setup and a.name != "payload"])
def test_a_swept_setup_axis_is_one_column_with_the_same_header_and_cells_everywhere(axis: str) -> None:
    result = _run(_swept(axis))
    report = model.build(result)
    setup = next(c for c in report.identity_columns() if c.key == "setup")
    assert setup.title == axis
    expected = [r.combination.setup_label([axis]) for r in report.rows]
    assert len(set(expected)) == 2
    for rows in (_markdown_rows(markdown.render(result)), _html_rows(FORMATS["html"].render(result))):
        header, *body = rows
        assert [r[header.index(axis)] for r in body] == expected
    console = Console(width=200, record=True)
    console.print(compact.results_table(result, 200))
    lines = console.export_text().splitlines()[1:]  # the CPU column's header takes two lines
    assert axis in lines[0].split()
    assert [line.split()[lines[0].split().index(axis)] for line in lines[1:] if line.strip()] == [
        e.split()[0] for e in expected
    ]


def test_a_figure_reads_the_same_in_every_format() -> None:
    result = _run([BASE, OTHER])
    report = model.build(result)
    rates = [cells.rate(r.summary) for r in report.rows]
    ratios = [cells.ratio(r.summary) for r in report.rows]
    assert all("±" in rate for rate in rates) and ratios[0] == "1.00" and "(" in ratios[1]
    for rows in (_markdown_rows(markdown.render(result)), _html_rows(FORMATS["html"].render(result))):
        header, *body = rows
        assert [r[header.index("MiB/s ± 95% CI")] for r in body] == rates
        assert [r[header.index("x fastest (95% CI)")] for r in body] == ratios
    console = Console(width=300, record=True)
    console.print(table.results_table(result))
    wide = console.export_text()
    assert all(rate in wide and ratio in wide for rate, ratio in zip(rates, ratios, strict=True))
    # CSV: the JSON summary of the same rows, in the same order
    found = list(csv.DictReader(io.StringIO(FORMATS["csv"].render(result))))
    assert [(r["cipher"], float(r["median_mib_s"])) for r in found] == [
        (r.combination.cipher, r.summary.median_mib_s) for r in report.rows
    ]


def _summary(**figures) -> Summary:
    base = dict(
        combination=BASE,
        valid_trials=3,
        invalid_trials=0,
        payload_bytes=1,
        median_mib_s=812.34,
        min_mib_s=None,
        max_mib_s=None,
        q1_mib_s=None,
        q3_mib_s=None,
        iqr_mib_s=None,
        cv=None,
        relative_to_fastest=None,
        client_cpu_s_per_gib=None,
        server_cpu_s_per_gib=None,
        median_data_s=None,
        median_wall_s=None,
        wide_spread=False,
    )
    return Summary(**{**base, **figures})


def test_cells() -> None:
    ci = _summary(ci95_mib_s=[790.0, 830.0], ci_coverage=0.75)
    assert cells.rate(ci) == "812.3 ±20~" and cells.rate(ci, compact=True) == "812 ±20~"
    assert cells.rate(_summary(ci95_mib_s=[810.0, 814.0], ci_coverage=0.96)) == "812.3 ±2.0"
    assert cells.rate(_summary(median_mib_s=None)) == "-"
    slower = _summary(relative_to_fastest=1.69, relative_to_fastest_ci95=[1.62, 1.75])
    assert [cells.ratio(slower, f) for f in ("full", "compact", "bare")] == ["1.69 (1.62-1.75)", "1.69 ±4%", "1.69"]
    assert cells.ratio(_summary(relative_to_fastest=1.0, relative_to_fastest_ci95=[1.0, 1.0])) == "1.00"
    assert cells.ratio(_summary(relative_to_fastest=123.4, relative_to_fastest_ci95=[99.0, 150.0])) == "123 (99.0-150)"
    assert cells.cv(_summary(cv=0.31), mark=True) == "31% !" and cells.cv(_summary(cv=0.05), mark=True) == "5%"
    assert cells.mac(IMPLICIT_MAC) == "(implicit)" and cells.mac(IMPLICIT_MAC, compact=True) == "(AEAD)"
    assert cells.mac("hmac-sha2-256-etm@openssh.com", compact=True) == "hmac-sha2-256-etm"
    assert cells.build("OpenSSH_10.0p2") == "10.0p2" and cells.build("") == "-"
    assert cells.cpu_total(_summary(client_cpu_s_per_gib=1.0, server_cpu_s_per_gib=0.25)) == "1.25"


def test_the_lines_under_the_table_name_each_row_with_its_setup_where_the_run_swept_one():
    """Two tools, one cipher: the scp row's median reads above the pipe row ranked before it (one slow scp round
    puts it behind, paired). The line that says so names each row with its tool, not "aes128-gcm" twice."""

    class _ByTool(MadeUpRates):
        def __call__(self, combo: Combination, repetition: int) -> float:
            return {"pipe": (100.0, 100.0, 100.0), "scp": (101.0, 101.0, 50.0)}[combo.tool][repetition]

    combos = [dataclasses.replace(BASE, tool=tool) for tool in ("pipe", "scp")]
    run = run_from_plan(schedule(combos, [], 3, 0, calibrate=False), combos, _ByTool())
    lines = table.decision_lines(run, wide=True)
    order = next(line for line in lines if line.startswith("order:"))
    assert "aes128-gcm (scp)'s higher median sits below aes128-gcm (pipe)'s" in order
    assert any(line.startswith("aes128-gcm (pipe) vs aes128-gcm (scp): undecided") for line in lines)


def test_a_swept_stream_count_is_named_once():
    from sshbench.naming import shown_name

    two = dataclasses.replace(BASE, streams=2)
    assert shown_name(two, ["streams"]) == "aes128-gcm (-P 2)"  # was "aes128-gcm -P 2 (-P 2)"
    assert shown_name(two, []) == "aes128-gcm -P 2"  # not swept: the label says it
    assert shown_name(dataclasses.replace(two, tool="scp"), ["tool", "streams"]) == "aes128-gcm (scp/-P 2)"


def test_chart_labels_name_a_swept_stream_count_once():
    from sshbench.report import charts

    combos = [dataclasses.replace(BASE, streams=n) for n in (1, 2)]
    label = charts._labeller(combos)
    assert [label(c) for c in combos] == ["aes128-gcm@openssh.com [-P 1]", "aes128-gcm@openssh.com [-P 2]"]
