"""What dashboards ingest (issue 65): Bencher Metric Format and github-action-benchmark's customBiggerIsBetter files
from `run` and `check`, validated against the shapes their documentation gives (tests/data/*.schema.json): on made-up
runs and checks here, on a real short run and a real side-by-side check at the end."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from conftest import DATA, run_cli
from fakes import AEAD, MadeUpRates, constructed_run, invalid_run, run_from_plan
from sshbench.measure.plan import schedule
from sshbench.model import gate
from sshbench.model.gate import Checked, GateResult
from sshbench.report import dashboards, formats
from sshbench.results import IMPLICIT_MAC, Combination

BMF = json.loads((DATA / "bmf.schema.json").read_text())
GAB = json.loads((DATA / "github-action-benchmark.schema.json").read_text())
RANGE = re.compile(r"^(\+-|±)\s*(?P<value>\d.*)$")  # how github-action-benchmark reads `range` (extractRangeInfo)


def valid_bmf(document: dict) -> dict:
    jsonschema.validate(document, BMF)
    for measures in document.values():
        for metric in measures.values():
            if "lower_value" in metric:
                assert metric["lower_value"] <= metric["value"] <= metric["upper_value"], metric
    return document


def valid_gab(document: list) -> list:
    jsonschema.validate(document, GAB)
    assert len({e["name"] for e in document}) == len(document), "one line of the chart per name"
    for entry in document:
        if "range" in entry:
            match = RANGE.match(entry["range"])
            assert match and float(match.group("value")) >= 0, entry
    return document


def test_a_runs_bmf_has_each_rows_median_and_its_interval() -> None:
    result = constructed_run()
    document = valid_bmf(dashboards.run_bmf(result))
    assert set(document) == {
        "aes128-gcm@openssh.com [curve25519-sha256]",
        "aes128-ctr + hmac-sha2-256 [curve25519-sha256]",
        "chacha20-poly1305@openssh.com [curve25519-sha256]",
    }
    rows = {s.combination: s for s in dashboards.summary.summaries(result)}
    for combo, s in rows.items():
        metric = document[dashboards.benchmark_name(combo)][dashboards.THROUGHPUT]
        assert metric == {"value": s.median_mib_s, "lower_value": s.ci95_mib_s[0], "upper_value": s.ci95_mib_s[1]}
        assert dashboards.CPU in document[dashboards.benchmark_name(combo)]


def test_a_runs_github_action_benchmark_list_has_mib_s_its_range_and_the_exact_interval() -> None:
    document = valid_gab(dashboards.run_gab(constructed_run(runs=6)))
    assert {e["unit"] for e in document} == {"MiB/s"} and len(document) == 3
    first = document[0]
    assert "95% CI of the median" in first["extra"] and "run 1 on fake-host" in first["extra"]
    assert first["range"].startswith("± ")
    # below 6 trials the interval is their range, which covers less: said so
    assert "75% interval (the trials' range) of the median" in dashboards.run_gab(constructed_run(runs=3))[0]["extra"]


def test_a_benchmark_is_named_by_every_axis_off_its_default_and_stays_the_same_across_runs() -> None:
    combo = Combination("aes128-ctr", "umac-64-etm@openssh.com", "sntrup761x25519-sha512", tool="scp", link="lan1g")
    assert dashboards.benchmark_name(combo) == "aes128-ctr + umac-64-etm@openssh.com [sntrup761x25519-sha512] tool=scp link=lan1g"  # fmt: skip
    built = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256", streams=4, sshd_build="OpenSSH_10.0p2")  # fmt: skip
    assert dashboards.benchmark_name(built) == "aes128-gcm@openssh.com [curve25519-sha256] streams=4 sshd_build=OpenSSH_10.0p2"  # fmt: skip
    assert dashboards.run_bmf(constructed_run()).keys() == dashboards.run_bmf(constructed_run(runs=5)).keys()


def test_a_row_with_one_trial_has_its_value_alone() -> None:
    document = valid_bmf(dashboards.run_bmf(constructed_run(runs=1)))
    assert all(set(m[dashboards.THROUGHPUT]) == {"value"} for m in document.values())
    assert all("range" not in e for e in valid_gab(dashboards.run_gab(constructed_run(runs=1))))


def test_a_run_with_nothing_measured_has_no_benchmark() -> None:
    assert valid_bmf(dashboards.run_bmf(invalid_run())) == {}
    assert dashboards.run_gab(invalid_run()) == []  # the action itself refuses an empty list: nothing was measured


def test_both_are_report_formats_of_a_stored_run() -> None:
    result = constructed_run()
    assert json.loads(formats.render(result, "bmf")) == dashboards.run_bmf(result)
    assert json.loads(formats.render(result, "gab")) == dashboards.run_gab(result)


def _side_by_side() -> GateResult:
    """A made-up side-by-side check: two sshd builds, NEW 10% slower on every row."""
    old, new = "OpenSSH_9.2p1", "OpenSSH_9.2p1#2"
    combos = [
        Combination(c, IMPLICIT_MAC if c in AEAD else "hmac-sha2-256", "curve25519-sha256", sshd_build=b)
        for c in ("aes128-gcm@openssh.com", "aes128-ctr", "chacha20-poly1305@openssh.com")
        for b in (old, new)
    ]

    def rates(combo: Combination, repetition: int) -> float:
        made_up = MadeUpRates({"aes128-gcm@openssh.com": 900.0, "aes128-ctr": 600.0}, jitter=(0.97, 1.0, 1.04, 0.99))
        return made_up(combo, repetition) * (0.9 if combo.sshd_build == new else 1.0)

    result = run_from_plan(schedule(combos, [], 5, 0, calibrate=False, seed=1), combos, rates)  # type: ignore[arg-type]
    return gate.side_by_side(result.trials, {"sshd_build": old}, {"sshd_build": new}, 0.05, ("sshd A", "sshd B"))


def test_a_checks_bmf_has_new_over_old_with_its_interval_for_each_row_and_all_rows() -> None:
    found = _side_by_side()
    document = valid_bmf(dashboards.check_bmf(found))
    assert set(document) == {r.label for r in found.rows} | {"all rows"}
    overall = document["all rows"][dashboards.RATIO]
    assert overall == {
        "value": found.overall.ratio,
        "lower_value": found.overall.low,
        "upper_value": found.overall.high,
    }
    assert overall["value"] == pytest.approx(0.9, abs=0.01)
    row = document[found.rows[0].label]
    assert set(row) == {dashboards.RATIO, dashboards.NEW_RATE, dashboards.OLD_RATE}


def test_a_checks_github_action_benchmark_list_is_new_over_old_bigger_is_better() -> None:
    found = _side_by_side()
    document = valid_gab(dashboards.check_gab(found))
    assert [e["name"] for e in document][-1] == "all rows NEW/OLD" and {e["unit"] for e in document} == {"NEW/OLD"}
    assert "sshd B (NEW) against sshd A (OLD)" in document[-1]["extra"] and "threshold 5%" in document[-1]["extra"]


def test_a_check_with_an_unbounded_or_missing_interval_still_validates() -> None:
    found = GateResult(
        "against a stored run", "run 1", "run 2", 0.05,
        Checked("all rows", 0.97, 0.5, float("inf"), gate.COULD_NOT_TELL),
        [Checked("aes128-gcm@openssh.com", 0.97, None, None, gate.NO_REGRESSION, 900.0, 873.0),
         Checked("aes128-ctr", None, None, None, gate.NO_REGRESSION)],
    )  # fmt: skip
    document = valid_bmf(dashboards.check_bmf(found))
    assert document["all rows"][dashboards.RATIO] == {"value": 0.97} and "aes128-ctr" not in document
    assert all("range" not in e for e in valid_gab(dashboards.check_gab(found)))


# --- for real ----------------------------------------------------------------------------------------------------

SHORT = ("--runs", "3", "--size", "16M", "--no-baselines", "--no-why", "--kex", "curve25519-sha256")
CIPHERS = "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com"


def test_a_real_short_runs_files_validate_and_match_its_stored_report(tmp_path: Path) -> None:
    bmf, gab, db = tmp_path / "run.bmf.json", tmp_path / "run.gab.json", str(tmp_path / "runs.db")
    done = run_cli("run", "--ciphers", CIPHERS, *SHORT, "--db", db, "--bmf", str(bmf), "--gab", str(gab), timeout=240)
    assert done.returncode == 0, done.stderr
    document = valid_bmf(json.loads(bmf.read_text()))
    assert {name.split(" ")[0] for name in document} >= set(CIPHERS.split(","))
    assert all("lower_value" in m[dashboards.THROUGHPUT] for m in document.values())
    assert {e["name"] for e in valid_gab(json.loads(gab.read_text()))} == set(document)
    stored = run_cli("report", "--format", "bmf", "--db", db)
    assert stored.returncode == 0 and json.loads(stored.stdout) == document, stored.stderr


def test_a_real_side_by_side_checks_files_validate(tmp_path: Path) -> None:
    copy = tmp_path / "sshd"
    shutil.copy2("/usr/sbin/sshd", copy)  # the same sshd twice: an A/A check
    bmf, gab = tmp_path / "check.bmf.json", tmp_path / "check.gab.json"
    done = run_cli(
        "check", "--sshd", f"/usr/sbin/sshd,{copy}", "--ciphers", CIPHERS, *SHORT, "--db", str(tmp_path / "runs.db"),
        "--bmf", str(bmf), "--gab", str(gab), timeout=240,
    )  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stdout + done.stderr  # whatever it decides: its files are the test
    document = valid_bmf(json.loads(bmf.read_text()))
    assert "all rows" in document and dashboards.RATIO in document["all rows"]
    assert valid_gab(json.loads(gab.read_text()))[-1]["name"] == "all rows NEW/OLD"
