"""How the run spends --budget on rounds, decided between the runner's trials: the minimum rounds' pace, each
`--runs auto` round (which rows, whether it fits), a short trial grown and run again, and the --why experiment's
room. Pure decisions over the trials so far and a Budget; the runner runs what they return."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from sshbench.measure.budget import PACE_ROOM, Budget, fitted_data_phase
from sshbench.measure.calibration import (
    SHORTEST_FIT_S,
    follow_measured_rates,
    grow_if_too_short,
    measured_steady_mib_s,
    share_growth,
    share_shrink,
    steady_size,
)
from sshbench.measure.plan import ScheduledTrial, handshake_combinations, measured_round
from sshbench.model import factor_ranking, gate, summary
from sshbench.model import statistics as stats
from sshbench.results import NO_STEADY_PART, Combination, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.units import MIB

MAX_AUTO_ROUNDS = 30  # --runs auto never runs more measured rounds than this
# baselines.why.skipped where the default experiment was left out: the minimum rounds need the whole --budget
WHY_NO_ROOM = "--budget has no room for it after the minimum rounds (--why fastest runs it)"
WHY_NO_ROOM_NOTICE = f"--why: no experiment: {WHY_NO_ROOM}"


@dataclass(frozen=True)
class Pace:
    """The minimum rounds' data phase after a measured round (paced_data_phase)."""

    target_s: float  # the new `seconds`
    sizes: dict[Combination, int]  # each measured combination's size at it (never above its size now)
    round_s: float  # what the measured round took


def paced_data_phase(
    round_trials: list[Trial],
    round_s: float,
    rounds_left: int,
    time_left_s: float,
    settings: RunSettings,
    sizes: dict[Combination, int],
) -> Pace | None:
    """The minimum rounds' data phase, shrunk (never grown) where the `rounds_left` of them, each taking what the
    measured round (`round_trials`, `round_s` of wall) took with every transfer's payload at the new size, would not
    fit in PACE_ROOM of `time_left_s`; None where they fit, or nothing was measured to pace by. A payload's bytes
    cost what its trial's steady rate says (its start-up and connection stay what they were). Down to SHORTEST_FIT_S.
    Why: the fit before the rounds predicts them from the warm-up's few connections, and `--full`'s three rounds
    took ~10% more than it said (275-281 s for 252-255): the command ended at 291-303 s of its 5 minutes."""
    if rounds_left <= 0 or settings.size is not None or settings.file is not None or settings.server_cpu is not None:
        return None
    rows: dict[Combination, tuple[int, float]] = {}  # each transfer's payload and steady rate, the round's last
    for t in round_trials:
        if (rate := measured_steady_mib_s(t)) and t.combination in sizes:
            rows[t.combination] = (t.payload_bytes, rate)
    if not rows:
        return None

    def sized(target: float) -> dict[Combination, int]:
        return {c: min(sizes[c], steady_size(rate, target, settings.max_size)) for c, (_, rate) in rows.items()}

    def cost(target: float) -> float:
        new = sized(target)
        saved = sum((payload - new[c]) / MIB / rate for c, (payload, rate) in rows.items())
        return rounds_left * (round_s - saved)

    target = fitted_data_phase(time_left_s, cost, settings.seconds, SHORTEST_FIT_S, room_share=PACE_ROOM)
    if target >= settings.seconds:
        return None
    return Pace(target_s=round(target, 3), sizes=sized(target), round_s=round_s)


def round_cost(trials: list[Trial], combos: list[Combination]) -> float:
    """Seconds one more round of these would take: each one's median measured trial wall time (a
    handshake's for the connection), with a margin for spawning; a row with warm bursts (sshbench.measure.warm): its bursts'."""
    walls: dict[Combination, list[float]] = {}
    warm = {t.combination for t in trials if t.warm_burst is not None}  # warm sessions: its next trial is a burst too
    for t in trials:
        if not t.warmup and t.wall_s is not None and t.kind == TrialKind.TRANSFER:
            if t.combination not in warm or t.warm_burst is not None:
                walls.setdefault(t.combination, []).append(t.wall_s)
    handshakes = [t for t in trials if t.kind == TrialKind.HANDSHAKE and t.wall_s is not None]
    per_round = sum(statistics.median(walls[c]) if c in walls else 1.0 for c in combos)
    if handshakes:  # a round opens with one per shape (two where transfers connect with plan.setup_kex)
        shapes = len({t.combination.shape for t in handshakes})
        per_round += shapes * statistics.median(t.wall_s for t in handshakes if t.wall_s is not None)
    return per_round * 1.2


def adaptive_round(
    needing: list[Combination],
    answer: list[Combination],
    time_left_s: float,
    cost: Callable[[list[Combination]], float],
    answer_extra_s: float = 0.0,
) -> list[Combination] | None:
    """The combinations of --runs auto's next round: every row still undecided against a neighbour (`needing`)
    while such a round fits in `time_left_s`, else the rows the answer needs (`answer`: the fastest group and the
    rows it is not yet told apart from, summary.rows_the_answer_needs) when they are fewer and fit; None: stop.
    Why: a default run's rows behind the fastest group (three AES-CTR ciphers and chacha20-poly1305 within a few
    percent of each other) stay undecided among themselves to the end, so every adaptive round ran all six rows,
    and in ten default runs the last full round no longer fitted 2.7-9.4 s before the budget, where the three rows
    of the answer's undecided pair (aes256-gcm vs chacha20-poly1305 at 1.46 (0.86-2.50) in one run) take ~2.5 s.
    `answer_extra_s`: what the answer's round may take on top, from the --why experiment's rounds past its
    minimum (Reserve.spare_after): the answer comes before the explanation's extra precision."""
    if cost(needing) <= time_left_s:
        return needing
    if answer and set(answer) != set(needing) and cost(answer) <= time_left_s + max(answer_extra_s, 0.0):
        return answer
    return None


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
    if settings.check_threshold is not None:  # `sshbench check`: every row, until the check's decision is made
        if gate.rounds_decided(trials, settings.check_threshold):
            return NextRound(None, "the check is decided")
        needing = sorted(summary.rates_by_round(trials))
    else:
        rankings = summary.rankings(trials, settings.tie)
        needing = [c for r in rankings.values() for c in stats.combinations_needing_rounds(r)]
    if not needing:
        return NextRound(None, "every pair is decided")
    if rounds_run >= MAX_AUTO_ROUNDS:
        return NextRound(None, f"{MAX_AUTO_ROUNDS} rounds is the most --runs auto runs")
    # A cipher x MAC run's answer is by factor (model/factor_ranking.py): the rows that narrow its edges most.
    answer = (
        needing
        if settings.check_threshold is not None
        else factor_ranking.rows_to_narrow(trials, settings.tie) or summary.rows_the_answer_needs(trials, settings.tie)
    )
    chosen = adaptive_round(needing, answer,
                            budget.rounds_time_left(trials), lambda combos: round_cost(trials, combos),
                            answer_extra_s=budget.why_spare(trials))  # fmt: skip
    if chosen is None:
        return NextRound(None, f"the --budget of {settings.budget_s:g} s is spent")
    plan = measured_round(chosen, handshake_combinations(chosen, setup_kexes), rounds_run, rng)
    return NextRound(plan, answer_only=chosen != needing)


def adaptive_notice(trials: list[Trial], settings: RunSettings, rounds_run: int, reason: str, answer_only: int) -> str:
    """The line that says how many rounds `--runs auto` ran, why it stopped, and what stayed undecided."""
    left = (
        0
        if settings.check_threshold is not None
        else sum(  # a check decides its own (model/gate.py)
            len(stats.undecided_pairs(r)) for r in summary.rankings(trials, settings.tie).values()
        )
    )
    narrowed = f" ({answer_only} of them for the fastest group's undecided pairs alone)" if answer_only else ""
    return f"--runs auto: {rounds_run} rounds{narrowed}, stopped: {reason}" + (
        f" ({left} pair(s) undecided)" if left else ""
    )


# A trial that spans a pause (host/pauses) runs again at once up to this many times: a machine that keeps stopping
# sshbench leaves the row's round short (said by its missing trial) rather than the run without an end.
PAUSED_AGAIN = 3


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
