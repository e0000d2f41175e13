"""Payload sizes of an adaptive run: each calibration group's probe sizes its combinations for about
`--seconds` of data phase, and with `--runs auto` the minimum rounds' data phase shrinks to fit what is
left of `--budget`. The runner runs the probes; this module decides their sizes (no I/O)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace

from sshbench.measure.budget import fit_room, fitted_data_phase
from sshbench.measure.payload import needs_bigger_probe, size_at_least
from sshbench.measure.plan import ScheduledTrial, calibration_groups
from sshbench.measure.steady import OMIT_S
from sshbench.results import NO_STEADY_PART, STEADY_STATE, Combination, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.units import MIB

FIRST_WINDOW_BYTES = 2 * MIB  # OpenSSH's channel window
SHRINK_AT = 0.75  # a measured combination's trials shrink to what its steady rate needs at this share or less

# The shortest data phase the minimum rounds shrink to. bench/precision.py --sweep on this 2-core VM
# (interleaved, x2, load 1-3): CI half-width x sqrt(wall) 119 at 1 s, 170 at 0.5 s, 240 at 0.25 s, so a
# shorter phase buys rounds but loses precision per second: 1 s stays the target, and the phase shrinks
# only to keep the budget. --full (345 trials in its 3 rounds) took 441 s at a 0.5 s floor under load 3-5
# (~0.56 s per trial outside the data phase); at 0.25 s it fits 5 minutes. Below that the ~40 ms stalls
# seen in ssh's data phase would be over 15% of it.
FIT_FLOOR_S = 0.25
# Where even the minimum rounds at FIT_FLOOR_S overrun the budget (a big matrix: --full's 345 trials took 350 s of
# its 270 s budget, each ~0.31 s of set-up, the omitted start, ~0.09 s of start-up's loss and a steady part of
# 0.34 s median for its 0.25 s target), their data phase shrinks on, to this target at the least: the steady part
# a trial gets is the target plus the start-up's loss and the ladder's rounding up (~0.2 s here), still twice
# steady.MIN_STEADY_S. The budget is kept rather than the precision: --full asks whether anything is as fast as the
# first row, and its rows are mostly far apart (docs/statistics.md).
SHORTEST_FIT_S = 0.12
# --runs auto fits the data phase for this many rounds, not only the minimum 3: the rounds past the third are
# the adaptive ones, run only while a pair is undecided. Why more, shorter rounds: a paired interval over n
# rounds is t(n-1)/sqrt(n) wide, 2.48 at 3 rounds and 1.24 at 5, so one trial in ten that reads 30% low (this
# VM) leaves a 1.5x pair undecided at 3 rounds and decided at 5; a data phase twice as long narrows the
# per-trial noise by far less (CV 11-16% at 0.25 s, 16-18% at 1 s on this VM: minute-scale swings).
PLANNED_AUTO_ROUNDS = 5
PROBE_ATTEMPTS = 3  # a probe and at most two bigger ones


# The start-up's loss against the steady rate where no trial has measured it yet (Trial.startup_s; docs/clock.md).
DEFAULT_STARTUP_S = 0.1
UNSTEADY_PROBE_HEADROOM = 2.0  # a probe with no steady part: the steady rate is taken as up to this times its own
# A 16 MiB probe of a fast cipher is all start-up (every cipher's first 32 MiB arrive at ~230 MiB/s here): one
# at RAMP_PROBE_SIZE reads further into it, where the 16 MiB one's late rates read 3-377 MiB/s for ciphers steady
# at 360-940.
RAMP_PROBE_SIZE = 64 * MIB
RAMP_PROBE_MIB_S = 100.0  # a 16 MiB probe at least this fast: 64 MiB take well under a second
# Its late rate is still in the ramp, the more so the shorter its data phase: over 438 such probes of the sessions'
# stored loopback runs (pinned, 0.3 s omit), late over the run's steady median read 0.57-0.63 for AES-GCM (data
# phase 0.15 s), 0.77-0.86 for AES-CTR and chacha20-poly1305 (0.21-0.22 s) and 0.93-0.99 for CBC (0.23 s). Taken
# as it was, 81% of AES-GCM's estimates were under 0.75 of the steady rate, short enough for a trial sized from it
# to have no steady part (11 of 40 AES-GCM trials in round 0 of 20 default runs, each re-run twice as big). Scaled
# by RAMP_PROBE_PHASE_S / its data phase (1 to 2x): estimates at 0.97x the steady rate (median), 23% under 0.75
# (AES-GCM 30%) and 5% over 1.5.
RAMP_PROBE_PHASE_S = 0.25


def ramp_probe_headroom(data_s: float | None) -> float:
    """How much faster than its late rate a RAMP_PROBE_SIZE probe with no steady part takes the steady rate to be."""
    if not data_s:
        return 1.0
    return min(UNSTEADY_PROBE_HEADROOM, max(1.0, RAMP_PROBE_PHASE_S / data_s))


class Calibration:
    """`sizes`: the payload size each combination's next trial moves (the runner's view)."""

    def __init__(self, combos: list[Combination], settings: RunSettings, sizes: dict[Combination, int]) -> None:
        self.settings = settings
        self.sizes = sizes
        self.groups = calibration_groups(combos)
        self.probe_rates: dict[Combination, float] = {}  # each group's last probe rate, MiB/s
        self.window_bytes = 0  # --server-cpu: the most that arrived before a probe's reader started

    def after_probe(self, combo: Combination, trial: Trial, attempt: int) -> bool:
        """Size `combo` (and its calibration group) from this probe; True when a bigger probe is needed:
        one shorter than a quarter of the target is dominated by fixed stalls (payload.needs_bigger_probe)."""
        s = self.settings
        if not (trial.valid and trial.mib_s):
            return False
        probed = self.sizes[combo]
        # A probe with no steady part (sshbench.measure.steady) timed mostly the connection's start-up, whose rate is
        # a fraction of the steady one. A fast 16 MiB one says nothing about its cipher (RAMP_PROBE_SIZE): it
        # probes again with 64 MiB, whose late rate (the second half of its data phase) sizes the trials, scaled
        # by how short its data phase was (ramp_probe_headroom). A slower one sizes from its late rate at once, as
        # if twice as fast: its late rate is still in the ramp (0.32-0.82x the steady rate in one default run), and
        # sized from it as it is, the first round had no steady part either and lost its rates.
        unsteady = trial.steady_note == NO_STEADY_PART
        if unsteady and probed < RAMP_PROBE_SIZE and trial.mib_s >= RAMP_PROBE_MIB_S and attempt + 1 < PROBE_ATTEMPTS:
            self.sizes[combo] = min(RAMP_PROBE_SIZE, s.max_size)
            return True
        headroom = UNSTEADY_PROBE_HEADROOM if probed < RAMP_PROBE_SIZE else ramp_probe_headroom(trial.data_s)
        rate = max(trial.mib_s, trial.late_mib_s or 0.0) * headroom if unsteady else trial.mib_s
        self.sizes[combo] = self._size_for(rate, trial)
        # A sampled probe (a steady or a late rate) needs no bigger one: the start-up stalls that made short
        # probes misread are what the steady clock leaves out (re-probes took ~8 s of a default run).
        sampled = trial.data_clock == STEADY_STATE or trial.late_mib_s is not None
        if (
            attempt + 1 < PROBE_ATTEMPTS
            and not sampled
            and needs_bigger_probe(trial.data_s, probed, s.seconds, s.max_size)
        ):
            # Four times the probe, not a whole trial: the bigger probe only has to be long enough to be sampled
            # (a late rate), and sized as a trial it took 1.3-1.7 s where 64 MiB takes ~0.4 (3 such re-probes in 2 of
            # 5 default runs: ~4 s of a run that overruns its budget anyway).
            self.sizes[combo] = min(probed * 4, s.max_size)
            return True
        self.probe_rates[combo] = rate
        for member in self.groups.get(combo, ()):  # the group's others take this probe's size
            self.sizes[member] = self.sizes[combo]
        return False

    def _size_for(self, rate: float, probe: Trial | None = None, seconds: float | None = None) -> int:
        """The payload for a ~`seconds` data phase at `rate`; under --server-cpu at least twice what
        arrived before the probe's reader started (a channel window), so that the reader times most
        of it (clock.reader_timed_too_little) rather than wall minus a handshake that swings by half a
        second at 0.1 core."""
        s = self.settings
        # `seconds` is the steady part's length; the omitted start-up (sshbench.measure.steady) comes on top, so a
        # short --seconds still leaves a steady part and the headline does not depend on it.
        size = steady_size(rate, s.seconds if seconds is None else seconds, s.max_size)
        if s.server_cpu is not None and probe is not None and probe.tcp_bytes_before_clock:
            self.window_bytes = max(self.window_bytes, probe.tcp_bytes_before_clock)
        if s.server_cpu is not None and self.window_bytes:
            size = max(size, size_at_least(2 * self.window_bytes, s.max_size))
        return size

    def _cost_model(
        self, rest: list[ScheduledTrial], trials: list[Trial], reserve: Reserve | None
    ) -> Callable[[float, int], float] | None:
        """Seconds `rounds` rounds of `rest` (which holds the minimum ones) and the `reserve` after them take at a
        data-phase `target`; None before the warm-up has measured a transfer (or without --runs auto's fit).

        Each transfer is predicted as the run's own connections measured it (set-up outside the data phase,
        from the warm-up), plus its payload at the size this target gives it (the ladder rounds up, and the
        omitted start and the first channel window come on top) over its probe's rate, plus the start-up's
        loss. Predicting `overhead + target` instead fitted 0.29 s where the rounds then ran 0.58 s data
        phases: a default run's rounds overran their budget by ~7 s."""
        s = self.settings
        warm = [t for t in trials if t.warmup and t.valid]
        overheads = setup_overheads([t for t in warm if t.kind == TrialKind.TRANSFER])
        if not (s.adaptive and s.fit_seconds and self.probe_rates and overheads):
            return None
        walls: dict[str, float] = {
            kind: statistics.median([t.wall_s for t in warm if t.kind == kind and t.wall_s is not None] or [1.0])
            for kind in {item.kind for item in rest}
        }
        overhead = statistics.median(overheads)
        startup = startup_loss_s(trials)
        rates = {m: rate for combo, rate in self.probe_rates.items() for m in self.groups.get(combo, [combo])}

        def data_s(combo: Combination, target: float) -> float:
            rate = rates.get(combo)
            if rate is None:
                return target + OMIT_S + startup
            return self._size_for(rate, seconds=target) / MIB / rate + startup

        fixed = sum(walls[item.kind] for item in rest if item.kind != TrialKind.TRANSFER)
        transfers = [item.combination for item in rest if item.kind == TrialKind.TRANSFER]

        def cost(target: float, rounds: int) -> float:
            total = (fixed + sum(overhead + data_s(c, target) for c in transfers)) * rounds / s.runs  # `rest`: s.runs
            return total + (reserve.cost(overhead, startup) if reserve is not None else 0.0)

        return cost

    def minimum_rounds_fit(
        self, rest: list[ScheduledTrial], trials: list[Trial], time_left_s: float, reserve: Reserve | None
    ) -> bool:
        """Whether the minimum rounds and the `reserve` after them fit in `time_left_s` at FIT_FLOOR_S (True when
        there is nothing to predict from): below it the rounds' data phase shrinks on, and precision goes."""
        cost = self._cost_model(rest, trials, reserve)
        return cost is None or cost(FIT_FLOOR_S, self.settings.runs) <= fit_room(time_left_s)

    def fit_minimum_rounds(
        self, rest: list[ScheduledTrial], trials: list[Trial], time_left_s: float, reserve: Reserve | None = None
    ) -> str | None:
        """--runs auto without --seconds: shrink the data phase (never below FIT_FLOOR_S) when PLANNED_AUTO_ROUNDS
        rounds (`rest` holds the minimum ones) and the `reserve` after them would not fit in `time_left_s` at
        ~`seconds` per trial (`_cost_model`), so that the adaptive rounds have room and a slower machine or a
        bigger matrix still ends on time; below FIT_FLOOR_S (to SHORTEST_FIT_S) only as far as the minimum rounds
        need to fit. The target used becomes the calibration's `settings.seconds` (the run adopts it: the run's own
        state, recorded as `seconds`); returns a notice."""
        s = self.settings
        cost = self._cost_model(rest, trials, reserve)
        if cost is None:
            return None
        transfers = [item for item in rest if item.kind == TrialKind.TRANSFER]
        planned = max(s.runs, PLANNED_AUTO_ROUNDS)
        target = fitted_data_phase(time_left_s, lambda t: cost(t, planned), s.seconds, FIT_FLOOR_S)
        if target >= s.seconds:
            return None
        floor = FIT_FLOOR_S
        if cost(FIT_FLOOR_S, s.runs) > fit_room(time_left_s):  # not even the minimum rounds fit at the floor
            floor = SHORTEST_FIT_S
            target = fitted_data_phase(time_left_s, lambda t: cost(t, s.runs), FIT_FLOOR_S, floor)
        for combo, rate in self.probe_rates.items():
            for member in self.groups.get(combo, [combo]):
                self.sizes[member] = self._size_for(rate, seconds=target)
        at_floor = cost(floor, s.runs)  # the minimum rounds and the reserve, at the floor
        if at_floor > fit_room(time_left_s):
            rounds_fit = f"(the floor) for {s.runs} rounds: the run may overrun (they need ~{at_floor:.0f} s, "
            rounds_fit += f"{max(time_left_s, 0):.0f} s are left)"
        elif floor == SHORTEST_FIT_S or cost(target, planned) > fit_room(time_left_s):  # at FIT_FLOOR_S: 3 fit, 5 not
            rounds_fit = f"to fit the {s.runs} minimum rounds of {len(transfers) // s.runs} transfers"
        else:
            rounds_fit = f"to fit {planned} rounds of {len(transfers) // s.runs} transfers"
        notice = f"--budget {s.budget_s:g} s: data phase shrank from ~{s.seconds:g} s to ~{target:.2f} s {rounds_fit}"
        self.settings = replace(s, seconds=round(target, 3))
        return notice


# The --why experiment's throttled and unthrottled trials, on average: a trial of ~0.55 s of data took 1.1-1.5 s
# (Reserve.spare_after).
WHY_TYPICAL_STRETCH = 1.5


@dataclass(frozen=True)
class Reserve:
    """Trials after the minimum rounds that the fit keeps time for: the default --why experiment's."""

    trials: int
    data_s_each: float  # their data phase (why.WHY_SECONDS: sized for it from the row's measured rate)
    stretch: float  # the mean factor the throttles stretch a trial by (half a resource: up to twice as long)

    def cost(self, overhead_s: float, startup_s: float) -> float:
        """Seconds the trials take: each a connection (`overhead_s`: wall outside the data phase) and a data
        phase sized for `data_s_each` (Runner._why_reserve), plus the start-up's loss, stretched by the throttles."""
        return self.trials * (overhead_s + (self.data_s_each + startup_s) * self.stretch)

    def spare_after(self, trials: list[Trial]) -> float:
        """How much of `cost_after` the experiment's minimum rounds are not expected to take: the reserve is sized at
        the throttles' long end (`stretch`), and in 20 default runs of 4 rounds each its trials took 1.1-1.5 s (a
        stretch of 1.25-1.85). Where they take less, the time left ran the experiment's optional 4th round in each of
        them, while two of those runs ended with their fastest group not told apart from one row: a round of
        the rows the answer rests on (adaptive_round) may take this much first."""
        return self.cost_after(trials) - replace(self, stretch=min(self.stretch, WHY_TYPICAL_STRETCH)).cost_after(
            trials
        )

    def cost_after(self, trials: list[Trial]) -> float:
        """`cost` with the overhead and start-up the run's measured transfers took."""
        measured = [t for t in trials if t.kind == TrialKind.TRANSFER and t.valid and not t.warmup and t.data_s]
        overheads = setup_overheads(measured)
        return self.cost(statistics.median(overheads) if overheads else 1.0, startup_loss_s(measured))


def setup_overheads(transfers: list[Trial]) -> list[float]:
    """Each transfer's time outside its whole data phase (start-up included): the connection's set-up and end.
    Not wall minus `data_s`: a steady-state trial's data_s leaves the start-up out, which the cost models add
    on their own (startup_loss_s), and counted it twice."""
    out = []
    for t in transfers:
        whole = t.whole_data_s if t.data_clock == STEADY_STATE else t.data_s
        if t.wall_s is not None and whole is not None:
            out.append(t.wall_s - whole)
    return out


def startup_loss_s(trials: list[Trial]) -> float:
    """The median time a transfer's start lost against its steady rate (Trial.startup_s), each at least 0;
    DEFAULT_STARTUP_S before any trial measured one. Why at least 0: a slow cipher's 16 MiB probe can read a
    negative one (3des-cbc: -0.13 s, its reader's clock shorter than payload over the steady rate). Taken as it
    was, that one probe was `--full`'s whole figure, and its cost model then counted 0.23 s too little for each of
    its 345 trials: it fitted a 0.25 s data phase for 5 rounds, and its 3 rounds took 337 s of a 270 s budget."""
    losses = [max(x, 0.0) for t in trials if (x := t.startup_s) is not None]
    return statistics.median(losses) if len(losses) >= MIN_STARTUP_READINGS else DEFAULT_STARTUP_S


MIN_STARTUP_READINGS = 3  # fewer: DEFAULT_STARTUP_S (a run's warm-up probes are mostly too short to have one)


def follow_measured_rates(
    sizes: dict[Combination, int], trial: Trial, trials: list[Trial], settings: RunSettings
) -> None:
    """An adaptive run's measured transfer with a steady rate: the combination's next trials shrink to the size
    the median of its measured steady rates needs for ~`seconds` of steady part (as the probe's sizing), when
    that is SHRINK_AT (3/4) of their size or less. The probe is a 16 MiB connection start whose rate is a guess
    (sized as if twice its late rate), and a trial that had to grow grew fourfold: one default run moved aes256-gcm
    1024 MiB a trial (1.2-1.6 s of data phase) where 512 hold its 0.3 s target at ~1000 MiB/s. Not under
    --server-cpu (its sizes also cover a channel window) nor with a size the user chose."""
    combo = trial.combination
    rate = _median_steady_rate(trial, trials, settings)
    if rate is None or combo not in sizes:
        return
    wanted = steady_size(rate, settings.seconds, settings.max_size)
    # Only down, and only by a quarter or more (two steps of the ladder): each new size is a payload file written
    # between two trials (0.3-1.7 s for 192 MiB-1 GiB on this VM, which a size changing every round spent 9 s of a
    # default run on), and a trial that grows too short for a steady part grows by itself (grow_if_too_short).
    # Not by half or more, as until the ladder's quarter steps: `--full` sizes all 16 MACs of a cipher from one
    # probe, and its trials then had a median steady part of 0.49 s where 0.25 s was the target.
    if wanted <= SHRINK_AT * sizes[combo]:
        sizes[combo] = wanted


def _median_steady_rate(trial: Trial, trials: list[Trial], settings: RunSettings) -> float | None:
    """The median steady rate of `trial`'s combination, where its sizes follow measured rates: the trial had one,
    the size is sshbench's (no --size, --file) and no --server-cpu (its sizes also cover a channel window)."""
    adaptive_size = settings.size is None and settings.file is None
    if not (adaptive_size and settings.server_cpu is None and measured_steady_mib_s(trial)):
        return None
    return statistics.median(
        rate for t in trials if t.combination == trial.combination and (rate := measured_steady_mib_s(t))
    )


def _unmeasured_members(
    combo: Combination, groups: dict[Combination, list[Combination]], trials: list[Trial]
) -> list[Combination]:
    """The members of `combo`'s calibration group with no measured transfer yet (sized from the group's probe)."""
    members = next((m for m in groups.values() if combo in m), [])
    measured = {t.combination for t in trials if not t.warmup and t.kind == TrialKind.TRANSFER}
    return [member for member in members if member not in measured]


def measured_steady_mib_s(t: Trial) -> float | None:
    """A measured transfer's steady rate; None for a warm-up, an invalid trial or another clock."""
    measured = t.kind == TrialKind.TRANSFER and t.valid and not t.warmup and t.data_clock == STEADY_STATE
    return t.steady_mib_s if measured else None  # between rekeys: what a trial's size is for (sshbench.measure.rekey)


def steady_window_cap(settings: RunSettings) -> float | None:
    """The longest steady window of a calibrated run's trials (steady.estimate's `max_window_s`): its steady-part
    target, `--seconds` as fitted (never under FIT_FLOOR_S); None where the user fixed the size (--size, --file).
    Why: the rate still moves after the omitted start, for seconds (512 MiB trials read 0.93x of 4 GiB ones in one
    hour; in another the first 0.55 s read 1.04x and the first 1.3 s 1.09x: docs/clock.md), so a trial its size made
    longer read differently. Each run sizes every combination anew from its probes, and ten default runs put a
    per-run component into their pair ratios: the variance of a pair's mean log ratio between runs was 1.4-2.7x
    (median 1.9) what the rounds predicted, 0.8 with one --size for all, and aes128-gcm vs aes256-gcm was decided
    both ways (docs/statistics.md "Between runs"). Cut at the same length, every trial times the same stretch of
    its connection whatever size it was given."""
    if settings.size is not None or settings.file is not None:
        return None
    return max(settings.seconds, FIT_FLOOR_S)


def steady_size(rate: float, steady_s: float, max_size: int) -> int:
    """The payload whose steady part lasts ~`steady_s` at `rate` MiB/s: the omitted start-up (sshbench.measure.steady)
    and the first channel window (2 MiB, sent before the remote reader starts) come on top, rounded up the
    ladder: rates here swing 1.5-2x between minutes, and a trial sized to the nearest power of two lost its
    steady part in 1 of 3 default-run trials (uploads at 0.25 s + omit)."""
    return size_at_least(int(rate * MIB * (steady_s + OMIT_S)) + FIRST_WINDOW_BYTES, max_size)


def grow_if_too_short(sizes: dict[Combination, int], trial: Trial, settings: RunSettings) -> None:
    """An adaptive run's measured transfer that had no steady part (a probe on a slow minute, a rate that
    rose since): the combination's next trials move what the trial's own late rate (the second half of its data
    phase) needs for `seconds` of steady part, at least twice as much; four times as much when it has no late
    rate. Why not always four: a 256 MiB aes256-ctr trial sized from a probe on a slow minute (357 MiB/s, where
    it ran at 650) ended 0.07 s short of a steady part, and four times as much made 1.6 s data phases that
    the next rounds had to shrink again (a new payload file); its late rate (648) sizes 512 MiB."""
    combo = trial.combination
    adaptive_size = settings.size is None and settings.file is None  # a user's --file has its own size
    if adaptive_size and trial.kind == TrialKind.TRANSFER and trial.steady_note == NO_STEADY_PART and combo in sizes:
        late = trial.late_mib_s
        wanted = (
            max(2 * sizes[combo], steady_size(late, settings.seconds, settings.max_size)) if late else 4 * sizes[combo]
        )
        sizes[combo] = max(sizes[combo], min(wanted, settings.max_size))


# How much faster one member of a calibration group may run than another: its ciphers' MACs (aes128-ctr with umac-64
# against hmac-sha2-512: ~1.6x here, plan.calibration_key).
GROUP_RATE_SPREAD = 1.6


def share_shrink(
    sizes: dict[Combination, int], trial: Trial, groups: dict[Combination, list[Combination]], trials: list[Trial],
    settings: RunSettings,
) -> None:  # fmt: skip
    """A measured transfer with a steady rate: the members of its calibration group with no measured transfer yet
    shrink to what GROUP_RATE_SPREAD times its median steady rate needs, where that is SHRINK_AT of their size or
    less. Why: the group's one probe is a connection's start, and its rate sized `--full`'s first round at up to 2-3
    times what the rows needed (aes192-ctr's 16 MACs at 768 MiB each, at ~490 MiB/s: 1.6 s data phases for a 0.55 s
    target); that round took 123 s where the next two took 99 and 104. A member faster than the spread allows has
    no steady part, and grows by itself (grow_if_too_short). The same conditions as follow_measured_rates."""
    rate = _median_steady_rate(trial, trials, settings)
    if rate is None:
        return
    wanted = steady_size(GROUP_RATE_SPREAD * rate, settings.seconds, settings.max_size)
    for member in _unmeasured_members(trial.combination, groups, trials):
        if member in sizes and wanted <= SHRINK_AT * sizes[member]:
            sizes[member] = wanted


def share_growth(
    sizes: dict[Combination, int], combo: Combination, groups: dict[Combination, list[Combination]], trials: list[Trial]
) -> None:
    """`combo` grew (grow_if_too_short): the members of its calibration group that have no measured transfer yet
    take its new size when theirs is smaller. They were sized from the same probe, whose rate was low for all of
    them: in one `--full` run 7 of aes192-ctr's 16 MACs in the first round ran with no steady part, each then
    again at once (~0.8 s a trial), where the first one's growth would have sized the other six."""
    for member in _unmeasured_members(combo, groups, trials):
        if sizes.get(member, 0) < sizes[combo]:
            sizes[member] = sizes[combo]
