"""The command-line side of security: `sshbench recommend`, `sshbench audit`, and the verdict columns of
`sshbench algorithms` ."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms, would_negotiate
from sshbench.cli.common import add_db_option, add_ssh_config_option, add_sshd_option
from sshbench.cli.fleet_results import cmd_recommend_fleet
from sshbench.errors import SshbenchError, UsageError
from sshbench.model import summary
from sshbench.recommend import audit
from sshbench.recommend import config as recommend
from sshbench.results import RunResult
from sshbench.security import terrapin
from sshbench.security.report_hooks import VERDICT_STYLES
from sshbench.security.verdicts import Verdict, algorithm_verdict, combination_verdict


def add_commands(sub: argparse._SubParsersAction) -> None:
    rec = sub.add_parser(
        "recommend",
        help="a paste-ready Ciphers/MACs/KexAlgorithms config from a measured run, "
        "fastest first among what a security policy allows",
    )
    rec.set_defaults(handler=cmd_recommend)
    rec.add_argument("run", nargs="?", default="latest", help="stored run id or 'latest' (default)")
    rec.add_argument(
        "--policy",
        default="modern",
        help="modern (only recommended algorithms, the default), compatible (also acceptable) or "
        "trusted-lan (also weak ciphers/MACs, with a warning; never broken)",
    )
    rec.add_argument(
        "--for",
        dest="for_",
        default="client",
        metavar="client|server",
        help="client: a Host block for ~/.ssh/config (default); server: sshd_config lines",
    )
    rec.add_argument(
        "--host",
        metavar="PATTERN",
        help="the Host pattern of the client block (default: the run's host, or * for the private sshd)",
    )
    rec.add_argument(
        "--full-list",
        action="store_true",
        help="full replacement lists (only what was measured) instead of `^`/`-` lines that keep your ssh's other "
        "defaults (the default under a shared Host pattern such as *)",
    )
    rec.add_argument("--from-json", metavar="FILE", help="read the run from a `run --json` or `export` file instead")
    rec.add_argument(
        "--fleet", metavar="FLEET", help="one config for every host of a fleet run (number or 'latest'): see fleet"
    )
    add_db_option(rec)
    add_sshd_option(rec, "sshd binary for checking against the private target")

    aud = sub.add_parser("audit", help="judge the algorithms your ssh client really offers and negotiates with HOST")
    aud.set_defaults(handler=cmd_audit)
    aud.add_argument(
        "host",
        nargs="?",
        help="user@host or an ssh_config alias; omit to audit the bare client "
        "(or --ssh-config) against the private sshd",
    )
    add_ssh_config_option(aud, "audit this ssh_config instead of your own (ssh -F)")
    add_sshd_option(aud, "sshd binary for the private target")
    aud.add_argument("--run", metavar="RUN", help="measured run for speed advice (default: the latest stored run)")
    aud.add_argument("--from-json", metavar="FILE", help="measured run from a `run --json` or `export` file")
    add_db_option(aud)


def _styled(verdict: Verdict) -> Text:
    return Text(verdict.label, style=VERDICT_STYLES.get(verdict.label, ""))


def cmd_recommend(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.fleet:
        return cmd_recommend_fleet(args, out, err)
    # Checked before the run is loaded, so that a typo is reported as itself.
    if args.policy not in recommend.POLICIES:
        raise UsageError(f"unknown policy {args.policy!r}; choose one of: {', '.join(recommend.POLICY_ORDER)}")
    if args.for_ not in ("client", "server"):
        raise UsageError(f"--for must be client or server (got {args.for_!r})")
    result, label = recommend.load_run(args.run, args.from_json, args.db)
    rec = recommend.build(result, args.policy, args.for_, args.host, run_label=label, full_list=args.full_list)
    checked = recommend.verify(rec, result, sshd=args.sshd)
    out.file.write(rec.render() + f"# {checked}\n")
    out.file.flush()
    for warning in rec.warnings:
        err.print(f"sshbench: warning: {warning}", markup=False, highlight=False)
    if rec.left_out:
        table = Table(title=f"Left out (policy {rec.policy})", title_justify="left")
        for col in ("kind", "algorithm", "verdict", "measured", "why"):
            table.add_column(col)
        for item in rec.left_out:
            table.add_row(
                item.kind,
                item.name,
                Text(item.verdict, style=VERDICT_STYLES.get(item.verdict, "")),
                item.measured,
                item.why,
            )
        err.print(table)
    return 0


def cmd_audit(args: argparse.Namespace, out: Console, err: Console) -> int:
    run: RunResult | None
    if args.from_json or args.run:
        run, _ = recommend.load_run(args.run, args.from_json, args.db)
    else:
        run = audit.latest_run(args.db)
    report = audit.run_audit(args.host, args.ssh_config, args.sshd, run)
    table = Table(
        title=f"What this client offers ({'ssh -G ' + args.host if args.host else 'bare client'}"
        f"{', -F ' + args.ssh_config if args.ssh_config else ''}), judged",
        title_justify="left",
    )
    for col in ("kind", "algorithm", "verdict", "reason", "negotiated"):
        table.add_column(col)
    for kind, verdicts in report.offered_verdicts.items():
        for name, verdict in verdicts:
            table.add_row(
                kind, name, _styled(verdict), verdict.reason, "<-" if report.negotiated.get(kind) == name else ""
            )
    out.print(table)
    n = report.negotiated
    mac = "" if n.get("mac") in (None, "implicit") else f" + {n['mac']}"
    negotiated_verdict = report.negotiated_verdict
    out.print(
        f"negotiated with {report.host_label}: {n.get('cipher')}{mac}, kex {n.get('kex')}: "
        f"{negotiated_verdict.label if negotiated_verdict else '?'}"
        + (f" ({negotiated_verdict.reason})" if negotiated_verdict else ""),
        markup=False,
    )
    out.print(f"Terrapin (CVE-2023-48795): {report.strict.describe()}", markup=False)
    for finding in report.findings:
        out.print(f"{finding.severity}: {finding.message}", markup=False)
    if not any(f.severity in ("broken", "weak", "slow") for f in report.findings):
        out.print("no broken, weak or slow choices found", markup=False)
    return 0


def algorithms_verdict_cells(kind: str, name: str, strict: bool | None) -> tuple[Text, str]:
    """The verdict and reason cells of one `sshbench algorithms` row."""
    try:
        verdict = algorithm_verdict(kind, name, strict)
    except SshbenchError as e:
        return Text("?"), str(e)
    return _styled(verdict), verdict.reason


def algorithms_footer(client: ClientAlgorithms, server: ServerAlgorithms, db: str | None, out: Console) -> None:
    """What each side's default would negotiate, judged, and whether it is the fastest safe choice measured."""
    strict = terrapin.StrictKex(client=client.strict_kex, server=server.strict_kex)
    out.print(f"Terrapin (CVE-2023-48795): {strict.describe()}", markup=False)
    picks = {kind: would_negotiate(client.defaults(kind), server.supported(kind)) for kind in ("cipher", "mac", "kex")}
    cipher, kex = picks["cipher"], picks["kex"]
    mac = "implicit" if cipher in client.aead_ciphers else picks["mac"]
    if not (cipher and mac and kex):
        out.print(
            "the client's defaults and the server's offer have nothing in common for "
            f"{', '.join(k for k, v in picks.items() if not v)}",
            markup=False,
        )
        return
    try:
        verdict = combination_verdict(cipher, mac, kex, strict_kex=strict.negotiated)
    except SshbenchError as e:
        out.print(f"no verdicts: {e}", markup=False)
        return
    shown_mac = "" if mac == "implicit" else f" + {mac}"
    out.print(
        f"the client's default preference with this server's offer negotiates {cipher}{shown_mac}, kex {kex}: "
        f"{verdict.label} ({verdict.reason})",
        markup=False,
    )
    out.print(
        "(the server takes the client's first choice it also offers, so the client's default order decides)",
        markup=False,
    )
    run = audit.latest_run(db)
    if run is None:
        out.print(
            "no measured run: `sshbench run` to see whether that default is the fastest safe choice", markup=False
        )
        return
    summaries = [s for s in summary.summaries(run) if s.median_mib_s is not None]
    best = audit.fastest_safe(summaries, strict.negotiated)
    mine = next((s for s in summaries if s.combination.cipher == cipher and s.combination.mac == mac), None)
    run_name = f"run {run.run_id}" if run.run_id is not None else "the latest run"
    if best is None:
        out.print(f"{run_name} measured no safe (acceptable or better) combination", markup=False)
    elif mine is None:
        out.print(
            f"the default {cipher}{shown_mac} was not measured in {run_name}; fastest safe measured: "
            f"{best.combination.label} {best.median_mib_s:.0f} MiB/s",
            markup=False,
        )
    elif mine is best:
        out.print(
            f"the default is the fastest safe choice measured in {run_name} ({mine.median_mib_s:.0f} MiB/s)",
            markup=False,
        )
    else:
        out.print(
            f"the default measured {mine.median_mib_s:.0f} MiB/s in {run_name}; the fastest safe choice "
            f"measured is {best.combination.label} at {best.median_mib_s:.0f} MiB/s",
            markup=False,
        )
