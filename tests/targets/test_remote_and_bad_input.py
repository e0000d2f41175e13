"""A remote target reached through an ssh_config alias (a private sshd stands in for the remote
machine, on loopback), and every kind of bad input: one line, no traceback, the right exit code."""

import json
import socket

import pytest

from conftest import run_cli
from sshbench.host.cleanup import Cleanup
from sshbench.targets import PrivateOpenSSH
from test_hpn import HPN, needs_hpn  # the prefix scripts/build-hpnssh.sh made (make test runs it)


@pytest.fixture(scope="module")
def fake_remote(tmp_path_factory):
    """A private sshd that offers only three ciphers, and an ssh_config with aliases for it."""
    cleanup = Cleanup()
    target = PrivateOpenSSH(extra_config={"Ciphers": "aes128-ctr,aes256-ctr,aes128-gcm@openssh.com"})
    target.start(cleanup)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    d = target.dir
    common = (
        f"  User {target.user}\n  IdentitiesOnly yes\n  IdentityAgent none\n"
        f"  UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
        "  StrictHostKeyChecking yes\n  BatchMode yes\n"
    )
    config = tmp_path_factory.mktemp("sshcfg") / "ssh_config"
    config.write_text(
        f"Host benchhost\n  HostName 127.0.0.1\n  Port {target.port}\n  IdentityFile {d}/client_key\n{common}"
        f"Host badauth\n  HostName 127.0.0.1\n  Port {target.port}\n  IdentityFile {d}/host_key\n{common}"
        f"Host closed\n  HostName 127.0.0.1\n  Port {closed_port}\n  IdentityFile {d}/client_key\n{common}"
    )
    yield target, str(config)
    cleanup.close()


def _one_line_error(done, code, *needles):
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("sshbench: error:")]
    assert len(errors) == 1, done.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_remote_alias_runs_upload_trials_with_its_own_config(fake_remote, tmp_path):
    _, config = fake_remote
    out = tmp_path / "r.json"
    done = run_cli(
        "run", "benchhost", "--ssh-config", config, "--size", "1M", "--runs", "2", "--warmup", "0", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    # the server's KEXINIT decides the matrix: exactly its three ciphers
    assert {s["cipher"] for s in doc["summaries"]} == {"aes128-ctr", "aes256-ctr", "aes128-gcm@openssh.com"}
    assert all(t["valid"] for t in doc["trials"])
    assert all(t["server_cpu_s"] is not None for t in doc["trials"] if t["kind"] == "transfer")
    assert doc["target"]["kind"] == "remote" and doc["target"]["hostname"] == "127.0.0.1"
    assert doc["environment"]["server_strict_kex"] is True


def test_remote_algorithms_listing(fake_remote):
    _, config = fake_remote
    done = run_cli("algorithms", "benchhost", "--ssh-config", config)
    assert done.returncode == 0, done.stderr
    assert "aes256-ctr" in done.stdout


def test_cipher_the_server_refuses(fake_remote):
    _, config = fake_remote
    done = run_cli("run", "benchhost", "--ssh-config", config, "--ciphers", "3des-cbc", "--size", "1M")
    _, _ = fake_remote
    _one_line_error(done, 2, "does not offer cipher '3des-cbc'", "aes128-ctr")


def test_unreachable_host(fake_remote):
    _, config = fake_remote
    _one_line_error(
        run_cli("run", "closed", "--ssh-config", config, "--size", "1M"),
        1,
        "cannot connect to 127.0.0.1",
        "Connection refused",
    )


def test_authentication_failure(fake_remote):
    _, config = fake_remote
    _one_line_error(run_cli("run", "badauth", "--ssh-config", config, "--size", "1M"), 1, "authentication failed")


@pytest.mark.parametrize(
    "args,code,needle",
    [
        (("--ciphers", "rot13"), 2, "unknown cipher 'rot13'"),
        (("--ciphers", "arcfour"), 2, "removed from OpenSSH in 7.6"),
        (("--macs", "hmac-nonesuch"), 2, "unknown mac 'hmac-nonesuch'"),
        (("--kex", "nokex*"), 2, "matches no kex"),
        (("--size", "lots"), 2, "not a size: 'lots'"),
        (("--size", "10K"), 2, "too small"),
        (("--runs", "0"), 2, "--runs must be at least 1"),
        (("--runs", "x"), 2, "a count (e.g. 5) or 'auto'"),
        (("--sshd", "/nonexistent/sshd"), 2, "apt-get install openssh-server"),
    ],
)
def test_bad_input_one_clear_line(args, code, needle):
    _one_line_error(
        run_cli("run", "--size", "1M", *args) if "--size" not in args else run_cli("run", *args), code, needle
    )


def test_unwritable_json_path_is_refused_before_the_run():
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "1M",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--json",
        "/nonexistent-dir/r.json",
    )
    _one_line_error(done, 1, "cannot write /nonexistent-dir/r.json")
    assert "MiB/s" not in done.stdout  # checked before anything was measured
    assert "saved in" not in done.stderr  # and nothing stored


def test_remote_remedies_are_what_the_client_can_try_alone(fake_remote, tmp_path, monkeypatch):
    """--remedies on to a HOST: -P 4 and, where HPN-SSH is installed here ($SSHBENCH_HPN_DIR; tests/test_hpn.py's
    prefix), an HPN-SSH client against the host's own sshd; HPN-SSH at the host's end is named as not tried."""
    if needs_hpn.args[0]:
        pytest.skip(needs_hpn.kwargs["reason"])
    monkeypatch.setenv("SSHBENCH_HPN_DIR", str(HPN))
    _, config = fake_remote
    out = tmp_path / "r.json"
    done = run_cli("run", "benchhost", "--ssh-config", config, "--ciphers", "aes128-ctr", "--remedies", "on",
                   "--size", "1M", "--runs", "3", "--warmup", "0", "--json", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    helps = doc["remedies"]
    assert {r["name"] for r in helps["remedies"]} == {"hpn-client", "streams"}, helps
    assert any(line.startswith("HPN-SSH at benchhost's end") for line in helps["not_tried"]), helps
    assert {t["remedy"] for t in doc["trials"] if t["kind"] == "transfer"} == {"", "hpn-client", "streams"}
    assert "What would help" in done.stdout
