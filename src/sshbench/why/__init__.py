"""`run --why`: what limits the speed, by experiment (throttles.py: slow one resource by a known
fraction; experiment.py: interleaved paired rounds; the figures and verdict: baselines/sensitivity.py)."""

from sshbench.why.experiment import (
    DEFAULT_ROUNDS,
    MIN_ROUNDS,
    WHY_SECONDS,
    combinations_to_probe,
    experiment_sizes,
    experiment_trials,
    run_experiments,
    throttle_count,
)

__all__ = [
    "DEFAULT_ROUNDS",
    "MIN_ROUNDS",
    "WHY_SECONDS",
    "combinations_to_probe",
    "experiment_sizes",
    "experiment_trials",
    "run_experiments",
    "throttle_count",
]
