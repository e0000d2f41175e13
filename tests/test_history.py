"""`sshbench history` (issue 65): change points on made-up histories (a 15% step found where it is, an A/A history
finding none), the history of made-up stored runs (what differs either side of a change, every output), bad input,
"the same set-up" shared with `check --against`, and a store built by real short runs."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import run_cli
from fakes import AEAD, MadeUpRates, run_from_plan
from sshbench.cli.main import main
from sshbench.measure.plan import schedule
from sshbench.model import history
from sshbench.report import history as report
from sshbench.results import IMPLICIT_MAC, Combination, RunResult
from sshbench.settings import DEFAULT_BUDGET_S, RunSettings
from sshbench.store import open_store, setups
from sshbench.store.document import to_document

STEP = math.log(0.85)  # a 15% slowdown
NOISE = 0.04  # each run's level scatters 4% (log scale) around the set-up's: a run of 2+ rows over 3+ rounds
SEEDS = range(10)


def made_up(seed: int, runs: int = 20, step_at: int | None = 12) -> list[float]:
    """Log levels of `runs` runs, 15% slower from run `step_at` (1-based) on; None: an A/A history."""
    draw = random.Random(seed)
    return [draw.gauss(0.0, NOISE) + (STEP if step_at and i + 1 >= step_at else 0.0) for i in range(runs)]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_15_percent_step_at_run_12_of_20_is_found_there(seed: int) -> None:
    found = history.change_points(made_up(seed))
    assert len(found) == 1, found
    first_after, p = found[0]
    assert abs((first_after + 1) - 12) <= 1 and p < history.ALPHA  # run 12 is the first slow one (1-based)


def test_an_a_a_history_of_20_finds_none_in_at_least_9_of_10() -> None:
    alarms = [seed for seed in SEEDS if history.change_points(made_up(seed, step_at=None))]
    assert len(alarms) <= 1, alarms


def test_too_short_a_history_is_not_searched_and_identical_levels_have_no_change() -> None:
    assert history.change_points([0.0, 0.5, 0.0, 0.5, 0.0]) == []  # below MIN_RUNS
    assert history.change_points([1.0] * 12) == []


def test_the_scatter_is_robust_to_the_step_itself() -> None:
    with_step = made_up(0)
    assert history.scatter(with_step) == pytest.approx(NOISE, rel=0.5)
    assert history.scatter(with_step) < abs(STEP) / 2


# --- made-up stored runs ------------------------------------------------------------------------------------------

CIPHERS = ("aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com")


def fake_run(index: int, factor: float, sshd: str = "OpenSSH_9.2p1", settings: RunSettings | None = None) -> RunResult:
    """Run `index` of one set-up: 3 rounds of two rows, its level `factor` times the usual."""
    combos = [Combination(c, IMPLICIT_MAC if c in AEAD else "hmac-sha2-256", "curve25519-sha256") for c in CIPHERS]
    rates = MadeUpRates({CIPHERS[0]: 900.0 * factor, CIPHERS[1]: 500.0 * factor}, jitter=(0.98, 1.0, 1.03))
    result = run_from_plan(schedule(combos, [], 3, 0, calibrate=False, seed=index), combos, rates, settings)
    result.environment = {**result.environment, "server_ssh_version": sshd}
    result.started_at = 1.7e9 + 3600 * index  # an hour apart: each its own run (origin)
    return result


def stored(db: Path, runs: list[RunResult]) -> None:
    with open_store(db) as store:
        for run in runs:
            store.import_document(to_document(run), "made up")


def a_history(db: Path, runs: int = 20, step_at: int = 12) -> None:
    """20 runs of one set-up whose sshd was upgraded (and 15% slower) from run `step_at` on."""
    draw = random.Random(7)
    made = []
    for i in range(1, runs + 1):
        after = i >= step_at
        factor = math.exp(draw.gauss(0.0, NOISE) + (STEP if after else 0.0))
        made.append(fake_run(i, factor, "OpenSSH_9.6p1" if after else "OpenSSH_9.2p1"))
    stored(db, made)


def test_a_stored_history_names_the_change_its_runs_and_what_differs(tmp_path: Path, capfd) -> None:
    db = tmp_path / "runs.db"
    a_history(db)
    files = {name: tmp_path / f"h.{name}" for name in ("md", "json", "html")}
    code = main(["history", "--db", str(db), "--markdown", str(files["md"]), "--json", str(files["json"]), "--html", str(files["html"])])  # fmt: skip
    out = capfd.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("history of run 20's set-up on fake-host: 20 runs")
    assert all(len(line) <= 100 for line in lines), [line for line in lines if len(line) > 100]
    assert "-- change point: between run 11 and run 12: all rows" in out and "change points: 1" in out
    assert "sshd OpenSSH_9.2p1 -> OpenSSH_9.6p1" in out
    document = json.loads(files["json"].read_text())
    (change,) = document["change_points"]
    assert (change["before"], change["after"]) == (11, 12) and change["ratio"] == pytest.approx(0.85, abs=0.04)
    assert set(change["rows"]) == set(CIPHERS) and len(document["runs"]) == 20
    first = document["runs"][0]
    assert first["all_rows"]["low"] < first["all_rows"]["mib_s"] < first["all_rows"]["high"]
    assert "| 12 (change) |" in files["md"].read_text()
    page = files["html"].read_text()
    assert 'id="chart-history"' in page and "between run 11 and run 12" in page and "default-src 'none'" in page


def test_only_runs_of_the_same_set_up_are_in_it(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    other = RunSettings(baselines=False, tool="scp")
    stored(db, [fake_run(1, 1.0), fake_run(2, 1.0, settings=other), fake_run(3, 1.0), fake_run(4, 1.0, settings=other)])
    with open_store(db, read_only=True) as store:
        latest = store.load_result("latest")
        same = setups.runs_of_setup(store, latest)
        assert [r.run_id for r in same] == [2, 4] and setups.setup_key(same[0]) == setups.setup_key(latest)
        assert [r.run_id for r in setups.runs_of_setup(store, store.load_result(1), keep=1)] == [3]
        assert [r.run_id for r in setups.runs_of_setup(store, latest, exclude=4)] == [2]
        assert [r.run_id for r in setups.runs_of_setup(store, latest, skip=lambda r: r.run_id == 2)] == [4]


def test_options_that_are_not_the_set_up_are_named_when_they_differ() -> None:
    before = fake_run(1, 1.0)
    after = fake_run(2, 1.0, settings=RunSettings(baselines=False, budget_s=90.0))
    after.environment = {**after.environment, "kernel": "6.1.0-99"}
    words = history.differences(before, after)
    assert f"option budget_s {DEFAULT_BUDGET_S} -> 90.0" in words and "kernel - -> 6.1.0-99" in words
    assert not any("seed" in w for w in words)
    defaults = {"negotiated": {"kex": "sntrup761x25519-sha512"}, "lists": {"kex": ["sntrup761x25519-sha512", "curve25519-sha256"]}}  # fmt: skip
    before.environment = {**before.environment, "client_default_algorithms": defaults}
    after.environment = {**after.environment, "client_default_algorithms": {
        "negotiated": {"kex": "mlkem768x25519-sha256"},
        "lists": {"kex": ["mlkem768x25519-sha256", "sntrup761x25519-sha512", "curve25519-sha256"]},
    }}  # fmt: skip
    words = history.differences(before, after)
    assert "ssh's default algorithms: negotiated.kex sntrup761x25519-sha512 -> mlkem768x25519-sha256" in words
    assert "ssh's default algorithms: lists.kex +mlkem768x25519-sha256" in words
    assert history.differences(before, replace(before)) == []


@pytest.mark.parametrize(
    ("runs", "args", "says"),
    [
        (0, (), "no runs"),
        (2, ("99",), "99"),
        (1, (), "is the only stored run of its set-up"),
        (2, ("--last", "1"), "--last 1: a history needs at least 2 runs"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capfd, runs: int, args: tuple[str, ...], says: str) -> None:
    db = tmp_path / "runs.db"
    with open_store(db):  # an empty store
        pass
    stored(db, [fake_run(i, 1.0) for i in range(1, runs + 1)])
    code = main(["history", *args, "--db", str(db)])
    err = capfd.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_a_short_history_says_no_change_point_was_looked_for(tmp_path: Path, capfd) -> None:
    db = tmp_path / "runs.db"
    stored(db, [fake_run(i, 1.0) for i in range(1, 4)])
    assert main(["history", "--db", str(db)]) == 0
    assert "change points: too few runs to look for one (at least 6)" in capfd.readouterr().out


def test_the_command_loads_no_model_library_until_it_fits_one() -> None:
    code = "import sys, sshbench.cli.history, sshbench.report.history; print(sorted({'numpy', 'scipy', 'ruptures'} & set(sys.modules)))"  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_chart_lines_fit_a_hundred_columns_with_many_rows() -> None:
    points = [
        history.Point(
            i,
            1.7e9 + i,
            history.Rate(100.0, 90.0, 110.0),
            {f"cipher-{k}-with-a-long-name": history.Rate(100.0 + k, 90.0, 120.0) for k in range(8)},
            0.0,
        )  # fmt: skip
        for i in range(3)
    ]
    found = history.History(points, sorted(points[0].rows), [], None)
    lines = report.lines(found, report.SetUp("host", "private sshd; pipe up", 3))
    assert all(len(line) <= 100 for line in lines) and any("more rows" in line for line in lines)


# --- for real -----------------------------------------------------------------------------------------------------


def test_a_store_of_real_short_runs(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    argv = ("run", "--runs", "3", "--size", "16M", "--no-baselines", "--no-why", "--ciphers", ",".join(CIPHERS))
    for _ in range(3):
        done = run_cli(*argv, "--db", db, timeout=240)
        assert done.returncode == 0, done.stderr
    out, page = tmp_path / "h.json", tmp_path / "h.html"
    done = run_cli("history", "--db", db, "--json", str(out), "--html", str(page))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert [r["run_id"] for r in document["runs"]] == [1, 2, 3] and document["change_points"] == []
    assert set(document["rows"]) == set(CIPHERS) and all(r["all_rows"]["mib_s"] > 0 for r in document["runs"])
    assert all(len(line) <= 100 for line in done.stdout.splitlines()) and "too few runs" in done.stdout
    assert 'id="chart-history"' in page.read_text()
