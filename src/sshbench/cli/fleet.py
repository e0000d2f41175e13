"""`sshbench fleet --inventory FILE [-- RUN OPTIONS]`: every inventory host benchmarks its own sshd through
Ansible (engine: sshbench.fleet.engine; playbook and role: contrib/ansible/)."""

from __future__ import annotations

import argparse

from rich.console import Console

from sshbench.cli.common import add_db_option
from sshbench.errors import UsageError

# `sshbench run` options that belong to the fleet itself: each host's result comes back into this store.
FLEET_OWNED = {"json": "--json", "db": "--db", "resume": "--resume", "seeds": "--seeds"}


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
    fleet.add_argument("--forks", type=int, default=10, help="hosts worked on at once (default 10)")
    add_db_option(fleet)
    fleet.add_argument("run_options", nargs="*", metavar="-- RUN OPTIONS", help="options for `sshbench run`")


def check_run_options(run_options: list[str]) -> None:
    """The options after -- must be a valid `sshbench run` without a HOST or the fleet's own options:
    refused here (exit 2) rather than on every host."""
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


def cmd_fleet(args: argparse.Namespace, out: Console, err: Console) -> int:
    from sshbench.cleanup import signals_raise
    from sshbench.fleet.engine import FleetOptions, run_fleet

    if args.forks < 1:
        raise UsageError(f"--forks must be at least 1 (got {args.forks})")
    check_run_options(args.run_options)

    def log(line: str) -> None:
        err.print(f"fleet: {line}", markup=False, highlight=False)

    options = FleetOptions(
        inventory=args.inventory,
        limit=args.limit,
        run_args=list(args.run_options),
        resume=args.resume,
        wheelhouse=args.wheelhouse,
        forks=args.forks,
        db=args.db,
    )
    with signals_raise():
        fleet, skipped = run_fleet(options, log)
    width = max([len(h) for h in fleet.hosts] + [4])
    out.print(f"fleet run {fleet.id}: {len(fleet.stored_hosts())} of {len(fleet.hosts)} hosts stored", markup=False)
    for name, host in sorted(fleet.hosts.items()):
        run = f"run {host.run_id}" if host.run_id is not None else "-"
        note = " (stored before; skipped)" if name in skipped else (f": {host.message}" if host.message else "")
        out.print(f"  {name.ljust(width)}  {host.status:<14} {run:<8}{note}", markup=False, highlight=False)
    return 0 if all(h.status == "ok" for h in fleet.hosts.values()) and fleet.hosts else 1
