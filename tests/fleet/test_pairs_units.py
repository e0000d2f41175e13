"""`sshbench fleet --pairs` without hosts: the option's grammar and its expansion over an inventory, the
play a resumed fleet needs, the inventory listing, the progress events of the pair stages (each pair's
result imported with its label), what a host may still hold, and the refusals before any host runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sshbench.cli.main import main
from sshbench.fleet.inventory import from_listing, host_run_args
from sshbench.fleet.pairs import Pair, expand_pairs, is_pair_label, play_plan
from sshbench.fleet.playbook import HostEvent, stage_of
from sshbench.fleet.tracker import Tracker
from sshbench.results import Combination, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.store import fleets, open_store
from sshbench.store.document import to_document
from sshbench.units import MIB

HOSTS = ["web1", "web2", "db1"]
GROUPS = {"web": ["web1", "web2"], "db": ["db1"]}


def test_explicit_pairs_are_directed_and_counted_once():
    pairs = expand_pairs("web1:db1, db1:web1,web1:db1", HOSTS, GROUPS)
    assert [p.label for p in pairs] == ["web1->db1", "db1->web1"]
    assert Pair.from_label("web1->db1") == Pair("web1", "db1") and is_pair_label("a->b") and not is_pair_label("a")


def test_all_and_all_of_a_group_expand_to_every_ordered_pair():
    assert len(expand_pairs("all", HOSTS, GROUPS)) == 6  # n * (n - 1)
    assert [p.label for p in expand_pairs("all:web", HOSTS, GROUPS)] == ["web1->web2", "web2->web1"]
    mixed = expand_pairs("all:web,db1:web1,web2:web1", HOSTS, GROUPS)
    assert [p.label for p in mixed] == ["web1->web2", "web2->web1", "db1->web1"]


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("web1:web1", "a pair names two hosts"),
        ("web1:db9", "db9 is not one of the inventory"),
        ("web1:web", "web is a group; pairs name hosts (or all:web)"),
        ("all:nope", "no group 'nope'"),
        ("all:db", "1 host(s)"),
        ("web1:db1:x", "write A:B"),
        ("web1", "write A:B"),
        ("web1:db1,", "empty item"),
    ],
)
def test_pairs_that_cannot_run_are_one_line(spec, needle):
    from sshbench.errors import UsageError

    with pytest.raises(UsageError, match="^--pairs") as caught:
        expand_pairs(spec, HOSTS, GROUPS)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_a_resumed_fleet_keeps_a_stored_host_only_for_its_pairs():
    plan = play_plan("bench", ["web1", "web2"], [Pair("db1", "web2")])
    assert plan.limit == "bench:!web1" and plan.skip_own_run == ["web2"]
    assert play_plan(None, [], []).limit == "all"


def test_inventory_listing_groups_with_children_and_host_args():
    listing = {
        "_meta": {
            "hostvars": {"web1": {"sshbench_host_run_args": "--no-aesni"}, "db1": {"sshbench_host_run_args": "{{ x }}"}}
        },
        "all": {"children": ["ungrouped", "prod"]},
        "prod": {"children": ["web", "db"]},
        "web": {"hosts": ["web1", "web2"]},
        "db": {"hosts": ["db1"]},
        "ungrouped": {"hosts": ["lone"]},
    }
    inventory = from_listing(listing)
    assert inventory.hosts == ["lone", "web1", "web2", "db1"]
    assert inventory.groups["prod"] == ["web1", "web2", "db1"] and inventory.groups["web"] == ["web1", "web2"]
    assert host_run_args(inventory, "web1") == ["--no-aesni"]
    assert host_run_args(inventory, "db1") is None and host_run_args(inventory, "web2") == []


def _result_document() -> dict:
    combo = Combination(cipher="aes128-ctr", mac="hmac-sha2-256-etm@openssh.com", kex="curve25519-sha256")
    trials = [
        Trial(
            combination=combo,
            kind="transfer",
            repetition=r,
            warmup=False,
            payload_bytes=2 * MIB,
            started_at=float(r),
            valid=True,
            data_s=0.01,
        )
        for r in range(2)
    ]
    env = {"hostname": "a", "cpu_model": "x"}
    return to_document(RunResult(settings=RunSettings(host="web2"), environment=env, trials=trials, status="complete"))


def _event(event: str, host: str, task: str, t: float, **fields) -> HostEvent:
    return HostEvent(
        event=event, host=host, stage=stage_of(f"sshbench : sshbench: {task}"), message="", stdout="", time=t, **fields
    )


def test_pair_events_store_each_pair_with_its_label_and_name_what_is_left(tmp_path):
    results = tmp_path / "results"
    (results / "pairs" / "web1").mkdir(parents=True)
    (results / "pairs" / "web1" / "web2.json").write_text(json.dumps(_result_document()))
    lines: list[str] = []
    with open_store(tmp_path / "r.db") as store:
        fleet = fleets.create_fleet(store, "/inv", None, [])
        pairs = [Pair("web1", "web2"), Pair("db1", "web2")]
        tracker = Tracker(store, fleet, results, lines.append, pairs=pairs, pending={"db1": (1, "/old/dir")})
        work = {name: f"/w/sshbench-fleet-{name}" for name in ("web1", "web2", "db1")}
        for name in work:
            tracker.on_event(_event("ok", name, "working directory name", 1.0, work=work[name]))
        for name in ("web1", "web2"):
            tracker.on_event(_event("ok", name, "check the host", 2.0))
        tracker.on_event(_event("unreachable", "db1", "check the host", 2.0))
        authorized = _event("ok", "web2", "pair target (authorize its sources' keys, read its host keys)", 3.0)
        authorized.stdout = "10.0.0.2 ssh-ed25519 AAAA\nuser=root\nkeys=/home/root/.ssh/authorized_keys"
        tracker.on_event(authorized)
        tracker.on_event(_event("ok", "web1", "pair source (ssh_config)", 4.0))
        tracker.on_event(_event("ok", "web1", "pair run", 9.0, item="web2", rc=0))
        tracker.on_event(_event("ok", "web1", "pair fetch", 9.5, item="web2"))
        tracker.on_event(_event("ok", "web1", "remove the working directory", 10.0))
        tracker.on_event(_event("unreachable", "web2", "remove the working directory", 10.0))
        tracker.finish()
        stored = fleets.fleet_runs(store, fleet.id, pairs=True)
        assert list(stored) == ["web1->web2"] and fleets.fleet_runs(store, fleet.id) == {}
        loaded = fleets.load_fleet(store, fleet.id)
        assert loaded.pairs["web1->web2"].status == "ok" and loaded.pairs["web1->web2"].run_id == stored["web1->web2"]
        assert loaded.pairs["db1->web2"].status == "not run" and "db1 unreachable" in loaded.pairs["db1->web2"].message
        assert loaded.hosts["web1"].leftover == ""
        assert (
            loaded.hosts["web2"].leftover
            == f"{work['web2']} and a throwaway key line in /home/root/.ssh/authorized_keys"
        )
        assert loaded.hosts["db1"].leftover == "/old/dir"  # not reached: an earlier run's leftover is still named
        pending = fleets.pending_leftovers(store, "/inv")
        assert set(pending) == {"web2", "db1"} and pending["db1"] == (fleet.id, "/old/dir")
    assert any(line.startswith("web1->web2: benchmark over the network finished (5 s)") for line in lines), lines


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (["--", "--server-cpu", "0.5"], "--server-cpu cannot be given to a fleet"),
        (["--pairs", "all", "--", "--server", "dropbear"], "--pairs (host A runs `sshbench run B`"),
        (["--pairs", "all", "--", "--link", "lan100m"], "cannot be combined with a HOST"),
        (["--pairs", "all", "--", "--no-aesni"], "--pairs: --no-aesni"),
        (["--pairs", "all", "--", "--ssh-config", "x"], "--pairs: the fleet writes"),
    ],
)
def test_run_options_a_fleet_cannot_pass_on_are_refused_up_front(tmp_path, capfd, options, needle):
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("h1 ansible_host=127.0.0.1\n")
    assert main(["fleet", "-i", str(inventory), *options]) == 2
    lines = capfd.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], lines


ANSIBLE = shutil.which("ansible-inventory") or (Path(sys.executable).parent / "ansible-inventory").exists()


@pytest.mark.skipif(not ANSIBLE, reason="ansible-core is not installed (pip install 'sshbench[fleet]')")
def test_the_inventory_is_read_before_any_host_runs(tmp_path, capfd):
    """The real ansible-inventory, once (~1 s): an unknown pair host, a host's own --server-cpu."""
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(
        "[web]\nweb1 ansible_host=127.0.0.1\nweb2 ansible_host=127.0.0.1 sshbench_host_run_args='--server-cpu 0.5'\n"
    )
    assert (
        main(["fleet", "-i", str(inventory), "--limit", "web1", "--pairs", "web1:web2", "--db", str(tmp_path / "r.db")])
        == 2
    )
    lines = capfd.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "web2 is not one of the hosts this run reaches" in lines[0], lines
    assert main(["fleet", "-i", str(inventory), "--db", str(tmp_path / "r.db")]) == 2
    lines = capfd.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "inventory host web2, sshbench_host_run_args: --server-cpu cannot" in lines[0], lines
    assert not (tmp_path / "r.db").exists()  # refused before the store was opened


@pytest.mark.skipif(not ANSIBLE, reason="ansible-core is not installed (pip install 'sshbench[fleet]')")
@pytest.mark.parametrize("name", ["sshbench-fleet.yml", "sshbench-stop.yml"])
def test_the_playbooks_load(name, tmp_path):
    """ansible-playbook --syntax-check (~0.6 s): every task of the role parses (a quote in a free-form shell
    script once broke the stop play, which runs only after an interruption)."""
    from sshbench.fleet import playbook

    program = str(Path(playbook.find_ansible_playbook()))
    done = subprocess.run(
        [program, "--syntax-check", "-i", "localhost,", str(playbook.PLAYBOOK_DIR / name)],
        capture_output=True,
        text=True,
        timeout=60,
        env=playbook.ansible_env(tmp_path, 1),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0 and "ERROR" not in done.stdout + done.stderr, done.stdout + done.stderr
