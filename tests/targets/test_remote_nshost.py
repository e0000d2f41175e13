"""A remote target for real: `sshbench run ALIAS` against the namespace host (its own network namespace,
address and sshd on port 22, reached through an ssh_config alias), and what a kill -9'd run leaves on
it. Root only (skipped with the reason otherwise; tests/targets/test_remote_and_bad_input.py keeps the
loopback alias)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from conftest import communicate_or_dump, pids_whose_cmdline_has, run_cli, run_json, start_cli, wait_for_line
from sshbench.links import nshost
from sshbench.links.nshost import NamespaceHost

REASON = nshost.missing_requirement()
# timed: runs alone (`make test`): its verdicts (bound by the network) and ssh against raw TCP are from rates
pytestmark = [pytest.mark.skipif(REASON is not None, reason=REASON or ""), pytest.mark.timed]


@pytest.fixture(scope="module")
def host():
    with NamespaceHost() as h:
        yield h


def test_run_against_the_namespace_host_gives_valid_trials(host, tmp_path):
    done, doc = run_json(
        tmp_path,
        "run",
        host.alias,
        "--ssh-config",
        str(host.ssh_config),
        "--ciphers",
        "aes128-gcm@openssh.com,aes128-ctr",
        "--direction",
        "both",
        "--size",
        "4M",
        "--runs",
        "2",
        "--warmup",
        "0",
        timeout=300,
    )
    assert doc["target"]["kind"] == "remote" and doc["target"]["hostname"] == host.address
    assert doc["target"]["machine"]["cores"] == os.cpu_count()  # read once, over ssh
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer" and not t["warmup"]]
    defaults = doc["environment"]["client_default_algorithms"]["negotiated"]
    # the client's default is measured too (the conclusion's reference): left aside here
    assert {t["cipher"] for t in transfers} == {"aes128-gcm@openssh.com", "aes128-ctr", defaults["cipher"]}
    transfers = [t for t in transfers if t["cipher"] in ("aes128-gcm@openssh.com", "aes128-ctr")]
    assert len(transfers) == 8 and all(t["valid"] for t in transfers), [t["invalid_reason"] for t in transfers]
    assert not list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("remote-*.json"))  # nothing left to sweep
    # The raw TCP control both ways: upwards its sink on the namespace host (started over ssh), the sender
    # here; downwards the namespace host sends its payload copy to a receiver here. Both connect directly.
    raw = [t for t in doc["trials"] if t["kind"] == "raw-tcp" and not t["warmup"]]
    assert sorted(t["direction"] for t in raw) == ["down", "down", "up", "up"]
    assert all(t["valid"] for t in raw), [t["invalid_reason"] for t in raw]
    assert all(t["received_bytes_at_sink"] == t["payload_bytes"] for t in raw)
    assert doc["baselines"]["raw_tcp"]["valid_trials"] == doc["baselines"]["raw_tcp_down"]["valid_trials"] == 2
    assert not pids_whose_cmdline_has("sys.argv.pop(1)", host.address)  # the remote ends stopped by themselves
    # The server's own crypto ceiling (openssl speed there; the same machine here, so the cache is shared).
    server = doc["baselines"]["crypto_server"]
    assert set(server) == {"AES-128-GCM", "AES-128-CTR", "HMAC-SHA2-256"} or server["AES-128-GCM"]["mib_s"] > 0
    assert all(e["mib_s"] and e["mib_s"] > 0 for e in server.values()), server
    assert doc["baselines"]["link"]["rtt_s"] < 0.05  # the path's RTT, measured for the window verdict
    for s in doc["summaries"]:
        assert s["vs_raw_tcp"] is not None and s["vs_raw_tcp"] < 1.05, s  # ssh never beats plain TCP
        assert s["crypto_ceiling_side"] in ("client", "server") and s["bound_by"] not in ("crypto", "shared-cpu"), s


def test_fast_ciphers_on_a_100_mbit_veth_are_bound_by_the_network(host, tmp_path):
    # Downloads, and no skip under load: an upload starts with sshd working through the channel window
    # it buffered while the login shell started, inside the reader's clock and scaled up with the
    # quarter of 8 MiB that came before it (one upload in 12 read 0.84x raw TCP here at load 1.6-3.5;
    # earlier 78-90% at load 6 failed this test). Downloads have no such start, and their clock runs
    # until the client has the tail (clock.download_tail_bytes): 0.96-0.99x in the same runs, and the
    # test passed at load 4.9-7.1 (six extra busy loops).
    out = tmp_path / "r.json"
    host.shape_link("lan100m")  # tbf on both veth ends, as the link profile
    try:
        done = run_cli(
            "run",
            host.alias,
            "--ssh-config",
            str(host.ssh_config),
            "--ciphers",
            "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com",
            "--direction",
            "down",
            "--size",
            "8M",
            "--runs",
            "3",  # a median of three: one trial slowed by a busy moment does not decide
            "--json",
            str(out),
            timeout=300,
        )
    finally:
        host.shape_link(None)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    # 100 Mbit/s carries 11.4 MiB/s of TCP payload (1448 of every 1514 bytes), and never more than 11.92 MiB/s of
    # bytes: the bound for every row. The control read 11.38-11.44 (median 11.44) with two busy loops beside a
    # parallel suite: 11.5 left it 0.5%, where a clock started late by a busy moment reads above; under 9 the
    # control would not be carrying the link (a shaper at half the rate reads 5.7, none at all 1000+).
    link_mib_s = 100e6 / 8 / 2**20
    raw = doc["baselines"]["raw_tcp_down"]["median_mib_s"]
    assert 9 < raw < link_mib_s, raw
    for s in doc["summaries"]:
        # never above what the link carries. The steady-state clock reads 11.5-11.7 here (docs/clock.md), above
        # the 11.4 of full-size packets' payload: tbf charges a GSO super-packet's headers once, and the start-up
        # the earlier clock included is left out.
        assert s["direction"] == "down" and s["median_mib_s"] < link_mib_s, s
        assert s["bound_by"] == "network", (s["cipher"], s["median_mib_s"], raw, s["bound_by_evidence"])


def test_a_killed_download_run_leaves_nothing_on_the_remote_after_the_next_run(host):
    runtime = Path(os.environ["SSHBENCH_RUNTIME_DIR"])
    common = ("run", host.alias, "--ssh-config", str(host.ssh_config), "--ciphers", "aes128-ctr", "--direction", "down")
    proc = start_cli(*common, "--size", "8M", "--runs", "50", "--no-baselines", "-v")
    left: list[str] = []
    try:
        assert proc.stderr is not None
        wait_for_line(proc.stderr, "trial 1/", timeout=120)
        records = list(runtime.glob("remote-*.json"))
        assert records, "no remote scratch record while the run is going"
        paths = [p for r in records for p in json.loads(r.read_text())["paths"]]
        left = [p for p in paths if os.path.isdir(p)]  # the namespace host shares this filesystem
        assert left, paths
        proc.send_signal(signal.SIGKILL)
        communicate_or_dump(proc, timeout=30)
        assert all(os.path.isdir(p) for p in left)  # what kill -9 leaves

        done = run_cli(*common, "--size", "4M", "--runs", "1", "--warmup", "0", "--no-baselines", timeout=300)
        assert done.returncode == 0, done.stderr
        assert "removed leftovers of an earlier run that was killed" in done.stderr and left[0] in done.stderr
        assert not any(os.path.exists(p) for p in left)
        assert not list(runtime.glob("remote-*.json"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for p in left:
            shutil.rmtree(p, ignore_errors=True)
