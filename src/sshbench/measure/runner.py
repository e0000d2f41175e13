"""Run a benchmark: a loop over interleaved rounds, handed its parts (RunParts: how to start the targets, the trial
executors, the budget's clock, the rekey probe, the --why experiment, the header), so that a test drives a whole run
against fakes in milliseconds (tests/test_whole_runs.py). Whatever ends the run after its first trial (Ctrl-C, SIGTERM,
sshd dying, a full disk), the trials measured are returned in the RunResult, to be reported and saved."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import replace

from sshbench.baselines import aesni
from sshbench.baselines import hooks as baseline_hooks
from sshbench.errors import Interrupted, RunError, SshbenchError
from sshbench.host import placement
from sshbench.host.cleanup import Cleanup, signals_raise
from sshbench.host.pauses import paused, watch_continues
from sshbench.measure import clock, rounds
from sshbench.measure.budget import END_RESERVE_S, Budget
from sshbench.measure.calibration import PROBE_ATTEMPTS, Calibration, Reserve
from sshbench.measure.executors import ExecutorSet, TrialContext
from sshbench.measure.payload import PROBE_SIZE
from sshbench.measure.plan import ScheduledTrial, handshake_combinations, kex_handshakes, schedule
from sshbench.measure.run_header import payload_record
from sshbench.measure.run_parts import RunParts
from sshbench.measure.run_plan import first_sizes, planned_rows, raw_tcp_combinations, setup_kexes
from sshbench.measure.spec import RunSpec
from sshbench.measure.target_set import TargetSet
from sshbench.measure.trial import RunningProcess, TrialOverlay
from sshbench.model import summary
from sshbench.results import Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.store import resume
from sshbench.tools import tools_for_run
from sshbench.units import format_size
from sshbench.why import experiment as why

TrialCallback = Callable[[int, int, Trial], None]


class Runner:
    def __init__(
        self,
        spec: RunSpec,
        on_trial: TrialCallback | None = None,
        on_plan: Callable[[int], None] | None = None,
        resume_from: RunResult | None = None,
        parts: RunParts = RunParts(),
    ) -> None:
        self.spec, self.parts = spec, parts
        # The run's record of its settings: the spec's, with what the run decides (the data phase fitted to --budget)
        self.settings = spec.settings
        self.on_trial, self.on_plan = on_trial, on_plan
        # --resume: carry on a stored run (its trials kept; see sshbench.store.resume), else a new one.
        self.resume_from = resume_from
        self.result = resume_from or RunResult(settings=self.settings)
        self.result.settings = self.settings
        self._resumed = (dict(resume_from.environment), list(resume_from.combinations)) if resume_from else None
        # --no-aesni: the environment of every ssh client and of the private sshd (None: inherit ours).
        self.ssh_env = aesni.masked_env() if self.settings.no_aesni else None
        self.targets = TargetSet(ssh=spec.target.ssh)
        # Why the default --why experiment was left out (the budget). A resumed run keeps its run's decision, stored
        # with the run's notices when it stopped (a resume fits nothing again).
        self.rounds = rounds.RoundState(
            why_no_room=resume_from is not None and rounds.WHY_NO_ROOM_NOTICE in resume_from.notices,
            rng=random.Random((self.settings.seed or 0) + 1),
        )
        self.executors: ExecutorSet | None = None
        self._started = 0.0

    def run(self) -> RunResult:
        # --budget counts the whole run (servers up, discovery, baselines, warm-up, calibration), so
        # that `sshbench run` with the default budget ends about a minute after it was started.
        self._started = self.parts.clock()
        watch_continues()  # a trial that spans a SIGSTOP/SIGCONT of sshbench is measured again (host/pauses)
        if removed := self.parts.clean_leftovers():
            self.result.notices.append(f"removed leftovers of an earlier run that was killed: {', '.join(removed)}")
        cleanup = Cleanup()
        try:
            with signals_raise():
                try:
                    self.parts.start_targets(self.settings, self.targets, cleanup, self.ssh_env)
                    self.result.notices += self.targets.notices
                    self._measure(cleanup)
                    self.result.status = "complete"
                finally:
                    if self.executors is not None:  # the warm sessions' clients, checked no more
                        self.executors.stop()
                    RunningProcess.kill_all()  # any client in flight (a rekey probe's, a baseline's)
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
            if (described := self.targets.describe()) is not None:
                self.result.target = described
            clock.cross_check(self.result.trials, slow_server=self.settings.server_cpu is not None)
            self.result.finished_at = time.time()
        if self.result.status == "complete" and any(
            s.valid_trials + s.unmeasured_trials == 0 for s in summary.summaries(self.result)
        ):
            self.result.exit_code = 1  # a combination that never worked
        return self.result

    # ---------------------------------------------------------------------------------------------

    def _measure(self, cleanup: Cleanup) -> None:
        s, targets = self.settings, self.targets
        target = targets.primary
        assert target is not None
        tools = tools_for_run(self.spec.axes.tools)  # each installed, or RunError
        client_builds = targets.client_builds()
        if s.host is None and s.pin and not self.spec.target.emulated:
            if unpinned := placement.choose(s.pin, self.spec.target.most_streams)[1]:
                self.result.notices.append(unpinned)
        combos = planned_rows(targets.targets, tools, s, self.result.notices, client_builds, target)
        kexes = setup_kexes(combos, targets.of, measures_kex=bool(s.kex))
        handshakes = handshake_combinations(combos, kexes) + kex_handshakes(combos, client_builds, targets.targets)
        self.result.combinations = combos
        self.result.environment = self.parts.header(
            settings=s,
            axes=self.spec.axes,
            ssh=self.spec.target.ssh,
            target=target,
            targets=targets.targets,
            client_builds=client_builds,
            ssh_builds=targets.ssh_builds,
            sshd_builds=targets.sshd_builds,
        )
        fixed_size = os.path.getsize(s.file) if s.file else s.size
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=2 * (fixed_size or s.max_size))
        targets.plan_files(cleanup, workdir, combos, s)
        self.result.baselines, raw_tcp_combo = baseline_hooks.before_trials(
            combos=combos,
            target=target,
            enabled=s.baselines,
            aesni_env=self.ssh_env,
            client_crypto_library=self.result.environment.get("client_crypto_library"),
        )
        crypto = self.result.baselines.get("crypto") or {}
        sizes = first_sizes(
            combos, handshakes, s, fixed_size=fixed_size, emulated=self.spec.target.emulated, crypto=crypto
        )
        # the raw TCP control: once per emulated link, and per direction measured against a remote host
        raw_tcp_combos = raw_tcp_combinations(raw_tcp_combo, self.spec.axes, target.raw_tcp().both_directions)
        if (link_details := target.link_details()) is not None:  # per link: method, RTT, shaper counters
            self.result.baselines["links"] = link_details
        for raw_combo in raw_tcp_combos:
            sizes[raw_combo] = s.size or min(PROBE_SIZE, s.max_size)
        plan = schedule(combos, handshakes, s.runs, s.warmup, calibrate=fixed_size is None,
                        raw_tcp=raw_tcp_combos or None, seed=s.seed)  # fmt: skip
        if self._resumed is not None:  # --resume: refused where not comparable; else only the trials not stored yet
            plan, sizes = resume.resume_plan(plan, sizes, combos, stored_environment=self._resumed[0],
                                             environment=self.result.environment, stored_combinations=self._resumed[1],
                                             trials=self.result.trials, settings=self.settings)  # fmt: skip
        if self.on_plan:
            self.on_plan(len(plan))
        self.ctx = TrialContext(settings=s, targets=targets, result=self.result, workdir=workdir, cleanup=cleanup,
                                env=self.ssh_env, tools=tools, setup_kexes=kexes, sizes=sizes)  # fmt: skip
        self.executors = self.parts.executors(self.ctx)
        self.calibration = Calibration(combos, s, sizes)
        self._minimum_rounds(plan, sizes, combos)
        if s.adaptive:
            self._adaptive_rounds(sizes, len(plan))
        self.result.notices += self.executors.end_rounds()  # warm sessions' end checks, before the rows are read
        self._why(cleanup, sizes)
        baseline_hooks.after_trials(self.result.baselines, workdir, source_file=s.file, combos=combos, target=target)
        record, notice = payload_record(targets.files.zlib_ratios, combos)
        if record is not None:
            self.result.environment["payload_zlib_ratio"] = record
        self.result.notices += [notice] if notice is not None else []

    def _minimum_rounds(
        self, plan: list[ScheduledTrial], sizes: dict[Combination, int], combos: list[Combination]
    ) -> None:
        """The planned trials: warm-up, calibration probes, then the minimum rounds, fitted to --budget once
        calibration is done and paced after each round (sshbench.measure.rounds)."""
        assert self.executors is not None
        fitted = False
        round_started: dict[int, float] = {}  # each minimum round's start (on the clock): its pace
        for index, item in enumerate(plan):
            if self.executors.skips(item):
                continue
            if not (fitted or item.warmup):  # calibration is done: fit the minimum rounds to --budget
                fitted = True
                self._probe_rekeys(combos)  # before the fit, which then counts its time
                self._fit(plan[index:])
                self.executors.before_rounds(combos)
            if fitted and not item.warmup and item.repetition not in round_started:
                round_started[item.repetition] = self.parts.clock()
                if item.repetition - 1 in round_started:
                    self._pace(item.repetition, round_started[item.repetition - 1], sizes)
            trial = self._one(item, sizes)
            self._record(index, len(plan), trial)
            if not item.calibration:
                self._again_if_too_short(trial, item, sizes, index, len(plan))
            for attempt in range(PROBE_ATTEMPTS) if item.calibration else ():  # a bigger probe while too short
                if not self.calibration.after_probe(item.combination, trial, attempt):
                    break
                trial = self._one(item, sizes)
                self._record(index, len(plan), trial)

    def _fit(self, rest: list[ScheduledTrial]) -> None:
        """Fit the minimum rounds' data phase to --budget (calibration.fit_minimum_rounds), the --why reserve kept;
        where the default experiment does not fit beside the minimum rounds, it is left out (rounds.WHY_NO_ROOM)."""
        time_left = self._budget().time_left()
        reserve = self._why_reserve()
        trials = self.result.trials
        if (
            reserve.trials
            and self.settings.why == "auto"
            and self.resume_from is None
            and not self.calibration.minimum_rounds_fit(rest, trials, time_left, reserve)
        ):
            # The default experiment only where --budget has room for it: where the minimum rounds and it do not
            # fit at the floor (--full: 345 trials), the rounds' data phase would shrink further for it, and a
            # --full run overran its budget by the experiment's ~14 s.
            self.rounds.why_no_room = True
            self.result.notices.append(rounds.WHY_NO_ROOM_NOTICE)
            reserve = self._why_reserve()  # none now
        if self.resume_from is None and (
            notice := self.calibration.fit_minimum_rounds(rest, trials, time_left, reserve)
        ):
            self.result.notices.append(notice)
            self._decide(self.calibration.settings)

    def _decide(self, settings: RunSettings) -> None:
        """The run's record of its settings as it decided them (the data phase fitted or paced): what the trials,
        the calibration and the executors read from here on, and what the JSON and the store record."""
        self.settings = self.result.settings = self.calibration.settings = self.ctx.settings = settings
        self.result.environment["payload_size"] = (
            f"adaptive (~{settings.seconds:.2g} s per trial to fit --budget, at most {format_size(settings.max_size)})"
        )

    def _pace(self, repetition: int, before_started: float, sizes: dict[Combination, int]) -> None:
        """At the start of minimum round `repetition`: where the rounds left would overrun --budget at the pace the
        round before kept, their data phase shrinks (rounds.pace) and one notice says so (the last pace)."""
        s = self.settings
        if not (s.adaptive and s.fit_seconds) or self.resume_from is not None or s.warm:
            return  # warm sessions: the rounds left are bursts, at about half the round just measured
        found = rounds.pace(repetition, before_started, sizes, s, self._budget(self._why_reserve()), self.result.trials)
        if found is not None:
            notice, seconds = found
            self.rounds.replace_pace_notice(self.result.notices, notice)
            self._decide(replace(s, seconds=seconds))

    def _adaptive_rounds(self, sizes: dict[Combination, int], done: int) -> None:
        """--runs auto: a round at a time for the rows still undecided (sshbench.measure.rounds.next_round), within
        --budget; the last notice says how many rounds and why they stopped."""
        rounds_run = max((t.repetition + 1 for t in self.result.trials if not t.warmup), default=0)
        reason, answer_only = "every pair is decided", 0
        while True:
            budget = self._budget(self._why_reserve())
            step = rounds.next_round(
                self.result.trials, self.settings, rounds_run, budget, self.ctx.setup_kexes, self.rounds.rng
            )
            if step.plan is None:
                reason = step.reason
                break
            answer_only += step.answer_only
            total = done + len(step.plan)
            if self.on_plan:
                self.on_plan(total)
            for index, item in enumerate(step.plan, start=done):
                trial = self._one(item, sizes)
                self._record(index, total, trial)
                self._again_if_too_short(trial, item, sizes, index, total)
            done, rounds_run = total, rounds_run + 1
        self.result.notices.append(
            rounds.adaptive_notice(self.result.trials, self.settings, rounds_run, reason, answer_only)
        )

    def _budget(self, why_reserve: Reserve | None = None) -> Budget:
        """--budget as it stands (sshbench.measure.budget): from the run's start on the run's clock, END_RESERVE_S
        and `why_reserve` kept back."""
        return Budget(self.settings.budget_s, self._started, END_RESERVE_S, why_reserve, clock=self.parts.clock)

    def _why_reserve(self) -> Reserve:
        """The default --why experiment's trials (why.experiment_trials; none for a resumed run or where --budget
        had no room for it), for the budget. A throttle that halves a CPU here made its trial 2-2.5x as long (the
        quota's 10 ms periods cost more than half: 1258 vs 488 MiB/s), and both CPUs limit a loopback transfer: the
        mean trial of a round (one unthrottled, two throttled) has ~2x the data phase (1.5 under-predicted a default
        run's experiment by ~7 s: 19.8 s for 3 rounds, the command 59.7 s)."""
        primary = self.targets.primary
        assert primary is not None
        none_left = self.resume_from is not None or self.rounds.why_no_room
        trials = 0 if none_left else why.experiment_trials(self.settings, primary, self.result.combinations)
        return Reserve(trials, why.WHY_SECONDS, stretch=2.0)

    def _why(self, cleanup: Cleanup, sizes: dict[Combination, int]) -> None:
        """--why: slow one resource at a time for the fastest row (or every row) and record what it cost
        (sshbench.why); the experiment's trials stay out of the ranking."""
        mode = self.settings.why_mode()
        if mode == "off":
            return
        if os.geteuid() != 0 or self.rounds.why_no_room:
            skipped = rounds.WHY_NO_ROOM if self.rounds.why_no_room else "needs root (cgroups, tc)"
            self.result.baselines["why"] = {"mode": mode, "skipped": skipped, "combinations": []}
            return
        rates = {s.combination: s.median_mib_s for s in summary.summaries(self.result) if s.median_mib_s}
        why_sizes = why.experiment_sizes(sizes, rates, self.settings)
        self.result.baselines["why"] = self.parts.why_experiment(
            result=self.result,
            mode=mode,
            targets=self.targets.targets,
            primary=self.targets.primary,
            measure=lambda item, overlay: self._one(item, why_sizes, overlay=overlay),
            cleanup=cleanup,
            rounds=self.settings.why_rounds,
            seed=self.settings.seed,
            # past the 3 rounds a sensitivity needs, --budget ends the experiment (a default run went 62 s
            # with 4 rounds on a busy 2-core VM; --why-rounds asks for more and gets them within the budget)
            budget=self._budget() if self.settings.adaptive else None,
        )

    def _record(self, index: int, total: int, trial: Trial) -> None:
        self.result.trials.append(trial)
        if self.on_trial:
            self.on_trial(index + 1, total, trial)
        target = self.targets.primary
        if not trial.valid and target is not None and not target.alive():
            raise RunError(self._died(target))

    def _died(self, target) -> str:
        measured = sum(1 for t in self.result.trials if not t.warmup and t.valid)
        return (
            f"{target.death_reason() or 'the target died'} during the run; kept the {measured} trials measured before"
        )

    def _again_if_too_short(
        self, trial: Trial, item: ScheduledTrial, sizes: dict[Combination, int], index: int, total: int
    ) -> None:
        """A trial whose clock spans a pause (host/pauses: sshbench stopped, the machine suspended, the clock stepped)
        runs again at once, as it was (rounds.PAUSED_AGAIN times at most). A measured transfer with no steady part
        counts for nothing: it runs again at once, bigger, in the same round, so that the round keeps its rate
        (rounds.grow_after); a steady one sizes its row's next trials."""
        for _ in range(rounds.PAUSED_AGAIN):
            if not paused(trial.invalid_reason):
                break
            trial = self._one(item, sizes)
            self._record(index, total, trial)
        if rounds.grow_after(trial, sizes, self.calibration.groups, self.result.trials, self.settings):
            again = self._one(item, sizes)
            self._record(index, total, again)
            rounds.grown_again(again, sizes, self.settings)

    def _one(self, item: ScheduledTrial, sizes: dict[Combination, int], overlay: TrialOverlay | None = None) -> Trial:
        """One trial, by its row's executor, at its row's size (a handshake moves none)."""
        assert self.executors is not None
        target = self.targets.primary
        assert target is not None
        if not target.alive():
            raise RunError(self._died(target))
        # a handshake moves no data: an adaptive round's handshake of the set-up kex (plan.handshake_combinations) is
        # shaped like its first transfer of the round, which need not be the combination the sizes were made with
        size = sizes.get(item.combination, 0) if item.kind == TrialKind.HANDSHAKE else sizes[item.combination]
        return self.executors.executor_for(item).run(item, size, overlay)

    def _probe_rekeys(self, combos: list[Combination]) -> None:
        """The stall of one rekey per key exchange, link and server (executors.probe_rekeys), charged to every long
        transfer from here on (and to a resumed run's trials)."""
        if self.settings.server_cpu is not None:  # a CPU quota stops the flow every period: not a rekey's stall
            self.result.environment["rekeys_counted"] = False
        elif (costs := self.parts.rekey_probe(self.ctx, combos)) is not None:
            self.ctx.rekeys = costs
            self.result.baselines["rekeys"] = costs.entries


__all__ = ["RunParts", "Runner"]
