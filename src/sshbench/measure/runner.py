"""Run a benchmark: start the target, plan the matrix, run interleaved trials, keep every result.

Whatever happens after the first trial (Ctrl-C, SIGTERM, sshd dying, a full disk), the trials
already measured are returned in the RunResult so they can be reported and saved.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

from sshbench import why
from sshbench.baselines import aesni
from sshbench.baselines import hooks as baseline_hooks
from sshbench.errors import Interrupted, RunError, SshbenchError
from sshbench.host import environment, placement
from sshbench.host.cleanup import Cleanup, signals_raise
from sshbench.host.leftovers import clean_leftovers
from sshbench.measure import clock, rekey_probe
from sshbench.measure.budget import END_RESERVE_S, Budget
from sshbench.measure.calibration import (
    PROBE_ATTEMPTS,
    Calibration,
    Reserve,
    adaptive_round,
    follow_measured_rates,
    grow_if_too_short,
    paced_data_phase,
    round_cost,
    share_growth,
    share_shrink,
    steady_window_cap,
)
from sshbench.measure.executors import connection_trial, raw_tcp_trial
from sshbench.measure.payload import (
    PROBE_SIZE,
    PayloadStore,
)
from sshbench.measure.plan import (
    ScheduledTrial,
    handshake_combinations,
    kex_handshakes,
    measured_round,
    plan_matrix,
    schedule,
    target_key,
)
from sshbench.measure.run_header import environment_header, payload_record
from sshbench.measure.run_plan import first_sizes, raw_tcp_combinations, setup_kexes, write_tails
from sshbench.measure.run_targets import start_targets
from sshbench.measure.trial import RunningProcess, TrialOverlay
from sshbench.measure.trial_files import TrialPaths
from sshbench.measure.warm import WarmSession, WarmSessions
from sshbench.measure.warm_rows import burst_fits, open_warm, track, warm_files, warm_record, warm_row
from sshbench.model import summary
from sshbench.openssh import builds
from sshbench.results import NO_STEADY_PART, Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.targets import Target, cpu_quota
from sshbench.targets import check_spec as check_target_spec
from sshbench.tools import TransferTool, get_tool
from sshbench.units import MIB, format_size

TrialCallback = Callable[[int, int, Trial], None]
RAW_TCP_BLOCK = 64 * MIB  # the raw TCP control's payload file, sent as often as its size needs
MAX_AUTO_ROUNDS = 30  # --runs auto never runs more measured rounds than this
# baselines.why.skipped where the default experiment was left out: the minimum rounds need the whole --budget
WHY_NO_ROOM = "--budget has no room for it after the minimum rounds (--why fastest runs it)"
WHY_NO_ROOM_NOTICE = f"--why: no experiment: {WHY_NO_ROOM}"


class Runner:
    def __init__(
        self,
        settings: RunSettings,
        on_trial: TrialCallback | None = None,
        on_plan: Callable[[int], None] | None = None,
        resume_from: RunResult | None = None,
    ) -> None:
        settings.validate()
        self.target_spec = settings.target_spec()  # what starts the target(s), parsed once
        self.axes = settings.matrix_spec()  # the matrix's other axes, parsed once
        check_target_spec(self.target_spec)
        if settings.no_aesni:
            aesni.refuse_unless_applicable(settings.host, environment.cpu_info())
        if settings.seed is None:  # recorded with the run (settings/JSON), so its order can be replayed
            settings.seed = random.randrange(2**31)
        self.settings = settings
        self.on_trial = on_trial
        self.on_plan = on_plan
        # --resume: carry on a stored run (its trials kept; see sshbench.store.resume), else a new one.
        self.resume_from = resume_from
        self.result = resume_from or RunResult(settings=settings)
        self._resumed_environment = dict(resume_from.environment) if resume_from else {}
        self._resumed_combinations = list(resume_from.combinations) if resume_from else []
        self.tools: dict[str, TransferTool] = {name: get_tool(name) for name in self.axes.tools}
        # --no-aesni: the environment of every ssh client and of the private sshd (None: inherit ours).
        self.ssh_env = aesni.masked_env() if settings.no_aesni else None
        # A build sweep (sshbench.openssh.builds): --ssh A,B are client builds; --sshd A,B one private sshd each
        self.ssh_builds = builds.inspect_all(settings.ssh, "ssh") if builds.sweeps(settings.ssh) else []
        self.sshd_builds: list[builds.Build] = []
        self._groups: dict[Combination, list[Combination]] = {}  # calibration groups, once the plan is made
        # Why the default --why experiment was left out (the budget). A resumed run keeps its run's decision, stored
        # with the run's notices when it stopped (a resume fits nothing again).
        self._why_no_room = resume_from is not None and WHY_NO_ROOM_NOTICE in resume_from.notices
        self._setup_kexes: dict[Combination, str] = {}  # transfers set up with another kex (plan.setup_kex)
        self._pace_notice: str | None = None  # the minimum rounds' pace, where one shrank them (_pace)
        self._warm = (
            WarmSessions() if settings.warm else None
        )  # warm sessions: one connection per row (sshbench.measure.warm)

    def run(self) -> RunResult:
        # --budget counts the whole run (servers up, discovery, baselines, warm-up, calibration), so
        # that `sshbench run` with the default budget ends about a minute after it was started.
        self._started = time.monotonic()
        removed = clean_leftovers() + cpu_quota.sweep_stale()  # quota groups: below leftovers' layer
        if removed:
            self.result.notices.append(f"removed leftovers of an earlier run that was killed: {', '.join(removed)}")
        cleanup = Cleanup()
        target: Target | None = None  # the first (primary) target: baselines and the header use it
        self.targets: dict[str, Target] = {}
        try:
            with signals_raise():
                try:
                    for server in self.target_spec.servers:
                        started_targets, relabelled = start_targets(
                            server,
                            self.target_spec,
                            self.settings,
                            cleanup,
                            env=self.ssh_env,
                            ssh_builds=self.ssh_builds,
                        )
                        if relabelled is not None:  # a build sweep's sshd builds, labelled by their banners
                            self.sshd_builds = relabelled
                        for key, started in started_targets:
                            self.targets[key] = started
                            target = target or started
                        started_target = self.targets.get(server)
                        if started_target is not None and (left := started_target.removed_leftovers):  # a remote's
                            self.result.notices.append(
                                f"removed leftovers of an earlier run that was killed: {', '.join(left)}"
                            )
                    assert target is not None
                    self._measure(target, cleanup)
                    self.result.status = "complete"
                finally:
                    if self._warm is not None:  # an interrupt: the warm sessions' clients, checked no more
                        self._warm.kill_all()
                    RunningProcess.kill_all()  # the client(s) in flight: several with -P N
                    cleanup.close()
        except (KeyboardInterrupt, Interrupted) as err:
            self.result.status = "interrupted"
            signum = getattr(err, "signum", 2)
            self.result.error = f"interrupted by signal {signum}"
            self.result.exit_code = 128 + signum
        except SshbenchError as err:
            self.result.status = "failed"
            self.result.error = str(err)
            self.result.exit_code = err.exit_code
        except Exception as err:  # a bug: keep what was measured, say what broke in one line
            if os.environ.get("SSHBENCH_DEBUG"):
                import traceback

                traceback.print_exc()
            self.result.status = "failed"
            self.result.error = f"internal error: {type(err).__name__}: {err} (SSHBENCH_DEBUG=1 shows where)"
            self.result.exit_code = 1
        finally:
            if target is not None:
                self.result.target = target.describe()
                if len(self.targets) > 1:
                    self.result.target["servers"] = {name: t.describe() for name, t in self.targets.items()}
            clock.cross_check(self.result.trials, slow_server=self.settings.server_cpu is not None)
            self.result.finished_at = time.time()
        if self.result.status == "complete" and any(
            s.valid_trials + s.unmeasured_trials == 0 for s in summary.summaries(self.result)
        ):
            self.result.exit_code = 1  # a combination that never worked
        return self.result

    # ---------------------------------------------------------------------------------------------

    def _ssh_for(self, combo: Combination) -> str:
        """The ssh program of a combination: its client build's in a build sweep, else --ssh."""
        if combo.ssh_build:
            return next(b.path for b in self.ssh_builds if b.label == combo.ssh_build)
        return self.target_spec.ssh

    def _measure(self, target: Target, cleanup: Cleanup) -> None:
        s = self.settings
        for tool in self.tools.values():
            if reason := tool.missing():
                raise RunError(f"transfer tool {tool.name}: {reason}")
        client_builds = (
            {b.label: target.client_build_algorithms(b.path) for b in self.ssh_builds}
            if len(self.ssh_builds) > 1
            else None
        )
        if s.host is None and s.pin and not self.target_spec.emulated:
            if unpinned := placement.choose(s.pin, self.target_spec.most_streams)[1]:
                self.result.notices.append(unpinned)
        combos = plan_matrix(self.targets, self.tools, self.settings, self.result.notices, client_builds)
        self._setup_kexes = self._setup_kexes_for(combos, target)
        handshakes = handshake_combinations(combos, self._setup_kexes) + kex_handshakes(
            combos, client_builds, self.targets
        )
        self.result.combinations = combos
        self.result.environment = environment_header(
            settings=s,
            axes=self.axes,
            ssh=self.target_spec.ssh,
            target=target,
            targets=self.targets,
            client_builds=client_builds,
            ssh_builds=self.ssh_builds,
            sshd_builds=self.sshd_builds,
        )
        fixed_size = os.path.getsize(s.file) if s.file else s.size
        biggest = fixed_size or s.max_size
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=2 * biggest)
        self._warm_dir, self._cleanup, self._warm_tracked = workdir, cleanup, set[int]()
        self._warm_payloads: dict[Combination, Path] = {}  # the file each row's warm session reads (warm_files)
        self._paths = {name: TrialPaths(t, cleanup, workdir, combos, s) for name, t in self.targets.items()}
        self._files = self._paths[next(iter(self.targets))]  # the primary target's (raw TCP control, payload notes)
        payloads = self._files.payloads
        self.result.baselines, raw_tcp_combo = baseline_hooks.before_trials(
            combos=combos,
            target=target,
            enabled=s.baselines,
            aesni_env=self.ssh_env,
            client_crypto_library=self.result.environment.get("client_crypto_library"),
        )
        crypto = self.result.baselines.get("crypto") or {}
        sizes = first_sizes(
            combos, handshakes, s, fixed_size=fixed_size, emulated=self.target_spec.emulated, crypto=crypto
        )
        # the raw TCP control: once per emulated link, and per direction measured against a remote host
        raw_tcp_combos = raw_tcp_combinations(raw_tcp_combo, self.axes, target.raw_tcp().both_directions)
        self._raw_tcp_left_out = False  # set once a remote control cannot work (blocked port): one note
        # the per-link details (method, RTT, shaper counters) go under baselines["links"]
        if (link_details := target.link_details()) is not None:
            self.result.baselines["links"] = link_details
        for raw_combo in raw_tcp_combos:
            sizes[raw_combo] = s.size or min(PROBE_SIZE, s.max_size)
        plan = schedule(
            combos,
            handshakes,
            s.runs,
            s.warmup,
            calibrate=fixed_size is None,
            raw_tcp=raw_tcp_combos or None,
            seed=s.seed,
        )
        if self.resume_from is not None:
            plan, sizes = self._resume_plan(plan, sizes, combos)
        if self.on_plan:
            self.on_plan(len(plan))
        calibration = Calibration(combos, s, sizes)
        self._rekeys = (
            rekey_probe.RekeyCosts()
        )  # measured before the rounds (_probe_rekeys); until then nothing charged
        self._groups = calibration.groups  # a trial that grows grows its group's unmeasured members (share_growth)
        fitted = False
        round_started: dict[int, float] = {}  # each minimum round's start (monotonic): its pace (_pace)
        for index, item in enumerate(plan):
            if self._raw_tcp_left_out and item.kind == TrialKind.RAW_TCP:
                continue
            if not (fitted or item.warmup):  # calibration is done: fit the minimum rounds to --budget
                fitted = True
                self._probe_rekeys(target, combos, workdir)  # before the fit, which then counts its time
                time_left = self._budget().time_left()
                # --why's trials after the rounds are counted in (sshbench.why: its experiments' reserve)
                reserve = self._why_reserve(target, combos)
                if (
                    reserve.trials
                    and s.why == "auto"
                    and self.resume_from is None
                    and not calibration.minimum_rounds_fit(plan[index:], self.result.trials, time_left, reserve)
                ):
                    # The default experiment only where --budget has room for it: where the minimum rounds and it
                    # do not fit at the floor (--full: 345 trials), the rounds' data phase would shrink further for
                    # it, and a --full run overran its budget by the experiment's ~14 s.
                    self._why_no_room = True
                    self.result.notices.append(WHY_NO_ROOM_NOTICE)
                    reserve = self._why_reserve(target, combos)  # none now
                if self.resume_from is None and (
                    notice := calibration.fit_minimum_rounds(plan[index:], self.result.trials, time_left, reserve)
                ):
                    self.result.notices.append(notice)
                    self._note_fitted_size()
                self._write_tails(combos, sizes)
            if fitted and not item.warmup and item.repetition not in round_started:
                round_started[item.repetition] = time.monotonic()
                if item.repetition - 1 in round_started:
                    self._pace(item.repetition, round_started[item.repetition - 1], sizes, target, combos)
            trial = self._one(target, item, sizes, payloads, workdir)
            self._record(index, len(plan), trial, target)
            if not item.calibration:
                self._again_if_too_short(trial, target, item, sizes, payloads, workdir, index, len(plan))
            for attempt in range(PROBE_ATTEMPTS) if item.calibration else ():  # a bigger probe while too short
                if not calibration.after_probe(item.combination, trial, attempt):
                    break
                trial = self._one(target, item, sizes, payloads, workdir)
                self._record(index, len(plan), trial, target)
        if s.adaptive:
            self._adaptive_rounds(target, sizes, payloads, workdir, len(plan))
        if self._warm is not None and self._warm.sessions:  # each one's end check, before anything reads the rows
            self.result.notices += self._warm.close_all()
            self.result.environment["warm_sessions"] = warm_record(self.result.trials)
        self._why(target, cleanup, sizes, payloads, workdir)
        baseline_hooks.after_trials(self.result.baselines, workdir, source_file=s.file, combos=combos, target=target)
        self._note_payloads()

    def _pace(
        self,
        repetition: int,
        before_started: float,
        sizes: dict[Combination, int],
        target: Target,
        combos: list[Combination],
    ) -> None:
        """At the start of minimum round `repetition` (the round before started at `before_started`, monotonic):
        where the rounds left would overrun --budget at the pace the round before kept, their data phase shrinks
        (calibration.paced_data_phase) and the notice says so. The steady window's cap follows `seconds`
        (calibration.steady_window_cap), as it does the fit's: under FIT_FLOOR_S it stays there."""
        s = self.settings
        if not (s.adaptive and s.fit_seconds) or self.resume_from is not None or self._warm is not None:
            return  # warm sessions: the rounds left are bursts, at about half the round just measured
        budget = self._budget(self._why_reserve(target, combos))
        time_left = budget.rounds_time_left(self.result.trials)
        done = [t for t in self.result.trials if not t.warmup and t.repetition == repetition - 1]
        pace = paced_data_phase(done, budget.round_s(before_started), s.runs - repetition, time_left, s, sizes)
        if pace is None:
            return
        sizes.update(pace.sizes)
        notice = (
            f"--budget {s.budget_s:g} s: round {repetition} took {pace.round_s:.0f} s, so the data phase shrank from "
            f"~{s.seconds:.2f} s to ~{pace.target_s:.2f} s for the {s.runs - repetition} minimum round(s) left"
        )
        s.seconds = pace.target_s
        if self._pace_notice in self.result.notices:  # one line: the last pace
            self.result.notices.remove(self._pace_notice)
        self.result.notices.append(notice)
        self._pace_notice = notice
        self._note_fitted_size()

    def _note_fitted_size(self) -> None:
        """The environment's payload line, once the minimum rounds' data phase was fitted or paced."""
        s = self.settings
        self.result.environment["payload_size"] = (
            f"adaptive (~{s.seconds:.2g} s per trial to fit --budget, at most {format_size(s.max_size)})"
        )

    def _adaptive_rounds(
        self, target: Target, sizes: dict[Combination, int], payloads: PayloadStore, workdir, done: int
    ) -> None:
        """--runs auto: after the first measured rounds, a round at a time for the combinations still
        undecided against a neighbour (statistics.combinations_needing_rounds), until every pair is
        ordered or tied, or the next round would not fit in --budget (counted from the run's start, with
        the end-of-run baselines' few seconds kept in reserve); where that round no longer fits, one of the rows
        the answer needs alone (calibration.adaptive_round)."""
        from sshbench.model import statistics as stats

        s = self.settings
        rng = random.Random(s.seed + 1 if s.seed is not None else None)
        rounds = max((t.repetition + 1 for t in self.result.trials if not t.warmup), default=0)
        reason = "every pair is decided"
        answer_only = 0  # rounds of the rows the answer needs alone
        while True:
            rankings = summary.rankings(self.result.trials, s.tie)
            needing = [c for r in rankings.values() for c in stats.combinations_needing_rounds(r)]
            if not needing:
                break
            if rounds >= MAX_AUTO_ROUNDS:
                reason = f"{MAX_AUTO_ROUNDS} rounds is the most --runs auto runs"
                break
            budget = self._budget(self._why_reserve(target, self.result.combinations))
            time_left = budget.rounds_time_left(self.result.trials)
            chosen = adaptive_round(needing, summary.rows_the_answer_needs(self.result.trials, s.tie), time_left,
                                    lambda combos: round_cost(self.result.trials, combos),
                                    answer_extra_s=budget.why_spare(self.result.trials))  # fmt: skip
            if chosen is None:
                reason = f"the --budget of {s.budget_s:g} s is spent"
                break
            answer_only += chosen != needing
            needing = chosen
            plan = measured_round(needing, handshake_combinations(needing, self._setup_kexes), rounds, rng)
            total = done + len(plan)
            if self.on_plan:
                self.on_plan(total)
            for index, item in enumerate(plan, start=done):
                trial = self._one(target, item, sizes, payloads, workdir)
                self._record(index, total, trial, target)
                self._again_if_too_short(trial, target, item, sizes, payloads, workdir, index, total)
            done, rounds = total, rounds + 1
        undecided = summary.rankings(self.result.trials, s.tie)
        left = sum(len(stats.undecided_pairs(r)) for r in undecided.values())
        narrowed = f" ({answer_only} of them for the fastest group's undecided pairs alone)" if answer_only else ""
        self.result.notices.append(
            f"--runs auto: {rounds} rounds{narrowed}, stopped: {reason}"
            + (f" ({left} pair(s) undecided)" if left else "")
        )

    def _budget(self, why_reserve: Reserve | None = None) -> Budget:
        """--budget as it stands (sshbench.measure.budget): from the run's start, END_RESERVE_S and `why_reserve` kept back."""
        return Budget(self.settings.budget_s, self._started, END_RESERVE_S, why_reserve)

    def _why_reserve(self, target: Target, combos: list[Combination]) -> Reserve:
        """The default --why experiment's trials, for the budget. A throttle that halves a CPU here made its trial
        2-2.5x as long (the quota's 10 ms periods cost more than half: 1258 vs 488 MiB/s), and both CPUs limit a
        loopback transfer: the mean trial of a round (one unthrottled, two throttled) has ~2x the data phase
        (1.5 under-predicted a default run's experiment by ~7 s: 19.8 s for 3 rounds, the command 59.7 s)."""
        return Reserve(self._why_trials(target, combos), why.WHY_SECONDS, stretch=2.0)

    def _why_trials(self, target: Target, combos: list[Combination]) -> int:
        """How many trials the default --why experiment will add (why.experiment_trials; none for a resumed run or
        where --budget had no room for it)."""
        if self.resume_from is not None or self._why_no_room:
            return 0
        return why.experiment_trials(self.settings, target, combos)

    def _why(
        self, target: Target, cleanup: Cleanup, sizes: dict[Combination, int], payloads: PayloadStore, workdir
    ) -> None:
        """--why: slow one resource at a time for the fastest row (or every row) and record what it
        cost (sshbench.why); the experiment's trials stay out of the ranking."""
        mode = self.settings.why_mode()
        if mode == "off":
            return
        if os.geteuid() != 0 or self._why_no_room:
            skipped = WHY_NO_ROOM if self._why_no_room else "needs root (cgroups, tc)"
            self.result.baselines["why"] = {"mode": mode, "skipped": skipped, "combinations": []}
            return

        rates = {s.combination: s.median_mib_s for s in summary.summaries(self.result) if s.median_mib_s}
        why_sizes = why.experiment_sizes(sizes, rates, self.settings)

        def measure(item: ScheduledTrial, overlay: TrialOverlay) -> Trial:
            return self._one(target, item, why_sizes, payloads, workdir, overlay=overlay)

        self.result.baselines["why"] = why.run_experiments(
            result=self.result,
            mode=mode,
            targets=self.targets,
            primary=target,
            measure=measure,
            cleanup=cleanup,
            rounds=self.settings.why_rounds,
            seed=self.settings.seed,
            # past the 3 rounds a sensitivity needs, --budget ends the experiment (a default run went 62 s
            # with 4 rounds on a busy 2-core VM; --why-rounds asks for more and gets them within the budget)
            budget=self._budget() if self.settings.adaptive else None,
        )

    def _note_payloads(self) -> None:
        record, notice = payload_record(self._files.zlib_ratios, self.result.combinations)
        if record is not None:
            self.result.environment["payload_zlib_ratio"] = record
        if notice is not None:
            self.result.notices.append(notice)

    def _resume_plan(
        self, plan: list[ScheduledTrial], sizes: dict[Combination, int], combos: list[Combination]
    ) -> tuple[list[ScheduledTrial], dict[Combination, int]]:
        """--resume: refuse if the numbers would not be comparable; else only the trials not stored yet."""
        from sshbench.store import resume

        return resume.resume_plan(
            plan,
            sizes,
            combos,
            stored_environment=self._resumed_environment,
            environment=self.result.environment,
            stored_combinations=self._resumed_combinations,
            trials=self.result.trials,
            settings=self.settings,
        )

    def _record(self, index: int, total: int, trial: Trial, target: Target) -> None:
        self.result.trials.append(trial)
        if self.on_trial:
            self.on_trial(index + 1, total, trial)
        if not trial.valid and not target.alive():
            raise RunError(
                f"{target.death_reason() or 'the target died'} during the run; "
                f"kept the {self._measured()} trials measured before"
            )

    def _again_if_too_short(
        self,
        trial: Trial,
        target: Target,
        item: ScheduledTrial,
        sizes: dict[Combination, int],
        payloads: PayloadStore,
        workdir: Path,
        index: int,
        total: int,
    ) -> None:
        """A measured transfer with no steady part (sshbench.measure.steady) counts for nothing: its combination's
        trials grow (calibration.grow_if_too_short) and this one runs again at once, bigger, in the same round,
        so that the round keeps its rate. Without it a default run lost the first round of its fastest
        ciphers (128 MiB at ~600 MiB/s: 0.21 s, inside the omitted start) and left them too few rounds to
        decide anything. Once: a second short trial only grows the next ones. A trial with a steady rate sizes
        its combination's next ones from its measured rates (calibration.follow_measured_rates)."""
        follow_measured_rates(sizes, trial, self.result.trials, self.settings)
        share_shrink(sizes, trial, self._groups, self.result.trials, self.settings)
        before = sizes.get(trial.combination)
        grow_if_too_short(sizes, trial, self.settings)
        if trial.warmup or trial.steady_note != NO_STEADY_PART or sizes.get(trial.combination) == before:
            return
        share_growth(sizes, trial.combination, self._groups, self.result.trials)
        again = self._one(target, item, sizes, payloads, workdir)
        self._record(index, total, again, target)
        grow_if_too_short(sizes, again, self.settings)

    def _one(
        self,
        target: Target,
        item: ScheduledTrial,
        sizes: dict[Combination, int],
        payloads: PayloadStore,
        workdir,
        overlay: TrialOverlay | None = None,
    ) -> Trial:
        if not target.alive():
            raise RunError(
                f"{target.death_reason() or 'the target died'} during the run; "
                f"kept the {self._measured()} trials measured before"
            )
        # a handshake moves no data: an adaptive round's handshake of the set-up kex (plan.handshake_combinations) is
        # shaped like its first transfer of the round, which need not be the combination the sizes were made with
        size = sizes.get(item.combination, 0) if item.kind == TrialKind.HANDSHAKE else sizes[item.combination]
        if item.kind == TrialKind.RAW_TCP:
            raw_trial, note = raw_tcp_trial(
                item,
                size,
                target=target,
                payloads=self._files.payloads,
                files=self._files,
                timeout_s=self.settings.trial_timeout_s,
            )
            if note:
                self.result.baselines.setdefault("notes", []).append(note)
                self._raw_tcp_left_out = True
            return raw_trial
        combo = item.combination
        target = self.targets.get(target_key(combo.server, combo.sshd_build), target)
        if overlay is None and self._warm is not None and burst_fits(item, lambda c: self._warm_row(c, target)):
            if combo not in self._warm.sessions:  # the first burst: every row's session, opened together
                rows = [c for c in self.result.combinations if self._warm_row(c, self._target_of(c, target))]
                self._warm_payloads.update(warm_files(rows, sizes, self._paths_of, self.settings.max_size))
                self._warm.open_all([combo, *rows], lambda c, index: self._open_warm(c, target, index))
                track(self._warm, self._warm_tracked, self._cleanup)  # in the run record: stopped after a kill -9
            trial = self._warm.burst(combo, item.repetition)
            self._rekeys.charge(
                trial, target
            )  # the rekeys a long transfer meets, as a trial's (sshbench.measure.rekey)
            return trial
        # a transfer connects with the quickest kex to set up where the run does not measure kex (plan.setup_kex)
        trial = connection_trial(
            item,
            size,
            target=target,
            tool=self._tool_for(combo),
            ssh=self._ssh_for(combo),
            paths=self._paths_of(combo),
            workdir=workdir,
            timeout_s=self.settings.trial_timeout_s,
            env=self.ssh_env,
            overlay=overlay or TrialOverlay(),  # a --why experiment's trial: its client prefix and throttle
            max_steady_window_s=steady_window_cap(self.settings),  # the same stretch of every trial's connection
            setup_kex=self._setup_kexes.get(combo) if item.kind == TrialKind.TRANSFER else None,
        )
        if item.kind == TrialKind.TRANSFER:
            clock.provisional_wall_clock(trial, self.result.trials, slow_server=self.settings.server_cpu is not None)
            self._rekeys.charge(
                trial, target
            )  # the rekeys a long transfer meets, where they matter (sshbench.measure.rekey)
        return trial

    def _target_of(self, combo: Combination, primary: Target) -> Target:
        return self.targets.get(target_key(combo.server, combo.sshd_build), primary)

    def _warm_row(self, combo: Combination, target: Target) -> bool:
        """Warm sessions: this row's transfers after its first round can be bursts (sshbench.measure.warm_rows)."""
        return warm_row(combo, target, self._paths_of(combo), self.settings, self.target_spec.emulated)

    def _open_warm(self, combo: Combination, primary: Target, index: int) -> WarmSession:
        """A warm session of `combo` (sshbench.measure.warm_rows.open_warm), on its own target."""
        return open_warm(
            combo,
            self._target_of(combo, primary),
            index,
            ssh=self._ssh_for(combo),
            setup_kex=self._setup_kexes.get(combo),
            payload=self._warm_payloads[combo],
            workdir=self._warm_dir,
            ssh_env=self.ssh_env,
            settings=self.settings,
        )

    def _paths_of(self, combo: Combination) -> TrialPaths:
        return self._paths.get(target_key(combo.server, combo.sshd_build), self._files)

    def _setup_kexes_for(self, combos: list[Combination], primary: Target) -> dict[Combination, str]:
        """The kex each transfer connects with instead of its own (run_plan.setup_kexes)."""
        return setup_kexes(combos, lambda c: self._target_of(c, primary), measures_kex=bool(self.settings.kex))

    def _probe_rekeys(self, primary: Target, combos: list[Combination], workdir) -> None:
        """The stall of one rekey per key exchange, link and server (sshbench.measure.rekey_probe.probe_run)."""
        if self.settings.server_cpu is not None:  # a CPU quota stops the flow every period: not a rekey's stall
            self.result.environment["rekeys_counted"] = False
            return
        costs = rekey_probe.probe_run(
            combos,
            self.result.trials,
            target_for=lambda c: self._target_of(c, primary),
            tool_for=self._tool_for,
            paths_for=self._paths_of,
            ssh_for=self._ssh_for,
            workdir=workdir,
            timeout_s=self.settings.trial_timeout_s,
            env=self.ssh_env,
            where=self.settings.host or "",
            client_version=self.result.environment.get("client_ssh_version"),
        )
        if costs is not None:
            self._rekeys = costs
            self.result.baselines["rekeys"] = costs.entries

    def _write_tails(self, combos: list[Combination], sizes: dict[Combination, int]) -> None:
        """Each payload file stdin tools read tails of, written before the measured rounds (run_plan.write_tails)."""
        write_tails(combos, sizes, self._paths_of, self._tool_for)

    def _tool_for(self, combo: Combination) -> TransferTool:
        """The tool implementation for the combination's client (an AsyncSSH client has its own pipe)."""
        if combo.client != "openssh":
            return get_tool(combo.tool, client=combo.client)
        return self.tools[combo.tool]

    def _measured(self) -> int:
        return sum(1 for t in self.result.trials if not t.warmup and t.valid)


__all__ = ["Runner"]
