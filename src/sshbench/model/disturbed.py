"""Which rounds of a run other processes disturbed, and by what (pure: from each trial's `others_cores` and
`others_busiest`, which sshbench.host.neighbours read around it). The answer names them, so that a row's scatter is
explained by its cause (another sshbench measurement, `make test`) rather than guessed at ("the machine may be busy")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sshbench.results import Trial, TrialKind

# Other processes using this much of a core on average during a trial disturb it: on 2 cores, where the client and the
# server each keep one busy, a quarter of a core taken from them moves a rate by tens of percent.
DISTURBED_CORES = 0.25


@dataclass(frozen=True)
class DisturbedRound:
    round: int  # 1-based, as the report counts rounds
    trials: int  # its measured trials that were disturbed
    most_cores: float  # the most other processes used during one of them (cores, on average over that trial)
    busiest: str | None  # the busiest process then, in words

    def to_json(self) -> dict:
        return {"round": self.round, "trials": self.trials, "most_cores": self.most_cores, "busiest": self.busiest}


def disturbed_rounds(trials: Iterable[Trial]) -> list[DisturbedRound]:
    """The rounds with at least one measured trial beside DISTURBED_CORES or more of other processes' CPU."""
    found: dict[int, list[Trial]] = {}
    for t in trials:
        if t.warmup or t.kind == TrialKind.HANDSHAKE or t.others_cores is None or t.others_cores < DISTURBED_CORES:
            continue
        found.setdefault(t.repetition, []).append(t)
    rounds = []
    for repetition in sorted(found):
        worst = max(found[repetition], key=lambda t: t.others_cores or 0.0)
        rounds.append(DisturbedRound(repetition + 1, len(found[repetition]), worst.others_cores or 0.0,
                                     worst.others_busiest))  # fmt: skip
    return rounds


def measured_neighbours(trials: Iterable[Trial]) -> bool:
    """Whether the run read other processes' CPU at all (runs stored before it did not)."""
    return any(t.others_cores is not None for t in trials)


def disturbed_line(rounds: list[DisturbedRound]) -> str | None:
    """One line for the answer: which rounds, how many trials, and the busiest process of the worst trial."""
    if not rounds:
        return None
    worst = max(rounds, key=lambda r: r.most_cores)
    names = ", ".join(str(r.round) for r in rounds)
    trials = sum(r.trials for r in rounds)
    by = f"{worst.busiest}" if worst.busiest else f"other processes, {worst.most_cores:.2f} core"
    return f"disturbed: round{'s' if len(rounds) > 1 else ''} {names} ({trials} trial(s)) by {by}"
