"""Runs side by side: the same combinations across runs (machines, SSH versions, links), as ratios with
a 95% confidence interval and a decision. Pure functions, no I/O.

Two runs are independent samples (other minutes, often other machines), so nothing pairs their trials
by round: the ratio is intervals.welch_log_ratio_ci over each combination's measured MiB/s (the ratio
of geometric means, Welch's t on the logs), and statistics.compare_pair calls it faster, slower, tied
within the run's --tie margin, or undecided, with the same rules as the ranking inside a run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench.model import intervals, rate_clock, summary
from sshbench.model import statistics as stats
from sshbench.results import Combination, RunResult


@dataclass(frozen=True)
class Ratio:
    """This run's MiB/s over the baseline's for one combination: above 1 is faster."""

    value: float
    low: float  # the 95% confidence interval
    high: float
    decision: stats.Decision  # ordered (faster or slower), tied, or undecided
    lower_is_faster: bool = False  # a ratio of latencies (compare_latency): below 1 is faster

    @property
    def verdict(self) -> str:
        if self.decision == "ordered":
            return "faster" if (self.value < 1) == self.lower_is_faster else "slower"
        return self.decision

    @property
    def interval_known(self) -> bool:
        """False when a run had a single valid trial: no spread, so no interval (and no decision)."""
        return self.low < self.high or self.decision != "undecided"


@dataclass
class ComparedRow:
    combination: Combination
    medians: list[float | None]  # MiB/s per run, None where the run lacks it or has no valid trial
    ratios: list[Ratio | None]  # runs[1:] against runs[0]
    # runs[1:]: True where that run's rate is on another clock than the baseline's (steady state vs the
    # earlier whole-data-phase clock, docs/clock.md): no ratio, the clocks differ
    clocks_differ: list[bool] = field(default_factory=list)

    @property
    def label(self) -> str:
        c = self.combination
        link = c.link
        extra = [
            x
            for x in (
                c.kex,
                None if c.compression == "none" else c.compression,
                None if c.tool == "pipe" else c.tool,
                None if c.direction == "up" else c.direction,
                None if link == "loopback" else f"link {link}",
            )
            if x
        ]
        return f"{c.label} [{', '.join(extra)}]"


@dataclass
class RunHeader:
    label: str  # the run id as shown in column headings
    hostname: str | None
    cpu_model: str | None
    client_ssh_version: str | None
    server_ssh_version: str | None
    target: str | None


@dataclass
class Comparison:
    runs: list[RunHeader]
    rows: list[ComparedRow]  # combinations present in at least two runs
    only_in: dict[str, list[Combination]] = field(default_factory=dict)  # run label -> combinations only it has
    clocks: list[str | None] = field(default_factory=list)  # per run: rate_clock.run_clock
    omits: list[float | None] = field(default_factory=list)  # per steady-state run: the start-up it left out (s)
    capped: list[bool | None] = field(default_factory=list)  # per steady-state run: rate_clock.steady_window_capped
    rekeys: list[bool | None] = field(default_factory=list)  # per steady-state run: rate_clock.rekeys_counted
    warm: list[bool | None] = field(default_factory=list)  # per steady-state run: rate_clock.warm_bursts

    @property
    def run_labels(self) -> list[str]:
        return [r.label for r in self.runs]


def ratio(run_rates: Sequence[float], baseline_rates: Sequence[float], tie_margin: float) -> Ratio | None:
    """run / baseline from each run's measured MiB/s of one combination (None when one has none)."""
    if not run_rates or not baseline_rates:
        return None
    estimate = intervals.welch_log_ratio_ci(run_rates, baseline_rates)
    return Ratio(estimate.ratio, estimate.low, estimate.high, stats.compare_pair(estimate, tie_margin))


def _header(result: RunResult, label: str) -> RunHeader:
    return _header_of(result.environment, label, result.environment.get("target"))


def _header_of(env: dict, label: str, target: str | None) -> RunHeader:
    """A run's header from its environment: what `compare` prints above the runs it lines up."""
    return RunHeader(
        label=label,
        hostname=env.get("hostname"),
        cpu_model=env.get("cpu_model"),
        client_ssh_version=env.get("client_ssh_version"),
        server_ssh_version=env.get("server_ssh_version"),
        target=target,
    )


def compare_runs(results: list[RunResult], labels: list[str] | None = None) -> Comparison:
    """The first run is the baseline. Rows follow the baseline's ranking, then the others' order."""
    labels = labels or [str(r.run_id if r.run_id is not None else i + 1) for i, r in enumerate(results)]
    per_run = [{s.combination: s for s in summary.summaries(r)} for r in results]
    rates = [
        {combo: list(by_round.values()) for combo, by_round in summary.rates_by_round(r.trials).items()}
        for r in results
    ]
    margin = summary.tie_margin(results[0])
    order: list[Combination] = []
    for summaries in per_run:
        order.extend(c for c in summaries if c not in order)
    rows: list[ComparedRow] = []
    only_in: dict[str, list[Combination]] = {}
    for combo in order:
        present = [i for i, summaries in enumerate(per_run) if combo in summaries]
        if len(present) == 1:
            only_in.setdefault(labels[present[0]], []).append(combo)
            continue
        base = per_run[0].get(combo)
        differ = [
            base is not None and combo in s and not rate_clock.same_clock(base.data_clock, s[combo].data_clock)
            for s in per_run[1:]
        ]
        rows.append(
            ComparedRow(
                combination=combo,
                medians=[s[combo].median_mib_s if combo in s else None for s in per_run],
                ratios=[
                    ratio(r.get(combo, []), rates[0].get(combo, []), margin) if base is not None and not d else None
                    for r, d in zip(rates[1:], differ)
                ],
                clocks_differ=differ,
            )
        )
    return Comparison(
        runs=[_header(r, label) for r, label in zip(results, labels)],
        rows=rows,
        only_in=only_in,
        clocks=[rate_clock.run_clock(r.trials) for r in results],
        omits=[rate_clock.steady_omit_s(r) for r in results],
        capped=[rate_clock.steady_window_capped(r) for r in results],
        rekeys=[rate_clock.rekeys_counted(r) for r in results],
        warm=[rate_clock.warm_bursts(r) for r in results],
    )


def _per_run(comparison: Comparison, values: list[Any], text: Callable[[Any], str]) -> str:
    """'run 1: X, run 2: Y' where the runs' values (None: not on the steady clock) differ; '' where they agree."""
    if len({v for v in values if v is not None}) < 2:
        return ""
    return ", ".join(f"run {r.label}: {text(v)}" for r, v in zip(comparison.runs, values) if v is not None)


def clock_lines(comparison: Comparison) -> list[str]:
    """Where runs were measured by different clocks: their rates differ by the start-up, not by speed."""
    if len({c for c in comparison.clocks if c is not None}) < 2:
        # a ratio is still given: the same clock, and either shift is a few percent (docs/clock.md)
        lines = []
        if omits := _per_run(comparison, comparison.omits, lambda o: f"{o:g} s"):
            lines.append(
                f"the steady-state clock left out a different start ({omits}): with 0.2 s it read short trials 5-9% "
                "low, so a difference of that size between these runs is the clock (docs/clock.md)"
            )
        windows = {True: "at most --seconds", False: "to each trial's end"}
        if capped := _per_run(comparison, comparison.capped, lambda c: windows[c]):
            lines.append(
                f"the steady windows differ ({capped}): the rate moves by a few percent after the omitted start, so "
                "a difference of that size between these runs can be the clock (docs/clock.md)"
            )
        counted = {True: "counted", False: "not counted"}
        if rekeys := _per_run(comparison, comparison.rekeys, lambda c: counted[c]):
            lines.append(
                f"rekeys in the rates differ ({rekeys}): a cipher OpenSSH rekeys every 1 GiB (chacha20-poly1305) "
                'reads a few percent higher where they are not counted (docs/clock.md, "Rekeys")'
            )
        kept = {True: "bursts in kept connections", False: "a connection per trial"}
        if warm := _per_run(comparison, comparison.warm, lambda w: kept[w]):
            lines.append(
                f"the rounds after the first differ ({warm}): the same clock, and bursts read fresh connections' "
                "rates to a few percent (1.003x in twelve runs), so a difference of that size can be the method "
                '(docs/clock.md, "Warm sessions")'
            )
        return lines
    names = {rate_clock.EARLIER_CLOCK: "the earlier clock (start-up included)"}
    by = ", ".join(f"run {r.label}: {names.get(c or '', c or '-')}" for r, c in zip(comparison.runs, comparison.clocks))
    return [
        f"the clocks differ ({by}): rates of the steady-state clock leave each connection's start-up out, "
        "so no ratio is given between them (docs/clock.md)"
    ]


def only_in_lines(comparison: Comparison) -> list[str]:
    """'only in run N: ...' lines, so that nothing is silently left out of the side-by-side table."""
    return [
        f"only in run {label}: {', '.join(ComparedRow(c, [], []).label for c in combos)}"
        for label, combos in comparison.only_in.items()
    ]


def header_lines(comparison: Comparison | LatencyComparison) -> list[str]:
    return [
        f"run {r.label}: {r.hostname or '?'} ({r.cpu_model or '?'}), client {r.client_ssh_version or '?'}, "
        f"server {r.server_ssh_version or '?'}, {r.target or '?'}"
        for r in comparison.runs
    ]


# --- across hosts: `sshbench compare --by host` / `--fleet` -----------------------------------------


@dataclass
class HostColumn:
    """One host of a fleet (or any run, labelled): what makes its numbers differ."""

    label: str  # the inventory host name (else hostname, else run id)
    run_id: int | None
    cpu_model: str | None
    aes_ni: bool | None  # the CPU flag; False also when the run masked it (run --no-aesni)
    ssh_version: str | None  # the server's (the host's own sshd)
    crypto_library: str | None  # OpenSSL (or LibreSSL) that ssh is linked with


@dataclass
class HostCell:
    median_mib_s: float
    ci95_mib_s: list[float] | None  # [low, high] of the median (intervals.median_ci)
    valid_trials: int


@dataclass
class HostRow:
    combination: Combination
    cells: list[HostCell | None]  # per host; None where that host did not measure it

    @property
    def slowest(self) -> float | None:
        """The slowest host's median: what a shared policy gets on every host."""
        values = [c.median_mib_s for c in self.cells if c is not None]
        return min(values) if values and len(values) == len(self.cells) else None

    @property
    def label(self) -> str:
        return ComparedRow(self.combination, [], []).label


@dataclass
class HostComparison:
    hosts: list[HostColumn]
    rows: list[HostRow]  # every host measured these: ordered by the slowest host's median, fastest first
    partial: list[HostRow]  # measured by some hosts only


def compare_hosts(results: list[RunResult], labels: list[str]) -> HostComparison:
    hosts = [
        HostColumn(
            label=label,
            run_id=r.run_id,
            cpu_model=r.environment.get("cpu_model"),
            aes_ni=False if r.settings.no_aesni else r.environment.get("aes_ni"),
            ssh_version=r.environment.get("server_ssh_version"),
            crypto_library=r.environment.get("client_crypto_library") or r.environment.get("openssl_version"),
        )
        for r, label in zip(results, labels)
    ]
    per_host = [
        {s.combination: s for s in summary.summaries(r) if s.median_mib_s is not None and s.valid_trials > 0}
        for r in results
    ]
    order: list[Combination] = []
    for measured in per_host:
        order.extend(c for c in measured if c not in order)
    rows = [
        HostRow(
            combo,
            [
                HostCell(m[combo].median_mib_s or 0.0, m[combo].ci95_mib_s, m[combo].valid_trials)
                if combo in m
                else None
                for m in per_host
            ],
        )
        for combo in order
    ]
    complete = sorted((r for r in rows if r.slowest is not None), key=lambda r: -(r.slowest or 0.0))
    return HostComparison(hosts=hosts, rows=complete, partial=[r for r in rows if r.slowest is None])


def host_header_lines(comparison: HostComparison) -> list[str]:
    return [
        f"{h.label} (run {h.run_id}): {h.cpu_model or '?'}"
        f"{'' if h.aes_ni is None else (', AES-NI' if h.aes_ni else ', no AES-NI')}, "
        f"{h.ssh_version or '?'}, {h.crypto_library or '?'}"
        for h in comparison.hosts
    ]


# --- latency runs: `sshbench compare` of two `sshbench latency` runs ---------------------------------


@dataclass
class LatencyRow:
    cipher: str
    link: str
    echo_median_us: list[float | None]  # per run
    ratios: list[Ratio | None]  # runs[1:] against runs[0], of the keystroke round trips: below 1 is faster
    connect_median_ms: list[float | None]

    @property
    def label(self) -> str:
        return self.cipher if self.link in ("loopback", "direct") else f"{self.cipher} [link {self.link}]"


@dataclass
class LatencyComparison:
    runs: list[RunHeader]
    rows: list[LatencyRow]  # (cipher, link) present in at least two runs
    only_in: dict[str, list[str]] = field(default_factory=dict)  # run label -> row labels only it has


def _latency_header(document: dict, label: str) -> RunHeader:
    env = document.get("environment") or {}
    return _header_of(env, label, env.get("target") or (document.get("target") or {}).get("label"))


def latency_ratio(run_rtts: Sequence[float], baseline_rtts: Sequence[float]) -> Ratio | None:
    """run / baseline of the echo round trips (every keystroke of each; None when one has none), with
    the same interval and decision as throughput ratios (Welch on the logs, the default tie margin)."""
    run = [v for v in run_rtts if v > 0]
    base = [v for v in baseline_rtts if v > 0]
    if not run or not base:
        return None
    estimate = intervals.welch_log_ratio_ci(run, base)
    return Ratio(estimate.ratio, estimate.low, estimate.high, stats.compare_pair(estimate), lower_is_faster=True)


def compare_latency(documents: list[dict], labels: list[str]) -> LatencyComparison:
    """Latency documents (store.latency_runs.load) side by side; the first is the baseline."""

    def rows_of(document: dict) -> dict[tuple[str, str], dict]:
        return {
            (str(row.get("cipher")), str(row.get("link"))): row
            for row in document.get("results") or []
            if isinstance(row, dict) and (row.get("echo") or {}).get("n")
        }

    per_run = [rows_of(d) for d in documents]
    order: list[tuple[str, str]] = []
    for rows in per_run:
        order.extend(key for key in rows if key not in order)
    compared: list[LatencyRow] = []
    only_in: dict[str, list[str]] = {}
    for key in order:
        present = [i for i, rows in enumerate(per_run) if key in rows]
        row = LatencyRow(key[0], key[1], [], [], [])
        if len(present) == 1:
            only_in.setdefault(labels[present[0]], []).append(row.label)
            continue
        base = per_run[0].get(key)
        for index, rows in enumerate(per_run):
            this = rows.get(key)
            row.echo_median_us.append((this.get("echo") or {}).get("median_us") if this else None)
            row.connect_median_ms.append((this.get("connect") or {}).get("median_ms") if this else None)
            if index > 0:
                row.ratios.append(
                    latency_ratio(this.get("rtts_us") or [], base.get("rtts_us") or []) if this and base else None
                )
        compared.append(row)
    return LatencyComparison(
        runs=[_latency_header(d, label) for d, label in zip(documents, labels)], rows=compared, only_in=only_in
    )
