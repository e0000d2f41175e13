"""`sshbench fleet --inventory FILE [--pairs ...] [-- RUN OPTIONS]`: every inventory host benchmarks its own
sshd through Ansible, and with --pairs host A benchmarks host B over the network (engine:
sshbench.fleet.engine; pairs: sshbench.fleet.pairs; playbook and role: contrib/ansible/)."""

from __future__ import annotations

import argparse

from rich.console import Console

from sshbench.cli import run as run_command
from sshbench.cli.common import add_db_option, check_common
from sshbench.cli.parser import make_parser
from sshbench.errors import UsageError
from sshbench.fleet import inventory
from sshbench.fleet.engine import FleetOptions, resolve_inventory, run_fleet
from sshbench.fleet.pairs import expand_pairs
from sshbench.fleet.playbook import find_ansible_playbook
from sshbench.host.cleanup import signals_raise
from sshbench.settings import TargetSpec
from sshbench.targets import check_spec

# `sshbench run` options that belong to the fleet itself: each host's result comes back into this store.
FLEET_OWNED = {
    "json": "--json",
    "bmf": "--bmf",
    "gab": "--gab",
    "db": "--db",
    "resume": "--resume",
    "seeds": "--seeds",
}
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
    parser = make_parser([run_command.add_commands])
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
    return expand_pairs(args.pairs, hosts.hosts, hosts.groups, limited=bool(args.limit))


def cmd_fleet(args: argparse.Namespace, out: Console, err: Console) -> int:
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
