"""A remote target for real, what does not rest on rates: a blocked control port, the latency command, and a host
without python3 (the control on nc), against namespace hosts (their own network namespace, address and sshd on port
22, reached through an ssh_config alias). Beside the other tests (`make test`'s parallel tier): none of them asserts
a rate or a verdict (tests/targets/test_remote_nshost.py runs those alone). Root only (skipped with the reason
otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, run_json
from sshbench.baselines import raw_tcp_remote
from sshbench.links import nshost
from sshbench.links.nshost import NamespaceHost

REASON = nshost.missing_requirement()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

BLOCKED_PORT = 20999  # below the ephemeral range: no other control picks it by chance


@pytest.fixture(scope="module")
def host():
    with NamespaceHost() as h:
        yield h


def _drop_rule(host: NamespaceHost, port: int) -> bool:
    """A firewall inside the namespace host dropping TCP to `port` (nftables, else iptables); False: neither."""
    prefix = ["ip", "netns", "exec", host.name]
    if shutil.which("nft"):
        for args in (
            ["add", "table", "inet", "sshbench_test"],
            ["add", "chain", "inet", "sshbench_test", "input", "{ type filter hook input priority 0; }"],
            ["add", "rule", "inet", "sshbench_test", "input", "tcp", "dport", str(port), "drop"],
        ):
            subprocess.run([*prefix, "nft", *args], check=True, timeout=10)
        return True
    if shutil.which("iptables"):
        rule = ["-A", "INPUT", "-p", "tcp", "--dport", str(port), "-j", "DROP"]
        return subprocess.run([*prefix, "iptables", *rule], timeout=10).returncode == 0
    return False


def test_a_blocked_control_port_gives_one_note_and_a_complete_run(host, tmp_path):
    if not _drop_rule(host, BLOCKED_PORT):
        pytest.skip("neither nft nor iptables here to add a drop rule inside the namespace")
    done, doc = run_json(
        tmp_path,
        "run",
        host.alias,
        "--ssh-config",
        str(host.ssh_config),
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--direction",
        "both",
        "--raw-tcp-port",
        str(BLOCKED_PORT),
        "--trial-timeout",
        "6",  # the control's connect gives up within this (at most 10 s)
        "--size",
        "2M",
        "--runs",
        "1",
        "--warmup",
        "0",
        timeout=300,
    )
    notes = [n for n in doc["baselines"]["notes"] if "raw TCP control left out" in n]
    assert len(notes) == 1 and f"port {BLOCKED_PORT}" in notes[0] and host.address in notes[0], notes
    assert "--raw-tcp-port" in notes[0]
    assert len([t for t in doc["trials"] if t["kind"] == "raw-tcp"]) == 1  # the rest of the control left out
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer" and t["cipher"] == "aes128-gcm@openssh.com"]
    assert len(transfers) == 2 and all(t["valid"] for t in transfers)


def test_latency_against_the_namespace_host(host, tmp_path):
    out = tmp_path / "lat.json"
    args = ("latency", host.alias, "--ssh-config", str(host.ssh_config), "--ciphers", "aes128-gcm@openssh.com")
    done = run_cli(*args, "--chars", "100", "--connects", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(out.read_text())["results"]
    assert row["error"] is None and row["link"] == "direct" and row["echo"]["n"] == 100


def test_without_python3_the_control_runs_on_nc_both_ways(tmp_path):
    # The remote's commands see a PATH without python3 (every other tool linked), as on a router or a NAS.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for folder in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            if not name.startswith("python") and not (bindir / name).exists():
                (bindir / name).symlink_to(Path(folder, name))
    if not (bindir / "nc").exists():
        pytest.skip("no nc here (netcat-openbsd is in the Makefile's TEST_PACKAGES)")
    force = f'PATH={bindir} exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"'
    out = tmp_path / "r.json"
    with NamespaceHost(sshd_options={"ForceCommand": force}) as nopy:
        done = run_cli(
            "run",
            nopy.alias,
            "--ssh-config",
            str(nopy.ssh_config),
            "--ciphers",
            "aes128-gcm@openssh.com",
            "--direction",
            "both",
            "--size",
            "4M",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--json",
            str(out),
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        left = subprocess.run(["ip", "netns", "pids", nopy.name], capture_output=True, text=True).stdout.split()
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left if Path(f"/proc/{pid}").exists()]
        assert not [c for c in commands if b"nc\0" in c or b"cat\0" in c], commands  # the fallback stopped itself
    doc = json.loads(out.read_text())
    assert doc["target"]["machine"]["python3"] is None and doc["target"]["machine"]["nc"], doc["target"]["machine"]
    raw = {t["direction"]: t for t in doc["trials"] if t["kind"] == "raw-tcp"}
    assert set(raw) == {"up", "down"} and all(t["valid"] for t in raw.values()), raw
    # nc prints no clock: upwards the sender here times it (first byte to the sink's close), downwards
    # the receiver here, as with python3; dd counted every byte at the far end.
    assert raw["up"]["data_clock"] == "sender" and raw["down"]["data_clock"] == "receiver"
    assert raw["up"]["received_bytes_at_sink"] == raw["down"]["sent_bytes"] == 4 * 1024 * 1024
    # the one note: what its nc end cannot check (tcp_sink.accept_ours checks the address and the token)
    assert doc["baselines"]["notes"] == [raw_tcp_remote.NC_UNCHECKED], doc["baselines"]["notes"]


def test_the_remote_sink_takes_only_the_clients_address_and_token(host, tmp_path):
    from sshbench.baselines.raw_tcp import send_file
    from sshbench.baselines.raw_tcp_remote import RemoteTcpSink

    payload = tmp_path / "payload"
    payload.write_bytes(os.urandom(1 << 20))
    sink = RemoteTcpSink(60, ["ssh", "-F", str(host.ssh_config), host.alias]).start()
    try:
        address, port = sink.address
        assert address == host.address and sink.token
        # someone else, first: from another address (inside the host itself), then from ours with a wrong token
        # closed unanswered: end of file, or a reset where the sink closed with the token unread
        probe = "import socket,sys; s=socket.create_connection((sys.argv[1], int(sys.argv[2])), 5)\n" \
                "try:\n s.sendall(b'TOKEN ' + sys.argv[3].encode() + b'\\n'); print(repr(s.recv(1)))\n" \
                "except ConnectionResetError:\n print('reset')"  # fmt: skip
        inside = ["ip", "netns", "exec", host.name, sys.executable, "-c", probe, address, str(port), sink.token]
        other = subprocess.run(inside, capture_output=True, text=True, timeout=30)
        assert other.stdout.strip() in ("b''", "reset"), other  # no "go", whatever it sent
        wrong = subprocess.run([sys.executable, "-c", probe, address, str(port), "0" * 32],
                               capture_output=True, text=True, timeout=30)  # fmt: skip
        assert wrong.stdout.strip() in ("b''", "reset"), wrong
        sent = send_file(payload, sink.address, 60, token=sink.token)  # the client: measured
        got = sink.wait()
    finally:
        sink.close()
    assert sent.sent_bytes == got.received_bytes == 1 << 20 and got.error is None, got
    assert got.refused is not None and len(got.refused) == 2, got.refused
    assert f"{host.address} (not the client's address {host.client_addr})" == got.refused[0]
    assert got.refused[1] == f"{host.client_addr} (no valid token)"
