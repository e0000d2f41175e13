"""What continuous-benchmarking dashboards ingest (issue 65): Bencher Metric Format (BMF) and github-action-benchmark's
`customBiggerIsBetter` list, for a run (`run --bmf/--gab`, `report --format bmf|gab`) and for a check (`check
--bmf/--gab`: NEW/OLD per row and for all rows). Pure: plain dicts and lists in, JSON text out.

- BMF (bencher.dev, "Bencher Metric Format"): `{benchmark: {measure: {value, lower_value, upper_value}}}`; the bounds
  are optional, so a row with one valid trial (no interval) has its value alone.
- github-action-benchmark (`tool: customBiggerIsBetter`): `[{name, unit, value, range?, extra?}]`. Its `range` is
  read as `± N` (a symmetric spread), so the median's 95% interval, which is not symmetric, is given there as its
  larger half and in full in `extra`.

A benchmark is named by everything that tells its row apart and stays the same from run to run of one set-up (a
dashboard's line is a name): the cipher (and MAC), the kex in brackets, then each other axis not at its default
(`tool=scp`, `link=lan1g`, `sshd_build=OpenSSH_10.0p2`). A check's rows are named as `check` prints them."""

from __future__ import annotations

import dataclasses
import json
import math

from sshbench.model import summary
from sshbench.model.gate import Checked, GateResult
from sshbench.results import AXES, Combination, RunResult

THROUGHPUT = "throughput-mib-s"  # BMF measures: Bencher creates a measure the first time its name is sent
CPU = "cpu-s-per-gib"  # ssh + sshd CPU seconds per GiB moved: lower is better
RATIO = "new-old-ratio"  # a check's NEW/OLD (below 1: NEW slower)
NEW_RATE, OLD_RATE = "new-mib-s", "old-mib-s"
NAMED_FIRST = ("cipher", "mac", "kex")
DEFAULTS = {f.name: f.default for f in dataclasses.fields(Combination)}


def benchmark_name(combo: Combination) -> str:
    """`aes128-gcm@openssh.com [curve25519-sha256]`, then `axis=value` for each other axis off its default."""
    extra = [
        f"{a.name}={getattr(combo, a.name)}"
        for a in AXES
        if a.name not in NAMED_FIRST and getattr(combo, a.name) != DEFAULTS.get(a.name)
    ]
    return " ".join([combo.label_beside(("streams", "builds")), f"[{combo.kex}]", *extra])


def _bounds(low: float | None, high: float | None) -> tuple[float, float] | None:
    """An interval both formats can carry: JSON has no infinity (an interval from one round can be unbounded)."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return None
    return float(low), float(high)


def _metric(value: float, interval: list[float] | tuple[float | None, float | None] | None) -> dict:
    metric: dict = {"value": value}
    if interval is not None and (bounds := _bounds(interval[0], interval[1])) is not None:
        metric["lower_value"], metric["upper_value"] = bounds
    return metric


def _measured(result: RunResult) -> list[summary.Summary]:
    return [s for s in summary.summaries(result) if s.median_mib_s is not None]


def _interval(s: summary.Summary) -> list[float] | None:
    """The median's interval (intervals.median_ci), None where it covers nothing (one trial: a point). Below 6
    trials it is the range of the trials, covering less than 95% (its real level is said in the GAB's `extra`)."""
    return s.ci95_mib_s if s.ci_coverage else None


def _interval_words(s: summary.Summary) -> str:
    low, high = s.ci95_mib_s or (None, None)
    if not s.ci_coverage or low is None or high is None:
        return "no interval (one trial)"
    level = "95% CI" if s.ci_coverage >= 0.95 else f"{s.ci_coverage:.0%} interval (the trials' range)"
    return f"{level} of the median {low:.1f}-{high:.1f} MiB/s"


def run_bmf(result: RunResult) -> dict:
    """Each measured row: its median MiB/s with the median's 95% interval, and its CPU s/GiB with its interval."""
    out: dict = {}
    for s in _measured(result):
        assert s.median_mib_s is not None
        measures = {THROUGHPUT: _metric(s.median_mib_s, _interval(s))}
        if s.client_cpu_s_per_gib is not None and s.server_cpu_s_per_gib is not None:
            # the table's figure (the client's median plus the server's); its interval is the median's of their
            # sums per trial, which need not hold that figure: kept only where it does
            cpu = s.client_cpu_s_per_gib + s.server_cpu_s_per_gib
            cpu_interval = s.cpu_s_per_gib_ci95 if s.ci_coverage else None
            if cpu_interval and not cpu_interval[0] <= cpu <= cpu_interval[1]:
                cpu_interval = None
            measures[CPU] = _metric(cpu, cpu_interval)
        out[benchmark_name(s.combination)] = measures
    return out


def _range(value: float, low: float | None, high: float | None) -> str | None:
    """`± N`: the larger half of an interval that need not be symmetric (github-action-benchmark reads one number)."""
    if (bounds := _bounds(low, high)) is None:
        return None
    return f"± {max(value - bounds[0], bounds[1] - value):.4g}"


def _entry(name: str, unit: str, value: float, low: float | None, high: float | None, extra: str) -> dict:
    entry: dict = {"name": name, "unit": unit, "value": value}
    if (spread := _range(value, low, high)) is not None:
        entry["range"] = spread
    entry["extra"] = extra
    return entry


def run_gab(result: RunResult) -> list[dict]:
    """Each measured row's median MiB/s (bigger is better), its interval in `range` and, exactly, in `extra`."""
    where = f"run {result.run_id}" if result.run_id is not None else "a run"
    host = result.environment.get("hostname")
    out = []
    for s in _measured(result):
        assert s.median_mib_s is not None
        low, high = _interval(s) or (None, None)
        extra = f"{_interval_words(s)}; {s.valid_trials} valid trials; {where}" + (f" on {host}" if host else "")
        out.append(_entry(benchmark_name(s.combination), "MiB/s", s.median_mib_s, low, high, extra))
    return out


def _checked(result: GateResult) -> list[Checked]:
    return [c for c in [*result.rows, result.overall] if c.ratio is not None]


def check_bmf(result: GateResult) -> dict:
    """Each row's and all rows' NEW/OLD with its interval, and the rows' OLD and NEW median MiB/s."""
    out: dict = {}
    for c in _checked(result):
        assert c.ratio is not None
        measures = {RATIO: _metric(c.ratio, (c.low, c.high))}
        if c.new_mib_s is not None and c.old_mib_s is not None:
            measures[NEW_RATE], measures[OLD_RATE] = {"value": c.new_mib_s}, {"value": c.old_mib_s}
        out[c.label] = measures
    return out


def check_gab(result: GateResult) -> list[dict]:
    """Each row's and all rows' NEW/OLD (bigger is better: below 1, NEW is slower), the decision in `extra`."""
    out = []
    for c in _checked(result):
        assert c.ratio is not None
        interval = f"{c.confidence:.1%} CI {c.low:.3f}-{c.high:.3f}" if c.low is not None else "no interval"
        extra = (
            f"{interval}; {c.decision} at threshold {result.threshold:.0%}; {result.new} (NEW) against {result.old}"
            f" (OLD), {result.mode}"
        )
        out.append(_entry(f"{c.label} NEW/OLD", "NEW/OLD", c.ratio, c.low, c.high, extra))
    return out


def text(document: dict | list) -> str:
    return json.dumps(document, indent=2) + "\n"


def render_bmf(result: RunResult) -> str:
    return text(run_bmf(result))


def render_gab(result: RunResult) -> str:
    return text(run_gab(result))
