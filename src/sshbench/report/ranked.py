"""The ranked results and the environment header as plain rows, shared by the Markdown and HTML reports.

Built from the JSON document (report/json_export.to_document), so that columns other features add to
each summary (the security verdict, the bottleneck) appear in every format without touching this one.
"""

from __future__ import annotations

from dataclasses import dataclass

from sshbench import summary
from sshbench.placement import Placement
from sshbench.results import AXES, IMPLICIT_MAC, RunResult

# Optional summary keys (added by other features) shown as a column when any summary has a value.
OPTIONAL_COLUMNS = (("verdict", "verdict"), ("bound_by", "bottleneck"))


@dataclass
class Column:
    title: str
    key: str
    numeric: bool = False


def _fmt(value: object, spec: str) -> str:
    return "-" if value is None else format(value, spec)


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
    """The target's label, with where the client and the private server ran (--pin, sshbench.placement)."""
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


def handshake_label(h: dict) -> str:
    """A set-up row's kex, with its builds in a build sweep (`mlkem768x25519-sha256 (10.0p2 -> 10.0p2)`)."""
    ssh, sshd = (str(h.get(k) or "").removeprefix("OpenSSH_") for k in ("ssh_build", "sshd_build"))
    return h["kex"] + (f" ({ssh or '-'} -> {sshd or '-'})" if ssh or sshd else "")


def columns(summaries: list[dict]) -> list[Column]:
    def varies(key: str, default: str | int | None = None) -> bool:
        values = {s.get(key) for s in summaries} - {None}  # None: a document from before that key existed
        return len(values) > 1 or (default is not None and values - {default} != set())

    cols = [Column("#", "rank", True), Column("cipher", "cipher"), Column("MAC", "mac")]
    # results.AXES after the cipher and MAC columns, but for the payload (the header says it) and the streams
    # (the cipher's label carries -P N)
    for axis in AXES:
        if axis.name not in ("cipher", "mac", "payload", "streams") and varies(axis.name, axis.usual):
            cols.append(Column(axis.name.removesuffix("_build"), axis.name))
    cols += [
        Column("MiB/s ± 95% CI", "median_mib_s", True),
        Column("min", "min_mib_s", True),
        Column("max", "max_mib_s", True),
        Column("CV", "cv", True),
        Column("x fastest (95% CI)", "relative_to_fastest", True),
        Column("client CPU s/GiB", "client_cpu_s_per_gib", True),
        Column("server CPU s/GiB", "server_cpu_s_per_gib", True),
        Column("valid", "valid"),
    ]
    for key, title in OPTIONAL_COLUMNS:
        if any(s.get(key) is not None for s in summaries):
            cols.append(Column(title, key))
    return cols


def cell(summary: dict, rank: int, key: str) -> str:
    value = summary.get(key)
    if key == "rank":  # shared by tied neighbours ("=1"); documents from before the statistics: the row
        return str(summary.get("rank_label") or rank)
    if key == "mac":
        return "(implicit)" if value == IMPLICIT_MAC else str(value)
    if key == "median_mib_s" and value is not None and _interval(summary.get("ci95_mib_s")):
        low, high = summary["ci95_mib_s"]
        return f"{value:.1f} ±{(high - low) / 2:.{0 if high - low >= 20 else 1}f}"
    if key == "relative_to_fastest" and value is not None and _interval(summary.get("relative_to_fastest_ci95")):
        low, high = summary["relative_to_fastest_ci95"]
        return f"{value:.2f} ({low:.2f}-{high:.2f})"
    if key in ("median_mib_s", "min_mib_s", "max_mib_s"):
        return _fmt(value, ".1f")
    if key == "cv":
        return "-" if value is None else f"{value * 100:.0f}%"
    if key in ("relative_to_fastest", "client_cpu_s_per_gib", "server_cpu_s_per_gib"):
        return _fmt(value, ".2f")
    if key == "valid":
        valid, invalid = summary.get("valid_trials") or 0, summary.get("invalid_trials") or 0
        return f"{valid}/{valid + invalid}"
    return "-" if value is None else str(value)


def _interval(value: object) -> bool:
    """A [low, high] worth printing (absent in documents from before the statistics; [1, 1] for the fastest)."""
    return isinstance(value, list) and len(value) == 2 and value[0] != value[1]


def ranked(summaries: list[dict]) -> tuple[list[Column], list[list[str]]]:
    cols = columns(summaries)
    return cols, [[cell(s, rank, c.key) for c in cols] for rank, s in enumerate(summaries, start=1)]
