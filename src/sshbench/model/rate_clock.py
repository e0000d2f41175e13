"""Which clock a run's rates are on (docs/clock.md), read from its trials and its recorded environment: the
steady-state clock or the earlier one (start-up included), which trials a summary counts on it, and what a
steady-state run recorded about its clock (the start-up left out, rekeys counted, warm bursts, windows capped).
Pure, no I/O.
"""

from __future__ import annotations

from sshbench.results import STEADY_STATE, RunResult, Trial, TrialKind


def clock_of(trials: list[Trial]) -> str | None:
    """The data clock of these trials' rates: the one they share, else "mixed"."""
    clocks = {t.data_clock for t in trials if t.data_clock}
    return clocks.pop() if len(clocks) == 1 else ("mixed" if clocks else None)


def counted(trials: list[Trial], kind: TrialKind = TrialKind.TRANSFER) -> list[Trial]:
    """The valid measured trials whose rates a summary counts. Per combination: its steady-state ones
    (docs/clock.md) where it has any; a trial too short to have a steady part counts only where none has
    one (a fixed --size too small for the clock), and its summary's data_clock then names the earlier
    clock, start-up included. Warm-ups do not count here either: a steady warm-up beside a measured trial too
    short for a steady part had left the combination with no figure at all (a crossover point read "-")."""
    steady = {t.combination for t in trials if t.data_clock == STEADY_STATE and t.valid and t.mib_s and not t.warmup}
    return [
        t
        for t in trials
        if t.kind == kind
        and not t.warmup
        and t.valid
        and t.mib_s
        and (t.data_clock == STEADY_STATE or t.combination not in steady)
    ]


EARLIER_CLOCK = "earlier"
# The start-up the steady-state clock left out in runs stored before a run recorded its own
# (environment.steady_omit_s; docs/clock.md).
UNRECORDED_OMIT_S = 0.2


def steady_omit_s(result: RunResult) -> float | None:
    """The seconds after the data started that a steady-state run's rates leave out; None for another clock."""
    if run_clock(result.trials) != STEADY_STATE:
        return None
    recorded = result.environment.get("steady_omit_s")
    return float(recorded) if isinstance(recorded, int | float) else UNRECORDED_OMIT_S


def rekeys_counted(result: RunResult) -> bool | None:
    """Whether a steady-state run's rates count the rekeys of a long transfer (sshbench.measure.rekey); None for another
    clock. Runs stored before it (2026-11-26) recorded nothing: their chacha20-poly1305 rows read the rate between
    rekeys, ~4% above a long transfer's with OpenSSH 9.2's default kex."""
    if run_clock(result.trials) != STEADY_STATE:
        return None
    return result.environment.get("rekeys_counted") is True


def warm_bursts(result: RunResult) -> bool | None:
    """Whether a steady-state run timed rounds after the first as bursts in kept connections (sshbench.measure.warm; `run`
    unless --no-warm); None for another clock. Runs stored before it (2026-11-27) had a connection per trial."""
    if run_clock(result.trials) != STEADY_STATE:
        return None
    return any(t.warm_burst is not None for t in result.trials)


def steady_window_capped(result: RunResult) -> bool | None:
    """Whether a steady-state run's windows ended at `--seconds` (calibration.steady_window_cap) rather than at each
    trial's end; None for another clock. Runs stored before the cap (2026-11-26) recorded nothing: their windows ran
    to the end."""
    if run_clock(result.trials) != STEADY_STATE:
        return None
    return result.environment.get("steady_window_capped") is True


def run_clock(trials: list[Trial]) -> str | None:
    """Which clock a run's transfer rates are on: STEADY_STATE for a run by an sshbench with the
    steady-state clock (its trials were sampled: a steady rate or a note why not), EARLIER_CLOCK for a
    run stored before it (JSON schema 1: rates over the whole data phase, start-up included); None
    without transfers."""
    transfers = [t for t in trials if t.kind == TrialKind.TRANSFER]
    if not transfers:
        return None
    sampled = any(t.data_clock == STEADY_STATE or t.steady_note is not None for t in transfers)
    return STEADY_STATE if sampled else EARLIER_CLOCK


def same_clock(a: str | None, b: str | None) -> bool:
    """Whether two summaries' rates are on comparable clocks: steady state on both sides, or neither."""
    return (a == STEADY_STATE) == (b == STEADY_STATE)
