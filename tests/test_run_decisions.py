"""Issue 12, end to end and at the edges: the decision figures in a real small run, --tie/--seed/--runs auto,
bad input (one line, exit 2), and runs stored before these fields still rendering."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from conftest import run_cli
from sshbench.measure.calibration import SHORTEST_FIT_S
from sshbench.measure.plan import schedule
from sshbench.report import table
from sshbench.results import IMPLICIT_MAC, Combination, RunResult, Trial
from sshbench.store.document import to_document
from sshbench.store.record_json import settings_from
from sshbench.units import MIB

# The runs on a real sshd are `timed` (run alone by `make test`): their rounds and budgets are decided from rates.
# Bad input, the seeded order and stored runs run with the rest.

GCM = "aes128-gcm@openssh.com"
NEW_SUMMARY_KEYS = {
    "ci95_mib_s",
    "ci_coverage",
    "rank",
    "rank_label",
    "decided",
    "relative_to_fastest_ci95",
    "outlier_trials",
}


@pytest.mark.timed
def test_small_run_carries_cis_ranks_and_orders_3des_behind_gcm(tmp_path):
    out = tmp_path / "r.json"
    # 16M rather than 2M: 2 MiB leaves a data phase of a few ms, too short to rank 3des by.
    done = run_cli(
        "run", "--ciphers", f"{GCM},3des-cbc", "--size", "16M", "--runs", "3", "--seed", "7", "--no-baselines",
        "--json", str(out), timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    first, second = doc["summaries"]
    assert first["cipher"] == GCM and second["cipher"] == "3des-cbc"
    for s in (first, second):
        assert set(s) >= NEW_SUMMARY_KEYS
        low, high = s["ci95_mib_s"]
        assert low <= s["median_mib_s"] <= high
        assert s["ci_coverage"] == pytest.approx(0.75)  # 3 trials: the min-max range
    assert second["rank"] > first["rank"] and second["relative_to_fastest"] > 3.0
    # paired by round: the interval holds its estimate (with 3 rounds one hiccup of a ~40 ms GCM data
    # phase can widen it below 1 on a busy machine, so its low end is not asserted)
    low, high = second["relative_to_fastest_ci95"]
    assert low <= second["relative_to_fastest"] <= high
    stats = doc["stats"]
    assert stats["seed"] == 7 == doc["settings"]["seed"] and stats["tie_margin"] == 0.03
    assert stats["rounds_run"] == 3 and stats["runs"] == 3 and isinstance(stats["undecided_pairs"], list)
    assert "±" in done.stdout and "95% CI" in done.stdout


@pytest.mark.timed
def test_runs_auto_stops_within_its_budget_and_says_why(tmp_path):
    out = tmp_path / "r.json"
    # Adaptive sizes (capped at 16M to stay cheap) and a budget the 3 minimum rounds cannot fit at ~1 s
    # per trial: their data phase shrinks to the floor (below the usual one: not even the minimum rounds fit it),
    # said in a notice and recorded as `seconds`. With baselines (the default --why's condition) the budget has no
    # room for the experiment either: it is left out, said so, and the rounds get the time.
    done = run_cli(
        "run", "--ciphers", f"{GCM},3des-cbc", "--max-size", "16M", "--runs", "auto", "--budget", "6s",
        "--no-reference", "--json", str(out), timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["stats"]["runs"] == "auto" and doc["stats"]["budget_s"] == 6
    assert doc["stats"]["rounds_run"] == 3 and isinstance(doc["stats"]["seed"], int)
    assert "--runs auto:" in done.stderr and "3 rounds (auto, budget 6 s)" in done.stdout
    assert doc["settings"]["fit_seconds"] is True and doc["settings"]["seconds"] == SHORTEST_FIT_S
    assert f"data phase shrank from ~1 s to ~{SHORTEST_FIT_S:.2f} s" in done.stderr
    assert "(the floor) for 3 rounds: the run may overrun" in done.stderr
    assert "--why: no experiment: --budget has no room for it after the minimum rounds" in done.stderr
    assert (
        doc["baselines"]["why"]["skipped"].startswith("--budget has no room")
        and not doc["baselines"]["why"]["combinations"]
    )
    # one calibration probe per cipher (here every combination is its own group), no other warm-up
    probes = [t for t in doc["trials"] if t["warmup"] and t["kind"] == "transfer"]
    assert {t["cipher"] for t in probes} == {GCM, "3des-cbc"}


@pytest.mark.timed
def test_rounds_past_the_third_run_for_real_with_the_handshakes_of_both_set_up_kexes(tmp_path):
    """--runs auto's adaptive rounds on a real sshd: a crash in them got through the suite once (an adaptive round's
    handshake of the transfers' set-up kex is shaped like the round's first row, and none was sized for it). Two
    ciphers ~15x apart, each with a MAC and its -etm twin, and a small fixed payload: after 3 rounds the twins are not
    told apart, so rounds run on until the budget ends them, led by aes128-ctr (the faster) where the matrix and its
    first rounds were led by 3des-cbc. A budget of 25 s: at 15 s a busy minute (load ~3, two other suites running)
    took 13.5 s to the third round's end, and the fourth (~4 s) no longer fitted the 12 s before the end's reserve."""
    out = tmp_path / "r.json"
    done = run_cli(
        "run", "--ciphers", "3des-cbc,aes128-ctr", "--macs", "hmac-sha2-256,hmac-sha2-256-etm@openssh.com",
        "--size", "4M", "--runs", "auto", "--budget", "25s", "--no-baselines", "--no-why", "--json", str(out),
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["stats"]["rounds_run"] >= 4, done.stderr
    adaptive = [t for t in doc["trials"] if t["repetition"] >= 3 and not t["warmup"]]
    assert adaptive and all(t["valid"] for t in adaptive), [t["invalid_reason"] for t in adaptive]
    row_kex = doc["trials"][0]["kex"]
    assert row_kex != "curve25519-sha256"  # OpenSSH 9.2's default: the transfers connect with curve25519 instead
    handshakes = {t["kex"] for t in adaptive if t["kind"] == "handshake"}
    assert handshakes == {row_kex, "curve25519-sha256"}
    transfers = [t for t in adaptive if t["kind"] == "transfer"]
    assert transfers and {t["setup_kex"] for t in transfers} == {"curve25519-sha256"}
    assert f"--runs auto: {doc['stats']['rounds_run']} rounds" in done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tie", "60%"], "--tie"),
        (["--tie", "fast"], "not a percentage"),
        (["--budget", "soon"], "not a time"),
        (["--runs", "many"], "'auto'"),
        (["--runs", "auto", "--resume", "1"], "--resume"),
    ],
)
def test_bad_decision_options_are_one_line_exit_2(args, message):
    done = run_cli("run", *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


def test_shuffled_rounds_are_reproducible_from_the_seed():
    combos = [Combination(f"c{i}", IMPLICIT_MAC, "kex") for i in range(8)]

    def order(seed):
        return [(t.repetition, t.combination.cipher) for t in schedule(combos, [], 3, 0, False, seed=seed)]

    assert order(1) == order(1) and order(1) != order(2)
    for rep in range(3):
        assert sorted(c for r, c in order(1) if r == rep) == sorted(c.cipher for c in combos)
    assert [c for _, c in order(None)] == [c.cipher for c in combos] * 3  # no seed: the matrix order


def test_a_run_stored_before_the_new_settings_loads_and_renders():
    settings = settings_from({"runs": 3, "warmup": 1, "ciphers": GCM})  # no tie, seed, adaptive, budget
    assert settings.tie == 0.03 and settings.seed is None and not settings.adaptive
    combo = Combination(GCM, IMPLICIT_MAC, "curve25519-sha256")
    trials = []
    for rep, rate in enumerate((500.0, 520.0, 480.0)):
        t = Trial(
            combination=combo, kind="transfer", repetition=rep, warmup=False, payload_bytes=64 * MIB, started_at=0
        )
        t.valid, t.data_s, t.wall_s = True, 64 / rate, 64 / rate + 0.3
        trials.append(t)
    result = RunResult(settings=settings, trials=trials, combinations=[combo], status="complete")
    doc = to_document(result)
    assert doc["stats"]["seed"] is None and doc["summaries"][0]["rank_label"] == "1"
    buffer = io.StringIO()
    table.print_report(result, Console(file=buffer, width=200), wide=True)
    assert "500.0 ±20" in buffer.getvalue()
    buffer = io.StringIO()
    table.print_report(result, Console(file=buffer, width=100))  # the default table, and the conclusion first
    assert (
        buffer.getvalue().startswith("Fastest here: aes128-gcm@openssh.com, 500 MiB/s")
        and "500 ±20" in buffer.getvalue()
    )


def test_a_resumed_run_keeps_its_runs_decision_to_leave_the_experiment_out():
    """The fit is not made again on --resume: the notice stored with the stopped run carries the decision."""
    from sshbench.measure.rounds import WHY_NO_ROOM_NOTICE
    from sshbench.measure.runner import Runner
    from sshbench.measure.spec import RunSpec
    from sshbench.results import RunResult
    from sshbench.settings import RunSettings

    spec = RunSpec(RunSettings(seed=1))
    stopped = RunResult(settings=RunSettings(), notices=["ciphers: ...", WHY_NO_ROOM_NOTICE])
    assert Runner(spec, resume_from=stopped).rounds.why_no_room
    assert not Runner(spec, resume_from=RunResult(settings=RunSettings())).rounds.why_no_room
    assert not Runner(spec).rounds.why_no_room
