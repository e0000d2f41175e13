"""The ranked results, the set-up figures and the environment header as plain rows, shared by the Markdown
and HTML reports: their columns from the one report model (report/model.py), as the terminal's."""

from __future__ import annotations

from dataclasses import replace

from sshbench.host.placement import Placement
from sshbench.model import summary
from sshbench.model.handshake_summary import HandshakeSummary
from sshbench.report import cells
from sshbench.report.model import COLUMNS, Column, Report
from sshbench.results import RunResult


def environment_rows(result: RunResult) -> list[tuple[str, str]]:
    """As seed 000's header: client CPU, SSH versions, target/network, payload, how the trials ran."""
    env, s = result.environment, result.settings
    flags = " ".join(k for k, v in (env.get("crypto_flags") or {}).items() if v) or "none"
    return [
        ("Host", str(env.get("hostname") or "-")),
        ("Client CPU", f"{env.get('cpu_model') or '-'} ({env.get('cores') or '?'} cores; crypto flags: {flags})"),
        (
            "Client SSH",
            f"{env.get('client_ssh_version') or '-'}, "
            f"{env.get('client_crypto_library') or env.get('openssl_version') or '-'}",
        ),
        ("Server SSH", f"{env.get('server_ssh_version') or '-'}"),
        ("Kernel / OS", f"{env.get('kernel') or '-'} / {env.get('os') or '-'}"),
        ("Target", target_text(result)),
        ("Payload", f"{env.get('payload_kind') or '-'}, {env.get('payload_size') or '-'}"),
        ("Trials", f"{rounds_text(result)} + {s.warmup} warm-up, interleaved; tool {s.tool}"),
        ("Status", result.status + (f" ({result.error})" if result.error else "")),
    ]


def target_text(result: RunResult) -> str:
    """The target's label, with where the client and the private server ran (--pin, sshbench.host.placement)."""
    label = str(result.environment.get("target") or (result.target or {}).get("label") or "-")
    try:
        placement = Placement.from_json((result.target or {}).get("placement"))
    except (TypeError, ValueError):  # an imported document's odd values: said without
        placement = None
    return f"{label} ({placement.text()})" if placement else label


def rounds_text(result: RunResult) -> str:
    """The measured rounds, as the terminal says them: the rounds run (--runs auto: how many it took)."""
    s = result.settings
    rounds = summary.rounds_run(result) or s.runs
    return f"{rounds} rounds" + (f" (auto, budget {s.budget_s:g} s)" if s.adaptive else "")


def handshake_label(h: HandshakeSummary) -> str:
    """A set-up row's kex, with its builds in a build sweep (`mlkem768x25519-sha256 (10.0p2 -> 10.0p2)`)."""
    ssh, sshd = (cells.build(b) if b else "" for b in (h.ssh_build, h.sshd_build))
    builds = f" ({ssh or '-'} -> {sshd or '-'})" if ssh or sshd else ""
    return h.kex + builds + setup_only_note(h)


def setup_only_note(h: HandshakeSummary) -> str:
    """After the kex of a set-up no row has, only the transfers (plan.setup_kex)."""
    return " (what the transfers connected with)" if h.setup_only else ""


def handshake_rows(report: Report) -> list[list[str]]:
    """The set-up table's rows (HANDSHAKE_HEADER) for Markdown and HTML."""
    return [
        [handshake_label(h), *(cells.number(v) for v in (h.median_ms, h.min_ms, h.max_ms, h.client_cpu_ms))]
        for h in report.handshakes
    ]


HANDSHAKE_HEADER = ["kex", "median ms", "min ms", "max ms", "client CPU ms"]

# The document formats have no legend under the table: their headers say what the figures are.
_TITLES = {"median_mib_s": "MiB/s ± 95% CI", "relative_to_fastest": "x fastest (95% CI)", "bound_by": "bottleneck"}
_FIGURES = (
    "median_mib_s",
    "min_mib_s",
    "max_mib_s",
    "cv",
    "relative_to_fastest",
    "client_cpu_s_per_gib",
    "server_cpu_s_per_gib",
    "valid",
)


def columns(report: Report) -> list[Column]:
    """The Markdown and HTML results columns: the rows' identity, every figure, then the verdict and what
    bounds each row where the run has them."""
    keys = [*_FIGURES]
    if any(r.verdict != "?" for r in report.rows):
        keys.append("verdict")
    if report.any_bound_by:
        keys.append("bound_by")
    figures = [replace(COLUMNS[k], title=_TITLES.get(k, COLUMNS[k].title)) for k in keys]
    return [*report.identity_columns(), *figures]


def ranked(report: Report) -> tuple[list[Column], list[list[str]]]:
    cols = columns(report)
    return cols, [[c.cell(row) for c in cols] for row in report.rows]
