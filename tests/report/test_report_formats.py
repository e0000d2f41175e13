"""Every report format shows the same numbers as the store; export/import round-trips; bad output paths
and corrupted imports get one line and leave the store alone."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import run_cli, sshbench_argv
from fakes import constructed_run
from sshbench.measure import steady
from sshbench.model import summary
from sshbench.report import charts, html
from sshbench.store import open_store


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One real run on the private sshd, stored in its own database, plus its `run --json` file."""
    base = tmp_path_factory.mktemp("reports")
    env = {**os.environ, "SSHBENCH_RUNTIME_DIR": str(base / "runtime"), "SSHBENCH_DB": str(base / "results.db")}
    run_json = base / "run.json"
    done = subprocess.run(
        sshbench_argv(
            "run",
            "--ciphers",
            "aes128-ctr,aes128-gcm@openssh.com",
            "--size",
            "1M",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--no-baselines",
            "--json",
            str(run_json),
        ),
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    db = base / "results.db"
    with open_store(db) as store:
        result = store.load_result("latest")
    medians = {(s.combination.cipher, s.combination.mac): s.median_mib_s for s in summary.summaries(result)}
    assert len(medians) == 2 and all(medians.values())
    return {"db": str(db), "run_json": run_json, "medians": medians, "run_id": result.run_id, "base": base}


def _report(stored: dict, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_cli("report", *args, "--db", stored["db"])
    assert done.returncode == 0, done.stderr
    return done


def _rounded(medians: dict) -> dict:
    return {k: f"{v:.1f}" for k, v in medians.items()}


def _mac(text: str) -> str:
    return "implicit" if text == "(implicit)" else text


def test_json_is_the_same_document_as_run_json(stored):
    doc = json.loads(_report(stored, "latest", "--format", "json").stdout)
    assert doc == json.loads(stored["run_json"].read_text())


def test_csv_has_the_exact_medians(stored):
    rows = list(csv.DictReader(io.StringIO(_report(stored, "--format", "csv").stdout)))
    assert {(r["cipher"], r["mac"]): float(r["median_mib_s"]) for r in rows} == stored["medians"]
    assert {r["run_id"] for r in rows} == {str(stored["run_id"])}
    for r in rows:  # the intervals as two columns each, around the median
        assert float(r["ci95_mib_s_low"]) <= float(r["median_mib_s"]) <= float(r["ci95_mib_s_high"])
        assert r["rank"].lstrip("=").isdigit()
    assert any(r["relative_to_fastest_ci95_low"] for r in rows)


def test_markdown_has_the_environment_header_and_the_medians(stored):
    text = _report(stored, str(stored["run_id"]), "--format", "markdown").stdout
    assert "| Client CPU |" in text and "| Server SSH | OpenSSH" in text
    # the rounds run, in the terminal's words, and where each side ran (--pin, on 2+ CPUs)
    assert "| Trials | 2 rounds + 0 warm-up" in text
    placement = json.loads(stored["run_json"].read_text())["target"].get("placement")
    if placement:
        client, server = (",".join(map(str, placement[k])) for k in ("client_cpus", "server_cpus"))
        assert f"(ssh on CPU {client}, server on CPU {server})" in text
    table = [line for line in text.splitlines() if line.startswith("| #")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ") and line[2:].lstrip("=")[:1].isdigit()
    ]
    col = header.index("MiB/s ± 95% CI")  # "median ±half-width": the median is the first figure
    found = {(r[header.index("cipher")], _mac(r[header.index("MAC")])): r[col].split()[0] for r in rows}
    assert all("±" in r[col] for r in rows)
    assert found == _rounded(stored["medians"])


def test_terminal_table_has_the_medians(stored):
    text = _report(stored, "--wide").stdout
    header_line = next(line for line in text.splitlines() if "┃" in line and "MiB/s" in line)
    header = [c.strip() for c in header_line.strip("┃").split("┃")]
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│").split("│")]
        if "│" in line and len(cells) == len(header) and cells[0].lstrip("=").isdigit():
            # "median ±CI half-width": the median is the first figure
            found[(cells[header.index("cipher")], _mac(cells[header.index("MAC")]))] = cells[
                header.index("MiB/s")
            ].split()[0]
    assert found == _rounded(stored["medians"])


class _TableReader(HTMLParser):
    """The cells of <table id="results">."""

    def __init__(self) -> None:
        super().__init__()
        self.inside, self.rows, self.cell = False, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and ("id", "results") in attrs:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def test_html_is_self_contained_with_the_medians(stored, tmp_path):
    out = tmp_path / "report.html"
    _report(stored, "--format", "html", "-o", str(out))
    text = out.read_text()
    assert "http://" not in text and "https://" not in text.replace("http://www.w3.org", "")
    assert text.count('src="data:image/svg+xml;base64,') >= 3  # throughput, heatmap, cpu
    reader = _TableReader()
    reader.feed(text)
    header, *rows = reader.rows
    col = header.index("MiB/s ± 95% CI")
    found = {(r[header.index("cipher")], _mac(r[header.index("MAC")])): r[col].split()[0] for r in rows}
    assert found == _rounded(stored["medians"])
    # "How it was measured" names the clock the rates were taken on, with this run's omit
    assert f"the first {steady.OMIT_S:g} s after the data starts are left out" in text
    assert "earlier clock" not in text


def test_html_of_a_run_stored_before_the_steady_clock_says_which_clock():
    """A run whose trials were never sampled (JSON schema 1) is described as the earlier clock measured it."""
    text = html.render(constructed_run())
    assert "measured by the earlier clock" in text and "are left out" not in text


def test_charts_are_written_as_svg_and_png(stored, tmp_path):
    _report(stored, "--charts", str(tmp_path / "charts"), "-o", str(tmp_path / "t.txt"))
    names = sorted(p.name for p in (tmp_path / "charts").iterdir())
    assert names == ["cpu.png", "cpu.svg", "heatmap.png", "heatmap.svg", "throughput.png", "throughput.svg"]
    assert (tmp_path / "charts" / "throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "charts" / "throughput.svg").read_text()


def test_links_chart_only_when_the_run_has_links():
    from sshbench.model.summary import Summary
    from sshbench.results import Combination

    def make_summary(combo, median):
        return Summary(
            combination=combo,
            valid_trials=3,
            invalid_trials=0,
            payload_bytes=1,
            median_mib_s=median,
            min_mib_s=median * 0.9,
            max_mib_s=median * 1.1,
            q1_mib_s=median,
            q3_mib_s=median,
            iqr_mib_s=0.0,
            cv=0.01,
            relative_to_fastest=1.0,
            client_cpu_s_per_gib=1.0,
            server_cpu_s_per_gib=1.0,
            median_data_s=1.0,
            median_wall_s=1.0,
            wide_spread=False,
        )

    plain = [make_summary(Combination("aes128-ctr", "hmac-sha2-256", "k"), 500.0)]
    assert charts.links_chart(plain) is None  # loopback only: no link dimension, no chart
    linked = [
        make_summary(Combination("aes128-ctr", "hmac-sha2-256", "k", compression=comp, link=link), rate)
        for link, comp, rate in (
            ("wan24m", "none", 2.8),
            ("wan24m", "zlib@openssh.com", 6.5),
            ("lan1g", "none", 110.0),
            ("lan1g", "zlib@openssh.com", 36.0),
        )
    ]
    chart = charts.links_chart(linked)
    assert chart is not None and chart.png[:4] == b"\x89PNG" and "<svg" in chart.svg
    assert charts.link_mbit_s(linked[2].combination) == 1000.0
    assert charts.link_mbit_s(Combination("a", "m", "k", link="200mbit/20ms")) == 200.0


def test_export_import_round_trips_into_another_database(stored, tmp_path):
    exported = tmp_path / "export.json"
    done = run_cli("export", str(stored["run_id"]), "-o", str(exported), "--db", stored["db"])
    assert done.returncode == 0, done.stderr
    other = tmp_path / "other.db"
    imported = run_cli("import", str(exported), "--db", str(other))
    assert imported.returncode == 0, imported.stderr
    with open_store(other) as store:
        (run,) = store.list_runs()
        assert run.imported and run.status == "complete"
        result = store.load_result(run.id)
    assert {(s.combination.cipher, s.combination.mac): s.median_mib_s for s in summary.summaries(result)} == stored[
        "medians"
    ]
    again = run_cli("import", str(exported), "--db", str(other))
    assert again.returncode == 2 and "already in" in again.stderr
    # A `run --json` file imports too.
    assert run_cli("import", str(stored["run_json"]), "--db", str(tmp_path / "third.db")).returncode == 0


def _one_line(done, code: int, needle: str) -> None:
    assert done.returncode == code, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_unwritable_output_path_is_one_line(stored, tmp_path):
    for path in (tmp_path / "missing-dir" / "r.html", tmp_path):
        _one_line(run_cli("report", "--format", "html", "-o", str(path), "--db", stored["db"]), 1, "cannot write")
        _one_line(run_cli("export", "latest", "-o", str(path), "--db", stored["db"]), 1, "cannot write")
    assert not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize(
    "content,needle",
    [
        ('{"schema_version": 1, "settings": {}, "trials": [', "invalid JSON"),
        ("[1, 2, 3]", "not a JSON object"),
        (
            '{"schema_version": 1, "settings": {}, "environment": {}, "trials": "x", "started_at": 1, "status": "complete"}',
            "'trials'",
        ),
        (
            '{"schema_version": 1, "settings": {}, "environment": {}, "trials": [{"kind": "transfer"}], "started_at": 1,'
            ' "status": "complete"}',
            "trial 0 lacks",
        ),
        ('{"schema_version": 99, "settings": {}}', "newer sshbench"),
        ("\x00\x01\x02 binary", "not an sshbench run export"),
    ],
)
def test_corrupted_import_is_refused_and_the_store_is_unchanged(stored, tmp_path, content, needle):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with open_store(stored["db"]) as store:
        before = [(r.id, r.measured_trials, r.status) for r in store.list_runs()]
    _one_line(run_cli("import", str(bad), "--db", stored["db"]), 2, needle)
    with open_store(stored["db"]) as store:
        assert [(r.id, r.measured_trials, r.status) for r in store.list_runs()] == before


def test_runs_lists_one_line_per_run(stored, monkeypatch):
    done = run_cli("runs", "--db", stored["db"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["id", "date", "host"]
    assert len(lines) == 2 and "complete" in lines[1] and "2 ciphers" in lines[1]
    # What was swept comes last (only its end folds in a narrow terminal); at 100 columns the other cells shrink.
    monkeypatch.setenv("COLUMNS", "100")
    narrow = run_cli("runs", "--db", stored["db"]).stdout.strip().splitlines()
    assert narrow[0].split()[-1] == "swept" and narrow[1].split("  ")[-1].startswith("2 ciphers"), narrow
    assert len(narrow[1]) <= max(100, len(lines[1])) and " Debian" not in narrow[1], narrow


def test_report_of_empty_store_is_one_line(tmp_path):
    _one_line(run_cli("report", "--db", str(tmp_path / "missing.db")), 2, "does not exist")
    assert not Path(tmp_path / "missing.db").exists()  # a read-only command creates nothing
    open_store(tmp_path / "empty.db").close()
    _one_line(run_cli("report", "--db", str(tmp_path / "empty.db")), 2, "no runs")
