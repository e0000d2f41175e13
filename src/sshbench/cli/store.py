"""The results store's commands: `runs`, `report`, `compare`, `export` and `import`."""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sshbench.answers.compare import Comparison, clock_lines, compare_latency, compare_runs, header_lines, only_in_lines
from sshbench.cli.common import add_db_option, add_output_options, check_writable, check_writable_dir, write_output
from sshbench.cli.fleet_results import cmd_compare_hosts
from sshbench.errors import RunError, UsageError
from sshbench.report import charts, formats, latency
from sshbench.report.table import print_report
from sshbench.store import latency_runs, open_store, read_document
from sshbench.store.schema import LATENCY, THROUGHPUT
from sshbench.store.sqlite import default_path


def add_commands(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser("runs", help="list the runs in the results database")
    runs.set_defaults(handler=cmd_runs)
    add_db_option(runs)

    report = sub.add_parser("report", help="a stored run's results as a table, Markdown, CSV, JSON or HTML")
    report.set_defaults(handler=cmd_report)
    report.add_argument("run", nargs="?", default="latest", help="run id or 'latest' (default)")
    report.add_argument("--format", choices=list(formats.FORMATS), default="table")
    report.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    report.add_argument("--charts", metavar="DIR", help="also write the charts as SVG and PNG into DIR")
    add_output_options(report)
    add_db_option(report)

    compare = sub.add_parser("compare", help="the same combinations side by side across stored runs")
    compare.set_defaults(handler=cmd_compare)
    compare.add_argument("runs", nargs="*", metavar="RUN", help="run ids (or 'latest'); the first is the baseline")
    compare.add_argument(
        "--by", choices=("run", "host"), default="run", help="host: one column per host, medians with 95%% CIs"
    )
    compare.add_argument("--fleet", metavar="FLEET", help="the hosts of a fleet run (number or 'latest'): --by host")
    compare.add_argument(
        "--pairs", action="store_true", help="with --fleet: its host-to-host pairs (A->B) instead of its hosts"
    )
    compare.add_argument("--chart", metavar="FILE", help="--by host: also write the chart (.svg or .png)")
    add_db_option(compare)

    export = sub.add_parser("export", help="a stored run (or latency run) as JSON (to merge machines with `import`)")
    export.set_defaults(handler=cmd_export)
    export.add_argument("run", help="run id or 'latest'")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_db_option(export)

    imp = sub.add_parser(
        "import", help="add a run exported from another machine (or a `run --json` or `latency --json` file)"
    )
    imp.set_defaults(handler=cmd_import)
    imp.add_argument("file", help="the JSON file")
    add_db_option(imp)


# --- the subcommands ------------------------------------------------------------------------------


def _date(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def cmd_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    if not args.db and not default_path().exists():  # nothing measured yet (an explicit --db must exist)
        err.print(f"sshbench: no runs in {default_path()} yet", highlight=False, markup=False)
        return 0
    with open_store(args.db, read_only=True) as store:
        runs = store.list_runs()
        if not runs:
            err.print(f"sshbench: no runs in {store.path} yet", highlight=False, markup=False)
            return 0
    # What was swept, the longest cell, comes last: where a line is wider than the terminal, only its end folds.
    header = ["id", "date", "host", "target", "trials", "client ssh", "status", "swept"]
    rows = [
        [
            str(r.id),
            _date(r.started_at),
            # a fleet run's host by its inventory name (machines may share a hostname), and its fleet
            f"{r.label} (fleet {r.fleet_id})" if r.label else (r.hostname or "-"),
            r.target or "-",
            str(r.measured_trials),
            r.client_ssh_version or "-",
            r.status + (" (imported)" if r.imported else ""),
            r.swept,
        ]
        for r in runs
    ]
    # Plain aligned columns, never wrapped or cut: one line per run, easy to grep. Where the lines would not fit the
    # console (a 100-column terminal: 200-column lines, each folded in two), the long cells give up their detail
    # first: the target's namespace and the client's distribution suffix.
    if _line_width(header, rows) > out.width:
        for row in rows:
            row[3] = row[3].split(" in namespace ")[0]  # private sshd 10.254.0.2:37763 in namespace sshbench-...
            row[5] = row[5].split(" ")[0]  # OpenSSH_9.2p1 Debian-2+deb12u10
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        line = "  ".join(
            cell.rjust(w) if i in (0, 4) else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))
        )
        out.print(line.rstrip(), markup=False, highlight=False, soft_wrap=True)
    return 0


def _line_width(header: list[str], rows: list[list[str]]) -> int:
    return sum(max(len(row[i]) for row in [header, *rows]) for i in range(len(header))) + 2 * (len(header) - 1)


def _report_latency(args: argparse.Namespace, document: dict, out: Console, err: Console) -> int:
    """A latency run (`sshbench latency`) in the format asked for."""
    if args.charts:
        raise UsageError(f"--charts: run {document['run_id']} is a latency run, which has no charts")
    if document["status"] != "complete":
        state = "is still running" if document["status"] == "running" else document["status"]
        line = f"run {document['run_id']} {state}: {document.get('error') or 'no error recorded'}"
        if args.format == "table" and args.output is None:
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            err.print(f"sshbench: {line}", markup=False, highlight=False)
    if args.format == "table" and args.output is None:
        out.print(latency.render_table(document))
        for line in latency.conclusion_lines(document):
            out.print(line, markup=False, highlight=False)
    else:
        write_output(latency.render(document, args.format), args.output, out)
        if args.output:
            err.print(f"sshbench: wrote {args.output}", highlight=False, markup=False)
    return 0


def cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    check_writable(args.output)
    check_writable_dir(args.charts)
    with open_store(args.db, read_only=True) as store:
        run_id = store.resolve(args.run)  # 'latest': the latest run of either kind
        if store.run_kind(run_id) == LATENCY:
            document = latency_runs.load(store, run_id)
            return _report_latency(args, document, out, err)
        result = store.load_result(run_id)
    if result.status != "complete":  # a failed or interrupted run says so first
        measured = sum(1 for t in result.trials if not t.warmup)
        state = "is still running" if result.status == "running" else result.status
        why = result.error or "no error recorded"
        status = f"run {result.run_id} {state}: {why} ({measured} measured trials)"
        if args.format == "table" and args.output is None:
            out.print(status, markup=False, highlight=False, soft_wrap=True)
        else:
            err.print(f"sshbench: {status}", markup=False, highlight=False)
    if args.format == "table" and args.output is None:
        print_report(result, out, wide=args.wide, quiet=args.quiet)
    elif args.format == "table":
        write_output(formats.table_text(result, wide=args.wide, quiet=args.quiet), args.output, out)
    else:
        write_output(formats.render(result, args.format), args.output, out)
    if args.output:
        err.print(f"sshbench: wrote {args.output}", highlight=False, markup=False)
    if args.charts:
        try:
            Path(args.charts).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RunError(f"cannot create {args.charts}: {e.strerror}") from None
        written = charts.write_charts(result, Path(args.charts))
        err.print(f"sshbench: wrote {len(written)} chart files into {args.charts}", highlight=False, markup=False)
    return 0


def cmd_compare(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.by == "host" or args.fleet:
        return cmd_compare_hosts(args, out, err)
    if args.chart:
        raise UsageError("--chart draws the across-hosts chart: give --by host or --fleet")
    if args.pairs:
        raise UsageError("--pairs compares a fleet run's pairs: give --fleet FLEET")
    if len(set(args.runs)) < 2:  # before the store: the command line alone says so
        raise UsageError("compare needs at least two different runs")
    with open_store(args.db, read_only=True) as store:
        # 'latest' is the latest run of the kind the runs named by number are (throughput when none is)
        named = [store.resolve(ref) for ref in args.runs if ref.strip().lower() != "latest"]
        kinds = {store.run_kind(i) for i in named} or {THROUGHPUT}
        if len(kinds) > 1:
            raise UsageError("compare puts runs of one kind side by side: these are latency and throughput runs")
        kind = kinds.pop()
        ids = [store.resolve(ref, kind=kind) for ref in args.runs]
        if len(set(ids)) < 2:
            raise UsageError("compare needs at least two different runs")
        if kind == LATENCY:
            documents = [latency_runs.load(store, i) for i in ids]
        else:
            results = [store.load_result(i) for i in ids]
    if kind == LATENCY:
        return _compare_latency(documents, [str(i) for i in ids], out)
    comparison = compare_runs(results)
    for line in [*header_lines(comparison), *clock_lines(comparison)]:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    out.print(compare_table(comparison))
    for line in only_in_lines(comparison):
        out.print(line, markup=False, highlight=False)
    return 0


def _compare_latency(documents: list[dict], labels: list[str], out: Console) -> int:
    comparison = compare_latency(documents, labels)
    for line in header_lines(comparison):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    base = labels[0]
    table = Table(
        title=f"Keystroke echo round trip, median µs per run; ratio = run / run {base} of every keystroke's "
        "round trip (95% CI; faster = lower latency)",
        title_justify="left",
    )
    table.add_column("cipher")
    for label in labels:
        table.add_column(f"run {label}", justify="right")
    for label in labels[1:]:
        table.add_column(f"{label} / {base}", justify="right")
    for label in labels:
        table.add_column(f"connect ms run {label}", justify="right")
    for row in comparison.rows:
        medians = ["-" if m is None else f"{m:,.0f}" for m in row.echo_median_us]
        ratios = ["-" if r is None else _ratio_cell(r) for r in row.ratios]
        connects = ["-" if m is None else f"{m:.1f}" for m in row.connect_median_ms]
        table.add_row(Text(row.label), *medians, *ratios, *connects)
    out.print(table)
    for label, rows in comparison.only_in.items():
        out.print(f"only in run {label}: {', '.join(rows)}", markup=False, highlight=False)
    return 0


def compare_table(comparison: Comparison) -> Table:
    table = Table(
        title=f"MiB/s (median) per run; ratio = run / run {comparison.run_labels[0]} "
        "(95% CI; faster/slower/tied/undecided)",
        title_justify="left",
    )
    table.add_column("combination")
    for label in comparison.run_labels:
        table.add_column(f"run {label}", justify="right")
    for label in comparison.run_labels[1:]:
        table.add_column(f"{label} / {comparison.run_labels[0]}", justify="right")
    for row in comparison.rows:
        medians = ["-" if m is None else f"{m:.1f}" for m in row.medians]
        ratios = [
            "clocks differ" if differ else "-" if r is None else _ratio_cell(r)
            for r, differ in zip(row.ratios, row.clocks_differ or [False] * len(row.ratios))
        ]
        table.add_row(Text(row.label), *medians, *ratios)  # Text: '[kex]' is not rich markup
    return table


def _ratio_cell(r) -> str:
    """`0.50 (0.47-0.53) slower`; without an interval (a run with one valid trial) `1.02 (one trial)`."""
    if not r.interval_known:
        return f"{r.value:.2f} (one trial)"
    return f"{r.value:.2f} ({r.low:.2f}-{r.high:.2f}) {r.verdict}"


def cmd_export(args: argparse.Namespace, out: Console, err: Console) -> int:
    check_writable(args.output)
    with open_store(args.db, read_only=True) as store:
        run_id = store.resolve(args.run)  # 'latest': of either kind
        if store.run_kind(run_id) == LATENCY:
            doc = latency_runs.export_document(store, run_id)
        else:
            doc = store.export_document(run_id)
    write_output(json.dumps(doc, indent=2) + "\n", args.output, out)
    if args.output:
        err.print(f"sshbench: wrote {args.output}", highlight=False, markup=False)
    return 0


def cmd_import(args: argparse.Namespace, out: Console, err: Console) -> int:
    doc, name = read_document(args.file)
    with open_store(args.db) as store:
        if latency_runs.is_latency_document(doc):  # `latency --json` or the export of a latency run
            run_id = latency_runs.import_document(store, doc, name)
        else:
            run_id = store.import_document(doc, name)
        out.print(f"imported {args.file} as run {run_id} in {store.path}", markup=False, highlight=False)
    return 0
