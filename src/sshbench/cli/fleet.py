"""`sshbench fleet --inventory FILE [--pairs ...] [-- RUN OPTIONS]`: every inventory host benchmarks its own
sshd through Ansible, and with --pairs host A benchmarks host B over the network (engine:
sshbench.fleet.engine; pairs: sshbench.fleet.pairs; playbook and role: contrib/ansible/)."""

from __future__ import annotations

import argparse

from rich.console import Console

from sshbench.cli.common import add_db_option
from sshbench.errors import UsageError

# `sshbench run` options that belong to the fleet itself: each host's result comes back into this store.
FLEET_OWNED = {"json": "--json", "db": "--db", "resume": "--resume", "seeds": "--seeds"}
# Why a fleet refuses --server-cpu (before any host runs) rather than passing it on.
SERVER_CPU_REFUSED = (
    "--server-cpu cannot be given to a fleet: each host's result is its own CPU's crypto profile (what compare "
    "--by host and recommend --fleet read), which a quota on its sshd would replace by an emulated one; emulate a "
    "slow server on one machine with `sshbench run --server-cpu FRACTION`"
)


def add_commands(sub: argparse._SubParsersAction) -> None:
    fleet = sub.add_parser(
        "fleet",
        help="benchmark every host of an Ansible inventory (each its own sshd) into this store",
        description="Install sshbench on every host of an Ansible inventory (a private venv, from wheels made "
        "here: no network needed on the hosts), benchmark each host's own private sshd, and store each result "
        "here as its own run labelled with the inventory host name. Options after -- go to `sshbench run` on "
        "every host. Needs ansible-core: pip install 'sshbench[fleet]'.",
        epilog="example: sshbench fleet --inventory hosts.ini --limit web -- --ciphers 'aes*-gcm*,chacha*' --runs 3\n"
        "then: sshbench compare --fleet latest; sshbench recommend --fleet latest",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fleet.set_defaults(handler=cmd_fleet)
    fleet.add_argument("--inventory", "-i", required=True, metavar="FILE", help="the Ansible inventory")
    fleet.add_argument("--limit", "-l", metavar="PATTERN", help="only these hosts (ansible-playbook --limit)")
    fleet.add_argument(
        "--resume",
        nargs="?",
        const="auto",
        metavar="FLEET",
        help="run only the hosts whose results the fleet run (default: the newest of this inventory) lacks",
    )
    fleet.add_argument(
        "--wheelhouse",
        metavar="DIR",
        help="the dependencies' wheels for the hosts (with pip's); default: downloaded once for this "
        "machine's Python and platform and cached",
    )
    fleet.add_argument(
        "--pairs",
        metavar="A:B,...|all|all:GROUP",
        help="also host-to-host pairs: host A benchmarks host B's sshd over the network (A:B, comma-separated), "
        "every ordered pair of the hosts run (all) or of one inventory group's (all:GROUP); one pair at a time, "
        "each stored as its own run labelled A->B",
    )
    fleet.add_argument("--forks", type=int, default=10, help="hosts worked on at once (default 10)")
    fleet.add_argument(
        "--serial",
        action="store_true",
        help="benchmark one host at a time (installs stay parallel): for hosts that share hardware, such as "
        "VMs of one hypervisor",
    )
    add_db_option(fleet)
    fleet.add_argument("run_options", nargs="*", metavar="-- RUN OPTIONS", help="options for `sshbench run`")


def check_run_options(run_options: list[str], pairs: bool = False) -> None:
    """The options after -- must be a valid `sshbench run` without a HOST or the fleet's own options:
    refused here (exit 2) rather than on every host. With pairs, they must also suit a run against
    another host (A runs `sshbench run B`): no option that only a private server started here takes."""
    from sshbench.cli.common import check_common
    from sshbench.cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args(["run", *run_options])
    check_common(parser, args)
    if args.host is not None:
        raise UsageError(
            f"after --, options for `sshbench run` on each host (which benchmarks its own sshd): no HOST ({args.host})"
        )
    for dest, option in FLEET_OWNED.items():
        if getattr(args, dest, None):
            raise UsageError(f"{option} cannot be given to the hosts' runs: each result comes back into this store")
    if args.server_cpu is not None:
        raise UsageError(SERVER_CPU_REFUSED)
    if pairs:
        if args.ssh_config:
            raise UsageError(
                "--pairs: the fleet writes the pairs' --ssh-config itself (the throwaway key, known_hosts)"
            )
        from sshbench.settings import TargetSpec
        from sshbench.targets import check_spec

        if args.no_aesni:
            raise UsageError(
                "--pairs: --no-aesni masks AES-NI in a private sshd started here; a pair's sshd is its target's"
            )
        try:
            check_spec(
                TargetSpec.from_options(
                    host="B", server=args.server, link=args.link, dropbear_window=args.dropbear_window
                )
            )
        except UsageError as err:
            raise UsageError(f"--pairs (host A runs `sshbench run B` with these options): {err}") from None


def check_inventory(args: argparse.Namespace) -> list:
    """Read the inventory once (ansible-inventory) before any host runs: each host's own
    sshbench_host_run_args, and --pairs expanded over the hosts the run reaches (one line, exit 2)."""
    from sshbench.fleet import inventory, pairs

    hosts = inventory.read_inventory(args.inventory, args.limit)
    for host in hosts.hosts:
        extra = inventory.host_run_args(hosts, host)
        if not extra:
            continue  # none, or a template only Ansible resolves
        try:
            check_run_options(extra)
        except UsageError as err:
            raise UsageError(f"inventory host {host}, sshbench_host_run_args: {err}") from None
    if not args.pairs:
        return []
    return pairs.expand_pairs(args.pairs, hosts.hosts, hosts.groups, limited=bool(args.limit))


def cmd_fleet(args: argparse.Namespace, out: Console, err: Console) -> int:
    from sshbench.cleanup import signals_raise
    from sshbench.fleet.engine import FleetOptions, resolve_inventory, run_fleet
    from sshbench.fleet.playbook import find_ansible_playbook

    if args.forks < 1:
        raise UsageError(f"--forks must be at least 1 (got {args.forks})")
    check_run_options(args.run_options, pairs=bool(args.pairs))
    resolve_inventory(args.inventory)  # no such file: one line before ansible is looked for
    find_ansible_playbook()  # missing ansible: one line, before anything else
    pairs = check_inventory(args)

    def log(line: str) -> None:
        err.print(f"fleet: {line}", markup=False, highlight=False)

    options = FleetOptions(
        inventory=args.inventory,
        limit=args.limit,
        run_args=list(args.run_options),
        resume=args.resume,
        wheelhouse=args.wheelhouse,
        forks=args.forks,
        serial=args.serial,
        db=args.db,
        pairs=pairs if args.pairs else None,
    )
    with signals_raise():
        fleet, skipped = run_fleet(options, log)
    width = max([len(h) for h in [*fleet.hosts, *fleet.pairs]] + [4])
    pairs_line = f", {len(fleet.stored_pairs())} of {len(fleet.pairs)} pairs" if fleet.pairs else ""
    out.print(
        f"fleet run {fleet.id}: {len(fleet.stored_hosts())} of {len(fleet.hosts)} hosts stored{pairs_line}",
        markup=False,
    )
    entries = [*sorted(fleet.hosts.items()), *fleet.pairs.items()]
    for name, host in entries:
        run = f"run {host.run_id}" if host.run_id is not None else "-"
        note = " (stored before; skipped)" if name in skipped else (f": {host.message}" if host.message else "")
        if host.leftover:
            note += f"; may still hold {host.leftover} (removed when a later fleet reaches {name})"
        line = f"  {name.ljust(width)}  {host.status:<14} {run:<8}{note}"
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    done = all(h.status == "ok" for h in [*fleet.hosts.values(), *fleet.pairs.values()])
    return 0 if done and fleet.hosts else 1


def _load_hosts(args: argparse.Namespace, err: Console) -> tuple[list, list[str]]:
    """The runs to put side by side and their column labels: a fleet run's hosts (or, with --pairs, its
    pairs), or the given runs."""
    from sshbench.store import fleets, open_store

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
    from rich.table import Table
    from rich.text import Text

    from sshbench.cli.common import check_writable
    from sshbench.compare import compare_hosts, host_header_lines

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
        from pathlib import Path

        from sshbench.report.hosts_chart import write_hosts_chart

        write_hosts_chart(comparison, Path(args.chart))
        err.print(f"sshbench: wrote {args.chart}", markup=False, highlight=False)
    return 0


def cmd_recommend_fleet(args: argparse.Namespace, out: Console, err: Console) -> int:
    """`sshbench recommend --fleet FLEET`: one set of lines for every host, by the slowest host's speed."""
    from rich.table import Table

    from sshbench.recommend.config import POLICIES, POLICY_ORDER, sshd_syntax_check
    from sshbench.recommend.fleet import build_fleet
    from sshbench.store import fleets, open_store

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
