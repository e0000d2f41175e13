"""The terminal report: environment header, ranked results, handshakes, warnings (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from sshbench.results import IMPLICIT_MAC
from sshbench.runner import RunResult, clock_agreement
from sshbench.summary import WIDE_SPREAD_CV


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def environment_header(result: RunResult) -> Table:
    env = result.environment
    flags = env.get("crypto_flags") or {}
    rows = [
        ("CPU", f"{env.get('cpu_model')} ({env.get('cores')} cores)"),
        ("Crypto flags", " ".join(f"{k}{'' if v else ' (no)'}" for k, v in flags.items() if v) or "none"),
        ("Kernel / OS", f"{env.get('kernel')} / {env.get('os')}"),
        ("Client", f"{env.get('client_ssh_version')}, {env.get('client_crypto_library') or env.get('openssl_version')}"),
        ("Server", f"{env.get('server_ssh_version')} (strict kex: {env.get('server_strict_kex')})"),
        ("Target", str(env.get("target"))),
        ("Payload", f"{env.get('payload_kind')}, {env.get('payload_size')}"),
        ("Trials", f"{result.settings.runs} runs + {result.settings.warmup} warm-up, interleaved; tool "
                   f"{result.settings.tool}"),
    ]
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        table.add_row(key, value)
    return table


def results_table(result: RunResult) -> Table:
    summaries = result.summaries()
    kexes = {s.combination.kex for s in summaries}
    # One kex for all rows: name it in the title rather than repeat it in a column.
    show_kex = len(kexes) > 1
    title = "Throughput (data phase), fastest first" + ("" if show_kex else f"; kex {next(iter(kexes), '-')}")
    table = Table(title=title, title_justify="left")
    columns = [("#", "right"), ("cipher", "left"), ("MAC", "left")] + ([("kex", "left")] if show_kex else [])
    for name, justify in (*columns,
                          ("MiB/s", "right"), ("min-max", "right"), ("CV", "right"), ("x fastest", "right"),
                          ("client CPU s/GiB", "right"), ("server CPU s/GiB", "right"), ("valid", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for rank, s in enumerate(summaries, start=1):
        c = s.combination
        cv = "-" if s.cv is None else f"{s.cv * 100:.0f}%" + (" !" if s.cv > WIDE_SPREAD_CV else "")
        table.add_row(
            str(rank), c.cipher, "(implicit)" if c.mac == IMPLICIT_MAC else c.mac, *([c.kex] if show_kex else []),
            _fmt(s.median_mib_s), f"{_fmt(s.min_mib_s, '.0f')}-{_fmt(s.max_mib_s, '.0f')}", cv,
            _fmt(s.relative_to_fastest, ".2f"), _fmt(s.client_cpu_s_per_gib, ".2f"),
            _fmt(s.server_cpu_s_per_gib, ".2f"), f"{s.valid_trials}/{s.valid_trials + s.invalid_trials}",
            style=None if s.valid_trials else "red",
        )
    return table


def handshake_table(result: RunResult) -> Table | None:
    handshakes = result.handshakes()
    if not handshakes:
        return None
    table = Table(title="Connection set-up (ssh with no data: handshake, auth, session, remote shell)",
                  title_justify="left")
    for name in ("kex", "median ms", "min-max ms", "client CPU ms"):
        table.add_column(name, justify="left" if name == "kex" else "right")
    for h in handshakes:
        table.add_row(h.kex, _fmt(h.median_ms, ".0f"), f"{_fmt(h.min_ms, '.0f')}-{_fmt(h.max_ms, '.0f')}",
                      _fmt(h.client_cpu_ms, ".1f"))
    return table


def warnings(result: RunResult) -> list[str]:
    out = []
    wide = [s for s in result.summaries() if s.wide_spread]
    if wide:
        out.append(f"{len(wide)} combination(s) vary by more than {WIDE_SPREAD_CV:.0%} (CV, marked !): the machine "
                   "may be busy; consider more --runs or a quieter machine.")
    invalid = [t for t in result.trials if not t.valid]
    for t in invalid[:10]:
        out.append(f"invalid trial ({t.combination.label}, {t.kind}, run {t.repetition}"
                   f"{' warm-up' if t.warmup else ''}): {t.invalid_reason}")
    if len(invalid) > 10:
        out.append(f"... and {len(invalid) - 10} more invalid trials (see --json)")
    agreement = clock_agreement(result.trials)
    if agreement is not None and abs(agreement - 1) > 0.10:
        out.append(f"the server-side clock and wall-minus-handshake disagree by {abs(agreement - 1):.0%} "
                   "(median); treat absolute rates with care")
    return out


def print_report(result: RunResult, console: Console) -> None:
    console.print(environment_header(result))
    console.print()
    if result.summaries():
        console.print(results_table(result))
    hs = handshake_table(result)
    if hs is not None:
        console.print(hs)
    for line in warnings(result):
        console.print(f"[yellow]warning:[/] {line}")
