"""The faults a busy machine brings, each on real processes (docs/reliability.md): two runs started 2 s apart on one
store, a store that fills up mid-run, a run stopped for 5 s mid-trial, a connection to the remote control's sink from
another address, a fleet pair key past its expiry-time. None asserts a rate: they run beside the other tests."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import communicate_or_dump, run_cli, start_cli, wait_for_line, wait_until

GCM, CHACHA = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"
SMALL_RUN = ("run", "--runs", "3", "--size", "16M", "--no-baselines", "--ciphers", f"{GCM},{CHACHA}")
ROOT = os.geteuid() == 0


def _statuses(db: Path) -> list[str]:
    with sqlite3.connect(db) as store:
        return [row[0] for row in store.execute("SELECT status FROM runs ORDER BY id")]


def _holds_the_lock(lock: Path) -> bool:
    return lock.exists() and "sshbench run" in lock.read_text()


def test_a_second_run_on_the_same_machine_waits_for_the_first_or_refuses_with_no_wait(tmp_path):
    db, lock = tmp_path / "s.db", Path(os.environ["SSHBENCH_LOCK"])
    first = start_cli(*SMALL_RUN, "--db", str(db), "--json", str(tmp_path / "first.json"))
    try:
        wait_until(lambda: _holds_the_lock(lock), timeout=30, what="the first run to hold the lock")
        refused = run_cli(*SMALL_RUN, "--db", str(db), "--no-wait")
        assert refused.returncode == 2, refused.stderr
        assert f"another measurement is running on this machine (pid {first.pid}" in refused.stderr
        second = start_cli(*SMALL_RUN, "--db", str(db), "--json", str(tmp_path / "second.json"))
        line = wait_for_line(second.stderr, "waiting for another measurement", timeout=30)
        assert f"pid {first.pid}" in line
        assert first.poll() is None  # it waits while the first still measures
        _, first_err = communicate_or_dump(first, timeout=180)
        _, second_err = communicate_or_dump(second, timeout=180)
    finally:
        for proc in (first,):
            if proc.poll() is None:
                proc.kill()
    assert first.returncode == 0 and second.returncode == 0, first_err + second_err
    assert "the other measurement ended: measuring now" in second_err
    assert _statuses(db) == ["complete", "complete"]
    for name, other in (("first.json", None), ("second.json", first.pid)):
        trials = json.loads((tmp_path / name).read_text())["trials"]
        assert all(t["others_cores"] is not None for t in trials if t["kind"] == "transfer")
        if other is not None:  # the second never measured beside the first
            assert not [t for t in trials if f"(pid {other})" in (t["others_busiest"] or "")]


@contextlib.contextmanager
def _tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A small tmpfs of the test's own at `where` (root), unmounted whatever happens."""
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True, timeout=10)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], timeout=10)


@pytest.mark.skipif(not ROOT, reason="mounts a small tmpfs (root only)")
def test_a_store_that_fills_up_mid_run_loses_no_trial(tmp_path):
    with _tmpfs(tmp_path / "full", "size=120k") as full:
        done = run_cli(*SMALL_RUN, "--db", str(full / "results.db"), timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the results store stopped taking the run" in done.stderr and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "database or disk is full" in last and "sshbench import " in last, last
    path = Path(last.split("`sshbench import ", 1)[1].split("`", 1)[0])
    assert path.is_file() and f"all {len(json.loads(path.read_text())['trials'])} trials are in {path}" in last
    kept = json.loads(path.read_text())
    assert kept["status"] == "complete" and kept["answer"] is not None  # the whole export, answer and all
    into = tmp_path / "elsewhere.db"
    imported = run_cli("import", str(path), "--db", str(into))
    assert imported.returncode == 0, imported.stderr
    exported = run_cli("export", "latest", "--db", str(into))
    assert len(json.loads(exported.stdout)["trials"]) == len(kept["trials"])
    assert "Fastest here:" in done.stdout  # the report was printed all the same


@pytest.mark.skipif(not ROOT, reason="a read-only mount (root only: root writes any file's mode)")
def test_a_read_only_store_says_not_writable_and_names_the_way_out(tmp_path):
    with _tmpfs(tmp_path / "ro", "ro,size=64k") as ro:
        done = run_cli(*SMALL_RUN, "--db", str(ro / "results.db"), timeout=60)
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.strip() == (
        f"sshbench: error: the results database {ro / 'results.db'} is not writable (Read-only file system): give a "
        "writable one with --db or $SSHBENCH_DB"
    )


def _ssh_child(pid: int) -> int | None:
    """A running ssh client of sshbench `pid` that reads a payload (a transfer in flight; a handshake's and the
    defaults probe's read /dev/null), or None."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            comm, rest = stat[stat.find("(") + 1 : stat.rfind(")")], stat[stat.rfind(")") + 2 :].split()
            try:
                stdin = os.readlink(f"/proc/{entry}/fd/0")
            except OSError:
                continue
            if comm == "ssh" and int(rest[1]) == pid and rest[0] in "RS" and stdin != os.devnull:
                return int(entry)
    return None


def test_a_run_stopped_for_5_s_mid_trial_measures_that_trial_again(tmp_path):
    out = tmp_path / "r.json"
    run = start_cli(*SMALL_RUN[:4], "512M", *SMALL_RUN[5:], "--no-warm", "--db", str(tmp_path / "s.db"), "--json",
                    str(out))  # fmt: skip
    try:
        wait_until(lambda: _ssh_child(run.pid) is not None, timeout=60, what="a trial in flight")
        # as a shell's Ctrl-Z stops it (its clients, sshd and sinks run in sessions of their own and go on)
        os.kill(run.pid, signal.SIGSTOP)
        time.sleep(5)  # the fault itself: 5 s stopped, as a laptop's lid
        os.kill(run.pid, signal.SIGCONT)
        _, err = communicate_or_dump(run, timeout=240)
    finally:
        if run.poll() is None:
            os.kill(run.pid, signal.SIGCONT)
            run.kill()
    assert run.returncode == 0, err
    doc = json.loads(out.read_text())
    paused = [t for t in doc["trials"] if (t["invalid_reason"] or "").startswith("paused during the trial")]
    assert len(paused) == 1 and "SIGSTOP/SIGCONT" in paused[0]["invalid_reason"], [
        t["invalid_reason"] for t in doc["trials"] if not t["valid"]
    ]
    for cipher in (GCM, CHACHA):  # every row keeps its 3 rounds: the paused trial was measured again
        rounds = {t["repetition"] for t in doc["trials"] if t["cipher"] == cipher and t["kind"] == "transfer"
                  and t["valid"] and not t["warmup"]}  # fmt: skip
        assert rounds == {0, 1, 2}, (cipher, rounds)
    assert doc["answer"]["fastest"][0]["cipher"] == GCM  # 1.7-1.9x apart here: the ranking a run without it has


# -- a fleet pair key past its expiry-time -------------------------------------------------------------------------

ROLE = Path(__file__).resolve().parent.parent / "src/sshbench/fleet/ansible/roles/sshbench"


def _role_key_options() -> str:
    for line in (ROLE / "defaults/main.yml").read_text().splitlines():
        if line.startswith("sshbench_pair_key_options:"):
            return line.split(":", 1)[1].strip().strip('"')
    raise AssertionError("no sshbench_pair_key_options in the role's defaults")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not ROOT, reason="an sshd of the test's own that logs in as this user (root only)")
def test_a_fleet_pair_key_past_its_expiry_time_is_refused_by_the_targets_sshd(tmp_path):
    # the line the role writes (tasks/main.yml): its options, then expiry-time and from= where the target reads them
    task = (ROLE / "tasks/main.yml").read_text()
    assert 'expiry=",expiry-time=\\"$until\\""' in task and "',from=\"' ~ address ~ '\"'" in task
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "host")], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "pair")], check=True)
    key = (tmp_path / "pair.pub").read_text().strip()
    keys, port = tmp_path / "authorized_keys", _free_port()
    (tmp_path / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {tmp_path / 'host'}\nAuthorizedKeysFile {keys}\n"
        "StrictModes no\nUsePAM no\nPidFile none\nPasswordAuthentication no\nLogLevel VERBOSE\n"
    )
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(tmp_path / "sshd_config")],
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip

    def login() -> int:
        argv = ["ssh", "-i", str(tmp_path / "pair"), "-p", str(port), "-o", "BatchMode=yes", "-o",
                "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
                "127.0.0.1", "true"]  # fmt: skip
        return subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL).returncode

    def listening() -> bool:
        import socket

        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    try:
        wait_until(listening, timeout=20, what="the test's sshd")
        stamp = lambda seconds: time.strftime("%Y%m%d%H%M", time.localtime(time.time() + seconds))
        for until, source, expected in (
            (stamp(3600), "127.0.0.1", 0),  # in force: the pair connects
            (stamp(-120), "127.0.0.1", 255),  # its clean-up never ran and the run is long over: refused
            (stamp(3600), "192.0.2.7", 255),  # from another address: refused
        ):
            keys.write_text(f'{_role_key_options()},expiry-time="{until}",from="{source}" {key}\n')
            assert login() == expected, (until, source)
    finally:
        sshd.terminate()
        _, log = sshd.communicate(timeout=10)
    assert log.count("Refused by key options") == 2, log[-2000:]  # both by the key's own options
