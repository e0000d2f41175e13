"""The baselines in the terminal report: a baselines block and one sentence per verdict that occurs
(report/table.py calls these)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from sshbench.baselines import analysis, bottleneck, sensitivity
from sshbench.results import Combination


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} MiB/s"


def baselines_table(result: Any, compact: bool = False) -> Table | None:
    """Raw TCP, crypto ceilings, disk, AES-NI mask: what each combination is compared with. `compact` (the
    default terminal report, which must leave the answer and the table on one screen): no frame, the crypto
    ceilings as their range (each primitive with --wide), no notes."""
    baselines: dict = result.baselines or {}
    if not baselines.get("enabled") and not baselines.get("aesni_masked"):
        return None
    table = Table(title="Baselines (same run)", title_justify="left", show_header=False)
    if compact:
        table.box, table.padding = None, (0, 1, 0, 0)
    table.add_column(style="bold")
    table.add_column()
    raw = analysis.raw_tcp_summary(result.trials)
    if raw is not None:
        table.add_row(
            "raw TCP",
            f"{_rate(raw.median_mib_s)} median ({raw.min_mib_s or 0:.0f}-{raw.max_mib_s or 0:.0f}, "
            f"{raw.valid_trials} runs; same payload, no SSH{'' if compact else ', timed by the receiver'})"
            + (
                f"; link {raw.combination.link}, every link in the Links table"
                if raw.combination.link != "loopback"
                else ""
            ),
        )
    down = analysis.raw_tcp_summary(result.trials, "down")
    if down is not None:
        table.add_row(
            "raw TCP down",
            f"{_rate(down.median_mib_s)} median ({down.min_mib_s or 0:.0f}-{down.max_mib_s or 0:.0f}, "
            f"{down.valid_trials} runs; the server sends its copy of the payload, timed by this receiver)",
        )
    for label, key in (("crypto ceiling", "crypto"), ("server crypto", "crypto_server")):
        crypto = baselines.get(key) or {}
        if crypto:
            cached = all(e.get("cached") for e in crypto.values())
            rates = ", ".join(f"{name} {_rate(e.get('mib_s'))}" for name, e in crypto.items())
            if compact:
                speeds = sorted((e.get("mib_s") or 0.0, name) for name, e in crypto.items())
                rates = f"{speeds[0][1]} {_rate(speeds[0][0])} to {speeds[-1][1]} {_rate(speeds[-1][0])}, one core"
                table.add_row(label, rates + (f" ({len(speeds)}: --wide)" if len(speeds) > 2 else ""))
                continue
            where = (
                "; on the server over ssh: each row's ceiling is the slower side's" if key == "crypto_server" else ""
            )
            table.add_row(
                label,
                f"{rates} (one core, openssl speed, 32 KiB, per CPU second{', cached' if cached else ''}{where})",
            )
    disk = baselines.get("disk")
    if disk:
        if disk.get("on_disk"):
            table.add_row(
                "disk",
                f"payload read {_rate(disk.get('read_mib_s'))} warm (page cache), "
                f"{_rate(disk.get('cold_read_mib_s'))} cold ({disk.get('filesystem')})",
            )
        elif not compact:  # the default report leaves out a disk that is not in the path (--wide says so)
            table.add_row("disk", disk.get("note") or "not on disk")
        if disk.get("write_mib_s"):
            table.add_row(
                "disk sink",
                f"write {_rate(disk['write_mib_s'])} with fsync, 8 MiB blocks "
                f"({disk.get('sink_dir')}, {disk.get('sink_filesystem')}); trials' writes may "
                "end in the page cache, faster than this",
            )
    check = baselines.get("aesni_check")
    if check:
        table.add_row(
            "AES-NI",
            f"masked ({check['env']}): AES-128-GCM {_rate(check['masked_mib_s'])} vs "
            f"{_rate(check['unmasked_mib_s'])} unmasked",
        )
    # `run --why`: sensitivity (95% CI) per resource; the compact report leaves them to the conclusion's
    # "limited by (by experiment)" lines (each sensitivity with --wide and in the JSON).
    for line in [] if compact else sensitivity.summary_lines(baselines.get("why")):
        table.add_row("why (sensitivity)", line)
    for note in [] if compact else baselines.get("notes") or []:
        table.add_row("note", note)
    return table


def verdict_notes(comparisons: dict[Combination, analysis.Comparison]) -> list[str]:
    """One sentence per verdict that occurs, in the verdicts' order."""
    seen = {c.verdict.bound_by for c in comparisons.values() if c.verdict}
    return [f"{word}: {bottleneck.EXPLANATIONS[word]}" for word in bottleneck.VERDICTS if word in seen]
