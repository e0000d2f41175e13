"""`--budget`: the whole run's time, counted from its start (servers up, discovery, baselines, warm-up,
calibration), so that `sshbench run` with the default budget ends about a minute after it was started.

What follows the last round is kept back (END_RESERVE_S), and for the rounds also the default `--why`
experiment's trials after them (the why reserve: calibration.Reserve, sized by the runner). The runner builds a
`Budget` where it decides (the minimum rounds' fit, their pace, each `--runs auto` round, the experiment's
optional rounds); `fitted_data_phase` fits the rounds' data phase into the time left. Pure: the clock is passed
in (time.monotonic by default)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sshbench.results import Trial

# Kept for what follows the last round (the disk baseline, the raw TCP control's end, teardown): about
# 2-4 s measured on a 2-core VM.
END_RESERVE_S = 3.0
# Of the time left, what the minimum rounds fitted before they start may take: a tenth kept for spawning.
FIT_ROOM_SHARE = 0.9
# Of the time left, what the minimum rounds paced after a measured round may take (calibration.paced_data_phase):
# that round's own time already holds its spawning, payload files and handshakes.
PACE_ROOM = 0.95


class WhyReserve(Protocol):
    """The trials after the rounds that the rounds leave time for (calibration.Reserve)."""

    def cost_after(self, trials: list[Trial]) -> float: ...

    def spare_after(self, trials: list[Trial]) -> float: ...


def _monotonic() -> float:
    return time.monotonic()  # looked up at each call: a test's fake clock replaces time.monotonic


@dataclass(frozen=True)
class Budget:
    """The run's `--budget` as it stands: `started` on `clock`, `total_s` from there, `end_reserve_s` kept for what
    follows the last round, `why` (None: nothing) for the experiment's trials after the rounds."""

    total_s: float
    started: float
    end_reserve_s: float = END_RESERVE_S
    why: WhyReserve | None = None
    clock: Callable[[], float] = _monotonic

    @property
    def deadline(self) -> float:
        """When the rounds and the experiment after them must have ended (on `clock`): the end's reserve before
        the budget's end."""
        return self.started + self.total_s - self.end_reserve_s

    def elapsed(self) -> float:
        return self.clock() - self.started

    def time_left(self) -> float:
        """Seconds to the deadline (negative once past it)."""
        return self.total_s - self.end_reserve_s - self.elapsed()

    def why_cost(self, trials: list[Trial]) -> float:
        """What the why reserve keeps, at the overheads `trials` measured (0 without one)."""
        return self.why.cost_after(trials) if self.why is not None else 0.0

    def rounds_time_left(self, trials: list[Trial]) -> float:
        """Seconds the rounds have left: to the deadline, less the why reserve's cost after `trials`."""
        return self.time_left() - self.why_cost(trials)

    def why_spare(self, trials: list[Trial]) -> float:
        """How much of the why reserve its minimum rounds are not expected to take (Reserve.spare_after); a round
        of the rows the answer rests on may take it first (calibration.adaptive_round)."""
        return self.why.spare_after(trials) if self.why is not None else 0.0

    def fits(self, predicted_s: float, trials: list[Trial] | None = None, extra_s: float = 0.0) -> bool:
        """Whether a next round of `predicted_s` started now ends by the deadline, the why reserve's cost after
        `trials` kept back (none without them) and `extra_s` (at least 0) more allowed."""
        kept = self.why_cost(trials) if trials is not None else 0.0
        return self.clock() + predicted_s <= self.deadline - kept + max(extra_s, 0.0)

    def round_s(self, round_started: float) -> float:
        """The pace of the last round: the seconds since it started at `round_started` (on `clock`)."""
        return self.clock() - round_started


def fit_room(time_left_s: float, share: float = FIT_ROOM_SHARE) -> float:
    """What of `time_left_s` the rounds fitted into it may take."""
    return share * time_left_s


def fitted_data_phase(
    time_left_s: float,
    cost: Callable[[float], float],
    target_s: float,
    floor_s: float,
    room_share: float = FIT_ROOM_SHARE,
) -> float:
    """The longest data-phase target (s) from `floor_s` to `target_s` at which the minimum rounds fit in
    `time_left_s`: `cost(target)` is what they would take (never decreasing in the target: each trial's
    connection, its payload at the size that target gives, the other trials); `room_share` of the time is theirs
    (a tenth kept for spawning by default). Never above `target_s` (the minimum rounds shrink to fit the budget,
    they never grow), never below `floor_s`."""
    room = fit_room(time_left_s, room_share)
    if cost(target_s) <= room:
        return target_s
    low, high = floor_s, target_s  # cost(high) > room; a size ladder makes cost a step function: bisect
    if cost(low) > room:
        return floor_s
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if cost(middle) <= room else (low, middle)
    return low
