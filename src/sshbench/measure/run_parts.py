"""What a run is handed (RunParts): how to start the targets, the trial executors, the budget's clock, the rekey probe,
the --why experiment, the header and the leftovers' sweep. The defaults are the real parts; tests/fakes.py has a fake
of each, so that a test drives a whole run in milliseconds (tests/test_whole_runs.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sshbench.host.cleanup import Cleanup
from sshbench.host.leftovers import clean_leftovers
from sshbench.measure.executors import Executors, ExecutorSet, TrialContext, probe_rekeys
from sshbench.measure.rekey_probe import RekeyCosts
from sshbench.measure.run_header import environment_header
from sshbench.measure.target_set import TargetSet, start_target_set
from sshbench.results import Combination
from sshbench.settings import RunSettings
from sshbench.targets import cpu_quota
from sshbench.why import experiment as why


def _monotonic() -> float:
    return time.monotonic()  # looked up at each call: a test's fake clock may replace time.monotonic


def _clean_leftovers() -> list[str]:
    return clean_leftovers() + cpu_quota.sweep_stale()  # quota groups: below leftovers' layer


@dataclass(frozen=True)
class RunParts:
    """What a run is handed. The defaults are the real parts; tests/fakes.py has fakes of each."""

    # Start the run's targets into the TargetSet (its settings, the cleanup, --no-aesni's client environment).
    start_targets: Callable[[RunSettings, TargetSet, Cleanup, dict[str, str] | None], None] = start_target_set
    executors: Callable[[TrialContext], ExecutorSet] = Executors  # each row's executor
    clock: Callable[[], float] = _monotonic  # what --budget counts on (seconds)
    rekey_probe: Callable[[TrialContext, list[Combination]], RekeyCosts | None] = probe_rekeys
    why_experiment: Callable[..., dict] = why.run_experiments
    header: Callable[..., dict] = environment_header
    clean_leftovers: Callable[[], list[str]] = _clean_leftovers


__all__ = ["RunParts"]
