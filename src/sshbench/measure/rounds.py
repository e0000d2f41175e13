"""How the run spends --budget on rounds, decided between the runner's trials: the minimum rounds' pace, each
`--runs auto` round (which rows, whether it fits), a short trial grown and run again, and the --why experiment's
room. Pure decisions over the trials so far and a Budget; the runner runs what they return."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from sshbench.measure.budget import Budget
from sshbench.measure.calibration import (
    adaptive_round,
    follow_measured_rates,
    grow_if_too_short,
    paced_data_phase,
    round_cost,
    share_growth,
    share_shrink,
)
from sshbench.measure.plan import ScheduledTrial, handshake_combinations, measured_round
from sshbench.model import statistics as stats
from sshbench.model import summary
from sshbench.results import NO_STEADY_PART, Combination, Trial
from sshbench.settings import RunSettings

MAX_AUTO_ROUNDS = 30  # --runs auto never runs more measured rounds than this
# baselines.why.skipped where the default experiment was left out: the minimum rounds need the whole --budget
WHY_NO_ROOM = "--budget has no room for it after the minimum rounds (--why fastest runs it)"
WHY_NO_ROOM_NOTICE = f"--why: no experiment: {WHY_NO_ROOM}"


@dataclass
class RoundState:
    """What the run decided about its rounds as it went: whether the default --why experiment was left out (a
    resumed run keeps its run's decision, stored with its notices), the last pace's notice, and the order of the
    `--runs auto` rounds (seeded from the run's seed, so that a run can be replayed)."""

    why_no_room: bool = False
    pace_notice: str | None = None
    rng: random.Random = field(default_factory=random.Random)

    def replace_pace_notice(self, notices: list[str], notice: str) -> None:
        """One line for the minimum rounds' pace: the last one."""
        if self.pace_notice in notices:
            notices.remove(self.pace_notice)
        notices.append(notice)
        self.pace_notice = notice


def pace(
    repetition: int,
    before_started: float,
    sizes: dict[Combination, int],
    settings: RunSettings,
    budget: Budget,
    trials: list[Trial],
) -> tuple[str, float] | None:
    """At the start of minimum round `repetition` (the round before started at `before_started` on the budget's
    clock): where the rounds left would overrun --budget at the pace the round before kept, their data phase
    shrinks (calibration.paced_data_phase: `sizes` updated). The notice and the new `seconds`, or None. The
    steady window's cap follows `seconds` (calibration.steady_window_cap), as it does the fit's."""
    s = settings
    done = [t for t in trials if not t.warmup and t.repetition == repetition - 1]
    found = paced_data_phase(
        done, budget.round_s(before_started), s.runs - repetition, budget.rounds_time_left(trials), s, sizes
    )
    if found is None:
        return None
    sizes.update(found.sizes)
    notice = (
        f"--budget {s.budget_s:g} s: round {repetition} took {found.round_s:.0f} s, so the data phase shrank from "
        f"~{s.seconds:.2f} s to ~{found.target_s:.2f} s for the {s.runs - repetition} minimum round(s) left"
    )
    return notice, found.target_s


@dataclass(frozen=True)
class NextRound:
    """An adaptive round to run (`plan`), or None and why the rounds stop (`reason`)."""

    plan: list[ScheduledTrial] | None
    reason: str = ""
    answer_only: bool = False  # the round holds only the rows the answer needs (calibration.adaptive_round)


def next_round(
    trials: list[Trial],
    settings: RunSettings,
    rounds_run: int,
    budget: Budget,
    setup_kexes: dict[Combination, str],
    rng: random.Random,
) -> NextRound:
    """--runs auto: a round of the rows still undecided against a neighbour (statistics.combinations_needing_rounds),
    while one fits in `budget` (the end-of-run baselines' seconds and the why reserve kept back); where the whole
    round no longer fits, one of the rows the answer needs alone (calibration.adaptive_round)."""
    rankings = summary.rankings(trials, settings.tie)
    needing = [c for r in rankings.values() for c in stats.combinations_needing_rounds(r)]
    if not needing:
        return NextRound(None, "every pair is decided")
    if rounds_run >= MAX_AUTO_ROUNDS:
        return NextRound(None, f"{MAX_AUTO_ROUNDS} rounds is the most --runs auto runs")
    chosen = adaptive_round(needing, summary.rows_the_answer_needs(trials, settings.tie),
                            budget.rounds_time_left(trials), lambda combos: round_cost(trials, combos),
                            answer_extra_s=budget.why_spare(trials))  # fmt: skip
    if chosen is None:
        return NextRound(None, f"the --budget of {settings.budget_s:g} s is spent")
    plan = measured_round(chosen, handshake_combinations(chosen, setup_kexes), rounds_run, rng)
    return NextRound(plan, answer_only=chosen != needing)


def adaptive_notice(trials: list[Trial], settings: RunSettings, rounds_run: int, reason: str, answer_only: int) -> str:
    """The line that says how many rounds `--runs auto` ran, why it stopped, and what stayed undecided."""
    left = sum(len(stats.undecided_pairs(r)) for r in summary.rankings(trials, settings.tie).values())
    narrowed = f" ({answer_only} of them for the fastest group's undecided pairs alone)" if answer_only else ""
    return f"--runs auto: {rounds_run} rounds{narrowed}, stopped: {reason}" + (
        f" ({left} pair(s) undecided)" if left else ""
    )


def grow_after(
    trial: Trial,
    sizes: dict[Combination, int],
    groups: dict[Combination, list[Combination]],
    trials: list[Trial],
    settings: RunSettings,
) -> bool:
    """After a trial: its row's next sizes from its measured rates (calibration.follow_measured_rates, share_shrink),
    and whether it must run again at once, bigger, in the same round. A measured transfer with no steady part
    (sshbench.measure.steady) counts for nothing: its combination's trials grow (calibration.grow_if_too_short, its
    group's unmeasured members too) and it runs again, so that the round keeps its rate. Without it a default run
    lost the first round of its fastest ciphers (128 MiB at ~600 MiB/s: 0.21 s, inside the omitted start) and left
    them too few rounds to decide anything. Once: a second short trial only grows the next ones (grown_again)."""
    follow_measured_rates(sizes, trial, trials, settings)
    share_shrink(sizes, trial, groups, trials, settings)
    before = sizes.get(trial.combination)
    grow_if_too_short(sizes, trial, settings)
    if trial.warmup or trial.steady_note != NO_STEADY_PART or sizes.get(trial.combination) == before:
        return False
    share_growth(sizes, trial.combination, groups, trials)
    return True


def grown_again(again: Trial, sizes: dict[Combination, int], settings: RunSettings) -> None:
    """The trial run again after growing: a second short one grows the row's next trials only."""
    grow_if_too_short(sizes, again, settings)


__all__ = ["MAX_AUTO_ROUNDS", "WHY_NO_ROOM", "WHY_NO_ROOM_NOTICE", "NextRound", "RoundState", "next_round", "pace"]
