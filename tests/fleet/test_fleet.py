"""`sshbench fleet` for real: three namespace hosts (each its own network namespace, address and sshd on
port 22, all three on one bridged LAN of namespaces) in one Ansible inventory, driven by the real
`ansible-playbook`. One module-scoped scenario (the suite's time budget) that every test reads:

1. a fleet run with one pair (web1 benchmarks web2's sshd over the LAN) in which the third host becomes
   unreachable (its sshd stopped) right after its check;
2. its sshd back, `fleet --resume` runs only that host.

Root only (namespaces); skipped with the reason otherwise, or without ansible-core."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli, sshbench_argv
from sshbench.cli.main import main
from sshbench.links import nshost
from sshbench.links.nshost import NamespaceHost, NamespaceLan
from sshbench.store import open_store

REASON = nshost.missing_requirement() or (
    None
    if shutil.which("ansible-playbook") or (Path(sys.executable).parent / "ansible-playbook").exists()
    else "ansible-core is not installed (pip install 'sshbench[fleet]')"
)
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

NAMES = ("web1", "web2", "db1")  # inventory names, not the ssh aliases: the label must be the inventory's
LOST = "db1"
PAIR = "web1->web2"
RUN_OPTIONS = ["--ciphers", "aes128-gcm@openssh.com,aes128-ctr", "--size", "2M", "--runs", "2", "--warmup", "0"]
RUN_OPTIONS += ["--no-baselines"]


def _start_sshd_again(host: NamespaceHost) -> None:
    """The host's own sshd, as NamespaceHost started it (destroy() kills every process in the namespace)."""
    assert host.dir is not None
    sshd = nshost.find_sshd()
    assert sshd is not None
    host.sshd = subprocess.Popen(
        ["ip", "netns", "exec", host.name, sshd, "-D", "-e", "-f", str(host.dir / "sshd_config")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host.address, host.port), timeout=1) as s:
            s.settimeout(1)
            if s.recv(4).startswith(b"SSH-"):
                return
        time.sleep(0.05)  # bounded poll of the port
    raise AssertionError(f"sshd in {host.name} did not come back")


def _fleet(env: dict, *args: str, on_line=None, timeout: float = 600) -> tuple[int, str, str, float]:
    """`sshbench fleet ...`; on_line(line) is called for each stderr line as it comes. Bounded."""
    started = time.monotonic()
    proc = subprocess.Popen(
        sshbench_argv("fleet", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None and proc.stderr is not None
    err_lines: list[str] = []
    deadline = started + timeout
    try:
        while True:
            ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"sshbench fleet still running after {timeout} s: {''.join(err_lines)[-3000:]}")
            line = proc.stderr.readline()
            if not line:
                break
            err_lines.append(line)
            if on_line is not None:
                on_line(line)
        out = proc.stdout.read()
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return rc, out, "".join(err_lines), time.monotonic() - started


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    base = tmp_path_factory.mktemp("fleet")
    env = os.environ.copy()
    env.update(
        {
            "TMPDIR": str(base / "control-tmp"),
            # the dependencies' wheels (pip download, ~50 MB) are a download cache kept across sessions, like
            # pip's own: the fleet's real cache path, under a directory of the tests' own
            "XDG_CACHE_HOME": str(Path.home() / ".cache" / "sshbench-tests"),
            "SSHBENCH_RUNTIME_DIR": str(base / "runtime"),
            "SSHBENCH_DB": str(base / "results.db"),
        }
    )
    (base / "control-tmp").mkdir()
    work_base = base / "hosts"  # the hosts' working directories (they share this filesystem)
    work_base.mkdir()
    with contextlib.ExitStack() as stack:
        lan = stack.enter_context(NamespaceLan())
        hosts = {name: stack.enter_context(NamespaceHost(lan=lan)) for name in NAMES}
        # a pair's target authorizes the throwaway key in its sshd's own AuthorizedKeysFile (not ~/.ssh)
        inventory = base / "inventory.ini"
        inventory.write_text(
            "[bench]\n"
            + "".join(
                f"{name} ansible_host={h.alias} ansible_user={h.user} ansible_python_interpreter={sys.executable}"
                f" ansible_ssh_common_args='-F {h.ssh_config}' sshbench_work_base={work_base}"
                f" sshbench_pair_address={h.lan_address} sshbench_authorized_keys_file={h.dir}/authorized_keys\n"
                for name, h in hosts.items()
            )
        )
        lost = hosts[LOST]
        target = hosts[PAIR.split("->")[1]]
        assert target.dir is not None
        authorized_before = (target.dir / "authorized_keys").read_text()

        def lose_host(line: str) -> None:
            if f"fleet: {LOST}: checked" in line and lost.sshd is not None:
                lost.sshd.send_signal(signal.SIGTERM)  # new connections refused; sessions already open go on
                lost.sshd.wait(timeout=10)

        first = _fleet(
            env, "-i", str(inventory), "--pairs", PAIR.replace("->", ":"), "--", *RUN_OPTIONS, on_line=lose_host
        )
        left_on_lost = sorted(p.name for p in work_base.iterdir())
        authorized_after = (target.dir / "authorized_keys").read_text()
        _start_sshd_again(lost)
        resumed = _fleet(env, "-i", str(inventory), "--resume")
        in_namespaces = {
            name: subprocess.run(["ip", "netns", "pids", h.name], capture_output=True, text=True).stdout.split()
            for name, h in hosts.items()
        }
        yield {
            "env": env,
            "first": first,
            "resumed": resumed,
            "left_on_lost": left_on_lost,
            "work_base": work_base,
            "in_namespaces": in_namespaces,
            "hosts": hosts,
            "db": base / "results.db",
            "authorized": (authorized_before, authorized_after),
        }


def _stored(db: Path) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return con.execute("SELECT id, label, fleet_id, status FROM runs ORDER BY id").fetchall()


def test_an_unreachable_host_is_reported_and_the_others_kept(scenario):
    rc, out, err, wall = scenario["first"]
    print(f"first fleet run: {wall:.1f} s\n{err}")
    assert rc == 1, err
    assert f"fleet: {LOST}: unreachable" in err, err
    lines = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert "unreachable" in lines[LOST] and "run " not in lines[LOST]
    for name in NAMES:
        if name != LOST:
            assert " ok " in lines[name] and "run " in lines[name], out
    # what an unreachable host keeps: its working directory, until the next run reaches it; the report says where
    assert scenario["left_on_lost"] == [f"sshbench-fleet-{LOST}"]
    assert f"may still hold {scenario['work_base']}/sshbench-fleet-{LOST}" in lines[LOST], out


def test_resume_runs_only_the_missing_host(scenario):
    rc, out, err, wall = scenario["resumed"]
    print(f"resumed fleet run: {wall:.1f} s\n{err}")
    assert rc == 0, err
    assert "web1, web2 already stored" in err
    progress = [line for line in err.splitlines() if line.startswith("fleet: ") and ": " in line[7:]]
    assert all(line.startswith(f"fleet: {LOST}: ") for line in progress if line.split(":")[1].strip() in NAMES)
    assert f"fleet: {LOST} may still hold {scenario['work_base']}/sshbench-fleet-{LOST} (fleet run 1)" in err
    assert f"fleet: {LOST}: removed a leftover" in err  # the unreachable run's directory, removed on its return
    assert "3 of 3 hosts stored, 1 of 1 pairs" in out and "may still hold" not in out


def test_every_host_result_is_in_the_store_labelled_and_tagged(scenario):
    runs = [run for run in _stored(scenario["db"]) if run[1] != PAIR]
    assert sorted(label for _, label, _, _ in runs) == sorted(NAMES)
    assert {fleet for _, _, fleet, _ in runs} == {1} and {status for *_, status in runs} == {"complete"}
    listing = run_cli("runs", "--db", str(scenario["db"]))
    assert listing.returncode == 0, listing.stderr
    for name in NAMES:
        assert f"{name} (fleet 1)" in listing.stdout
    with open_store(scenario["db"], read_only=True) as store:
        for run_id, label, _, _ in runs:
            result = store.load_result(run_id)
            transfers = [t for t in result.trials if t.kind == "transfer" and not t.warmup]
            assert len(transfers) == 4 and all(t.valid for t in transfers), label
            assert result.target.get("kind") == "private" or "private" in str(result.environment.get("target"))


def test_nothing_is_left_on_any_host_or_here(scenario):
    assert list(scenario["work_base"].iterdir()) == []
    for name, pids in scenario["in_namespaces"].items():
        # only the host's own sshd listener: no sshbench, no private sshd, no session left
        assert len(pids) == 1, (name, pids)
    assert list(Path(scenario["env"]["TMPDIR"]).iterdir()) == []  # the control side's staging directory


def test_a_pair_is_measured_over_the_network_and_stored_with_its_label(scenario):
    rc, out, err, wall = scenario["first"]
    assert f"fleet: {PAIR}: benchmark over the network finished" in err, err
    (pair,) = [run for run in _stored(scenario["db"]) if run[1] == PAIR]
    run_id, _, fleet_id, status = pair
    assert fleet_id == 1 and status == "complete"
    source, target = (scenario["hosts"][name] for name in PAIR.split("->"))
    with open_store(scenario["db"], read_only=True) as store:
        result = store.load_result(run_id)
    # web1 ran `sshbench run web2` against web2's sshd at its LAN address: from namespace to namespace
    assert result.target["kind"] == "remote" and result.target["hostname"] == target.lan_address
    assert str(result.target["port"]) == "22" and source.lan_address != target.lan_address
    transfers = [t for t in result.trials if t.kind == "transfer" and not t.warmup]
    assert transfers and all(t.valid for t in transfers)
    # the throwaway key was authorized on web2 only for the run: its authorized_keys is as it was
    before, after = scenario["authorized"]
    assert after == before and "sshbench-fleet-pair" not in after
    listing = run_cli("runs", "--db", str(scenario["db"]))
    assert f"{PAIR} (fleet 1)" in listing.stdout


def test_compare_and_recommend_keep_to_the_hosts_with_pairs_present(scenario, capfd):
    db = str(scenario["db"])
    assert main(["compare", "--fleet", "1", "--db", db]) == 0
    captured = capfd.readouterr()
    assert all(name in captured.out for name in NAMES) and PAIR not in captured.out
    assert f"pairs of fleet run 1, not in this table: {PAIR}" in captured.err
    assert main(["compare", "--fleet", "1", "--pairs", "--db", db]) == 0
    assert PAIR in capfd.readouterr().out
    assert main(["recommend", "--fleet", "1", "--db", db]) == 0
    captured = capfd.readouterr()
    assert "Ciphers " in captured.out and f"not counted: the pairs {PAIR}" in captured.err
