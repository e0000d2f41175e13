"""Real transfers with every tool, both directions, file sinks, payload kinds, compression and
integrity checks, against the private sshd (and a download from a 'remote' alias)."""

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import run_cli, sshbench_temp_dirs
from sshbench.host.cleanup import Cleanup
from sshbench.measure.trial import run_trial
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.tools.base import TrialFiles
from sshbench.tools.pipe import PipeTool
from sshbench.units import MIB

needs_rsync = pytest.mark.skipif(shutil.which("rsync") is None, reason="rsync is not installed (apt-get install rsync)")

SMALL = ("--size", "2M", "--runs", "1", "--warmup", "0", "--no-baselines", "--ciphers", "aes128-gcm@openssh.com")


def _doc(tmp_path, *args):
    out = tmp_path / "r.json"
    done = run_cli("run", *SMALL, *args, "--json", str(out))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done


@needs_rsync
def test_every_tool_both_directions_to_tmpfs_verified(tmp_path):
    before = sshbench_temp_dirs()
    doc, _ = _doc(tmp_path, "--tool", "pipe,scp,scp-legacy,sftp,rsync", "--direction", "both", "--sink", "tmpfs")
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert {(t["tool"], t["direction"]) for t in transfers} == {
        (tool, d) for tool in ("pipe", "scp", "scp-legacy", "sftp", "rsync") for d in ("up", "down")
    }
    for t in transfers:
        assert t["valid"], (t["tool"], t["direction"], t["invalid_reason"])
        assert t["verified"] is True, (t["tool"], t["direction"])
        assert t["negotiated"]["cipher"] == "aes128-gcm@openssh.com", t["tool"]
        assert t["received_bytes_at_sink"] == 2 * MIB
        wire = t["sent_bytes"] if t["direction"] == "up" else t["received_bytes"]
        assert wire >= 2 * MIB, t["tool"]
        if t["tool"] == "pipe":
            assert t["data_clock"] == "server-reader"
        elif t["data_clock"] is not None:
            assert t["data_clock"] == "wall-minus-handshake"
    # every connection shape has its own handshake figure
    shapes = {(h["tool"], h["direction"]) for h in doc["handshakes"]}
    assert len(shapes) == 10
    assert not sshbench_temp_dirs() - before


@needs_rsync
def test_null_sink_counts_bytes_and_rsync_gets_tmpfs(tmp_path):
    doc, done = _doc(tmp_path, "--tool", "pipe,scp,rsync", "--direction", "up")
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert all(t["valid"] for t in transfers), [t["invalid_reason"] for t in transfers]
    assert {t["sink"] for t in transfers if t["tool"] == "rsync"} == {"tmpfs"}
    assert {t["sink"] for t in transfers if t["tool"] != "rsync"} == {"null"}
    assert "rsync cannot write to /dev/null" in done.stderr
    assert all(t["verified"] is None for t in transfers if t["sink"] == "null")


def test_compression_on_compressible_text_is_negotiated_and_shrinks_the_wire(tmp_path):
    doc, _ = _doc(tmp_path, "--payload", "text", "--compression", "both")
    assert doc["environment"]["payload_zlib_ratio"]["text"] < 0.5
    by_comp = {s["compression"]: s for s in doc["summaries"]}
    assert set(by_comp) == {"none", "zlib@openssh.com"}
    assert by_comp["zlib@openssh.com"]["wire_ratio"] < 0.6 < by_comp["none"]["wire_ratio"]
    for t in doc["trials"]:
        if t["kind"] == "transfer":
            assert t["negotiated"]["compression"] == t["compression"]


def test_zero_payload_with_compression_is_flagged(tmp_path):
    doc, done = _doc(tmp_path, "--payload", "zero", "--compression", "on")
    assert "flatter compression" in done.stderr
    assert doc["environment"]["payload_zlib_ratio"]["zero"] < 0.01


def test_users_file_is_sent_and_never_modified(tmp_path):
    user_file = tmp_path / "mydata.bin"
    user_file.write_bytes(os.urandom(3 * MIB + 5))
    digest, mtime = hashlib.sha256(user_file.read_bytes()).hexdigest(), user_file.stat().st_mtime_ns
    out = tmp_path / "r.json"
    done = run_cli(
        "run",
        "--file",
        str(user_file),
        "--runs",
        "2",
        "--warmup",
        "0",
        "--no-baselines",
        "--ciphers",
        "aes128-ctr",
        "--sink",
        "tmpfs",
        "--direction",
        "both",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert len(transfers) == 4 and all(t["valid"] and t["verified"] for t in transfers)
    assert {t["payload_bytes"] for t in transfers} == {3 * MIB + 5}
    assert {t["payload"] for t in transfers} == {"file"}
    assert hashlib.sha256(user_file.read_bytes()).hexdigest() == digest
    assert user_file.stat().st_mtime_ns == mtime and user_file.exists()


def _upload(target, tool, combo, files: TrialFiles, size: int, workdir: Path):
    """One measured upload trial of `size` bytes through `tool`, with the files TrialPaths gave it."""
    return run_trial(
        ssh="ssh",
        target=target,
        tool=tool,
        combo=combo,
        kind="transfer",
        repetition=0,
        warmup=False,
        payload=Path(files.local_source),
        payload_bytes=size,
        workdir=workdir,
        timeout_s=60,
        files=files,
    )


class _CorruptingPipe(PipeTool):
    """A server side that flips the bits of one byte it stored, size unchanged: only the checksum sees it.
    (Writing a fixed "X" there left the file unchanged whenever the random payload had an X at that offset:
    one run in 256 passed the corruption, as the suite did once.)"""

    def remote_command(self, direction="up", files=None):
        command = super().remote_command(direction, files)
        flip = "import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); os.pwrite(fd, bytes([os.pread(fd, 1, 100)[0] ^ 255]), 100)"
        return command.replace("2>&1; rc=$?", f'2>&1; rc=$?; python3 -c "{flip}" {files.remote_sink}')


def test_corruption_is_caught_by_verify(tmp_path):
    from sshbench.measure.trial_files import TrialPaths
    from sshbench.settings import RunSettings

    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        combo = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256", sink="tmpfs")
        settings = RunSettings(sink="tmpfs", size=2 * MIB)
        paths = TrialPaths(target, cleanup, cleanup.make_temp_dir(prefer_shm=True), [combo], settings)
        files = paths.for_trial(combo, "transfer", 2 * MIB)
        trial = _upload(target, _CorruptingPipe(), combo, files, 2 * MIB, tmp_path)
        assert trial.valid, trial.invalid_reason  # the size and the negotiation are fine
        paths.check_received(trial, files)
        assert not trial.valid and trial.verified is False
        assert "SHA-256" in trial.invalid_reason
        assert not Path(files.remote_sink).exists()  # the sink file is removed after the check
    finally:
        cleanup.close()


@pytest.mark.parametrize(
    "args,needle",
    [
        (("--tool", "ftp"), "unknown transfer tool 'ftp'"),
        (("--sink", "tape"), "unknown sink 'tape'"),
        (("--payload", "lorem"), "unknown payload 'lorem'"),
        (("--file", "/nonexistent/file"), "not a readable file"),
        (("--direction", "sideways"), "invalid choice"),
    ],
)
def test_bad_transfer_options(args, needle):
    done = run_cli("run", "--size", "1M", *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert needle in done.stderr


def test_download_from_a_remote_host_copies_the_source_and_cleans_up(tmp_path):
    """A private sshd reached as a 'remote' ssh_config alias: the download source must be copied
    to the server's scratch dir first, and that dir removed afterwards."""
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        d = target.dir
        config = tmp_path / "ssh_config"
        config.write_text(
            f"Host benchhost\n  HostName 127.0.0.1\n  Port {target.port}\n  User {target.user}\n"
            f"  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n"
            "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"
        )
        shm_before = {p for p in os.listdir("/dev/shm") if p.startswith("sshbench-")}
        out = tmp_path / "r.json"
        done = run_cli(
            "run",
            "benchhost",
            "--ssh-config",
            str(config),
            *SMALL,
            "--tool",
            "pipe,sftp",
            "--direction",
            "down",
            "--sink",
            "tmpfs",
            "--json",
            str(out),
        )
        assert done.returncode == 0, done.stderr
        transfers = [t for t in json.loads(out.read_text())["trials"] if t["kind"] == "transfer"]
        assert transfers and all(t["valid"] and t["verified"] for t in transfers)
        leftovers = {p for p in os.listdir("/dev/shm") if p.startswith("sshbench-")} - shm_before
        # dirs made by other processes meanwhile are theirs; ours held the copied source
        assert not [p for p in leftovers if os.path.exists(f"/dev/shm/{p}/source-random-{2 * MIB}")]
    finally:
        cleanup.close()


@pytest.mark.parametrize("tool_name", ["pipe", "scp"])
def test_a_full_sink_invalidates_the_trial_and_names_the_sink(tmp_path, tool_name):
    """/dev/full answers every write with ENOSPC: a full disk at the sink, for real."""
    from sshbench.tools import get_tool

    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        payload = tmp_path / "payload"
        payload.write_bytes(os.urandom(2 * MIB))
        files = TrialFiles(
            local_source=str(payload), remote_source=None, remote_sink="/dev/full", local_sink="/dev/null"
        )
        combo = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256", tool=tool_name, sink="disk")
        trial = run_trial(
            ssh="ssh",
            target=target,
            tool=get_tool(tool_name),
            combo=combo,
            kind="transfer",
            repetition=0,
            warmup=False,
            payload=payload,
            payload_bytes=2 * MIB,
            workdir=tmp_path,
            timeout_s=60,
            files=files,
        )
        assert not trial.valid
        assert "/dev/full" in trial.invalid_reason  # the message names the sink
        if tool_name == "pipe":  # (SFTP-based scp only says "failed to upload": the protocol has no ENOSPC)
            assert "No space left on device" in trial.invalid_reason
        assert target.alive()  # the run can go on
    finally:
        cleanup.close()


def test_seed_preset_fills_in_what_the_user_left_out(tmp_path):
    out = tmp_path / "r.json"
    done = run_cli(
        "run",
        "--preset",
        "seed000",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "2M",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--no-baselines",
        "--sink",
        "null",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert "preset seed000" in done.stderr
    combos = {(s["tool"], s["payload"], s["compression"], s["sink"]) for s in json.loads(out.read_text())["summaries"]}
    # the preset's tool, payload and compression; the user's own --sink wins over the preset's tmpfs
    assert combos == {("scp", "text", "none", "null"), ("scp", "text", "zlib@openssh.com", "null")}
    bad = run_cli("run", "--preset", "seed999")
    assert bad.returncode == 2 and "unknown preset 'seed999'" in bad.stderr


def test_rclone_gets_the_host_key_under_the_address_it_connects_to(tmp_path):
    """Go's SSH client has no HostKeyAlias (the emulated-link target's one known_hosts entry for every path):
    rclone's own file carries the alias's key under [address]:port, so the key is still checked."""
    from sshbench.tools.multistream import rclone_known_hosts

    known = tmp_path / "known_hosts"
    known.write_text("sshbench-netns-sshd ssh-ed25519 AAAAkey\nother ssh-ed25519 AAAAother\n")
    options = ["-o", f"UserKnownHostsFile={known}", "-o", "Port=20000", "-o", "HostKeyAlias=sshbench-netns-sshd"]
    path = rclone_known_hosts(options, "127.0.0.1", tmp_path)
    assert Path(path).read_text() == "[127.0.0.1]:20000 ssh-ed25519 AAAAkey\n"
    # no alias (the private sshd on loopback): its own known_hosts as it is
    assert rclone_known_hosts(options[:4], "127.0.0.1", tmp_path) == str(known)


def test_a_pipe_upload_sends_the_tail_of_a_bigger_payload_file_and_verifies_it(tmp_path):
    """A size smaller than a payload already written is read from an offset of that file (TrialPaths.tail): no
    file of its own, exactly its bytes arrive, and their SHA-256 is that range's."""
    from sshbench.measure.trial_files import TrialPaths
    from sshbench.settings import RunSettings

    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        combo = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256", sink="tmpfs")
        workdir = cleanup.make_temp_dir(prefer_shm=True)
        paths = TrialPaths(target, cleanup, workdir, [combo], RunSettings(sink="tmpfs", verify=True))
        bigger = paths.for_trial(combo, "transfer", 3 * MIB, tail_ok=True)
        files = paths.for_trial(combo, "transfer", 2 * MIB, tail_ok=True)
        assert (files.local_source, files.local_source_offset) == (bigger.local_source, 1 * MIB)
        assert not [p for p in workdir.iterdir() if p.name.startswith("payload-") and p.stat().st_size == 2 * MIB]
        trial = _upload(target, PipeTool(), combo, files, 2 * MIB, tmp_path)
        assert trial.valid, trial.invalid_reason
        paths.check_received(trial, files)
        assert trial.valid, trial.invalid_reason  # the whole 3 MiB file would fail the size check
        assert trial.verified is True and trial.received_bytes_at_sink == 2 * MIB
    finally:
        cleanup.close()
