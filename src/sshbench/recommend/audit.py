"""`sshbench audit [HOST]`: what the ssh client really offers and negotiates with a server, judged.

- The effective client settings come from `ssh -G HOST` (the user's ssh_config, or --ssh-config FILE);
  without HOST, from the bare client (or --ssh-config FILE) against the private sshd.
- What is negotiated comes from one real connection (`ssh -vv`), which also shows both sides' strict-kex
  markers (Terrapin).
- Broken and weak choices are flagged (offered ones too: an offered weak algorithm is a downgrade target),
  and slow ones are flagged against the latest measured run, with the measured alternative.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from sshbench.algorithms import parse_ssh_G, strip_kex_pseudo
from sshbench.errors import RunError, SshbenchError
from sshbench.host.cleanup import Cleanup, signals_raise
from sshbench.host.leftovers import clean_leftovers
from sshbench.model import summary
from sshbench.model.summary import Summary
from sshbench.openssh.sshlog import failure_reason, parse_negotiated
from sshbench.results import IMPLICIT_MAC, RunResult
from sshbench.security import terrapin
from sshbench.security.verdicts import (
    Level,
    Verdict,
    algorithm_verdict,
    combination_verdict,
)
from sshbench.settings import TargetSpec
from sshbench.store import open_store
from sshbench.targets import make_target
from sshbench.targets.base import probe

KINDS = (("cipher", "ciphers"), ("mac", "macs"), ("kex", "kexalgorithms"))
# A measured alternative must be at least this good to be suggested, and this much faster to call the
# negotiated choice slow (below that the difference is within run-to-run noise on a loaded machine).
SLOW_FACTOR = 1.25


@dataclass
class Finding:
    severity: str  # "broken" | "weak" | "slow" | "info"
    message: str


@dataclass
class AuditReport:
    host_label: str
    effective: dict[str, list[str]]  # kind -> the client's offered list (ssh -G)
    negotiated: dict[str, str | None]  # cipher, mac, kex
    strict: terrapin.StrictKex
    offered_verdicts: dict[str, list[tuple[str, Verdict]]] = field(default_factory=dict)
    negotiated_verdict: Verdict | None = None
    findings: list[Finding] = field(default_factory=list)


def effective_client_lists(ssh_G_text: str) -> dict[str, list[str]]:
    effective = parse_ssh_G(ssh_G_text)
    lists = {kind: [n for n in effective.get(key, "").split(",") if n] for kind, key in KINDS}
    lists["kex"] = strip_kex_pseudo(lists["kex"])
    return lists


def fastest_safe(summaries: list[Summary], strict: bool | None, minimum: Level = Level.ACCEPTABLE) -> Summary | None:
    """The fastest measured combination whose verdict is at least `minimum` (summaries come fastest first)."""
    for s in summaries:
        if s.median_mib_s is None or s.combination.unpinned:
            continue
        c = s.combination
        if combination_verdict(c.cipher, c.mac, c.kex, c.compression, strict).level >= minimum:
            return s
    return None


def judge(
    host_label: str,
    effective: dict[str, list[str]],
    negotiated: dict[str, str | None],
    strict: terrapin.StrictKex,
    run: RunResult | None,
) -> AuditReport:
    """Pure: verdicts and findings from what was read and negotiated (tested on recorded values too)."""
    report = AuditReport(host_label=host_label, effective=effective, negotiated=negotiated, strict=strict)
    for kind, _ in KINDS:
        report.offered_verdicts[kind] = [
            (n, algorithm_verdict(kind, n, strict.negotiated)) for n in effective.get(kind, [])
        ]
    cipher, mac, kex = negotiated.get("cipher"), negotiated.get("mac") or IMPLICIT_MAC, negotiated.get("kex")
    if cipher and kex:
        report.negotiated_verdict = combination_verdict(cipher, mac, kex, strict_kex=strict.negotiated)
        v = report.negotiated_verdict
        if v.level <= Level.WEAK:
            report.findings.append(
                Finding(
                    v.label,
                    f"negotiated {cipher}{'' if mac == IMPLICIT_MAC else ' + ' + mac} / {kex} is {v.label}: {v.reason}",
                )
            )
    for kind, verdicts in report.offered_verdicts.items():
        for name, verdict in verdicts:
            if verdict.level <= Level.WEAK and name not in negotiated.values():
                report.findings.append(
                    Finding(
                        verdict.label,
                        f"the client offers {kind} {name} ({verdict.label}: {verdict.reason}); a server could pick it",
                    )
                )
    if run is not None:
        _speed_findings(report, run, cipher, mac)
    elif cipher:
        report.findings.append(Finding("info", "no measured run: `sshbench run` first to flag slow choices"))
    return report


def _speed_findings(report: AuditReport, run: RunResult, cipher: str | None, mac: str) -> None:
    summaries = [s for s in summary.summaries(run) if s.median_mib_s is not None]
    best = fastest_safe(summaries, report.strict.negotiated)
    if best is None or cipher is None:
        return
    mine = next((s for s in summaries if s.combination.cipher == cipher and s.combination.mac == mac), None)
    alt = best.combination
    alt_label = f"{alt.label} ({best.median_mib_s:.0f} MiB/s, {combination_verdict(alt.cipher, alt.mac, alt.kex, alt.compression, report.strict.negotiated).label})"
    if mine is None:
        report.findings.append(
            Finding("info", f"{cipher} was not measured in the run; fastest safe measured: {alt_label}")
        )
    elif mine is not best and (mine.median_mib_s or 0) * SLOW_FACTOR < (best.median_mib_s or 0):
        report.findings.append(
            Finding(
                "slow",
                f"negotiated {mine.combination.label} measured "
                f"{mine.median_mib_s:.0f} MiB/s; faster and safe: {alt_label}",
            )
        )
    if report.negotiated_verdict is not None and report.negotiated_verdict.level <= Level.WEAK:
        report.findings.append(
            Finding("info", f"measured alternative to the {report.negotiated_verdict.label} choice: {alt_label}")
        )


def run_audit(
    host: str | None, ssh_config: str | None, sshd: str | None, run: RunResult | None, ssh: str = "ssh"
) -> AuditReport:
    """Read `ssh -G`, connect once (`ssh -vv`), judge."""
    clean_leftovers()
    config_args = ["-F", ssh_config] if ssh_config else ([] if host else ["-F", "/dev/null"])
    g_host = host or "127.0.0.1"
    try:
        g = subprocess.run(
            [ssh, *config_args, "-G", g_host], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise RunError(f"ssh client not found ({ssh}); install it: apt-get install openssh-client") from None
    if g.returncode != 0:
        raise RunError(f"ssh -G {g_host} failed: {g.stderr.strip() or 'no output'}")
    effective = effective_client_lists(g.stdout)
    cleanup = Cleanup()
    try:
        with signals_raise():
            target = make_target(TargetSpec.from_options(host=host, sshd=sshd, ssh=ssh, ssh_config=ssh_config))
            target.start(cleanup)
            options = target.client_options()
            if host is None and ssh_config:
                # The private sshd's client options pin -F /dev/null: audit the given config instead.
                index = options.index("-F")
                options = [*options[:index], "-F", ssh_config, *options[index + 2 :]]
            status, log = probe(ssh, options, target.destination())
    finally:
        cleanup.close()
    if status != 0:
        reason = failure_reason(log)
        raise RunError(f"cannot connect to {target.label} with these client settings: {reason}")
    neg = parse_negotiated(log)
    negotiated = {"cipher": neg.cipher, "mac": neg.mac, "kex": neg.kex}
    return judge(target.label, effective, negotiated, terrapin.from_ssh_log(log), run)


def latest_run(db: str | None) -> RunResult | None:
    """The latest stored run, or None when there is none (speed advice is then skipped)."""
    try:
        with open_store(db, read_only=True) as store:
            return store.load_result("latest")
    except SshbenchError:
        return None
