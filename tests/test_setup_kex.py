"""Transfers connect with the quickest kex to set up where the run does not compare kex (plan.setup_kex): the rules,
the handshakes planned for it, and the clocks that subtract a handshake (the one of the kex the trial connected
with). The real run: tests/test_run_private.py."""

from dataclasses import replace

import pytest

from sshbench.measure import clock
from sshbench.measure.plan import SETUP_KEX, handshake_combinations, setup_kex
from sshbench.model.summary import summarise_transfers
from sshbench.results import IMPLICIT_MAC, UNPINNED, Combination, Trial, TrialKind
from sshbench.units import MIB

SNTRUP = "sntrup761x25519-sha512@openssh.com"
BOTH = [SNTRUP, SETUP_KEX]
GCM = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, SNTRUP)
CHACHA = Combination("chacha20-poly1305@openssh.com", IMPLICIT_MAC, SNTRUP)


def test_the_setup_kex_only_where_openssh_both_ends_speak_it_and_the_rows_kex_is_another():
    assert setup_kex(GCM, BOTH, BOTH) == SETUP_KEX
    assert setup_kex(replace(GCM, kex=SETUP_KEX), BOTH, BOTH) is None  # already the quickest
    assert setup_kex(GCM, BOTH, [SNTRUP]) is None  # a server without it: the row's own
    assert setup_kex(GCM, [SNTRUP], BOTH) is None
    assert setup_kex(replace(GCM, client="asyncssh"), BOTH, BOTH) is None  # its kex is not pinned by ssh -o
    assert setup_kex(replace(GCM, kex=UNPINNED), BOTH, BOTH) is None  # a tool with its own client (rclone)
    assert setup_kex(replace(GCM, ssh_build="10.0"), BOTH, BOTH) is None  # a build sweep compares set-ups


def test_a_handshake_of_the_setup_kex_is_planned_beside_the_rows_own():
    plain = handshake_combinations([GCM, CHACHA])
    assert [h.kex for h in plain] == [SNTRUP]
    both = handshake_combinations([GCM, CHACHA], {GCM: SETUP_KEX, CHACHA: SETUP_KEX})
    assert [h.kex for h in both] == [SNTRUP, SETUP_KEX]
    # another shape (scp) set up with it too: one handshake per shape and kex
    scp = replace(GCM, tool="scp")
    assert len(handshake_combinations([GCM, scp], {GCM: SETUP_KEX, scp: SETUP_KEX})) == 4


def _handshake(kex: str, wall_s: float, client_cpu_s: float, rep: int) -> Trial:
    combo = replace(GCM, kex=kex)
    return Trial(combo, TrialKind.HANDSHAKE, rep, False, 0, 0.0, exit_status=0, valid=True, wall_s=wall_s,
                 client_cpu_s=client_cpu_s)  # fmt: skip


def test_wall_minus_handshake_subtracts_the_handshake_of_the_kex_the_transfer_connected_with():
    # sntrup's set-up 0.23 s (0.07 s of client CPU in its key generation), curve25519's 0.14 s
    handshakes = [
        _handshake(k, w, c, r) for r in range(2) for k, w, c in ((SNTRUP, 0.23, 0.08), (SETUP_KEX, 0.14, 0.01))
    ]
    transfer = Trial(GCM, TrialKind.TRANSFER, 0, False, 64 * MIB, 0.0, exit_status=0, valid=True, wall_s=0.64,
                     setup_kex=SETUP_KEX, client_cpu_s=0.11)  # fmt: skip
    assert transfer.setup_shape == replace(GCM, kex=SETUP_KEX).shape != GCM.shape
    clock.provisional_wall_clock(transfer, handshakes)  # scp's clock, before the run's end
    assert transfer.data_s == pytest.approx(0.5) and transfer.data_clock == clock.WALL_MINUS_HANDSHAKE
    clock.cross_check([*handshakes, transfer])
    assert transfer.wall_minus_handshake_s == pytest.approx(0.5)  # not 0.41: sntrup's set-up was never in it
    # the client's CPU per GiB without a steady window: less curve25519's set-up (0.01 s), not sntrup's
    row = next(s for s in summarise_transfers([*handshakes, transfer]) if s.combination == GCM)
    assert row.client_cpu_s_per_gib == pytest.approx(0.10 / (64 / 1024))
    # a trial of the row's own kex (runs stored before it, --kex) keeps its own shape
    own = Trial(GCM, TrialKind.TRANSFER, 1, False, 64 * MIB, 0.0, exit_status=0, valid=True, wall_s=0.64)
    clock.cross_check([*handshakes, own])
    assert own.setup_shape == GCM.shape and own.wall_minus_handshake_s == pytest.approx(0.41)


def test_a_trial_set_up_with_another_kex_is_charged_the_rows_rekeys_even_where_it_rekeyed_itself():
    """A 2 GiB --size trial of chacha20-poly1305 rekeyed twice with curve25519 (a stall of ~10 ms each), where the
    row's kex (what a long transfer of the user's rekeys with) stalls ~100 ms: the row's is charged."""
    size = 2 << 30
    own = Trial(CHACHA, TrialKind.TRANSFER, 0, False, size, 0.0, exit_status=0, valid=True, data_s=4.0, rekeys=2,
                rekey_every_bytes=1 << 30, rekey_stall_s=0.1)  # fmt: skip
    assert own.rekey_s is None and own.mib_s == pytest.approx(512.0)  # the row's kex: its clock saw its rekeys
    other = replace(own, setup_kex=SETUP_KEX)
    assert other.rekey_s == pytest.approx(0.2) and other.mib_s == pytest.approx(2048 / 4.2)


def test_the_rekey_charge_is_the_rows_kexs_stall_for_a_trial_set_up_with_another():
    from fakes import FakeTarget
    from sshbench.measure.rekey_probe import RekeyCosts, key_of

    costs = RekeyCosts(stalls={key_of(CHACHA): 0.1})
    fixed = Trial(CHACHA, TrialKind.TRANSFER, 0, False, 2 << 30, 0.0, rekeys=2, rekey_stall_s=0.01)
    costs.charge(fixed, FakeTarget())
    assert fixed.rekey_stall_s == 0.01  # its own kex: its own measured stall stays
    other = replace(fixed, setup_kex=SETUP_KEX)
    costs.charge(other, FakeTarget())
    assert other.rekey_every_bytes == 1 << 30 and other.rekey_stall_s == 0.1


def test_the_report_lists_the_rows_own_set_up_first_and_names_the_one_the_transfers_used():
    from fakes import constructed_run
    from sshbench.model import summary
    from sshbench.report import ranked
    from sshbench.report.table import handshake_lines, handshake_table

    result = constructed_run(kex=SNTRUP)
    for t in result.trials:
        t.setup_kex = SETUP_KEX
    # the quicker one measured first: the order is the rows' own kex first all the same
    result.trials += [
        _handshake(k, w, c, r) for r in range(3) for k, w, c in ((SETUP_KEX, 0.14, 0.01), (SNTRUP, 0.23, 0.08))
    ]
    result.cache.clear()
    handshakes = summary.handshakes(result)
    assert [(h.kex, h.setup_only) for h in handshakes] == [(SNTRUP, False), (SETUP_KEX, True)]
    lines = handshake_lines(result)
    assert lines is not None and len(lines) == 2
    assert lines[0].startswith(f"set-up (a connection with no data): {SNTRUP} 230 ms")
    assert lines[1].startswith(f"set-up the transfers used: {SETUP_KEX} 140 ms")
    assert len(lines[1]) <= 100
    assert ranked.handshake_label(handshakes[1]) == f"{SETUP_KEX} (what the transfers connected with)"
    table = handshake_table(result)  # --wide, and more shapes than the lines hold
    assert table is not None
    kex_cells = list(table.columns[0].cells)
    assert kex_cells == [SNTRUP, f"{SETUP_KEX} (what the transfers connected with)"]
    # runs stored before it (no trial with a setup_kex): one line, the rows' own
    for t in result.trials:
        t.setup_kex = None
    result.trials = [t for t in result.trials if t.combination.kex == SNTRUP]
    result.cache.clear()
    assert [h.setup_only for h in summary.handshakes(result)] == [False]


def test_an_adaptive_rounds_handshake_of_the_setup_kex_runs_without_a_payload_size(monkeypatch, tmp_path):
    """An adaptive round's handshakes are shaped like its first transfer (plan.handshake_combinations), and the
    setup kex's one is a combination no payload was sized for (a default run's 4th round failed on it): the runner
    asks its executor for 0 bytes, and a fresh connection's handshake connects with its own kex."""
    from types import SimpleNamespace

    from fakes import FakeClock, FakeExecutors, FakeTarget, MadeUpRates
    from sshbench.measure import executors
    from sshbench.measure.plan import ScheduledTrial, target_key
    from sshbench.measure.runner import Runner
    from sshbench.measure.spec import RunSpec
    from sshbench.measure.target_set import TargetSet
    from sshbench.results import RunResult
    from sshbench.settings import RunSettings
    from sshbench.tools import get_tool
    from sshbench.tools.base import TrialFiles

    handshake = replace(GCM, cipher="aes256-gcm@openssh.com", kex=SETUP_KEX)  # not among the sizes
    sizes = {GCM: 64 * MIB}
    run = Runner(RunSpec(RunSettings(seed=1)))
    run.targets.add(target_key("openssh", ""), FakeTarget())
    fake = FakeExecutors(None, MadeUpRates(), FakeClock())
    run.executors = fake
    trial = run._one(ScheduledTrial(handshake, TrialKind.HANDSHAKE, 3, False), sizes)
    assert trial.combination == handshake and fake.sizes_asked == [0]
    with pytest.raises(KeyError):  # a transfer keeps needing its size
        run._one(ScheduledTrial(handshake, TrialKind.TRANSFER, 3, False), sizes)

    calls: list[dict] = []

    def fake_run_trial(**kwargs) -> Trial:
        calls.append(kwargs)
        return Trial(kwargs["combo"], kwargs["kind"], kwargs["repetition"], False, 0, 0.0, exit_status=0, valid=True)

    monkeypatch.setattr(executors, "run_trial", fake_run_trial)  # the fresh connection's client
    files = TrialFiles(local_source="/dev/null", remote_source=None, remote_sink="/dev/null", local_sink="/dev/null")
    targets = TargetSet()
    targets.add(target_key("openssh", ""), FakeTarget())
    targets.paths = {target_key("openssh", ""): SimpleNamespace(for_trial=lambda *args, **kwargs: files)}  # type: ignore[dict-item]
    settings = RunSettings()
    ctx = executors.TrialContext(
        settings, targets, RunResult(settings=settings), tmp_path, None, setup_kexes={handshake: SETUP_KEX}
    )  # type: ignore[arg-type]
    executors.FreshConnection(ctx, get_tool("pipe")).run(ScheduledTrial(handshake, TrialKind.HANDSHAKE, 3, False), 0)
    assert calls[0]["payload_bytes"] == 0 and calls[0]["setup_kex"] is None  # a handshake: the row's own kex
