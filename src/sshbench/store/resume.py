"""`sshbench run --resume RUN_ID`: finish a stored run's missing trials with the same settings.

Pure helpers the Runner calls when it is given a stored RunResult: refuse when the environment
changed in a way that makes old and new trials incomparable, drop the trials already stored from the
schedule, and reuse the payload sizes the first part of the run calibrated.
"""

from __future__ import annotations

from collections.abc import Iterable

from sshbench.errors import RunError, UsageError
from sshbench.measure.payload import size_for_rate
from sshbench.measure.plan import ScheduledTrial
from sshbench.results import Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings

# What a trial's number depends on; any change and the old and new trials cannot share a median.
# steady_omit_s: trials whose clock left out another start read a few percent apart (docs/clock.md); so do trials
# whose steady windows were capped and trials whose windows ran to their end (steady_window_capped)
COMPARABLE_KEYS = (
    "cpu_model",
    "cores",
    "client_ssh_version",
    "client_crypto_library",
    "server_ssh_version",
    "steady_omit_s",
    "steady_window_capped",
)
RESUMABLE = ("interrupted", "failed")


def prepare(stored: RunResult) -> RunResult:
    """The stored run, ready to be handed to a Runner (status running again, old error cleared)."""
    if stored.status == "running":
        raise UsageError(f"run {stored.run_id} is still running in another process")
    if stored.status not in RESUMABLE:
        raise UsageError(f"run {stored.run_id} is {stored.status}; only an interrupted or failed run can be resumed")
    stored.status, stored.error, stored.exit_code, stored.finished_at = "running", None, 0, None
    return stored


def check_comparable(
    old_env: dict, new_env: dict, old_combos: list[Combination], new_combos: list[Combination]
) -> None:
    """RunError (one line) when the resumed part would measure something else than the first part."""
    changed = [
        f"{key} {old_env.get(key)!r} -> {new_env.get(key)!r}"
        for key in COMPARABLE_KEYS
        if key in old_env and old_env.get(key) != new_env.get(key)
    ]
    if changed:
        raise RunError(
            "cannot resume: the environment changed (" + "; ".join(changed) + "), so old and new "
            "trials are not comparable; start a new run instead"
        )
    if old_combos and set(old_combos) != set(new_combos):
        raise RunError(
            "cannot resume: the target no longer offers the same algorithm combinations; start a new run instead"
        )


def _key(combination: Combination, kind: TrialKind, repetition: int, warmup: bool) -> tuple:
    return (combination, kind, repetition, warmup)


def remaining(plan: list[ScheduledTrial], stored: Iterable[Trial]) -> list[ScheduledTrial]:
    """The scheduled trials not stored yet (an invalid stored trial counts: it was measured)."""
    done = {_key(t.combination, t.kind, t.repetition, t.warmup) for t in stored}
    return [item for item in plan if _key(item.combination, item.kind, item.repetition, item.warmup) not in done]


def calibrated_sizes(combinations: list[Combination], stored: list[Trial], settings: RunSettings) -> dict:
    """Payload sizes the first part settled on: a measured trial's size, else the size the last stored
    calibration probe implies. Combinations with neither are left out (they calibrate as usual)."""
    if settings.size:
        return {}
    sizes: dict[Combination, int] = {}
    for combo in combinations:
        transfers = [t for t in stored if t.combination == combo and t.kind == TrialKind.TRANSFER]
        measured = [t for t in transfers if not t.warmup]
        probes = [t for t in transfers if t.warmup and t.repetition == 0]
        if measured:
            sizes[combo] = measured[-1].payload_bytes
        elif probes and probes[-1].valid and probes[-1].mib_s:
            sizes[combo] = size_for_rate(probes[-1].mib_s, settings.seconds, settings.max_size)
    return sizes


def resume_plan(
    plan: list[ScheduledTrial],
    sizes: dict[Combination, int],
    combos: list[Combination],
    *,
    stored_environment: dict,
    environment: dict,
    stored_combinations: list[Combination],
    trials: list[Trial],
    settings: RunSettings,
) -> tuple[list[ScheduledTrial], dict[Combination, int]]:
    """--resume: refuse if the numbers would not be comparable (check_comparable); else only the trials not stored
    yet (remaining), `sizes` updated to the stored calibration's (calibrated_sizes)."""
    check_comparable(stored_environment, environment, stored_combinations, combos)
    sizes.update(calibrated_sizes(combos, trials, settings))
    return remaining(plan, trials), sizes
