"""Baselines: the raw TCP control, the crypto ceiling mapping and cache, the disk baseline, and their
place in a real run's JSON and report (real OpenSSH on loopback, small payloads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DATA, run_cli
from sshbench.baselines import bottleneck, crypto_ceiling, disk, raw_tcp, raw_tcp_remote, sink_process
from sshbench.results import IMPLICIT_MAC, Combination, Trial, TrialKind
from sshbench.units import MIB

# --- raw TCP --------------------------------------------------------------------------------------


@pytest.fixture
def payload(tmp_path: Path) -> Path:
    path = tmp_path / "payload"
    path.write_bytes(os.urandom(3 * MIB + 12345))  # not a multiple of the receive buffer
    return path


def test_raw_tcp_moves_exactly_the_payload(payload: Path) -> None:
    size = payload.stat().st_size
    trial = raw_tcp.run_raw_tcp_trial(payload=payload, payload_bytes=size, repetition=0, warmup=False, timeout_s=30)
    assert trial.valid, trial.invalid_reason
    assert trial.kind == "raw-tcp" and trial.combination == raw_tcp.RAW_TCP
    assert trial.received_bytes_at_sink == size and trial.sent_bytes == size
    assert trial.data_clock == "receiver" and trial.data_s and trial.data_s > 0
    assert trial.mib_s and trial.mib_s > 0
    assert trial.client_cpu_s is not None and trial.server_cpu_s is not None


def test_raw_tcp_sends_its_file_over_and_over_to_the_size(payload: Path) -> None:
    """The control's payload is a file sent as often as its size needs (not a file of that size)."""
    size = payload.stat().st_size
    wanted = 2 * size + 4321  # two whole copies and a part of a third
    trial = raw_tcp.run_raw_tcp_trial(payload=payload, payload_bytes=wanted, repetition=0, warmup=False, timeout_s=30)
    assert trial.valid, trial.invalid_reason
    assert trial.received_bytes_at_sink == trial.sent_bytes == wanted


def test_raw_tcp_flags_a_short_transfer() -> None:
    trial = Trial(raw_tcp.RAW_TCP, TrialKind.RAW_TCP, 0, False, payload_bytes=1000, started_at=0.0)
    raw_tcp.judge(trial, sink_process.SinkResult(received_bytes=999, data_s=0.1), None)
    assert not trial.valid and trial.invalid_reason == "sink received 999 of 1000 bytes"
    refused = Trial(raw_tcp.RAW_TCP, TrialKind.RAW_TCP, 0, False, payload_bytes=1000, started_at=0.0)
    raw_tcp.judge(refused, sink_process.SinkResult(), "raw TCP sender to 127.0.0.1:1: refused")
    assert not refused.valid and refused.invalid_reason == "raw TCP sender to 127.0.0.1:1: refused"


def test_raw_tcp_sink_without_a_sender_stops_promptly() -> None:
    sink = sink_process.TcpSink(timeout_s=30).start()  # a process waiting in accept()
    assert sink.process is not None and sink.process.poll() is None
    start = time.monotonic()
    sink.close()
    assert time.monotonic() - start < 5
    assert sink.process.poll() is not None


def test_raw_tcp_sink_stops_by_itself_when_its_parent_goes() -> None:
    """After a kill -9 of sshbench the sink's stdin pipe closes: it must not linger in accept()."""
    sink = sink_process.TcpSink(timeout_s=60).start()
    assert sink.process is not None and sink.process.stdin is not None
    try:
        sink.process.stdin.close()
        result = sink.wait()
        assert result.error == "parent went away"
        sink.process.wait(timeout=5)
    finally:
        sink.close()


def test_raw_tcp_sender_failure_is_an_invalid_trial_not_a_hang(tmp_path: Path) -> None:
    start = time.monotonic()
    trial = raw_tcp.run_raw_tcp_trial(
        payload=tmp_path / "missing", payload_bytes=MIB, repetition=0, warmup=False, timeout_s=30
    )
    assert time.monotonic() - start < 5
    assert not trial.valid and "raw TCP sender" in (trial.invalid_reason or "")


def test_raw_tcp_interrupt_before_connecting_does_not_wait_for_the_sink(
    payload: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C/SIGTERM raise in the sending thread; the sink, still in accept(), must not hold the exit."""

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(raw_tcp, "send_file", interrupted)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        raw_tcp.run_raw_tcp_trial(payload=payload, payload_bytes=MIB, repetition=0, warmup=False, timeout_s=60)
    assert time.monotonic() - start < 5


def test_raw_tcp_is_summarised_like_a_combination() -> None:
    from sshbench.baselines.analysis import raw_tcp_summary
    from sshbench.results import Trial

    trials = []
    for rep, seconds in enumerate((0.010, 0.020, 0.030)):
        t = Trial(
            combination=raw_tcp.RAW_TCP,
            kind="raw-tcp",
            repetition=rep,
            warmup=False,
            payload_bytes=10 * MIB,
            started_at=0.0,
            valid=True,
            data_s=seconds,
        )
        trials.append(t)
    summary = raw_tcp_summary(trials)
    assert summary is not None and summary.valid_trials == 3
    assert summary.median_mib_s == pytest.approx(500.0)


# --- crypto ceiling ---------------------------------------------------------------------------------


def _ssh_q(kind: str) -> list[str]:
    done = subprocess.run(["ssh", "-Q", kind], capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.split()


def test_mapping_covers_every_cipher_of_ssh_q() -> None:
    for name in _ssh_q("cipher"):
        assert name in crypto_ceiling.CIPHER_PRIMITIVES, f"{name} missing from the cipher mapping"
        assert crypto_ceiling.CIPHER_PRIMITIVES[name] is not None, name
        assert crypto_ceiling.unmapped_reason("cipher", name) is None


def test_mapping_covers_every_mac_of_ssh_q_with_umac_explicit() -> None:
    names = _ssh_q("mac")
    for name in names:
        assert name in crypto_ceiling.MAC_PRIMITIVES, f"{name} missing from the MAC mapping"
        if name.startswith("umac-"):
            assert crypto_ceiling.MAC_PRIMITIVES[name] is None
            assert crypto_ceiling.unmapped_reason("mac", name) == crypto_ceiling.UMAC_REASON
        else:
            assert crypto_ceiling.MAC_PRIMITIVES[name] is not None, name
    assert crypto_ceiling.unmapped_reason("mac", "hmac-future@example.org") is not None


def test_documented_examples() -> None:
    gcm = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256")
    assert crypto_ceiling.primitives_for(gcm) == (crypto_ceiling.AES_128_GCM, None)
    chacha = Combination("chacha20-poly1305@openssh.com", IMPLICIT_MAC, "curve25519-sha256")
    assert crypto_ceiling.primitives_for(chacha)[0].name == "ChaCha20-Poly1305"
    ctr = Combination("aes256-ctr", "hmac-sha2-256-etm@openssh.com", "curve25519-sha256")
    assert [p.name for p in crypto_ceiling.primitives_for(ctr)] == ["AES-256-CTR", "HMAC-SHA256"]


def test_combined_ceiling_adds_times_per_byte() -> None:
    assert crypto_ceiling.combined_ceiling(1000.0, 1000.0) == pytest.approx(500.0)
    assert crypto_ceiling.combined_ceiling(1000.0, None) == 1000.0
    assert crypto_ceiling.combined_ceiling(None, 1000.0) is None
    umac = Combination("aes128-ctr", "umac-64-etm@openssh.com", "k")
    ceiling, note = crypto_ceiling.ceiling_for(umac, {"AES-128-CTR": {"mib_s": 800.0}})
    assert ceiling == 800.0 and note is not None and "umac" in note


def test_parse_openssl_speed_mr() -> None:
    recorded = (DATA / "openssl-speed-mr-aes-128-gcm.txt").read_text()
    assert crypto_ceiling.parse_speed_mr(recorded) == pytest.approx(4298211328.0)
    assert crypto_ceiling.parse_speed_mr("garbage") is None


def test_ceiling_is_measured_once_then_cached(tmp_path: Path) -> None:
    cache = crypto_ceiling.CeilingCache(tmp_path / "cache.json")
    first = crypto_ceiling.ceilings([crypto_ceiling.AES_128_CTR], cache=cache)
    entry = first["AES-128-CTR"]
    assert entry["mib_s"] and entry["mib_s"] > 10 and entry["cached"] is False
    start = time.monotonic()
    second = crypto_ceiling.ceilings([crypto_ceiling.AES_128_CTR], cache=cache)
    assert second["AES-128-CTR"]["cached"] is True
    assert second["AES-128-CTR"]["mib_s"] == entry["mib_s"]
    assert time.monotonic() - start < 0.5  # no openssl speed run the second time
    # A different capability mask is a different machine for the cache.
    assert crypto_ceiling.machine_key("v", None) != crypto_ceiling.machine_key("v", "~0x200000200000000")


def test_cache_dir_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSHBENCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert crypto_ceiling.cache_dir() == tmp_path / "sshbench"


# --- disk -----------------------------------------------------------------------------------------


def test_filesystem_of_longest_mount_prefix() -> None:
    mounts = "/dev/vda / ext4 rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n/dev/vdb /data xfs rw 0 0\n"
    assert disk.filesystem_of(Path("/dev/shm/x"), mounts) == "tmpfs"
    assert disk.filesystem_of(Path("/data/a/b"), mounts) == "xfs"
    assert disk.filesystem_of(Path("/database"), mounts) == "ext4"


def test_disk_read_and_write_measure_and_leave_nothing(payload: Path, tmp_path: Path) -> None:
    assert disk.measure_read(payload) > 0
    assert disk.measure_read(payload, cold=True) > 0
    before = set(os.listdir(tmp_path))
    assert disk.measure_write(tmp_path, size=4 * MIB) > 0
    assert set(os.listdir(tmp_path)) == before


def test_disk_baseline_on_memory_is_a_note(tmp_path: Path) -> None:
    if not os.path.isdir("/dev/shm") or disk.filesystem_of(Path("/dev/shm")) != "tmpfs":
        pytest.skip("no tmpfs /dev/shm here")
    import tempfile

    with tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="sshbench-test-") as f:
        f.write(b"x" * 1024)
        f.flush()
        base = disk.source_baseline(Path(f.name))
    assert base.on_disk is False and base.read_mib_s is None and "memory" in (base.note or "")


# --- in a real run ----------------------------------------------------------------------------------


def test_run_reports_baselines_and_verdicts(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-ctr",
        "--macs",
        "hmac-sha2-256-etm@openssh.com",
        "--size",
        "4M",
        "--runs",
        "2",
        "--warmup",
        "1",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    raw = [t for t in doc["trials"] if t["kind"] == "raw-tcp"]
    assert len(raw) == 3  # one per pass: 1 warm-up + 2 runs
    assert all(t["valid"] and t["received_bytes_at_sink"] == 4 * MIB for t in raw)
    baselines = doc["baselines"]
    assert baselines["raw_tcp"]["valid_trials"] == 2 and baselines["raw_tcp"]["median_mib_s"] > 0
    # ChaCha20-Poly1305: the client's default, measured alongside for the conclusion
    assert set(baselines["crypto"]) == {"AES-128-CTR", "HMAC-SHA256", "ChaCha20-Poly1305"}
    assert all(e["mib_s"] > 0 for e in baselines["crypto"].values())
    assert baselines["disk"] is not None
    summary = next(s for s in doc["summaries"] if s["cipher"] == "aes128-ctr")  # and the default, chacha20
    assert summary["vs_raw_tcp"] > 0 and 0 < summary["vs_crypto_ceiling"] < 1.5
    assert summary["bound_by"] in bottleneck.VERDICTS and summary["bound_by_evidence"]
    assert "median_mib_s" in summary and "relative_to_fastest" in summary  # existing keys kept
    assert "bound by" in done.stdout and "Baselines" in done.stdout  # `x raw TCP`: with --wide
    # the verdict's explanation: the conclusion's "limited by" line (one sentence per verdict: with --wide)
    assert "limited by:" in done.stdout and f"bound by {summary['bound_by']}:" not in done.stdout


def test_no_baselines_runs_no_control(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "2M",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--no-baselines",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert not [t for t in doc["trials"] if t["kind"] == "raw-tcp"]
    assert doc["baselines"]["enabled"] is False and doc["baselines"]["raw_tcp"] is None
    assert doc["summaries"][0]["vs_raw_tcp"] is None


def test_disk_sink_write_speed_is_measured_when_a_disk_sink_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk_dir = tmp_path / "disk"
    disk_dir.mkdir()
    monkeypatch.setenv("SSHBENCH_DISK_DIR", str(disk_dir))
    out = tmp_path / "run.json"
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "2M",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--sink",
        "disk",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text())["baselines"]["disk"]
    assert found["write_mib_s"] > 0 and found["sink_dir"] == str(disk_dir)
    assert list(disk_dir.iterdir()) == []  # the measurement's file is gone
    assert "disk sink" in done.stdout


def test_raw_tcp_runs_for_private_servers_and_remotes_with_python3() -> None:
    from sshbench.capabilities import RawTcpMode
    from sshbench.targets.private_openssh import PrivateOpenSSH
    from sshbench.targets.remote import RemoteHost

    private = PrivateOpenSSH.__new__(PrivateOpenSSH)
    assert raw_tcp.supported(private) and private.raw_tcp().mode is RawTcpMode.LOCAL
    remote = RemoteHost("nas")  # nothing contacted before start()
    assert raw_tcp.supported(remote) and remote.raw_tcp().both_directions  # its sink runs on the remote
    remote.remote_raw_tcp = False  # start() found no python3 there
    assert not raw_tcp.supported(remote)
    assert remote.raw_tcp().skip_reason == raw_tcp.REMOTE_SKIP_NOTE  # no reason of its own: the general note
    remote.raw_tcp_skip_reason = "raw TCP control skipped: nas has no python3 to run its sink, nor nc and dd"
    assert remote.raw_tcp().skip_reason == remote.raw_tcp_skip_reason


def test_remote_sink_command_reads_the_script_then_keeps_stdin() -> None:
    command = raw_tcp_remote.remote_sink_command(1234, 30.0)
    assert '"$3" 0' in command and "1234 30" in command and "$SSH_CONNECTION" in command
    assert "NOPYTHON" in command


def test_without_python3_the_remote_end_is_nc_and_dd() -> None:
    # Each nc's way to listen on the ssh address, in turn; dd counts; the end of stdin stops it all.
    up = raw_tcp_remote.remote_sink_command(1234, 30.0, nc_port=50000)
    fallback = up.split("; fi; ", 1)[1]
    for listen in ('nc -l -s "$3" -p 50000', 'nc -l "$3" 50000', "nc -l -p 50000"):
        assert listen in fallback
    assert 'echo "PORT 50000 nc"' in fallback and "dd of=/dev/null" in fallback and "kill 0" in fallback
    down = raw_tcp_remote.remote_sink_command(1234, 30.0, port=2222, send_path="/tmp/x y")
    assert "send '/tmp/x y'" in down and "dd if='/tmp/x y'" in down and "-p 2222" in down  # --raw-tcp-port
    # dd's summary, whichever dd: the count of bytes
    assert raw_tcp_remote.dd_bytes("2+0 records in\n2+0 records out\n4194304 bytes (4.2 MB) copied, 0.1 s\n") == 4194304
    assert raw_tcp_remote.dd_bytes("4194304 bytes transferred in 0.012 secs (349525333 bytes/sec)\n") == 4194304
    assert raw_tcp_remote.dd_bytes("nc: Address already in use\n") is None


def test_sink_lines_that_arrive_together_are_each_read(tmp_path: Path) -> None:
    # ADDR and PORT in one write, then silence (a remote nc): the second line must not wait for more.
    sink = sink_process.TcpSink(5.0)
    script = "import sys, time; sys.stdout.write('ADDR a\\nPORT 1 nc\\n'); sys.stdout.flush(); time.sleep(3)"
    sink.process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        start = time.monotonic()
        assert sink._line(5.0) == "ADDR a\n" and sink._line(5.0) == "PORT 1 nc\n"
        assert time.monotonic() - start < 2
        assert sink._line(0.05) == ""  # nothing more yet: times out
    finally:
        sink.close()


def test_server_ceiling_script_and_its_output_are_read_per_primitive() -> None:
    from sshbench.baselines import crypto_server

    recorded = (DATA / "openssl-speed-mr-aes-128-gcm.txt").read_text()
    primitives = [crypto_ceiling.AES_128_GCM, crypto_ceiling.HMAC_SHA256]
    script = crypto_server.speed_script(primitives)
    assert script.count("openssl speed -mr") == 2 and "-hmac sha256" in script
    output = f"{crypto_server.MARK}AES-128-GCM\n{recorded}\n{crypto_server.MARK}HMAC-SHA256\n"
    found = crypto_server.parse_sections(output)
    assert found["HMAC-SHA256"] is None  # no result line: not measured, never a made-up figure
    rate = crypto_ceiling.parse_speed_mr(recorded)
    assert rate is not None and found["AES-128-GCM"] == pytest.approx(rate / MIB)


def test_server_ceiling_is_cached_under_the_remote_machine_and_openssl(tmp_path: Path) -> None:
    from sshbench.baselines import crypto_server
    from sshbench.targets.remote_facts import parse_facts

    facts = parse_facts(
        "@@machine\nx86_64\n@@machine_id\nabc\n@@cpu\nmodel name : Test CPU\nflags : aes\n"
        "@@openssl\nOpenSSL 3.0.19\n@@cores\n4\n@@python3\n/usr/bin/python3\n@@end\n"
    )
    assert facts.cores == 4 and facts.python3 == "/usr/bin/python3" and facts.to_json()["cpu_model"] == "Test CPU"
    calls: list[str] = []
    recorded = (DATA / "openssl-speed-mr-aes-128-gcm.txt").read_text()

    def run_remote(command: str, stdin: str | None, timeout: float) -> tuple[int, str]:
        calls.append(command)
        return 0, f"{crypto_server.MARK}AES-128-GCM\n{recorded}"

    cache = crypto_ceiling.CeilingCache(tmp_path / "c.json")
    first = crypto_server.server_ceilings([crypto_ceiling.AES_128_GCM], facts, run_remote, cache)
    again = crypto_server.server_ceilings([crypto_ceiling.AES_128_GCM], facts, run_remote, cache)
    assert len(calls) == 1 and first["AES-128-GCM"]["cached"] is False and again["AES-128-GCM"]["cached"] is True
    facts.openssl_version = "OpenSSL 3.5.0"  # another OpenSSL there: measured again
    crypto_server.server_ceilings([crypto_ceiling.AES_128_GCM], facts, run_remote, cache)
    assert len(calls) == 2


def test_blocked_note_names_host_port_and_the_option() -> None:
    trial = Trial(
        combination=raw_tcp.RAW_TCP, kind=TrialKind.RAW_TCP, repetition=0, warmup=False, payload_bytes=1, started_at=0.0
    )
    trial.invalid_reason = f"{sink_process.CONNECT_FAILED}10.254.0.2:40999: timed out"
    note = raw_tcp_remote.blocked_note(trial, {"remote_ssh": ["ssh"], "host": "nas", "port": 40999})
    assert note is not None and "nas (10.254.0.2) port 40999" in note and "--raw-tcp-port N" in note
    assert raw_tcp_remote.blocked_note(trial, None) is None  # a local control: no such note
