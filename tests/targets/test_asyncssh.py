"""The private AsyncSSH server and AsyncSSH's own client: legacy ciphers OpenSSH removed, measured for real
on loopback, kept apart from OpenSSH's rows (cleaned up whatever ends the run: the per-server harness,
tests/targets/test_lifecycle_per_server.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import (
    pids_whose_cmdline_has,
    run_cli,
    run_json,
    sshbench_temp_dirs,
)
from sshbench.algorithms.asyncssh_caps import asyncssh_algorithms
from sshbench.openssh.sshlog import parse_ssh_log

ALGS = asyncssh_algorithms()
LEGACY = ["arcfour", "arcfour256", "blowfish-cbc", "cast128-cbc"]


def _skip_reason() -> str | None:
    if ALGS.missing_reason:
        return ALGS.missing_reason
    missing = {c: ALGS.unavailable.get(c, "not offered by this AsyncSSH") for c in LEGACY if c not in ALGS.ciphers}
    if missing:
        return "; ".join(f"{c}: {why}" for c, why in missing.items())
    return None


needs_legacy = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@needs_legacy
def test_legacy_ciphers_run_between_asyncssh_client_and_server_ranked_apart(tmp_path):
    done, doc = run_json(
        tmp_path,
        "run",
        "--server",
        "asyncssh",
        "--ciphers",
        ",".join([*LEGACY, "aes128-ctr"]),
        "--size",
        "2M",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--no-baselines",
        timeout=180,
    )
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    pairs = {(t["client"], t["cipher"]) for t in transfers}
    for cipher in LEGACY:
        assert ("asyncssh", cipher) in pairs  # only AsyncSSH's client can speak these
        assert ("openssh", cipher) not in pairs
    assert ("openssh", "aes128-ctr") in pairs and ("asyncssh", "aes128-ctr") in pairs
    for t in transfers:
        assert t["valid"], t["invalid_reason"]
        assert t["server"] == "asyncssh"
        assert t["negotiated"]["cipher"] == t["cipher"]  # read back from the connection
        assert t["negotiated"]["kex"] == t["kex"]
        assert t["data_clock"] == "server-reader" and t["received_bytes_at_sink"] == 2 * 1024 * 1024
        assert t["sent_bytes"] >= t["payload_bytes"]  # TCP_INFO: every SSH packet byte
    assert "asyncssh/asyncssh" in done.stdout and "openssh/asyncssh" in done.stdout
    assert "AsyncSSH is Python" in done.stdout

    # A mixed sweep: each client/server pair is its own ranking, never interleaved with another.
    by_pair: dict[str, list[dict]] = {}
    for s in doc["summaries"]:
        by_pair.setdefault(f"{s['client']}/{s['server']}", []).append(s)
    assert set(by_pair) == {"openssh/asyncssh", "asyncssh/asyncssh"}
    for rows in by_pair.values():
        assert min(r["relative_to_fastest"] for r in rows) == pytest.approx(1.0)
    order = [f"{s['client']}/{s['server']}" for s in doc["summaries"]]
    assert order == sorted(order, key=order.index)

    # Cleanup after a normal exit: no server process, no temp dir.
    assert doc["target"]["port"] > 0
    assert not pids_whose_cmdline_has("sshbench.targets.asyncssh_sshd", os.environ["TMPDIR"]), (
        "an AsyncSSH server outlived the run"
    )
    assert not sshbench_temp_dirs()


def test_legacy_cipher_from_openssh_says_which_server_runs_it():
    done = run_cli("run", "--ciphers", "arcfour", "--size", "1M", "--runs", "1", "--no-baselines")
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[-1]
    assert "removed from OpenSSH in 7.6" in line and "Traceback" not in done.stderr
    if not ALGS.missing_reason:
        assert "--server asyncssh" in line


@pytest.mark.skipif(ALGS.missing_reason is not None, reason=str(ALGS.missing_reason))
def test_cryptography_without_legacy_ciphers_marks_them_unavailable(monkeypatch):
    # CRYPTOGRAPHY_OPENSSL_NO_LEGACY: cryptography then runs without OpenSSL's legacy provider, as some
    # builds do; AsyncSSH still lists arcfour, so availability must come from running the primitive.
    monkeypatch.setenv("CRYPTOGRAPHY_OPENSSL_NO_LEGACY", "1")
    done = run_cli(
        "run", "--server", "asyncssh", "--ciphers", "arcfour", "--size", "1M", "--runs", "1", "--no-baselines"
    )
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "arcfour" in line and "cryptography cannot run RC4" in line and "Traceback" not in done.stderr
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sshbench.algorithms.asyncssh_caps import asyncssh_algorithms as a; "
            "u = a().unavailable; print(sorted(u)); print(u['blowfish-cbc'])",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )
    assert "'arcfour'" in probe.stdout and "'cast128-cbc'" in probe.stdout
    assert "cryptography cannot run Blowfish" in probe.stdout


def test_client_prints_what_sshlog_reads(tmp_path):
    """The AsyncSSH client's log lines parse like ssh -v's (unit: its argument handling and output format)."""
    from sshbench.tools.asyncssh_client import parse_args

    opts = parse_args(
        [
            "-F",
            "/dev/null",
            "-i",
            "k",
            "-o",
            "Port=2222",
            "-o",
            "User=u",
            "-o",
            "Ciphers=arcfour",
            "-o",
            "MACs=hmac-sha1",
            "-o",
            "KexAlgorithms=curve25519-sha256",
            "-o",
            "Compression=no",
            "-o",
            "BatchMode=yes",
            "-v",
            "127.0.0.1",
            "exec",
            "sh",
            "-c",
            "'dd'",
        ]
    )
    assert (opts.port, opts.user, opts.ciphers, opts.macs, opts.kex, opts.compression) == (
        2222,
        "u",
        ["arcfour"],
        ["hmac-sha1"],
        ["curve25519-sha256"],
        False,
    )
    assert opts.host == "127.0.0.1" and opts.command == "exec sh -c 'dd'" and opts.verbose == 1
    log = parse_ssh_log(
        "debug1: kex: algorithm: curve25519-sha256\n"
        "debug1: kex: client->server cipher: arcfour MAC: hmac-sha1 compression: none\n"
        "Transferred: sent 2100000, received 4000 bytes, in 0.1 seconds\n"
    )
    assert (log.negotiated.cipher, log.negotiated.mac, log.sent_bytes) == ("arcfour", "hmac-sha1", 2100000)
