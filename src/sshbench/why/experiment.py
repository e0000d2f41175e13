"""`run --why`: slow one resource at a time and measure what it costs (causal, not correlational).

After the measured rounds, for the fastest combination (`--why all`: every row), rounds of one
unthrottled trial and one trial per possible throttle (why/throttles.py), in a shuffled order
within each round; each throttled trial is paired with its round's unthrottled one, and
baselines/sensitivity.py turns the pairs into a sensitivity with a paired 95% CI and the verdict.
The experiment's trials are not the run's trials (they never enter the ranking); their rates are
kept in the block, per round. The block goes to `result.baselines["why"]`.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from sshbench.baselines import sensitivity
from sshbench.errors import RunError
from sshbench.host.cleanup import Cleanup
from sshbench.measure.budget import Budget
from sshbench.measure.payload import size_for_rate
from sshbench.measure.plan import ScheduledTrial
from sshbench.measure.steady import OMIT_S
from sshbench.measure.trial import TrialOverlay
from sshbench.model import summary
from sshbench.results import STEADY_STATE, Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.targets.base import Target
from sshbench.targets.cpu_quota import CpuQuotaError
from sshbench.units import MIB
from sshbench.why.throttles import Plan, Throttle, plan_for

Measure = Callable[[ScheduledTrial, TrialOverlay], Trial]
MIN_ROUNDS = 3  # paired_ratio_ci's paired form needs 3 pairs; fewer is refused by --why-rounds
# Rounds a --budget run keeps time for; past them up to --why-rounds (settings.why_rounds, 6) while the budget lasts.
# Simulated loopback experiments (client 44%, server 52%, each pair's scatter 4-24% as measured here) named the same
# limit in 84% of runs at 3 rounds, 95% at 4 and 99% at 6, their cost intervals ±12, ±9 and ±7 points at the median
# (tests/test_why.py, docs/why.md).
RESERVED_ROUNDS = 4
DEFAULT_ROUNDS = 6
# The experiment's trials' data phase (the run's may be shorter): 0.25 s of steady part after the omitted start
# (steady.OMIT_S); with less, an unthrottled trial lost its steady part where its throttled pair kept one, and
# the pair then compared two clocks.
WHY_SECONDS = OMIT_S + 0.25
REPETITION_BASE = 10_000  # the experiment's trials' repetition numbers: never a run's round


def _overlay(prefix: list[str], throttle: Throttle | None) -> TrialOverlay:
    """A trial whose clients start under the experiment's prefix, with one throttle applied after the
    target's own before_trial() (an emulated link is switched first, then throttled)."""
    return TrialOverlay(client_prefix=tuple(prefix), throttle=throttle.apply if throttle is not None else None)


def combinations_to_probe(result: RunResult, mode: str) -> list[Combination]:
    """`fastest`: the first-ranked row of the first client/server pair (the conclusion's); `all`: every row."""
    rows = [s for s in summary.summaries(result) if s.median_mib_s is not None and s.rank is not None]
    if not rows:
        return []
    if mode == "all":
        return [s.combination for s in rows]
    pair = summary.implementation_pair(rows[0].combination)
    rows = [s for s in rows if summary.implementation_pair(s.combination) == pair]
    return [min(rows, key=lambda s: s.rank or 0).combination]


def _raw_tcp_median(result: RunResult, link: str) -> float | None:
    rates = [
        t.mib_s
        for t in result.trials
        if t.kind == TrialKind.RAW_TCP and t.valid and t.mib_s and t.combination.link == link
    ]
    return statistics.median(rates) if rates else None


def _window_mib_s(result: RunResult, link: str) -> float | None:
    links = (result.baselines or {}).get("links") or {}
    details = links.get(link) if isinstance(links, dict) else None
    if not isinstance(details, dict) or not details.get("rtt_s") or not details.get("window_bytes"):
        return None
    return float(details["window_bytes"]) / (1024 * 1024) / float(details["rtt_s"])


def _reader_rate(trial: Trial) -> float | None:
    """The trial's rate on the earlier clock (the server's reader where the tool has one), start-up included:
    the steady-state clock keeps it beside its own (Trial.whole_data_s)."""
    seconds = trial.whole_data_s if trial.data_clock == STEADY_STATE else trial.data_s
    return trial.payload_bytes / MIB / seconds if seconds and trial.payload_bytes > 0 else None


def experiment(
    *,
    result: RunResult,
    combo: Combination,
    target: Target,
    measure: Measure,
    cleanup: Cleanup,
    rounds: int,
    rng: random.Random,
    budget: Budget | None = None,
) -> dict:
    """One combination's experiment: its block entry (throttles with pairs and sensitivities, verdict)."""
    started = time.monotonic()
    plan: Plan = plan_for(target, combo, _raw_tcp_median(result, combo.link))
    ready: list[Throttle] = []
    for throttle in plan.possible:
        try:
            throttle.setup(cleanup)
            ready.append(throttle)
        except (CpuQuotaError, RunError, OSError) as err:
            throttle.teardown()
            throttle.reason = f"could not be set up: {err}"
    prefix = [part for t in ready for part in t.prefix()]
    base: dict[int, float] = {}
    slow: dict[str, dict[int, float]] = {t.resource: {} for t in ready}
    invalid: list[str] = []
    # The server-CPU pairs are read on the server's reader clock on both sides: under a CPU quota sshd takes
    # data in bursts while the kernel keeps acknowledging into the socket buffer, and the connection's counters
    # (the steady-state clock) read the buffer filling: a why run read throttled trials at 0.125 core faster
    # than unthrottled ones at 0.25 (69-85 vs 36-101 MiB/s). clock.QUOTA_NOTE.
    base_reader: dict[int, float] = {}
    try:
        # One unthrottled trial first, not counted: the first connection after the server moved into
        # its group (and its client into ours) ran ~half as fast in a run here (83 vs 170-235 MiB/s).
        measure(
            ScheduledTrial(combo, TrialKind.TRANSFER, REPETITION_BASE - 1, True),
            _overlay(prefix, None),
        )
        round_s = 0.0  # the longest round so far: a round past RESERVED_ROUNDS starts only if one more fits
        for r in range(rounds):
            round_started = time.monotonic()
            if r >= RESERVED_ROUNDS and budget is not None and not budget.fits(round_s):
                break
            order: list[Throttle | None] = [None, *ready]
            rng.shuffle(order)
            for step in order:
                item = ScheduledTrial(combo, TrialKind.TRANSFER, REPETITION_BASE + r, False)
                try:
                    trial = measure(item, _overlay(prefix, step))
                finally:
                    if step is not None:
                        step.undo(target, combo)
                rate = trial.mib_s if trial.valid else None
                if rate:
                    (base if step is None else slow[step.resource])[r] = rate
                    if step is None and (reader := _reader_rate(trial)):
                        base_reader[r] = reader
                    if step is not None and step.resource == "server-cpu" and (reader := _reader_rate(trial)):
                        slow[step.resource][r] = reader
                else:
                    invalid.append(trial.invalid_reason or "no rate")
            round_s = max(round_s, time.monotonic() - round_started)
    finally:
        for throttle in ready:
            throttle.teardown()
    entries = []
    for throttle in plan.throttles:
        entry = throttle.to_json()
        if throttle.possible:
            pairs = slow.get(throttle.resource, {})
            against = base_reader if throttle.resource == "server-cpu" else base
            entry["rounds"] = [
                {"round": r, "unthrottled_mib_s": round(against[r], 3), "throttled_mib_s": round(pairs[r], 3)}
                for r in sorted(against.keys() & pairs.keys())
            ]
            entry.update(sensitivity.sensitivity(against, pairs, throttle.slowdown) or {"sensitivity": None})
        entries.append(entry)
    median = statistics.median(base.values()) if base else None
    verdict = sensitivity.decide(entries, sensitivity.SLOWDOWN, median, _window_mib_s(result, combo.link))
    return {
        "combination": {
            k: getattr(combo, k)
            for k in (
                "cipher",
                "mac",
                "kex",
                "compression",
                "tool",
                "direction",
                "sink",
                "payload",
                "server",
                "client",
                "link",
                "streams",
            )
        },
        "label": combo.label,
        "unthrottled_mib_s": None if median is None else round(median, 3),
        "throttles": entries,
        "verdict": verdict,
        "invalid_trials": invalid,
        "seconds": round(time.monotonic() - started, 2),
    }


def run_experiments(
    *,
    result: RunResult,
    mode: str,
    targets: dict[str, Target],
    primary: Target,
    measure: Measure,
    cleanup: Cleanup,
    rounds: int,
    seed: int | None,
    budget: Budget | None = None,
) -> dict:
    """The `baselines.why` block for the run (mode `fastest` or `all`)."""
    started = time.monotonic()
    rng = random.Random((seed or 0) + 25)
    block: dict = {
        "mode": mode,
        "slowdown": sensitivity.SLOWDOWN,
        "high": sensitivity.HIGH,
        "rounds": rounds,
        "method": "paired rounds: (1 - throttled/unthrottled) / slowdown, paired log-t 95% CI (docs/why.md)",
        "combinations": [],
    }
    for combo in combinations_to_probe(result, mode):
        block["combinations"].append(
            experiment(
                result=result,
                combo=combo,
                target=targets.get(combo.server, primary),
                measure=measure,
                cleanup=cleanup,
                rounds=rounds,
                rng=rng,
                budget=budget,
            )
        )
    block["seconds"] = round(time.monotonic() - started, 2)
    return block


def throttle_count(target: Target, combo: Combination) -> int:
    """How many throttles would run for `combo` on `target` (the budget's reserve)."""
    return len(plan_for(target, combo, None).possible) if combo is not None else 0


def experiment_sizes(
    sizes: dict[Combination, int], rates: dict[Combination, float], settings: RunSettings
) -> dict[Combination, int]:
    """The experiment's trials' sizes: about WHY_SECONDS of data (the run's own may have shrunk to 0.25 s to fit
    --budget): a throttle's cost is read from pairs, and ~40 ms stalls are 16% of 0.25 s. Sized for it at the row's
    measured steady rate (`rates`), not from the run's own size: that one holds the omitted start-up on top of its
    target, rounded up the ladder (768 MiB for aes128-gcm at ~1100 MiB/s), and a throttled trial runs it at half
    speed: a default run's experiment took 20 s. Under --server-cpu the run's size also covers a channel window
    (calibration._size_for): kept as a floor. --size and --file: the run's sizes."""
    if settings.size or settings.file:
        return sizes
    floor = settings.server_cpu is not None
    return {
        c: max(size if floor else 0, size_for_rate(rates[c], WHY_SECONDS, settings.max_size)) if c in rates else size
        for c, size in sizes.items()
    }


def experiment_trials(settings: RunSettings, target: Target, combos: list[Combination]) -> int:
    """How many trials the default experiment (--why fastest) adds, for --budget's reserve (0 when it will not run).
    The reserve keeps time for RESERVED_ROUNDS; past them the experiment runs on only
    while the budget lasts (its deadline), so the ranking's rounds come first: a default run that reserved all 4
    spent 20 of its 50 s on the experiment and stopped its ranking at 3 rounds."""
    if settings.why_mode() != "fastest" or not combos:
        return 0
    rounds = min(settings.why_rounds, RESERVED_ROUNDS) if settings.adaptive else settings.why_rounds
    return 1 + rounds * (1 + throttle_count(target, combos[0]))  # + its warm-up
