"""`sshbench algorithms --all [--speed]`: every cipher and MAC the seeds measured (and any an installed
implementation offers), per client/server pair, with `unavailable here` and the reason where no pair can
run it; with --speed, the raw single-core rate of the legacy primitives beside the modern ones.

`sshbench algorithms [HOST]`: what the client and the server support, with verdicts."""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms, client_algorithms, legacy, parse_ssh_G
from sshbench.baselines import legacy_speed
from sshbench.cli.common import add_db_option, add_ssh_config_option, add_sshd_option
from sshbench.cli.security import algorithms_footer, algorithms_verdict_cells
from sshbench.errors import RunError, SshbenchError
from sshbench.host.cleanup import Cleanup, signals_raise
from sshbench.host.environment import collect
from sshbench.host.leftovers import clean_leftovers
from sshbench.openssh import builds
from sshbench.security import terrapin
from sshbench.settings import TargetSpec
from sshbench.targets import make_target
from sshbench.targets.dropbear import DropbearServer
from sshbench.targets.local import make_ssh_keypair


def add_commands(sub: argparse._SubParsersAction) -> None:
    algs = sub.add_parser("algorithms", help="list what the client and the server support")
    algs.add_argument("host", nargs="?", help="user@host or an ssh_config alias; omit for the private sshd")
    add_ssh_config_option(algs)
    add_sshd_option(algs, "sshd binary for the private target; several: what differs between the builds", builds=True)
    algs.add_argument(
        "--ssh",
        metavar="PATH[,PATH...]",
        help="ssh client binary; several: what differs between the builds (present in one only, default orders)",
    )
    algs.add_argument("--sshd-session", metavar="PATH", help="an OpenSSH 9.8+ --sshd build's sshd-session")
    algs.add_argument(
        "--all",
        action="store_true",
        help="also every cipher and MAC the seed write-ups measured, per implementation pair "
        "(OpenSSH, Dropbear, AsyncSSH), with the reason where none can run it here",
    )
    algs.add_argument(
        "--speed",
        action="store_true",
        help="with --all: the raw single-core speed of RC4, Blowfish, CAST5 and 3DES beside AES "
        "and ChaCha20 (openssl speed with the legacy provider, and the cryptography package)",
    )
    add_db_option(algs, "results database (to say whether a default is the fastest safe choice measured)")
    algs.set_defaults(handler=cmd_algorithms)


def cmd_algorithms(args: argparse.Namespace, out: Console, err: Console) -> int:
    if builds.sweeps(args.sshd) or builds.sweeps(getattr(args, "ssh", None)):
        return print_build_differences(args, out)
    removed = clean_leftovers()
    if removed:
        err.print(f"sshbench: removed leftovers of an earlier killed run: {', '.join(removed)}", highlight=False)
    cleanup = Cleanup()
    try:
        with signals_raise():
            target = make_target(
                TargetSpec.from_options(
                    host=args.host,
                    sshd=args.sshd,
                    ssh=getattr(args, "ssh", None) or "ssh",
                    ssh_config=args.ssh_config,
                    sshd_session=getattr(args, "sshd_session", None),
                )
            )
            target.start(cleanup)
            client, server = target.client_algorithms(), target.server_algorithms()
    finally:
        cleanup.close()
    table = Table(
        title=f"Algorithms: client {client_label()} / server {target.server_version} at {target.label}",
        title_justify="left",
    )
    # Fits 100 columns: names whole (they are searched for and pasted), who offers each in one column, and each
    # verdict's reason once below the table by number: in full beside every row the reasons wrapped each row to
    # five lines and cut "aes128-gcm@openssh.com" to "aes128-gcm@open…".
    for col, no_wrap in (("kind", True), ("algorithm", True), ("offered by", True), ("note", False)):
        table.add_column(col, no_wrap=no_wrap)
    table.add_column("verdict", no_wrap=True)
    negotiated_strict = terrapin.StrictKex(client.strict_kex, server.strict_kex).negotiated
    reasons: list[str] = []
    for kind in ("cipher", "mac", "kex"):
        names = list(dict.fromkeys(client.supported(kind) + server.supported(kind)))
        for name in names:
            notes = []
            if kind == "cipher" and name in client.aead_ciphers:
                notes.append("AEAD")
            if name in client.defaults(kind):
                notes.append("default")
            verdict, reason = algorithms_verdict_cells(kind, name, negotiated_strict)
            if reason not in reasons:
                reasons.append(reason)
            by_client, by_server = name in client.supported(kind), name in server.supported(kind)
            table.add_row(
                kind,
                name,
                "both" if by_client and by_server else "client" if by_client else "server",
                ", ".join(notes),
                verdict.append(f" [{reasons.index(reason) + 1}]", style="default"),
            )
    out.print(table)
    out.print(
        "AEAD: integrity in the cipher, no separate MAC; default: in the client's default list; the verdicts' "
        "reasons (ssh-audit's, docs/security.md):",
        highlight=False,
    )
    for number, reason in enumerate(reasons, 1):
        out.print(f"  [{number}] {reason}", markup=False, highlight=False)
    out.print(f"strict kex (Terrapin countermeasure) offered by the server: {server.strict_kex}")
    algorithms_footer(client, server, args.db, out)
    if getattr(args, "all", False) or getattr(args, "speed", False):
        print_all(client, server, out, err, speed=args.speed)
    return 0


def print_build_differences(args: argparse.Namespace, out: Console) -> int:
    """`algorithms --ssh A,B` / `--sshd A,B`: per kind, the algorithms not in every build (supported: `ssh -Q`
    for clients; offered by default: `sshd -T` of a minimal config for servers), then each build's default
    order where it changed."""
    found: list[tuple[str, dict[str, list[str]], dict[str, list[str]]]] = []  # (label, supported, defaults)
    for build in builds.inspect_all(getattr(args, "ssh", None), "ssh") if args.ssh else []:
        algs = client_algorithms(build.path, ["-F", "/dev/null"])
        kinds = ("cipher", "mac", "kex")
        found.append(
            (f"ssh {build.label}", {k: algs.supported(k) for k in kinds}, {k: algs.defaults(k) for k in kinds})
        )
    for build in builds.inspect_all(args.sshd, "sshd", getattr(args, "sshd_session", None)) if args.sshd else []:
        offered = _sshd_defaults(build)
        found.append((f"sshd {build.label}", offered, offered))
    table = Table(title="Algorithms present in some builds only", title_justify="left")
    table.add_column("kind")
    table.add_column("algorithm")
    for label, _, _ in found:
        table.add_column(label)
    differ = 0
    for kind in ("cipher", "mac", "kex"):
        names = list(dict.fromkeys(n for _, supported, _ in found for n in supported[kind]))
        for name in names:
            cells = ["yes" if name in supported[kind] else "-" for _, supported, _ in found]
            sides = [
                {cell for cell, (label, _, _) in zip(cells, found, strict=True) if label.startswith(side + " ")}
                for side in ("ssh", "sshd")
            ]
            if any(len(side) > 1 for side in sides):  # differs between the builds of one side
                differ += 1
                table.add_row(kind, name, *cells)
    out.print(table if differ else "every build has the same algorithms")
    out.print("(ssh: what `ssh -Q` lists; sshd: what it offers with no Ciphers/MACs/KexAlgorithms lines)")
    for side in ("ssh", "sshd"):
        same_side = [(label, defaults) for label, _, defaults in found if label.startswith(side + " ")]
        for kind in ("cipher", "mac", "kex"):
            orders = {label: defaults[kind] for label, defaults in same_side}
            if len({tuple(o) for o in orders.values()}) > 1:
                out.print(f"default {kind} order changed between the {side} builds:")
                for label, order in orders.items():
                    out.print(f"  {label}: {','.join(order)}", highlight=False, soft_wrap=True)
    return 0


def _sshd_defaults(build) -> dict[str, list[str]]:
    """What this sshd offers by default: `sshd -T` of a config with only a throwaway host key (and its helpers)."""
    with tempfile.TemporaryDirectory(prefix="sshbench-") as tmp:
        key = Path(tmp) / "host_key"
        make_ssh_keypair(key, "sshbench-host_key")
        config = Path(tmp) / "sshd_config"
        lines = [f"HostKey {key}", "PidFile none", *(f"{k} {v}" for k, v in build.helpers)]
        config.write_text("\n".join(lines) + "\n")
        done = subprocess.run(
            [build.path, "-T", "-f", str(config)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    if done.returncode != 0:
        raise RunError(f"{build.path} -T failed: {done.stderr.strip()[-200:]}")
    effective = parse_ssh_G(done.stdout)
    return {
        kind: effective.get(key, "").split(",")
        for kind, key in (("cipher", "ciphers"), ("mac", "macs"), ("kex", "kexalgorithms"))
    }


def client_label() -> str:
    return str(collect().get("client_ssh_version"))


def _dropbear_offer(client: ClientAlgorithms) -> legacy.Offer:
    """Start a private Dropbear just long enough to read its KEXINIT (what the OpenSSH client can use with it)."""
    cleanup = Cleanup()
    try:
        with signals_raise():
            server = DropbearServer()
            server.start(cleanup)
            offered = server.server_algorithms()
    except SshbenchError as err:
        return legacy.Offer("openssh/dropbear", None, None, reason=str(err))
    finally:
        cleanup.close()
    return legacy.Offer(
        "openssh/dropbear",
        [c for c in client.ciphers if c in offered.ciphers],
        [m for m in client.macs if m in offered.macs],
    )


def offers(
    client: ClientAlgorithms, server: ServerAlgorithms, asyncssh_algs: legacy.AsyncsshAlgorithms
) -> list[legacy.Offer]:
    found = [
        legacy.Offer(
            "openssh/openssh",
            [c for c in client.ciphers if c in server.ciphers],
            [m for m in client.macs if m in server.macs],
        )
    ]
    found.append(_dropbear_offer(client))
    if asyncssh_algs.missing_reason:
        found += [
            legacy.Offer("openssh/asyncssh", None, None, asyncssh_algs.missing_reason),
            legacy.Offer("asyncssh/asyncssh", None, None, asyncssh_algs.missing_reason),
        ]
    else:
        # The AsyncSSH server offers exactly what the library can run (sshbench.targets.asyncssh_sshd).
        found += [
            legacy.Offer(
                "openssh/asyncssh",
                [c for c in client.ciphers if c in asyncssh_algs.ciphers],
                [m for m in client.macs if m in asyncssh_algs.macs],
            ),
            legacy.Offer("asyncssh/asyncssh", list(asyncssh_algs.ciphers), list(asyncssh_algs.macs)),
        ]
    return found


def print_all(
    client: ClientAlgorithms, server: ServerAlgorithms, out: Console, err: Console, speed: bool = False
) -> None:
    asyncssh_algs = legacy.asyncssh_algorithms()
    pairs = offers(client, server, asyncssh_algs)
    rows = legacy.availability(pairs, asyncssh_algs)
    table = Table(
        title="Every cipher and MAC the seeds measured, and any an installed implementation offers "
        "(client/server pairs sshbench can run here)",
        title_justify="left",
    )
    for name in ("kind", "algorithm", "in seeds", *(p.pair for p in pairs)):
        table.add_column(name, no_wrap=True)  # names stay whole, so they can be searched for
    table.add_column("status")
    for row in rows:
        table.add_row(
            row.kind,
            row.name,
            "yes" if row.in_seeds else "-",
            *("yes" if row.pairs[p.pair] else "-" for p in pairs),
            row.status,
            style="red" if row.status.startswith("unavailable") else None,
        )
    out.print(table)
    for p in pairs:
        if p.reason:
            out.print(f"{p.pair}: not available here: {p.reason}", markup=False)
    out.print(
        "asyncssh/asyncssh rows run AsyncSSH (Python) at both ends: absolute rates are not comparable with "
        "OpenSSH's; its relative ordering of ciphers is informative.",
        markup=False,
    )
    if speed:
        print_speeds(out)


def print_speeds(out: Console) -> None:
    table = Table(
        title="Raw crypto, one core, 32 KiB buffers (MiB/s): the primitives behind the seeds' ciphers",
        title_justify="left",
    )
    for name, justify in (
        ("primitive", "left"),
        ("SSH ciphers", "left"),
        ("source", "left"),
        ("MiB/s", "right"),
        ("note", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    rows = legacy_speed.primitive_speeds()
    for row in rows:
        table.add_row(
            row.primitive,
            ", ".join(row.ssh_names) or "-",
            row.source,
            f"{row.mib_s:.0f}" if row.mib_s is not None else "-",
            row.note or "",
        )
    out.print(table)
    if sentence := legacy_speed.seed_002_check(rows):
        out.print(sentence, markup=False)
