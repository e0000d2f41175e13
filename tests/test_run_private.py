"""End to end against a real private sshd on loopback."""

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli, sshbench_temp_dirs
from sshbench.host.cleanup import Cleanup
from sshbench.measure.runner import Runner
from sshbench.measure.spec import RunSpec
from sshbench.measure.trial import run_trial
from sshbench.model import summary
from sshbench.results import Combination
from sshbench.settings import RunSettings
from sshbench.targets import PrivateOpenSSH
from sshbench.tools.pipe import PipeTool
from sshbench.units import MIB

CIPHERS = "aes128-ctr,aes128-gcm@openssh.com"


def test_two_ciphers_give_valid_trials_with_negotiated_equal_requested(tmp_path):
    before = sshbench_temp_dirs()
    ssh_dir = Path.home() / ".ssh"
    ssh_dir_before = sorted(os.listdir(ssh_dir)) if ssh_dir.exists() else None
    out = tmp_path / "r.json"
    done = run_cli(
        "run",
        "--ciphers",
        CIPHERS,
        "--size",
        "2M",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--no-baselines",
        "--json",
        str(out),
    )  # --no-baselines: no raw TCP control, and no default combination added to the two
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Fastest here: ") and "aes128-gcm" in done.stdout
    doc = json.loads(out.read_text())
    assert set(doc) >= {"settings", "environment", "summaries", "trials"}
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert len(transfers) == 4
    for t in transfers:
        assert t["valid"], t["invalid_reason"]
        neg = t["negotiated"]
        # no --kex: the row's kex is the client's default, and its transfers connect with the quickest kex to set
        # up (plan.setup_kex), which is what they negotiated
        assert t["kex"] == doc["environment"]["client_default_algorithms"]["negotiated"]["kex"] != "curve25519-sha256"
        assert t["setup_kex"] == "curve25519-sha256"
        assert (neg["cipher"], neg["mac"], neg["kex"], neg["compression"]) == (
            t["cipher"],
            t["mac"],
            t["setup_kex"],
            t["compression"],
        )
        assert t["payload_bytes"] == 2 * MIB and t["received_bytes_at_sink"] == 2 * MIB
        assert t["data_clock"] == "server-reader" and 0 < t["data_s"] < t["wall_s"]
        assert t["mib_s"] > 0 and t["client_cpu_s"] > 0
        assert t["sent_bytes"] >= 2 * MIB
        # the kernel's TCP count at the server socket: SSH packets with their MAC tags, more than ssh's own
        # "Transferred" figure (which leaves the tags out), and only a few KiB of handshake above the payload
        assert t["sent_bytes"] < t["tcp_wire_bytes"] < 2 * MIB * 1.01
    # the server's CPU is really counted (the sshd session process decrypts 2 MiB per trial)
    assert all(t["server_cpu_s"] is not None for t in transfers)
    assert sum(t["server_cpu_s"] for t in transfers) > 0
    gcm = next(t for t in transfers if t["cipher"].startswith("aes128-gcm"))
    assert gcm["mac"] == "implicit"
    summaries = {s["cipher"]: s for s in doc["summaries"]}
    assert set(summaries) == {"aes128-ctr", "aes128-gcm@openssh.com"}
    for s in summaries.values():
        assert s["valid_trials"] == 2 and s["min_mib_s"] <= s["median_mib_s"] <= s["max_mib_s"]
        for key in ("cipher", "mac", "kex", "median_mib_s", "min_mib_s", "max_mib_s", "cv", "relative_to_fastest"):
            assert key in s
    assert min(s["relative_to_fastest"] for s in summaries.values()) == 1.0
    # the set-up figure is the row's own kex's; the transfers' clock subtracts a handshake of the kex they used
    handshakes = {h["kex"]: h for h in doc["handshakes"]}
    assert set(handshakes) == {transfers[0]["kex"], "curve25519-sha256"}
    assert all(h["median_ms"] > 0 and h["valid_trials"] == 2 for h in handshakes.values())
    assert all(t["negotiated"]["kex"] == t["kex"] for t in doc["trials"] if t["kind"] == "handshake")
    assert doc["environment"]["server_ssh_version"].startswith("OpenSSH")
    # nothing left behind, nothing of the user's touched
    assert not sshbench_temp_dirs() - before, "a temp dir was left behind"
    assert (sorted(os.listdir(ssh_dir)) if ssh_dir.exists() else None) == ssh_dir_before


def test_adaptive_size_probes_then_sizes_each_combination(tmp_path):
    out = tmp_path / "r.json"
    done = run_cli(
        "run", "--ciphers", "aes128-ctr", "--seconds", "0.1", "--max-size", "8M", "--runs", "1", "--no-baselines",
        "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    trials = [t for t in json.loads(out.read_text())["trials"] if t["kind"] == "transfer"]
    calibration = [t for t in trials if t["warmup"]]
    measured = [t for t in trials if not t["warmup"]]
    assert calibration and calibration[0]["payload_bytes"] == 8 * MIB  # the 16 MiB probe capped at --max-size
    assert len(measured) == 1 and measured[0]["payload_bytes"] <= 8 * MIB and measured[0]["valid"]


class _ForcedKex(PrivateOpenSSH):
    """A client configuration that overrides the requested kex, as a user's ssh_config could."""

    def client_options(self):
        return [*super().client_options(), "-o", "KexAlgorithms=curve25519-sha256"]


class _ShortReader(PipeTool):
    """A server side that stops reading after 1 MiB: the byte count must catch it."""

    def remote_command(self, direction="up", files=None):
        return super().remote_command(direction, files).replace("bs=1048576", "bs=1048576 count=1")


def _one_trial(target, tool, tmp_path, combo):
    payload = tmp_path / "payload"
    payload.write_bytes(os.urandom(2 * MIB))
    return run_trial(
        ssh="ssh",
        target=target,
        tool=tool,
        combo=combo,
        kind="transfer",
        repetition=0,
        warmup=False,
        payload=payload,
        payload_bytes=2 * MIB,
        workdir=tmp_path,
        timeout_s=60,
    )


def test_invalid_trials_are_caught(tmp_path):
    cleanup = Cleanup()
    try:
        target = _ForcedKex()
        target.start(cleanup)
        combo = Combination("aes128-ctr", "hmac-sha1", "sntrup761x25519-sha512")
        mismatch = _one_trial(target, PipeTool(), tmp_path, combo)
        assert not mismatch.valid
        assert mismatch.invalid_reason == "negotiated kex curve25519-sha256 but sntrup761x25519-sha512 was requested"
        short = _one_trial(
            target, _ShortReader(), tmp_path, Combination("aes128-ctr", "hmac-sha1", "curve25519-sha256")
        )
        assert not short.valid and short.received_bytes_at_sink != 2 * MIB
        assert short.mib_s is None or not short.valid
    finally:
        cleanup.close()
    assert not target.alive()


def test_runner_api_and_invalid_trials_never_counted(tmp_path):
    settings = RunSettings(ciphers="aes128-ctr", size=1 * MIB, runs=2, warmup=0, baselines=False)
    result = Runner(RunSpec.check(settings)).run()
    assert result.status == "complete" and result.exit_code == 0
    (only,) = summary.summaries(result)
    assert only.valid_trials == 2
    next(t for t in result.trials if t.kind == "transfer").valid = False  # an invalid trial drops out
    (only,) = summary.summaries(result)
    assert only.valid_trials == 1 and only.invalid_trials == 1


def test_algorithms_command_lists_both_ends(monkeypatch):
    """In a 100-column terminal's width: every name whole (it read "aes128-gcm@open…"), one line per algorithm,
    each verdict's reason once below the table."""
    monkeypatch.setenv("COLUMNS", "100")
    done = run_cli("algorithms")
    assert done.returncode == 0, done.stderr
    assert "chacha20-poly1305@openssh.com" in done.stdout and "AEAD" in done.stdout
    assert "strict kex" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("│ ")]
    assert all(line.split("│")[1].strip() in ("cipher", "mac", "kex") for line in rows), rows  # no wrapped rows
    assert "│ aes128-gcm@openssh.com " in done.stdout and "…" not in done.stdout
    assert "broken [1]" in done.stdout and "  [1] using broken & deprecated 3DES cipher" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()[:-8]) <= 100  # the table and its notes


def test_sessions_of_our_sshd_skip_the_users_bashrc_and_find_our_path(tmp_path):
    """sshd runs commands as `$SHELL -c CMD`; Debian's bash reads ~/.bashrc for it unless SHLVL says it is not a
    top-level shell. The user's real ~/.bashrc is not ours to touch, so HOME points the session elsewhere: one
    sshd with sshbench's SetEnv line, one with HOME alone (the control: that bash does read a .bashrc here)."""
    import pwd
    import subprocess

    from sshbench.openssh import sshd_options

    (tmp_path / ".bashrc").write_text(f"echo read >> {tmp_path}/bashrc-was-read\n")
    shell = pwd.getpwuid(os.getuid()).pw_shell
    cleanup = Cleanup()
    try:
        for label, set_env in (
            ("ours", f"{sshd_options.session_env(os.environ.get('PATH'))} HOME={tmp_path}"),
            ("control", f"HOME={tmp_path}"),
        ):
            target = PrivateOpenSSH(extra_config={"SetEnv": set_env})
            target.start(cleanup)
            argv = ["ssh", *target.client_options(), *target.destination(), 'echo "$PATH"']
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, done.stderr
            marker = tmp_path / "bashrc-was-read"
            if label == "ours":
                assert done.stdout.strip() == os.environ["PATH"]
                assert not marker.exists()
            elif shell.endswith("/bash"):
                assert marker.exists()  # else the first assertion proved nothing about this machine's bash
    finally:
        cleanup.close()


def test_chacha20_rates_count_the_default_kexs_rekeys(tmp_path, monkeypatch):
    """OpenSSH rekeys chacha20-poly1305 every 1 GiB; the run's probe (sshbench.measure.rekey_probe: `-o RekeyLimit`, 4
    rekeys) measures what one stalls per kex, and the trials' MiB/s count it. On the development VM: 92-144 ms with
    sntrup761x25519-sha512, 6-15 ms with curve25519-sha256 (docs/clock.md, "Rekeys"). AES rekeys every 64 GiB: not
    probed, not charged."""
    monkeypatch.setenv("SSHBENCH_CACHE_DIR", str(tmp_path / "cache"))  # no stall cached: the probes run
    out = tmp_path / "r.json"
    kexes = "sntrup761x25519-sha512,curve25519-sha256"
    ciphers = "chacha20-poly1305@openssh.com,aes128-gcm@openssh.com"
    args = ("--ciphers", ciphers, "--kex", kexes, "--size", "4M", "--runs", "2", "--warmup", "0", "--no-baselines")
    done = run_cli("run", *args, "--json", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    probes = {p["kex"]: p for p in doc["baselines"]["rekeys"]}
    assert set(probes) == set(kexes.split(",")), probes
    for probe in probes.values():
        assert probe["cipher"] == "chacha20-poly1305@openssh.com" and probe["rekeys"] >= 3, probe
        assert probe["stall_s"] is not None and "note" not in probe and probe["cached"] is False, probe
    cached = json.loads((tmp_path / "cache" / "rekey-stalls.json").read_text())  # the next run's, for a day
    assert sorted(e["stall_s"] for e in cached.values()) == sorted(p["stall_s"] for p in probes.values())
    # the post-quantum kex's key generation (~75 ms of the client's CPU) against curve25519's (~12)
    assert probes["curve25519-sha256"]["stall_s"] < probes["sntrup761x25519-sha512"]["stall_s"]
    assert 0.03 < probes["sntrup761x25519-sha512"]["stall_s"] < 1.0
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer" and not t["warmup"]]
    for t in transfers:
        assert t["valid"] and t["rekeys"] == 0, t  # 4 MiB: no rekey of its own
        assert t["setup_kex"] is None and t["negotiated"]["kex"] == t["kex"]  # --kex: the rows' kex is compared
        if t["cipher"].startswith("chacha20"):
            assert t["rekey_every_bytes"] == 1 << 30 and t["rekey_stall_s"] == probes[t["kex"]]["stall_s"]
            assert t["rekey_s"] == pytest.approx(4 / 1024 * t["rekey_stall_s"])
            assert t["mib_s"] == pytest.approx(4 / (t["data_s"] + t["rekey_s"]))
        else:
            assert t["rekey_every_bytes"] is None and t["rekey_s"] is None
    rows = {(s["cipher"], s["kex"]): s for s in doc["summaries"]}
    assert rows[("chacha20-poly1305@openssh.com", "sntrup761x25519-sha512")]["rekey_share"] > 0
    assert rows[("aes128-gcm@openssh.com", "curve25519-sha256")]["rekey_share"] is None
    assert doc["environment"]["rekeys_counted"] is True
    # 4 MiB trials have no steady part: the report's rekey line is for steady rows (tests/test_rekey.py)
    assert "clock: 4 combination(s) had no trial long enough" in done.stdout and "rekeys every" not in done.stdout
