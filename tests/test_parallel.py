"""`run -P N`: N streams of a combination started together (sshbench.measure.parallel), merged into one trial
(sshbench.measure.streams). Real OpenSSH on loopback for the run, the failing stream and Ctrl-C; the figures
and the refusals without a server."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from conftest import communicate_or_dump, pid_alive, run_cli, sshbench_temp_dirs, start_cli, wait_for_line, wait_until
from sshbench.axis_values import parse_parallel
from sshbench.errors import UsageError
from sshbench.host.cleanup import Cleanup
from sshbench.measure.plan import ScheduledTrial
from sshbench.measure.streams import common_data_phase, merge, summarise_streams
from sshbench.results import IMPLICIT_MAC, Combination, Trial
from sshbench.settings import RunSettings
from sshbench.store.record_json import trial_from_json
from sshbench.targets import PrivateOpenSSH
from sshbench.tools.pipe import PipeTool
from sshbench.units import MIB

GCM = "aes128-gcm@openssh.com"
# OpenSSH's default cipher: a run of it needs no default-combination reference beside it (half the trials)
CHACHA = "chacha20-poly1305@openssh.com"


def test_two_streams_and_one_in_one_run_sum_to_the_payload(tmp_path):
    out = tmp_path / "r.json"
    done = run_cli(
        "run",
        "--ciphers",
        CHACHA,
        "-P",
        "1,2",
        "--size",
        "4M",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--sink",
        "tmpfs",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert "each moving 1/N of the payload" in done.stderr
    doc = json.loads(out.read_text())
    # (were the client's default another cipher, it would be measured too, as a reference: left aside here)
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer" and t["cipher"] == CHACHA]
    assert sorted(t["streams"] for t in transfers) == [1, 2]
    parallel = next(t for t in transfers if t["streams"] == 2)
    assert parallel["valid"], parallel["invalid_reason"]
    assert parallel["payload_bytes"] == 4 * MIB and parallel["verified"] is True
    streams = parallel["per_stream"]
    assert [s["stream"] for s in streams] == [0, 1] and all(s["valid"] and s["verified"] for s in streams)
    assert sum(s["payload_bytes"] for s in streams) == parallel["payload_bytes"]
    assert sum(s["received_bytes_at_sink"] for s in streams) == parallel["received_bytes_at_sink"] == 4 * MIB
    assert parallel["data_clock"] == "server-reader"
    # The start barrier: both streams' server sides reached it, were released together, and their data phases
    # then began together (server clock) whatever their connections' set-up took (at_gate_s).
    released = {s["released_s"] for s in streams}
    assert len(released) == 1 and released.pop() >= max(s["at_gate_s"] for s in streams) >= 0
    assert abs(streams[0]["data_started_s"] - streams[1]["data_started_s"]) < 0.2
    assert 0 < parallel["machine_busy_cores"] <= os.cpu_count()
    # the common data phase covers every stream's own one
    assert parallel["data_s"] >= max(s["data_s"] for s in streams) * 0.999
    assert parallel["client_cpu_s"] == pytest.approx(sum(s["client_cpu_s"] for s in streams))
    single = next(t for t in transfers if t["streams"] == 1)
    assert single["per_stream"] is None
    by_streams = {s["streams"]: s for s in doc["summaries"] if s["cipher"] == CHACHA}
    assert by_streams[2]["per_stream"]["streams"] == 2 and by_streams[1]["per_stream"] is None
    assert {h["streams"] for h in doc["handshakes"]} == {1, 2}
    # the raw TCP control ran with 2 streams too, and the 2-stream row is compared with it
    raw = doc["baselines"]["raw_tcp_streams"]
    assert [(r["streams"], r["valid_trials"]) for r in raw] == [(2, 1)]
    assert "-P 2" in done.stdout


class _SecondStreamFails(PipeTool):
    """The server side of stream 2 exits with an error: a real failure in a real connection."""

    def remote_command(self, direction="up", files=None):
        if files is not None and files.remote_sink.endswith("-stream2"):
            return "echo 'refusing this stream' >&2; exit 3"
        return super().remote_command(direction, files)


def test_a_failing_stream_invalidates_the_trial_and_is_named(tmp_path):
    from sshbench.measure.parallel import run_parallel_trial
    from sshbench.measure.trial_files import TrialPaths

    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        combo = Combination(GCM, IMPLICIT_MAC, "curve25519-sha256", sink="tmpfs", streams=2)
        paths = TrialPaths(target, cleanup, cleanup.make_temp_dir(prefer_shm=True), [combo], RunSettings(sink="tmpfs"))
        trial = run_parallel_trial(
            ssh="ssh",
            target=target,
            tool=_SecondStreamFails(),
            item=ScheduledTrial(combo, "transfer", 0, False),
            payload_bytes=2 * MIB,
            paths=paths,
            workdir=tmp_path,
            timeout_s=60,
        )
        assert not trial.valid
        assert trial.invalid_reason.startswith("stream 2 of 2: ssh exited with status 3"), trial.invalid_reason
        first, second = trial.per_stream
        assert first["valid"] and not second["valid"] and second["exit_status"] == 3
        assert not list(Path(paths.workdir).glob("sink-*")), "every stream's sink file is removed"
    finally:
        cleanup.close()


@pytest.mark.parametrize("value", ["0", "-1", "1000"])
def test_bad_stream_counts_are_refused_with_one_line(value):
    done = run_cli("run", "-P", value, "--size", "1M")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "-P/--parallel" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_stream_limits_follow_the_target():
    assert parse_parallel("1,2,4,2", 64) == [1, 2, 4]
    for bad in ("two", "2,0", "1.5"):
        with pytest.raises(UsageError, match="-P/--parallel"):
            parse_parallel(bad, 64)
    with pytest.raises(UsageError, match="from 1 to 10"):
        RunSettings(host="example.invalid", parallel="11").validate()
    with pytest.raises(UsageError, match="from 1 to 5"):
        RunSettings(server="openssh,dropbear", parallel="6").validate()
    RunSettings(parallel="8").validate()


def _stream(index: int, *, valid: bool = True, end: float, data_s: float, started: float = 100.0) -> Trial:
    combo = Combination(GCM, IMPLICIT_MAC, "curve25519-sha256", streams=2)
    t = Trial(combo, "transfer", 0, False, payload_bytes=MIB, started_at=started, exit_status=0 if valid else 1)
    t.valid, t.invalid_reason = valid, None if valid else "ssh exited with status 1: broken pipe"
    t.wall_s, t.data_s, t.data_clock, t.reader_ended_at = data_s + 0.3, data_s, "server-reader", end
    t.client_cpu_s, t.server_cpu_s, t.server_cpu_scope, t.received_bytes_at_sink = 0.2, 0.3, "data-phase", MIB
    return t


def test_merge_sums_streams_and_spans_first_start_to_last_end():
    a, b = _stream(0, end=1000.5, data_s=0.5), _stream(1, end=1001.0, data_s=0.8)
    parent = Trial(a.combination, "transfer", 0, False, payload_bytes=0, started_at=0.0)
    merged = merge(parent, [a, b])
    assert merged.valid and merged.payload_bytes == 2 * MIB and merged.received_bytes_at_sink == 2 * MIB
    assert merged.data_s == pytest.approx(1001.0 - 1000.0)  # a started at 1000.0, b ended at 1001.0
    assert merged.client_cpu_s == pytest.approx(0.4) and merged.server_cpu_s == pytest.approx(0.6)
    assert merged.per_stream[1]["data_started_s"] == pytest.approx(0.2)
    block = summarise_streams([merged])
    assert block["streams"] == 2 and block["median_imbalance"] == pytest.approx(0.6)  # 2 MiB/s vs 1.25
    assert block["median_client_cores"] == pytest.approx(0.4)
    # one stream without a server-side end time: no server clock (the client's decides)
    b.reader_ended_at = None
    assert common_data_phase([a, b]) == (None, None)


def test_merge_names_the_failing_stream():
    a, b, c = (_stream(i, valid=i != 1, end=1000.0 + i, data_s=0.5) for i in range(3))
    parent = Trial(a.combination, "transfer", 0, False, payload_bytes=0, started_at=0.0)
    merged = merge(parent, [a, b, c])
    assert not merged.valid and merged.invalid_reason == "stream 2 of 3: ssh exited with status 1: broken pipe"
    assert merged.exit_status == 1


def test_trials_stored_before_streams_read_as_one_stream():
    old = {
        "kind": "transfer",
        "cipher": GCM,
        "mac": IMPLICIT_MAC,
        "kex": "curve25519-sha256",
        "repetition": 0,
        "warmup": False,
        "payload_bytes": MIB,
        "started_at": 1.0,
        "valid": True,
    }
    trial = trial_from_json(old)
    assert trial.combination.streams == 1 and trial.per_stream is None
    again = trial_from_json(_stream(0, end=1.0, data_s=0.5).to_json() | {"per_stream": [{"stream": 0}]})
    assert again.combination.streams == 2 and again.per_stream == [{"stream": 0}]


def _processes_mentioning(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_ctrl_c_stops_every_stream(isolated_state):
    proc = start_cli(
        *("run", "--ciphers", GCM, "-P", "3", "--size", "16M", "--runs", "50", "--warmup", "0", "-v"),
        "--no-baselines",  # (nothing to interrupt there: the streams are)
    )
    try:
        wait_for_line(proc.stderr, "run 1:", also="transfer")
        proc.send_signal(signal.SIGINT)
        _, stderr = communicate_or_dump(proc)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    # every ssh client, sshd session and reader of this test's run named its private temp dirs
    wait_until(lambda: not _processes_mentioning(str(isolated_state)), what="every stream's processes to exit")
    assert not sshbench_temp_dirs()
    assert not [p for p in _processes_mentioning(os.environ["SSHBENCH_SHM_DIR"]) if pid_alive(p)]


def test_split_moves_one_file_in_ranges_both_ways_and_its_checksum_matches(tmp_path):
    out = tmp_path / "r.json"
    done = run_cli(
        *("run", "--ciphers", GCM, "--tool", "split", "-P", "2", "--size", "3M", "--direction", "both"),
        *("--runs", "1", "--warmup", "0", "--no-baselines", "--json", str(out)),
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert {t["direction"] for t in transfers} == {"up", "down"}
    for t in transfers:
        assert t["valid"] and t["verified"] is True, t["invalid_reason"]  # SHA-256 of the reassembled file
        assert t["sink"] == "tmpfs" and t["streams"] == 2 and t["per_stream"] is None
        wire = t["sent_bytes"] if t["direction"] == "up" else t["received_bytes"]
        assert wire >= 3 * MIB  # the two connections' own counts, summed


def test_the_start_gate_holds_every_stream_until_all_have_arrived(tmp_path):
    """The barrier's protocol with real processes (the pipe's own gate script under sh, no ssh): nobody passes
    before the release, a stream that ended without arriving is not waited for, a late one is not stuck."""
    import subprocess

    from sshbench.measure.start_gate import StartGate
    from sshbench.tools.remote_report import gate_script

    gate = StartGate(tmp_path / "gate", 3)

    def stream(index: int) -> subprocess.Popen[str]:
        files = gate.files(index)
        script = gate_script(files.arrive, files.go, files.stream) + "echo passed"
        return subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True)

    try:
        waiting = [stream(i) for i in range(2)]
        gate.ended(2)  # stream 3's client exited before reaching the barrier: not waited for
        assert gate.wait(60)  # (returns as soon as streams 1 and 2 are there)
        assert set(gate.arrived_at) == {0, 1} and all(p.poll() is None for p in waiting)
        gate.release()
        late = stream(2)  # a script that reaches the barrier after the release goes at once
        for proc in [*waiting, late]:
            assert proc.communicate(timeout=10)[0] == "passed\n" and proc.returncode == 0
    finally:
        gate.close()
    assert not (tmp_path / "gate").exists()
    gone = gate.files(0)
    after = subprocess.run(["sh", "-c", gate_script(gone.arrive, gone.go, 1) + "echo passed"], capture_output=True)
    assert after.returncode != 0 and b"passed" not in after.stdout  # the FIFOs are gone: it ends, never waits


def test_the_machines_busy_cores_come_from_proc_stat():
    from sshbench.host.environment import busy_cores, cpu_ticks

    # /proc/stat's first line: user nice system idle iowait irq softirq steal guest guest_nice
    before = cpu_ticks("cpu  100 0 50 800 10 5 5 30 0 0\ncpu0 50 0 25 400 5 2 3 15 0 0\n")
    after = cpu_ticks("cpu  250 0 100 850 10 5 15 70 0 0\n")
    assert before == (190, 1000) and after == (440, 1300)  # busy: user+nice+system+irq+softirq+steal
    assert busy_cores(before, after, 2) == pytest.approx(250 / 300 * 2)
    assert cpu_ticks("intr 1 2 3\n") is None and busy_cores(None, after, 2) is None
    assert busy_cores(after, after, 2) is None  # no time passed: no figure


def test_split_ranges_cover_the_file_in_whole_blocks():
    from sshbench.tools.split import ranges

    assert ranges(5 * MIB, 3) == [(0, 2), (2, 2), (4, 1)]
    assert ranges(4 * MIB + 1, 2) == [(0, 3), (3, 2)]
    assert ranges(0, 2) == [(0, 0), (0, 0)]  # a handshake trial still opens both connections


MULTI_TOOLS = [name for name in ("lftp", "rclone") if shutil.which(name)]


@pytest.mark.skipif(not MULTI_TOOLS, reason="neither lftp nor rclone is installed (apt-get install lftp rclone)")
def test_lftp_and_rclone_download_one_file_over_two_connections(tmp_path):
    out = tmp_path / "r.json"
    done = run_cli(
        *("run", "--ciphers", GCM, "--tool", ",".join(MULTI_TOOLS), "-P", "2", "--direction", "down"),
        *("--size", "3M", "--runs", "1", "--warmup", "0", "--no-baselines", "--json", str(out)),
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    transfers = {t["tool"]: t for t in doc["trials"] if t["kind"] == "transfer"}
    assert set(transfers) == set(MULTI_TOOLS)
    for t in transfers.values():
        assert t["valid"] and t["verified"] is True and t["streams"] == 2, t["invalid_reason"]
    if "lftp" in transfers:  # OpenSSH's ssh under lftp: pinned, and checked from its -v log
        assert transfers["lftp"]["negotiated"]["cipher"] == GCM
    if "rclone" in transfers:  # Go's SSH client: its own rows, never ranked with OpenSSH's
        rclone = transfers["rclone"]
        assert rclone["client"] == "rclone"
        assert rclone["cipher"] in ("unpinned", GCM)
        if rclone["cipher"] == "unpinned":
            assert "cannot be told which cipher" in done.stderr
