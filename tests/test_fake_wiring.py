"""The planner, the schedule, the statistics and the reports wired together with a fake target and a fake
tool (tests/fakes.py): no sshd, milliseconds per test. What the numbers are comes from the end-to-end tier;
what is done with them, in which order, is checked here."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest

from fakes import AEAD, CLIENT, FakeRemote, FakeTarget, FakeTool, MadeUpRates, run_from_plan
from sshbench.answers import answer, condition_answer
from sshbench.baselines import crypto_ceiling, crypto_server, hooks, raw_tcp
from sshbench.capabilities import RemoteFacts
from sshbench.measure.plan import handshake_combinations, plan_matrix, schedule
from sshbench.model import summary
from sshbench.results import IMPLICIT_MAC
from sshbench.settings import RunSettings
from sshbench.store.document import to_document

CIPHERS = "aes128-gcm@openssh.com,aes128-ctr,aes256-ctr"


def _plan(notices: list[str] | None = None, **options):
    settings = RunSettings(ciphers=CIPHERS, **options)
    tools = {"fake": FakeTool()}
    return plan_matrix({"openssh": FakeTarget()}, tools, settings, notices if notices is not None else []), settings


def test_the_matrix_is_every_selected_cell_plus_the_default_reference():
    notices: list[str] = []
    combos, _ = _plan(notices, macs="hmac-sha2-256,umac-64-etm@openssh.com", compression="both", direction="both")
    cells = {(c.cipher, c.mac, c.compression, c.direction) for c in combos}
    # AEAD: one MAC column; the others: each MAC; each with and without compression, both directions
    assert len(combos) == len(cells) == (1 + 2 * 2) * 2 * 2 + 2 * 2  # + the client's default, chacha20
    assert {c.mac for c in combos if c.cipher in AEAD} == {IMPLICIT_MAC}
    assert {c.tool for c in combos} == {"fake"} and {c.server for c in combos} == {"openssh"}
    default = CLIENT.default_ciphers[0]
    assert any(c.cipher == default for c in combos) and any(default in n for n in notices), notices


def test_with_no_ciphers_given_the_matrix_is_what_the_client_offers_by_default_and_says_what_it_left_out():
    client = replace(CLIENT, default_ciphers=["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "3des-cbc"])
    target = FakeTarget(client=client)

    def ciphers(**options) -> tuple[set[str], list[str]]:
        notices: list[str] = []
        combos = plan_matrix({"openssh": target}, {"fake": FakeTool()}, RunSettings(**options), notices)
        return {c.cipher for c in combos}, notices

    chosen, notices = ciphers()
    # the client's defaults the server speaks (3des-cbc is offered by neither end here)
    assert chosen == {"chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com"}
    assert "ciphers: the 2 your ssh offers by default; --ciphers all adds aes128-ctr, aes256-ctr" in notices
    for options in ({"ciphers": "all"}, {"full": True}):
        chosen, notices = ciphers(**options)
        assert chosen == set(CLIENT.ciphers) and not any(n.startswith("ciphers:") for n in notices)
    assert ciphers(ciphers="aes128-ctr")[0] == {"aes128-ctr", "chacha20-poly1305@openssh.com"}  # + the default
    # an AsyncSSH server is there for the legacy ciphers: every one both ends speak
    notices = []
    combos = plan_matrix({"asyncssh": target}, {"fake": FakeTool()}, RunSettings(), notices)
    assert {c.cipher for c in combos} == set(CLIENT.ciphers)


def test_no_baselines_drops_the_default_reference():
    combos, _ = _plan(baselines=False)
    assert {c.cipher for c in combos} == set(CIPHERS.split(","))


def test_each_measured_round_runs_every_combination_once_in_a_seeded_order():
    combos, _ = _plan(baselines=False)
    handshakes = handshake_combinations(combos)
    plan = schedule(combos, handshakes, runs=4, warmup=1, calibrate=True, seed=7)
    measured = [p for p in plan if not p.warmup]
    for rep in range(4):
        this_round = [p for p in measured if p.repetition == rep]
        kinds = [p.kind for p in this_round]
        assert kinds == sorted(kinds, key=lambda k: k != "handshake")  # its handshakes open the round
        assert Counter(p.combination for p in this_round if p.kind == "transfer") == Counter(combos)
    orders = {tuple(p.combination for p in measured if p.repetition == r and p.kind == "transfer") for r in range(4)}
    assert len(orders) > 1  # shuffled per round...
    assert schedule(combos, handshakes, runs=4, warmup=1, calibrate=True, seed=7) == plan  # ...replayably
    assert any(p.calibration for p in plan if p.warmup) and not any(p.calibration for p in measured)


def test_the_summaries_rank_made_up_rates_in_their_order():
    combos, settings = _plan(baselines=False)
    rates = MadeUpRates({"aes128-gcm@openssh.com": 1000.0, "aes128-ctr": 400.0, "aes256-ctr": 200.0})
    result = run_from_plan(schedule(combos, [], runs=5, warmup=0, calibrate=False, seed=1), combos, rates, settings)
    rows = summary.summaries(result)
    assert [s.combination.cipher for s in rows] == ["aes128-gcm@openssh.com", "aes128-ctr", "aes256-ctr"]
    for s in rows:
        assert s.valid_trials == 5 and s.median_mib_s == pytest.approx(rates.per_cipher[s.combination.cipher])
    assert [s.rank for s in rows] == [1, 2, 3] and all(s.decided for s in rows)
    assert rows[1].relative_to_fastest == pytest.approx(2.5, rel=0.05)
    conclusion = answer.compute(result)
    assert conclusion is not None and conclusion.fastest
    assert "aes128-gcm@openssh.com" in json.dumps(to_document(result)["answer"])


def test_equal_rates_are_tied_not_ranked():
    combos, settings = _plan(baselines=False)
    rates = MadeUpRates(other=500.0)  # the same path for every cipher, the same jitter per round
    result = run_from_plan(schedule(combos, [], runs=6, warmup=0, calibrate=False, seed=3), combos, rates, settings)
    rows = summary.summaries(result)
    assert {s.rank_label for s in rows} == {"=1"}, [(s.combination.cipher, s.rank_label) for s in rows]


def test_a_local_target_gets_the_raw_tcp_control():
    found, control = hooks.before_trials(combos=[], target=FakeTarget(), enabled=True, aesni_env=None)
    assert control == raw_tcp.RAW_TCP and found["crypto_server"] is None and "link" not in found


def test_a_remote_target_gets_its_facts_read_and_the_skip_note(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    facts = RemoteFacts(machine="x86_64", machine_id="abc", openssl_version=None, rtt_s=0.02)
    remote = FakeRemote("nas", facts)
    found, control = hooks.before_trials(combos=[], target=remote, enabled=True, aesni_env=None)
    assert control is None and raw_tcp.REMOTE_SKIP_NOTE in found["notes"]
    assert "server crypto ceiling not measured: nas has no openssl command" in found["notes"]
    assert found["link"]["rtt_s"] == 0.02 and remote.commands == []
    # with OpenSSL there, its ceiling is measured through the target's run_remote (this machine's own
    # ceiling, openssl speed for a second per primitive, is the end-to-end tier's)
    monkeypatch.setattr(crypto_ceiling, "ceilings", lambda primitives, env=None: {})
    combos, _ = _plan(baselines=False)
    remote.facts = RemoteFacts(machine="x86_64", machine_id="abc", openssl_version="OpenSSL 3.0.19")
    remote.replies[""] = (0, "")  # openssl speed said nothing: not measured, never a made-up figure
    found, _ = hooks.before_trials(combos=combos, target=remote, enabled=True, aesni_env=None)
    assert remote.commands and all(crypto_server.MARK.strip() in c or "openssl" in c for c in remote.commands)
    assert found["crypto_server"] and all(e["mib_s"] is None for e in found["crypto_server"].values())


def test_the_conclusion_names_each_rows_setup_where_the_run_swept_one():
    """Over both directions the slowest row is the fastest cipher the other way: named by cipher alone, the
    conclusion read "slowest: aes128-gcm, 12.3x as long" under a fastest aes128-gcm. A direction is a condition:
    the answer names no slowest across them, each direction's line does (condition_answer.py)."""
    combos, settings = _plan(baselines=False, direction="both")
    rates = MadeUpRates({"aes128-gcm@openssh.com": 1000.0, "aes128-ctr": 400.0, "aes256-ctr": 200.0})

    def rate(combo, repetition):
        slower = 0.1 if combo.cipher == "aes128-gcm@openssh.com" and combo.direction == "up" else 1.0
        if combo.cipher == "aes256-ctr":  # as fast as aes128-ctr give or take 20% a round: never told apart
            return 400.0 * (0.8, 1.2, 0.9, 1.1, 1.0)[repetition]
        return rates(combo, repetition) * slower

    plan = schedule(combos, [], runs=5, warmup=0, calibrate=False, seed=2)
    result = run_from_plan(plan, combos, rate, settings)  # type: ignore[arg-type]
    conclusion = answer.compute(result)
    assert conclusion is not None
    assert conclusion.fastest[0].name == "aes128-gcm@openssh.com (down)"
    assert conclusion.slowest is None and "slowest" not in "\n".join(conclusion.lines())
    per_direction = condition_answer.compute(result)
    assert per_direction is not None and [c.condition for c in per_direction.conditions] == ["up", "down"]
    up = per_direction.conditions[0]
    assert up.slowest == "aes128-gcm" and up.slowest_ratio is not None and up.slowest_ratio > 3, up
    assert any(line.startswith("    slowest: aes128-gcm, ") for line in per_direction.lines()), per_direction.lines()
    undecided = next(line for line in conclusion.lines() if line.strip().startswith("undecided:"))
    assert "aes128-ctr + " in undecided and ("(up)" in undecided or "(down)" in undecided), undecided
    one_way, _ = _plan(baselines=False)  # one direction: no setup named
    single = answer.compute(run_from_plan(schedule(one_way, [], 5, 0, False, seed=2), one_way, rates, settings))
    assert single is not None and single.fastest[0].name == "aes128-gcm@openssh.com" and single.fastest[0].setup == ""


class _RatesByRound(MadeUpRates):
    """MiB/s per cipher per repetition (`table[cipher][repetition]`), the last one repeated."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        super().__init__()
        self.table = table

    def __call__(self, combo, repetition: int) -> float:
        rates = self.table[combo.cipher]
        return rates[min(repetition, len(rates) - 1)]


def _three_rounds_with_a_contested_answer(reserve=None, budget_after_reserves_s: float = 5.0):
    """Three rounds in: the first row, a noisy second one not told apart from it, a third ordered behind the
    first but not behind the noisy one, and three rows behind them, undecided among themselves; each transfer
    1 s of a fake clock. Returns (the trials, a function that runs `--runs auto`'s rounds as the runner does
    (rounds.next_round) with `budget_after_reserves_s` left after the end's reserve and the `reserve`'s cost, and
    returns the notice's reason and how many rounds were for the answer's rows alone)."""
    import random

    from fakes import trial_for
    from sshbench.measure import rounds
    from sshbench.measure.budget import END_RESERVE_S, Budget
    from sshbench.measure.plan import ScheduledTrial
    from sshbench.results import Combination

    common = [1.0, 1.3, 0.8]  # every row's round factor: the paired ratios see through it
    own = {
        "first": [1.0, 1.0, 1.0],
        "noisy": [0.95 * 0.92, 0.95 * 1.10, 0.95 * 0.88],
        "behind": [0.7, 0.7, 0.7],
        "ctr-a": [0.5, 0.5 * 1.06, 0.5 * 0.95],
        "ctr-b": [0.5 * 1.05, 0.5 * 0.97, 0.5 * 1.02],
        "ctr-c": [0.5 * 0.97, 0.5 * 1.02, 0.5 * 1.04],
    }
    rates = _RatesByRound({c: [1000 * f * g for f, g in zip(own[c], common)] for c in own})
    combos = [Combination(c, IMPLICIT_MAC, "curve25519-sha256") for c in own]
    clock = [0.0]

    def measured(item: ScheduledTrial):
        trial = trial_for(item, rates)
        trial.wall_s = 0.2 if item.kind == "handshake" else 1.0
        clock[0] += trial.wall_s
        return trial

    trials = []
    for rep in range(3):
        for combo in combos:
            trials.append(measured(ScheduledTrial(combo, "transfer", rep, False)))
        trials.append(measured(ScheduledTrial(combos[0], "handshake", rep, False)))
    why_s = reserve.cost_after(trials) if reserve is not None else 0.0
    settings = RunSettings(adaptive=True, baselines=False, why="off", seed=3,
                           budget_s=END_RESERVE_S + why_s + budget_after_reserves_s)  # fmt: skip
    started = clock[0]

    def adaptive_rounds() -> tuple[str, int]:
        rng, done, answer_only = random.Random(4), 3, 0
        while True:
            budget = Budget(settings.budget_s, started, END_RESERVE_S, reserve, clock=lambda: clock[0])
            step = rounds.next_round(trials, settings, done, budget, {}, rng)
            if step.plan is None:
                return step.reason, answer_only
            answer_only += step.answer_only
            trials.extend(measured(item) for item in step.plan)
            done += 1

    return trials, adaptive_rounds


def _fourth_round(trials) -> set[str]:
    assert not any(t.repetition > 3 for t in trials)  # a second such round no longer fits
    return {t.combination.cipher for t in trials if t.repetition == 3 and t.kind == "transfer"}


def test_where_a_whole_adaptive_round_no_longer_fits_the_answers_rows_get_one():
    """A whole round (6 trials of ~1 s) does not fit the time left; the three rows the answer rests on do, once."""
    # 5 s after the end's reserve: a whole round takes ~7.4 s (6 trials and a handshake, +20%), the three ~3.8 s
    trials, adaptive_rounds = _three_rounds_with_a_contested_answer(None, 5.0)
    reason, answer_only = adaptive_rounds()
    assert _fourth_round(trials) == {"first", "noisy", "behind"}
    assert reason.startswith("the --budget of") and answer_only == 1


@pytest.mark.parametrize("left_s,fourth", [(2.0, {"first", "noisy", "behind"}), (0.2, set())])
def test_the_answers_round_may_take_the_why_experiments_spare_before_its_optional_rounds(left_s, fourth):
    """With the default --why experiment ahead, the answer's round (~3.8 s) no longer fits the 2 s left after the
    experiment's reserve, but does in that and the reserve's spare (Reserve.spare_after, 3.25 s here): it runs,
    once. With 0.2 s left it does not."""
    from sshbench.measure.calibration import Reserve

    reserve = Reserve(trials=10, data_s_each=0.55, stretch=2.0)  # a default run's: 1 warm-up + 3 rounds of 3
    trials, adaptive_rounds = _three_rounds_with_a_contested_answer(reserve, left_s)
    assert reserve.spare_after(trials) == pytest.approx(3.25)  # 10 x (0.55 + 0.1) x (2.0 - 1.5)
    adaptive_rounds()
    assert _fourth_round(trials) == fourth


def test_before_the_measured_rounds_one_payload_file_is_written_at_the_biggest_size_a_pipe_upload_starts_with(
    tmp_path,
):
    """run_plan.write_tails (the executors' before_rounds): the pipe's uploads then read tails of that one file (no file per size between two
    trials); -P N counts each stream's share; a download or a tool that names a file (scp) is not counted."""
    from sshbench.host.cleanup import Cleanup
    from sshbench.measure.run_plan import write_tails
    from sshbench.measure.trial_files import TrialPaths
    from sshbench.results import Combination
    from sshbench.tools import get_tool
    from sshbench.units import MIB

    kex = "curve25519-sha256"
    combos = [
        Combination("a", IMPLICIT_MAC, kex),
        Combination("b", IMPLICIT_MAC, kex),
        Combination("c", IMPLICIT_MAC, kex, streams=2),
        Combination("d", IMPLICIT_MAC, kex, tool="scp"),
        Combination("e", IMPLICIT_MAC, kex, direction="down"),
    ]
    sizes = dict(zip(combos, (3 * MIB, 5 * MIB, 12 * MIB, 7 * MIB, 9 * MIB)))
    settings = RunSettings(ciphers="a", tool="pipe,scp", baselines=False)
    cleanup = Cleanup()
    try:
        paths = TrialPaths(FakeTarget(), cleanup, tmp_path, combos, settings)
        write_tails(combos, sizes, lambda c: paths, lambda c: get_tool(c.tool))
        written = sorted(p.stat().st_size for p in tmp_path.iterdir() if p.name.startswith("payload-"))
        assert written == [6 * MIB]  # c's share of 12 MiB over 2 streams, more than b's 5
        assert paths.for_trial(combos[0], "transfer", 3 * MIB, tail_ok=True).local_source_offset == 3 * MIB
    finally:
        cleanup.close()


def test_a_minimum_round_slower_than_the_fit_said_shrinks_the_rounds_left_with_one_notice():
    """rounds.pace at the start of rounds 2 and 3 (the runner's _pace): the round before took longer than the time
    left allows for the rounds left, so their payloads shrink; the notice is one line, the last pace's."""
    from dataclasses import replace

    from fakes import trial_for
    from sshbench.measure import rounds
    from sshbench.measure.budget import END_RESERVE_S, Budget
    from sshbench.measure.plan import ScheduledTrial
    from sshbench.results import STEADY_STATE, Combination
    from sshbench.units import MIB

    combos = [Combination(c, IMPLICIT_MAC, "curve25519-sha256") for c in ("a", "b", "c", "d")]
    settings = RunSettings(
        adaptive=True, runs=3, fit_seconds=True, seconds=0.5, baselines=False, why="off", budget_s=30.0
    )
    notices = ["--budget 30 s: data phase shrank from ~1 s to ~0.5 s to fit 5 rounds of 4 transfers"]
    trials = []
    for rep in (0, 1):
        for combo in combos:  # 384 MiB at 400 MiB/s, steady
            trial = trial_for(ScheduledTrial(combo, "transfer", rep, False), lambda c, r: 400.0, 384 * MIB)
            trial.data_clock = STEADY_STATE
            trials.append(trial)
    sizes = dict.fromkeys(combos, 384 * MIB)
    now = [11.0]
    budget = Budget(30.0, 0.0, END_RESERVE_S, None, clock=lambda: now[0])
    state = rounds.RoundState()
    # round 1 took 9 s; 30 - 3 (the end's reserve) - 11 = 16 s for two rounds: 7.6 s each (95%), 1.4 s of payload go
    found = rounds.pace(1, 2.0, sizes, settings, budget, trials)
    assert found is not None
    first, seconds = found
    state.replace_pace_notice(notices, first)
    settings = replace(settings, seconds=seconds)
    assert sizes == dict.fromkeys(combos, 224 * MIB) and seconds == pytest.approx(0.255, abs=0.002)
    assert first.startswith("--budget 30 s: round 1 took 9 s, so the data phase shrank from ~0.50 s to ~0.26 s")
    assert first.endswith("for the 2 minimum round(s) left")
    now[0] = 30.0  # round 2 took 18 s: the last round shrinks again, to the floor
    found = rounds.pace(2, 12.0, sizes, settings, budget, trials)
    assert found is not None
    state.replace_pace_notice(notices, found[0])
    paced = [n for n in notices if " took " in n]
    assert paced == [notices[-1]] and "round 2 took 18 s" in paced[0]  # one line: the last
    assert notices[0].endswith("to fit 5 rounds of 4 transfers")  # the fit's own stays
    assert found[1] == 0.12
