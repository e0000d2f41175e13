"""A fleet run's stored results on the command line: `compare --by host` (or `--fleet`, `--fleet --pairs`: one
column per host or pair) and `recommend --fleet` (one config for every host, by the slowest host's speed). The
commands are `compare`'s (cli/store.py) and `recommend`'s (cli/security.py); `sshbench fleet` itself, which
stores those runs, is cli/fleet.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sshbench.answers.compare import compare_hosts, host_header_lines
from sshbench.cli.common import check_writable
from sshbench.errors import UsageError
from sshbench.recommend.config import POLICIES, POLICY_ORDER, sshd_syntax_check
from sshbench.recommend.fleet import build_fleet
from sshbench.store import fleets, open_store


def _load_hosts(args: argparse.Namespace, err: Console) -> tuple[list, list[str]]:
    """The runs to put side by side and their column labels: a fleet run's hosts (or, with --pairs, its
    pairs), or the given runs."""
    if args.pairs and not args.fleet:
        raise UsageError("--pairs compares a fleet run's pairs: give --fleet FLEET")
    with open_store(args.db, read_only=True) as store:
        if args.fleet:
            if args.runs:
                raise UsageError("give either --fleet or run ids, not both")
            fleet = fleets.load_fleet(store, args.fleet)
            stored = fleets.fleet_runs(store, fleet.id, pairs=args.pairs)
            if not stored:
                raise UsageError(f"fleet run {fleet.id} has no stored {'pair' if args.pairs else 'host'} results")
            other = fleets.fleet_runs(store, fleet.id, pairs=True) if not args.pairs else {}
            if other:
                # a pair's speed is its network's and two machines' (not one host's CPU): a table of its own
                names = ", ".join(f"{label} (run {run_id})" for label, run_id in other.items())
                err.print(
                    f"pairs of fleet run {fleet.id}, not in this table: {names}; --pairs compares them",
                    markup=False,
                    highlight=False,
                )
            loaded = {label: store.load_result(run_id) for label, run_id in stored.items()}
            # a run that measured nothing (a pair whose login failed) would be a column of '-'
            empty = [label for label, result in loaded.items() if not any(t.valid for t in result.trials)]
            if empty:
                err.print(f"left out (nothing measured): {', '.join(empty)}", markup=False, highlight=False)
            kept = {label: result for label, result in loaded.items() if label not in empty}
            if not kept:
                raise UsageError(f"fleet run {fleet.id}: no stored run measured anything")
            return list(kept.values()), list(kept)
        if len(set(args.runs)) < 1:
            raise UsageError("compare --by host needs runs (or --fleet FLEET)")
        ids = list(dict.fromkeys(store.resolve(ref) for ref in args.runs))
        listed = {r.id: r for r in store.list_runs()}
        results = [store.load_result(i) for i in ids]
    labels = [listed[i].label or listed[i].hostname or f"run {i}" for i in ids]
    # two runs of one machine: their labels must still tell the columns apart
    labels = [f"{label} (run {i})" if labels.count(label) > 1 else label for label, i in zip(labels, ids)]
    return results, labels


def cmd_compare_hosts(args: argparse.Namespace, out: Console, err: Console) -> int:
    check_writable(args.chart)
    if args.chart and not args.chart.endswith((".svg", ".png")):
        raise UsageError(f"--chart {args.chart}: name an .svg or .png file")
    results, labels = _load_hosts(args, err)
    comparison = compare_hosts(results, labels)
    for line in host_header_lines(comparison):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    table = Table(
        title=(
            "MiB/s per pair (source->target, over their network): median [95% CI]; ordered by the slowest pair"
            if getattr(args, "pairs", False)
            else "MiB/s per host: median [95% CI]; ordered by the slowest host (what a shared policy gets everywhere)"
        ),
        title_justify="left",
    )
    table.add_column("combination")
    for host in comparison.hosts:
        table.add_column(host.label, justify="right")
    table.add_column("slowest", justify="right")
    for row in comparison.rows + comparison.partial:
        cells = [
            "-"
            if c is None
            else f"{c.median_mib_s:.1f}" + (f" [{c.ci95_mib_s[0]:.0f}-{c.ci95_mib_s[1]:.0f}]" if c.ci95_mib_s else "")
            for c in row.cells
        ]
        slowest = "-" if row.slowest is None else f"{row.slowest:.1f}"
        table.add_row(Text(row.label), *cells, slowest)
    out.print(table)
    if comparison.partial:
        out.print(
            f"{len(comparison.partial)} combinations were not measured on every host ('-'): not ordered",
            markup=False,
            highlight=False,
        )
    if args.chart:
        from sshbench.report.hosts_chart import write_hosts_chart  # matplotlib: loaded for a chart only

        write_hosts_chart(comparison, Path(args.chart))
        err.print(f"sshbench: wrote {args.chart}", markup=False, highlight=False)
    return 0


def cmd_recommend_fleet(args: argparse.Namespace, out: Console, err: Console) -> int:
    """`sshbench recommend --fleet FLEET`: one set of lines for every host, by the slowest host's speed."""
    if args.policy not in POLICIES:
        raise UsageError(f"unknown policy {args.policy!r}; choose one of: {', '.join(POLICY_ORDER)}")
    if args.for_ not in ("client", "server"):
        raise UsageError(f"--for must be client or server (got {args.for_!r})")
    if args.from_json or args.run != "latest":
        raise UsageError("--fleet takes its runs from the fleet run: give no RUN or --from-json")
    with open_store(args.db, read_only=True) as store:
        fleet = fleets.load_fleet(store, args.fleet)
        runs = {host: store.load_result(run_id) for host, run_id in fleets.fleet_runs(store, fleet.id).items()}
    result = build_fleet(fleet.id, runs, args.policy, args.for_, args.host)
    if args.for_ == "server":
        sshd_syntax_check(result.rec, args.sshd)  # this machine's sshd -t: the lines are well-formed
    out.file.write(result.render())
    out.file.flush()
    for warning in result.rec.warnings:
        err.print(f"sshbench: warning: {warning}", markup=False, highlight=False)
    first = result.rec.ciphers[0].name
    table = Table(
        title=f"What each host gives up against its own best (same policy) with the fleet's first cipher, {first}",
        title_justify="left",
    )
    for column in ("host", "its best", "MiB/s", "with the fleet's", "loss"):
        table.add_column(column, justify="left" if column in ("host", "its best") else "right", no_wrap=True)
    for loss in sorted(result.losses, key=lambda item: item.loss or 0.0):
        table.add_row(
            loss.host,
            loss.own_best,
            "-" if loss.own_best_mib_s is None else f"{loss.own_best_mib_s:.0f}",
            "-" if loss.fleet_choice_mib_s is None else f"{loss.fleet_choice_mib_s:.0f}",
            "-" if loss.loss is None else f"{loss.loss:.0%}",
        )
    err.print(table)
    for line in result.not_everywhere:
        err.print(f"left out: {line}", markup=False, highlight=False)
    skipped = [h for h, host in fleet.hosts.items() if host.status != "ok"]
    if skipped:
        err.print(f"not in this fleet's results: {', '.join(skipped)}", markup=False, highlight=False)
    if fleet.pairs:
        err.print(
            f"not counted: the pairs {', '.join(fleet.pairs)} (a pair's speed is its network's and two machines', "
            "not one host's CPU; compare them with compare --fleet --pairs)",
            markup=False,
            highlight=False,
        )
    return 0
