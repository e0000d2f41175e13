"""The fleet's pure parts, without hosts: the across-hosts comparison, one policy for a fleet, the playbook's
progress lines, the wheel made from the running package, the store's fleet columns (and an old store's
upgrade), and the command line's refusals (exit 2, one line)."""

from __future__ import annotations

import json
import sqlite3
import tarfile
import time
import zipfile

import pytest

from conftest import run_cli
from sshbench.answers.compare import compare_hosts
from sshbench.cli.main import main
from sshbench.fleet import wheelhouse
from sshbench.fleet.playbook import parse_line, stage_of
from sshbench.recommend.fleet import build_fleet
from sshbench.results import Combination, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.store import fleets as store_fleets
from sshbench.store import open_store
from sshbench.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from sshbench.units import MIB

GCM, CHACHA, CTR = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr"


def _host(rates: dict[str, float], cpu: str) -> RunResult:
    """Valid transfers (three rounds each, a little spread) at the given MiB/s per cipher."""
    trials = []
    for cipher, rate in rates.items():
        mac = "hmac-sha2-256-etm@openssh.com" if cipher == CTR else "implicit"
        combo = Combination(cipher=cipher, mac=mac, kex="curve25519-sha256")
        for rep, factor in enumerate((0.98, 1.0, 1.02)):
            trials.append(
                Trial(
                    combination=combo,
                    kind="transfer",
                    repetition=rep,
                    warmup=False,
                    payload_bytes=8 * MIB,
                    started_at=float(rep),
                    valid=True,
                    data_s=8 / (rate * factor),
                )
            )
    env = {"client_strict_kex": True, "server_strict_kex": True, "cpu_model": cpu, "server_ssh_version": "OpenSSH_9.2"}
    return RunResult(settings=RunSettings(), environment=env, trials=trials, status="complete")


# an AES-NI machine, a slower one, and one without AES-NI (seed 004: chacha20 wins there)
FLEET = {
    "fast": _host({GCM: 900.0, CHACHA: 500.0, CTR: 700.0}, "EPYC"),
    "slow": _host({GCM: 400.0, CHACHA: 250.0, CTR: 300.0}, "Xeon"),
    "old": _host({GCM: 90.0, CHACHA: 200.0, CTR: 80.0}, "Core2"),
}


def test_hosts_side_by_side_ordered_by_the_slowest_host():
    comparison = compare_hosts(list(FLEET.values()), list(FLEET))
    assert [h.label for h in comparison.hosts] == ["fast", "slow", "old"]
    assert [h.cpu_model for h in comparison.hosts] == ["EPYC", "Xeon", "Core2"]
    # by the slowest host's median: chacha 200 (old), gcm 90 (old), ctr 80 (old)
    assert [r.combination.cipher for r in comparison.rows] == [CHACHA, GCM, CTR]
    first = comparison.rows[0]
    assert first.slowest == pytest.approx(200.0, rel=0.01)
    low, high = first.cells[0].ci95_mib_s  # type: ignore[union-attr]
    assert low <= first.cells[0].median_mib_s <= high  # type: ignore[union-attr]


def test_one_policy_for_the_fleet_and_what_each_host_loses():
    result = build_fleet(7, FLEET, "modern")
    assert [c.name for c in result.rec.ciphers] == [CHACHA, GCM]  # ctr's MAC aside, AEAD only under modern
    assert result.rec.ciphers[0].measured_with == "slowest: old"
    losses = {loss.host: loss for loss in result.losses}
    assert losses["old"].loss == pytest.approx(0.0)
    assert losses["fast"].own_best == GCM and losses["fast"].loss == pytest.approx(1 - 500 / 900, abs=0.02)
    text = result.render()
    assert "Ciphers chacha20-poly1305@openssh.com,aes128-gcm@openssh.com" in text
    assert "fleet run 7: fast, slow, old" in text and "no MACs line" in text


def test_an_algorithm_one_host_lacks_is_left_out_with_the_host_named():
    partial = dict(FLEET, old=_host({CHACHA: 200.0}, "Core2"))
    result = build_fleet(1, partial, "modern")
    assert [c.name for c in result.rec.ciphers] == [CHACHA]
    assert any(line.startswith(f"{GCM}: ") and "old" in line for line in result.not_everywhere)


def test_progress_lines_from_the_callback():
    line = json.dumps(
        {"event": "failed", "host": "db1", "task": "sshbench : sshbench: check the host", "msg": "no sshd: x", "t": 5}
    )
    event = parse_line(line)
    assert event is not None and (event.host, event.stage, event.message) == ("db1", "check", "no sshd: x")
    assert stage_of("sshbench : sshbench: install (private venv)") == "install"
    assert stage_of("sshbench : sshbench: fetch the result") == "fetch"
    assert parse_line('{"event": "task", "task": "x"}') is None and parse_line("[WARNING]: x") is None


def test_the_wheel_is_the_running_package(tmp_path):
    wheel = wheelhouse.build_sshbench_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        record = zf.read(next(n for n in names if n.endswith("/RECORD"))).decode()
    assert "sshbench/cli/main.py" in names and "sshbench/fleet/engine.py" in names
    assert not [n for n in names if "__pycache__" in n or "/ansible/" in n]
    assert any(n.endswith(".dist-info/METADATA") for n in names) and "sshbench/cli/main.py,sha256=" in record
    assert all("extra" not in r for r in wheelhouse.runtime_requirements())


def test_fleet_columns_and_an_old_store_upgraded(tmp_path):
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at REAL NOT NULL)")
    for statement in MIGRATIONS[0]:
        con.execute(statement)
    con.execute("INSERT INTO schema_version VALUES (1, ?)", (time.time(),))
    con.execute(
        "INSERT INTO runs (status, started_at, origin, settings_json, environment_json, target_json,"
        " combinations_json, notices_json) VALUES ('complete', 1.0, 'old|1.0', '{}', '{}', '{}', '[]', '[]')"
    )
    con.commit()
    con.close()
    with open_store(db) as store:  # upgraded in place, the old run kept
        assert store.db.execute("SELECT max(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        (old,) = store.list_runs()
        assert old.label is None and old.fleet_id is None
        fleet = store_fleets.create_fleet(store, "/inv", None, ["--runs", "2"])
        fleet.hosts["web1"] = store_fleets.FleetHost("unreachable", "ssh: connect refused")
        store_fleets.save_fleet(store, fleet)
        loaded = store_fleets.load_fleet(store, "latest")
        assert loaded.run_args == ["--runs", "2"] and loaded.hosts["web1"].status == "unreachable"
        assert store_fleets.latest_fleet_for(store, "/inv", None) is not None
        assert store_fleets.latest_fleet_for(store, "/inv", "web") is None


@pytest.mark.parametrize(
    ("run_options", "needle"),
    [
        (["somehost"], "no HOST"),
        (["--json", "x.json"], "--json cannot be given"),
        (["--bmf", "x.json"], "--bmf cannot be given"),
        (["--gab", "x.json"], "--gab cannot be given"),
        (["--db", "x.db"], "--db cannot be given"),
        (["--bogus"], "unrecognized arguments"),
        (["--ciphers", ""], "--ciphers is empty"),
    ],
)
def test_bad_run_options_are_refused_before_anything_runs(tmp_path, capfd, run_options, needle):
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("h1 ansible_host=127.0.0.1\n")
    assert main(["fleet", "-i", str(inventory), "--", *run_options]) == 2  # in-process: the suite's time
    lines = capfd.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], lines


def test_missing_inventory_and_unknown_fleet_are_one_line(tmp_path):
    done = run_cli("fleet", "-i", str(tmp_path / "nope.ini"))  # the real command line once
    assert done.returncode == 2 and "no such file" in done.stderr and "Traceback" not in done.stderr
    with open_store(tmp_path / "r.db"):
        pass
    for argv in (("recommend", "--fleet", "3"), ("compare", "--fleet", "latest")):
        assert main([*argv, "--db", str(tmp_path / "r.db")]) == 2


def test_hosts_install_the_dependencies_but_matplotlib_from_the_archives_list(tmp_path):
    """A host runs `sshbench run --json`; charts are drawn on the control machine (38 of 49 MB of wheels)."""
    requirements = wheelhouse.host_requirements()
    assert not [r for r in requirements if r.lower().startswith("matplotlib")]
    assert {"rich", "ssh-audit", "asyncssh", "cryptography"} <= {wheelhouse._project(r) for r in requirements}
    assert wheelhouse._project("Python_Dateutil >= 2.8 ; python_version>'3'") == "python-dateutil"
    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "pip-26.3-py3-none-any.whl").write_bytes(b"a wheel")
    with tarfile.open(wheelhouse.make_archive(deps, tmp_path)) as tar:
        names = tar.getnames()
        listed = tar.extractfile(f"wheelhouse/{wheelhouse.HOST_REQUIREMENTS}")
        assert listed is not None and listed.read().decode().splitlines() == requirements
    assert "wheelhouse/pip-26.3-py3-none-any.whl" in names
    assert any(n.startswith("wheelhouse/sshbench-") and n.endswith(".whl") for n in names)
