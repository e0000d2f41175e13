"""The terminal report: environment header, ranked results, handshakes, warnings (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from sshbench.answers.answer_block import own_rows_setup
from sshbench.baselines import analysis as baseline_analysis
from sshbench.baselines import report as baseline_report
from sshbench.model import intervals, rate_clock, run_stats, summary
from sshbench.model import statistics as stats
from sshbench.naming import shown_apart
from sshbench.report import cells, conclusion, model, ranked
from sshbench.report import compact as compact_report
from sshbench.report import link_table as link_report
from sshbench.report.cells import CONFIDENCE
from sshbench.report.notes import clock_notes, implementation_notes
from sshbench.report.run_warnings import warnings
from sshbench.results import AXES, RunResult, TrialKind
from sshbench.security import report_hooks as security_hooks


def _transfer_line(result: RunResult) -> str:
    """tool, direction, sink, compression of the run as one line (lists where several were swept)."""
    combos = result.combinations

    def values(field: str) -> str:
        found = list(dict.fromkeys(getattr(c, field) for c in combos)) or ["-"]
        return ",".join(found)

    ratios = result.environment.get("payload_zlib_ratio") or {}
    zlib = "; zlib ratio " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()) if ratios else ""
    return (
        f"tool {values('tool')}; direction {values('direction')}; sink {values('sink')}; "
        f"compression {values('compression')}{zlib}"
    )


# Warm sessions (sshbench.measure.warm): how the rounds after a row's first were measured
WARM_LINE = "kept open per row: rounds after its first are bursts in it (--no-warm: one each)"


def _trials_line(result: RunResult, compact: bool = False) -> str:
    s = result.settings
    rounds = summary.rounds_run(result)
    seed = s.seed
    shuffled = "shuffled" if compact else "order shuffled"
    order = f"interleaved, {shuffled} (seed {seed})" if seed is not None else "interleaved"
    if s.adaptive and compact:
        return f"{rounds} rounds (auto, budget {s.budget_s:g} s) + {s.warmup} warm-up, {order}"
    if s.adaptive:
        return f"runs auto: {rounds} rounds (at least {s.runs}, budget {s.budget_s:g} s) + {s.warmup} warm-up, {order}"
    return f"{s.runs} runs + {s.warmup} warm-up, {order}"


def environment_header(result: RunResult, compact: bool = False) -> Table:
    """Where the run was measured. `compact` (the default report): the crypto flags on the CPU's line, and
    client and server on one line when they are the same build."""
    env = result.environment
    flags = env.get("crypto_flags") or {}
    flag_names = " ".join(f"{k}{'' if v else ' (no)'}" for k, v in flags.items() if v) or "none"
    client = f"{env.get('client_ssh_version')}, {env.get('client_crypto_library') or env.get('openssl_version')}"
    server = f"{env.get('server_ssh_version')} (strict kex: {env.get('server_strict_kex')})"
    if compact:
        machine = [("CPU", f"{env.get('cpu_model')} ({env.get('cores')} cores; {flag_names})")]
    else:
        machine = [("CPU", f"{env.get('cpu_model')} ({env.get('cores')} cores)"), ("Crypto flags", flag_names)]
    if compact and env.get("server_ssh_version") and env.get("server_ssh_version") == env.get("client_ssh_version"):
        ends = [("Client, server", f"{client}; both ends (strict kex: {env.get('server_strict_kex')})")]
    else:
        ends = [("Client", client), ("Server", server)]
    rows = [
        *machine,
        *([] if compact else [("Kernel / OS", f"{env.get('kernel')} / {env.get('os')}")]),  # compact: --wide
        *ends,
        *_build_rows(env),
        ("Target", ranked.target_text(result)),
        ("Payload", f"{env.get('payload_kind')}, {env.get('payload_size')}"),
        ("Trials", _trials_line(result, compact)),
        *([("Connections", WARM_LINE)] if rate_clock.warm_bursts(result) else []),
        ("Transfer", _transfer_line(result)),
    ]
    if result.settings.server_cpu is not None:  # --server-cpu: an emulated slow server
        rows.append(("Server CPU", f"emulated: {result.settings.server_cpu:g} cores (cgroup CPU quota on the sshd)"))
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        table.add_row(key, value)
    return table


def _build_rows(env: dict) -> list[tuple[str, str]]:
    """A build sweep (--ssh A,B / --sshd A,B): every build swept, with its path."""
    found = env.get("builds") or {}
    return [
        (f"{side} builds", ", ".join(f"{b['label']} ({b['path']})" for b in found[side]))
        for side in ("ssh", "sshd")
        if found.get(side)
    ]


def results_table(result: RunResult) -> Table:
    """--wide: every column of the report model (report/model.py)."""
    report = model.build(result)
    kexes = report.kexes
    # One kex for all rows: name it in the title rather than repeat it in a column.
    title = "Throughput (steady state), fastest first" + ("" if len(kexes) > 1 else f"; kex {next(iter(kexes), '-')}")
    table = Table(title=title, title_justify="left")
    figures = [
        *(["wire_ratio"] if report.any_wire_ratio else []),
        "median_mib_s",
        "startup",
        "cv",
        "relative_to_fastest",
        "client_cpu_s_per_gib",
        "server_cpu_s_per_gib",
        "valid",
        "vs_raw_tcp",
        "bound_by",
    ]
    columns = [*report.identity_columns(), *(model.COLUMNS[k] for k in figures)]
    for column in columns:
        table.add_column(column.title, justify="right" if column.numeric else "left")
    table.add_column("verdict", justify="left")
    for row in report.rows:
        table.add_row(
            *(c.cell(row) for c in columns),
            security_hooks.styled_verdict(row.verdict),
            style=None if row.summary.valid_trials else "red",
        )
    return table


def decision_lines(result: RunResult, wide: bool = False) -> list[str]:
    """Under the table: what the ± means where it is below 95%, ties, why a median may read above the row
    ranked before it, and the undecided pairs: each with its reason (`wide`), else one line for all."""
    out = []
    rows = [s for s in summary.summaries(result) if not s.combination.remedy]  # the remedies: a block of their own
    short = sorted({s.valid_trials for s in rows if s.ci_coverage is not None and s.ci_coverage < CONFIDENCE})
    if short:
        levels = ", ".join(f"{intervals.median_ci_coverage(n):.0%} at {n}" for n in short if n > 0)
        out.append(f"± is the 95% CI of the median; marked ~, fewer than 6 trials: the min-max range ({levels} trials)")
    else:
        out.append(
            f"± is the 95% confidence interval of the median; x fastest: {run_stats.ratio_method(result)}, 95% CI"
        )
    out.extend(run_stats.model_notes(result))
    margin = summary.tie_margin(result)
    if any(s.rank_label and s.rank_label.startswith("=") for s in rows):
        out.append(f"=N: tied (the 95% CI of their ratio lies within ±{margin:.0%}, --tie)")
    setup = own_rows_setup(s.combination for s in rows)  # a run over two tools has two rows called "aes128-gcm"
    if line := median_order_line(rows, setup):
        out.append(line)
    pairs = summary.undecided(result)
    whys = [stats.why_undecided(p.estimate, margin) for p in pairs]
    if wide:
        for pair, why in zip(pairs, whys, strict=True):
            e = pair.estimate
            out.append(
                f"{' vs '.join(shown_apart([pair.faster, pair.slower], setup))}: undecided "
                f"(ratio {cells.factor(e.ratio)}, {cells.factor(e.low)}-{cells.factor(e.high)}); {why.sentence(margin, e.n_pairs)}"
            )
    elif pairs:
        out.append(undecided_summary(whys, margin))
    return out


def median_order_line(rows: list[summary.Summary], setup: list[str] | None = None) -> str | None:
    """One line when a row's median reads above the row ranked before it: the order is x fastest's, whose rounds are
    paired (or compared through the model of the run), not the medians'."""
    above = [
        (s, prev)
        for prev, s in zip(rows, rows[1:], strict=False)
        if s.median_mib_s
        and prev.median_mib_s
        and s.median_mib_s > prev.median_mib_s
        and summary.implementation_pair(s.combination) == summary.implementation_pair(prev.combination)
    ]
    if not above:
        return None
    s, prev = above[0]
    more = f" (+{len(above) - 1} more)" if len(above) > 1 else ""
    lower, upper = shown_apart([s.combination, prev.combination], setup or [])
    return f"order: by x fastest (rounds paired), so {lower}'s higher median sits below {upper}'s{more}"


def undecided_summary(whys: list, margin: float) -> str:
    """All undecided neighbour pairs in one line, counted by reason (statistics.why_undecided)."""
    counts: dict[str, int] = {}
    for why in whys:
        counts[why.reason] = counts.get(why.reason, 0) + 1
    parts = []
    if counts.get("few-rounds"):
        parts.append(f"{counts['few-rounds']} too few rounds")
    if counts.get("more-rounds"):
        most = max(w.more for w in whys if w.reason == "more-rounds")
        parts.append(f"{counts['more-rounds']} need up to {most} more rounds")
    if counts.get("margin"):
        parts.append(f"{counts['margin']} at the ±{margin:.0%} margin")
    if counts.get("spread"):
        parts.append(f"{counts['spread']} too scattered")
    return f"undecided: {len(whys)} pairs (--wide: each): {', '.join(parts)}"


# A handshake summary's axes besides its kex: the connection's shape (results.AXES), which set-up depends on.
_HANDSHAKE_AXES = tuple(axis.name for axis in AXES if axis.connection and axis.name != "kex")


def handshake_lines(result: RunResult, most: int = 3) -> list[str] | None:
    """The set-up figures as a line per kex (the default report), where only the kex varies and there are at
    most `most`; None: the table is needed (handshake_table)."""
    handshakes = summary.handshakes(result)
    if not handshakes or len(handshakes) > most:
        return None
    if any(len({getattr(h, f, None) for h in handshakes}) > 1 for f in _HANDSHAKE_AXES):
        return None
    return [
        f"{'set-up the transfers used' if h.setup_only else 'set-up (a connection with no data)'}: {h.kex} "
        f"{cells.number(h.median_ms, '.0f')} ms ({cells.number(h.min_ms, '.0f')}-{cells.number(h.max_ms, '.0f')}), "
        f"client CPU {cells.number(h.client_cpu_ms, '.0f')} ms"
        for h in handshakes
    ]


def handshake_table(result: RunResult) -> Table | None:
    handshakes = summary.handshakes(result)
    if not handshakes:
        return None
    gated = any(
        t.kind == TrialKind.HANDSHAKE and (t.per_stream or [{}])[0].get("released_s") is not None for t in result.trials
    )
    table = Table(
        title="Connection set-up (a same-shape connection with no data: handshake, auth, session, "
        "remote shell, tool start-up)",
        title_justify="left",
        # -P N with the start barrier (sshbench.measure.start_gate): the set-up is outside the data phase; what is
        # left inside the transfers' wall time is this
        caption="-P N (pipe): from the start barrier's release to the last stream's end; the set-up before it "
        "is per stream in the JSON (at_gate_s)"
        if gated
        else None,
        caption_justify="left",
    )
    varying = [f for f in _HANDSHAKE_AXES if len({getattr(h, f, None) for h in handshakes}) > 1]
    table.add_column("kex")
    if varying:
        table.add_column("/".join(f.removesuffix("_build") for f in varying))
    if any(f.endswith("_build") for f in varying):  # a build sweep: each kex's builds together
        handshakes = sorted(handshakes, key=lambda h: (h.kex, h.ssh_build, h.sshd_build))
    for name in ("median ms", "min-max ms", "client CPU ms"):
        table.add_column(name, justify="right")
    for h in handshakes:
        setup = (
            [
                "/".join(
                    ("zlib" if h.compression != "none" else "no-comp")
                    if f == "compression"
                    else f"-P {h.streams}"
                    if f == "streams"
                    else cells.build(getattr(h, f))
                    if f.endswith("_build")
                    else str(getattr(h, f))
                    for f in varying
                )
            ]
            if varying
            else []
        )
        table.add_row(
            h.kex + ranked.setup_only_note(h),  # the builds have their column
            *setup,
            cells.number(h.median_ms, ".0f"),
            f"{cells.number(h.min_ms, '.0f')}-{cells.number(h.max_ms, '.0f')}",
            cells.number(h.client_cpu_ms, ".1f"),
        )
    return table


def print_report(result: RunResult, console: Console, wide: bool = False, quiet: bool = False) -> None:
    """The conclusion block first (report/conclusion.py), then the table that fits the console (every column
    with `wide`), the notes, the environment and the baselines. `quiet`: the conclusion block only."""
    concluded = conclusion.print_block(result, console)
    if quiet:
        return
    if concluded:
        console.print()
    if wide:
        console.print(environment_header(result))
        console.print()
    if summary.summaries(result):
        if wide:
            console.print(results_table(result))
        else:
            console.print(compact_report.results_table(result, console.width))
        for line in [*decision_lines(result, wide), *([] if wide else compact_report.legend(result))]:
            console.print(line, markup=False, highlight=False)
        for note in security_hooks.report_notes(summary.summaries(result), result.environment, each=wide):
            console.print(f"security: {note}", markup=False, highlight=False)
        for note in implementation_notes(result):  # other implementations: what their rows mean
            console.print(f"implementations: {note}", markup=False, highlight=False)
        for note in clock_notes(result):  # rates not on the steady-state clock (earlier runs, trials too short)
            console.print(f"clock: {note}", markup=False, highlight=False)
        for note in baseline_report.verdict_notes(baseline_analysis.compare(result)) if wide else []:
            console.print(f"bound by {note}", markup=False, highlight=False)
        for sweep in baseline_analysis.stream_sweeps(result):  # -P 1,2,...: how many streams are enough
            if line := sweep.conclusion():
                console.print(f"streams: {line}", markup=False, highlight=False)
    if not wide:
        console.print()
        console.print(environment_header(result, compact=True))
    baselines = baseline_report.baselines_table(result, compact=not wide)
    if baselines is not None:
        console.print(baselines)
    links = link_report.links_table(result)  # emulated links: profile next to achieved rate and RTT
    if links is not None:
        console.print(links)
        for line in (
            *filter(None, [link_report.method_legend(result)]),
            *link_report.buffer_lines(result),
            *link_report.crossover_lines(result),
            *link_report.window_lines(result, baseline_analysis.compare(result)),
        ):
            console.print(line, markup=False, highlight=False)
    setup = handshake_lines(result) if not wide else None
    hs = handshake_table(result) if setup is None else None
    for line in setup or []:
        console.print(line, markup=False, highlight=False)
    if hs is not None:
        console.print(hs)
    for line in [*warnings(result, compact=not wide), *link_report.over_rate_warnings(result)]:
        console.print(f"[yellow]warning:[/] {line}")
