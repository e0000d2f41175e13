"""`sshbench history [RUN]`: one set-up's stored runs over time (RUN's set-up, the same one `check --against` takes
its scatter from: store/setups.py), each run's rate with its interval, and where it changed (model/history.py), as
lines, Markdown, JSON and an HTML page with the chart (report/history.py). Reads the store only."""

from __future__ import annotations

import argparse

from rich.console import Console

from sshbench.cli.common import add_db_option, check_writable, write_output
from sshbench.errors import UsageError
from sshbench.model import history as model
from sshbench.report import history as report
from sshbench.results import RunResult
from sshbench.store import open_store, setups

DEFAULT_LAST = 50  # the newest runs of the set-up shown: a nightly job's two months


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "history",
        help="one set-up's stored runs over time, and where its rate changed (change points)",
        description="The stored runs of RUN's set-up (same host, rows, ssh, sshd, server, link, tool, direction,\n"
        "payload, sink, compression and CPU quota: what `check --against` compares with), oldest first: each\n"
        "run's median MiB/s with its interval, the change points found in them (ruptures; docs/history.md) and\n"
        "what the store says differs between the runs either side of each.",
        epilog="examples:\n  sshbench history                     the latest run's set-up\n"
        "  sshbench history 12 --html h.html    run 12's set-up, with the chart",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run", nargs="?", default="latest", help="a stored run whose set-up to show (default: latest)")
    p.add_argument(
        "--last", type=int, default=DEFAULT_LAST, metavar="N", help=f"the newest N runs (default {DEFAULT_LAST})"
    )
    p.add_argument("--markdown", metavar="FILE", help="also write the history as Markdown")
    p.add_argument("--json", metavar="FILE", help="also write the history as JSON")
    p.add_argument("--html", metavar="FILE", help="also write an HTML page: the chart with its change points marked")
    add_db_option(p)
    p.set_defaults(handler=cmd_history)


def _setup_words(run: RunResult) -> report.SetUp:
    s = run.settings
    env = run.environment
    target = env.get("target") or run.target.get("label") or "?"
    moved = f"{s.tool} {s.direction}, {s.payload} to {s.sink}, link {s.link}, compression {s.compression}"
    quota = f", server CPU {s.server_cpu:g}" if s.server_cpu is not None else ""
    return report.SetUp(env.get("hostname") or "?", f"{target}; {moved}{quota}", run.run_id)


def cmd_history(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.last < 2:
        raise UsageError(f"--last {args.last}: a history needs at least 2 runs")
    for path in (args.markdown, args.json, args.html):
        check_writable(path)
    with open_store(args.db, read_only=True) as store:
        reference = store.load_result(args.run)  # no such run, a latency run: one line, exit 2
        if reference.status != "complete":
            raise UsageError(f"run {reference.run_id} is {reference.status}: a history is of complete runs")
        runs = setups.runs_of_setup(store, reference, keep=args.last)
    setup = _setup_words(reference)
    if len(runs) < 2:
        raise UsageError(
            f"run {reference.run_id} is the only stored run of its set-up on {setup.host} ({setup.what}): "
            "a history needs two"
        )
    found = model.build(runs)
    for line in report.lines(found, setup):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    outputs = [
        (args.markdown, lambda: report.markdown(found, setup)),
        (args.json, lambda: report.to_json(found, setup)),
        (args.html, lambda: report.page(found, setup)),
    ]
    for path, render in outputs:
        if path:
            write_output(render(), path, out)
            err.print(f"sshbench: wrote {path}", highlight=False, markup=False)
    return 0
