"""`sshbench fleet` for real: three namespace hosts (each its own network namespace, address and sshd on
port 22, all three on one bridged LAN of namespaces) in one Ansible inventory, driven by the real
`ansible-playbook`. The hosts are as people have them: the inventory is a plain one (address, user, key
file; no ansible_python_interpreter: their host keys are in a known_hosts file, as ~/.ssh/known_hosts
holds them), and a pyenv-style shim of an unselected python3.13 (exits 127) comes first on every host's
PATH, which breaks Ansible's own interpreter discovery. One module-scoped scenario (the suite's time
budget) that every test reads:

1. a fleet run with one pair (web1 benchmarks web2's sshd over the LAN) in which the third host dies while
   it benchmarks (everything in its namespace killed, its sshd included);
2. its sshd back, `fleet --resume` runs only that host;
3. a fleet run of a host that is unreachable from the start.

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
import threading
import time
from pathlib import Path

import pytest

from conftest import run_cli, sshbench_argv
from sshbench.cli.main import main
from sshbench.links import nshost, nshost_config
from sshbench.links.nshost import NamespaceHost, NamespaceLan
from sshbench.store import open_store

REASON = nshost.missing_requirement() or (
    None
    if shutil.which("ansible-playbook") or (Path(sys.executable).parent / "ansible-playbook").exists()
    else "ansible-core is not installed (pip install 'sshbench[fleet]')"
)
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

NAMES = ("web1", "web2", "db1")  # inventory names, not the ssh aliases: the label must be the inventory's
LOST = "db1"  # dies while it benchmarks
PAIR = "web1->web2"
RUN_OPTIONS = ["--ciphers", "aes128-gcm@openssh.com", "--size", "2M", "--runs", "2", "--warmup", "0", "--no-baselines"]


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


def _module_payloads() -> list[Path]:
    """AnsiballZ's scratch directories in the hosts' /tmp (their sessions get no TMPDIR of the tests)."""
    return list(Path("/tmp").glob("ansible_*_payload_*"))


def _namespace_pids(host: NamespaceHost) -> list[int]:
    done = subprocess.run(["ip", "netns", "pids", host.name], capture_output=True, text=True, timeout=10)
    return [int(pid) for pid in done.stdout.split()]


def _kill_host_when_it_benchmarks(host: NamespaceHost, killed: dict) -> None:
    """Wait (bounded) for `sshbench run` in the host's namespace, then kill everything there, its sshd
    included: the host is gone as if switched off, in the middle of its benchmark."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not killed:
        for pid in _namespace_pids(host):
            with contextlib.suppress(OSError):
                if b"sshbench\0run" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    killed["benchmark_pid"] = pid
        if killed:
            break
        time.sleep(0.1)  # bounded poll of the namespace's processes
    for _ in range(50):  # a process forked meanwhile is killed by the next pass
        pids = _namespace_pids(host)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    if host.sshd is not None:
        host.sshd.wait(timeout=10)


def plain_inventory(path: Path, hosts: dict[str, NamespaceHost], work_base: Path) -> Path:
    """An inventory as users write it (nshost.inventory_line), with the fleet's own variables for these
    hosts: their shared filesystem's working base, the LAN address and the sshd's AuthorizedKeysFile."""
    path.write_text(
        "[bench]\n"
        + "".join(
            h.inventory_line(
                name,
                sshbench_work_base=work_base,
                sshbench_pair_address=h.lan_address,
                sshbench_authorized_keys_file=f"{h.dir}/authorized_keys",
            )
            for name, h in hosts.items()
        )
    )
    return path


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
    shims = base / "shims"
    shims.mkdir()
    payloads_before = set(_module_payloads())
    with contextlib.ExitStack() as stack:
        lan = stack.enter_context(NamespaceLan())
        path_first = nshost_config.broken_shim(shims)  # python3.13 first on each host's PATH, exit 127
        hosts = {name: stack.enter_context(NamespaceHost(lan=lan, sshd_options=path_first)) for name in NAMES}
        # the hosts' keys where ssh reads them, as a user's ~/.ssh/known_hosts has them (not in the inventory)
        known_hosts = base / "known_hosts"
        known_hosts.write_text("".join(Path(str(h.known_hosts)).read_text() for h in hosts.values()))
        env["ANSIBLE_SSH_COMMON_ARGS"] = f"-o UserKnownHostsFile={known_hosts} -o GlobalKnownHostsFile=/dev/null"
        inventory = plain_inventory(base / "hosts.ini", hosts, work_base)
        shim_on_host = subprocess.run(
            [*hosts["web2"].ssh_argv(), "command -v python3.13; python3.13 -V"], capture_output=True, text=True
        )
        lost = hosts[LOST]
        target = hosts[PAIR.split("->")[1]]
        assert target.dir is not None
        authorized_before = (target.dir / "authorized_keys").read_text()
        killed: dict = {}
        killers: list[threading.Thread] = []

        def lose_host(line: str) -> None:
            if f"fleet: {LOST}: installed" in line and not killers:
                killers.append(threading.Thread(target=_kill_host_when_it_benchmarks, args=(lost, killed)))
                killers[0].start()

        first = _fleet(
            env, "-i", str(inventory), "--pairs", PAIR.replace("->", ":"), "--", *RUN_OPTIONS, on_line=lose_host
        )
        for killer in killers:
            killer.join(timeout=150)
        left_on_lost = sorted(p.name for p in work_base.iterdir())
        authorized_after = (target.dir / "authorized_keys").read_text()
        _start_sshd_again(lost)
        resumed = _fleet(env, "-i", str(inventory), "--resume")
        resumed_again = _fleet(env, "-i", str(inventory), "--resume")  # nothing left to run
        # a host that is down from the start: nothing answers at its address and port (inside web1's namespace)
        web1 = hosts["web1"]
        assert web1.identity is not None
        down = base / "down.ini"
        down.write_text(
            "[bench]\n" + nshost_config.inventory_line("gone", web1.address, web1.user, web1.identity, ansible_port=9)
        )
        unreachable = _fleet(env, "-i", str(down), "--", *RUN_OPTIONS)
        in_namespaces = {name: _namespace_pids(h) for name, h in hosts.items()}
        payloads_left = sorted(set(_module_payloads()) - payloads_before)
        yield {
            "env": env,
            "first": first,
            "killed": killed,
            "resumed": resumed,
            "resumed_again": resumed_again,
            "unreachable": unreachable,
            "left_on_lost": left_on_lost,
            "work_base": work_base,
            "in_namespaces": in_namespaces,
            "payloads_left": payloads_left,
            "hosts": hosts,
            "inventory": inventory,
            "shims": shims,
            "shim_on_host": shim_on_host,
            "db": base / "results.db",
            "authorized": (authorized_before, authorized_after),
        }


def _stored(db: Path) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return con.execute("SELECT id, label, fleet_id, status FROM runs ORDER BY id").fetchall()


def test_the_hosts_break_ansibles_own_interpreter_discovery(scenario, tmp_path):
    """The user's failure, reproduced on these hosts: without the role's probe, every module fails."""
    from sshbench.fleet.playbook import ansible_env, find_ansible_playbook

    # the shim is really first on the hosts' PATH, and really fails
    shim = scenario["shim_on_host"]
    assert shim.returncode == 127 and "pyenv: python3.13: command not found" in shim.stderr, shim
    assert shim.stdout.split()[0].endswith("/python3.13")
    ansible = str(Path(find_ansible_playbook()).with_name("ansible"))
    env = {**ansible_env(tmp_path, 3), "ANSIBLE_STDOUT_CALLBACK": "default"}
    env["ANSIBLE_SSH_COMMON_ARGS"] = scenario["env"]["ANSIBLE_SSH_COMMON_ARGS"]
    done = subprocess.run(
        [ansible, "-i", str(scenario["inventory"]), "web2", "-m", "ansible.builtin.command", "-a", "true"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0, done.stdout
    assert "Module result deserialization failed" in done.stdout + done.stderr, done.stdout + done.stderr


def test_each_host_runs_on_a_python_found_by_running_it(scenario):
    rc, out, err, wall = scenario["first"]
    found = dict(line.removeprefix("fleet: ").split(": python ", 1) for line in err.splitlines() if ": python " in line)
    assert sorted(found) == sorted(NAMES), err
    for name, line in found.items():
        assert str(scenario["shims"]) not in line and " (python 3." in line, (name, line)


def test_a_host_that_dies_while_it_benchmarks_is_reported_with_its_stage_and_the_others_kept(scenario):
    rc, out, err, wall = scenario["first"]
    print(f"first fleet run: {wall:.1f} s\n{err}\n{out}")
    assert scenario["killed"], "the lost host's benchmark was never seen running"
    assert rc == 1, err
    assert f"fleet: {LOST}: unreachable: run: " in err, err
    lines = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert "unreachable" in lines[LOST] and "run " not in lines[LOST].split(":")[0] and ": run: " in lines[LOST]
    for name in NAMES:
        if name != LOST:
            assert " ok " in lines[name] and "run " in lines[name], out
    # what a lost host keeps: its working directory, until the next run reaches it; the report says where
    assert scenario["left_on_lost"] == [f"sshbench-fleet-{LOST}"]
    assert f"may still hold {scenario['work_base']}/sshbench-fleet-{LOST}" in lines[LOST], out


def test_a_host_unreachable_from_the_start_is_one_line_and_stores_nothing(scenario):
    rc, out, err, wall = scenario["unreachable"]
    print(f"unreachable fleet run: {wall:.1f} s\n{err}\n{out}")
    assert rc == 1, err
    (line,) = [line for line in err.splitlines() if line.startswith("fleet: gone: ")]
    assert line.startswith("fleet: gone: unreachable: python: ") and "Connection refused" in line, line
    assert "fleet run 2: 0 of 1 hosts stored" in out and "may still hold" not in out
    assert "gone" not in {label for _, label, _, _ in _stored(scenario["db"])}


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


def test_resuming_a_complete_fleet_run_says_there_is_nothing_left(scenario):
    rc, out, err, _ = scenario["resumed_again"]
    assert rc == 0, err
    assert "db1, web1, web2 already stored" in err
    assert "fleet: no host to run (every host of the fleet run is stored)" in err, err
    assert "3 of 3 hosts stored, 1 of 1 pairs" in out


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
            assert len(transfers) == 2 and all(t.valid for t in transfers), label
            assert result.target.get("kind") == "private" or "private" in str(result.environment.get("target"))


def test_nothing_is_left_on_any_host_or_here(scenario):
    assert list(scenario["work_base"].iterdir()) == []
    for name, pids in scenario["in_namespaces"].items():
        # only the host's own sshd listener: no sshbench, no private sshd, no session left
        assert len(pids) == 1, (name, pids)
    assert list(Path(scenario["env"]["TMPDIR"]).iterdir()) == []  # the control side's staging directory
    # the module running the lost host's benchmark was killed with it: its scratch was in the working
    # directory, which the resumed run removed
    assert scenario["payloads_left"] == []


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
