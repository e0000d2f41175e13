"""Runs side by side: the same combinations across runs (machines, SSH versions, links), as ratios of
medians with an uncertainty propagated from each run's spread. Pure functions, no I/O.

The uncertainty follows hyperfine's relative speed: for r = a / b with standard deviations sa, sb,
sr = r * sqrt((sa/a)^2 + (sb/b)^2). sshbench's centre is the median, so a and b are medians and
sa/a, sb/b are each combination's coefficient of variation (stdev / mean of its trials' MiB/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sshbench import summary
from sshbench.results import Combination, RunResult
from sshbench.summary import Summary


@dataclass(frozen=True)
class Ratio:
    value: float  # this run's median / the baseline's median: > 1 is faster
    uncertainty: float | None  # one standard deviation; None when a run had a single valid trial


@dataclass
class ComparedRow:
    combination: Combination
    medians: list[float | None]  # MiB/s per run, None where the run lacks it or has no valid trial
    ratios: list[Ratio | None]  # runs[1:] against runs[0]

    @property
    def label(self) -> str:
        c = self.combination
        link = getattr(c, "link", "loopback")
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

    @property
    def run_labels(self) -> list[str]:
        return [r.label for r in self.runs]


def ratio(run: Summary, baseline: Summary) -> Ratio | None:
    """run / baseline of median MiB/s, with hyperfine's propagation of the relative spreads."""
    if not run.median_mib_s or not baseline.median_mib_s:
        return None
    value = run.median_mib_s / baseline.median_mib_s
    if run.cv is None or baseline.cv is None:
        return Ratio(value, None)
    return Ratio(value, value * math.sqrt(run.cv**2 + baseline.cv**2))


def _header(result: RunResult, label: str) -> RunHeader:
    env = result.environment
    return RunHeader(
        label=label,
        hostname=env.get("hostname"),
        cpu_model=env.get("cpu_model"),
        client_ssh_version=env.get("client_ssh_version"),
        server_ssh_version=env.get("server_ssh_version"),
        target=env.get("target"),
    )


def compare_runs(results: list[RunResult], labels: list[str] | None = None) -> Comparison:
    """The first run is the baseline. Rows follow the baseline's ranking, then the others' order."""
    labels = labels or [str(r.run_id if r.run_id is not None else i + 1) for i, r in enumerate(results)]
    per_run = [{s.combination: s for s in summary.summaries(r)} for r in results]
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
        rows.append(
            ComparedRow(
                combination=combo,
                medians=[s[combo].median_mib_s if combo in s else None for s in per_run],
                ratios=[ratio(s[combo], base) if base is not None and combo in s else None for s in per_run[1:]],
            )
        )
    return Comparison(runs=[_header(r, label) for r, label in zip(results, labels)], rows=rows, only_in=only_in)


def only_in_lines(comparison: Comparison) -> list[str]:
    """'only in run N: ...' lines, so that nothing is silently left out of the side-by-side table."""
    return [
        f"only in run {label}: {', '.join(ComparedRow(c, [], []).label for c in combos)}"
        for label, combos in comparison.only_in.items()
    ]


def header_lines(comparison: Comparison) -> list[str]:
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
    ci95_mib_s: list[float] | None  # [low, high] of the median (statistics.median_ci)
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
            aes_ni=False if getattr(r.settings, "no_aesni", False) else r.environment.get("aes_ni"),
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
