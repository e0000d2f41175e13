"""--no-aesni: refused where it cannot apply; where it can, AES-GCM visibly slows down (real OpenSSH)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from sshbench.baselines import aesni
from sshbench.errors import UsageError
from sshbench.host.environment import cpu_info

pytestmark = pytest.mark.timed  # runs alone (`make test`): a ratio of two ciphers' rates

X86_WITH_AES = {"machine": "x86_64", "aes_ni": True}


def test_masked_env_keeps_the_environment_and_adds_the_mask() -> None:
    env = aesni.masked_env({"PATH": "/bin"})
    assert env == {"PATH": "/bin", "OPENSSL_ia32cap": "~0x200000200000000"}


def test_refused_for_a_remote_target() -> None:
    with pytest.raises(UsageError, match="needs the private sshd"):
        aesni.refuse_unless_applicable("user@example.org", X86_WITH_AES)


def test_refused_on_a_cpu_without_aes_ni() -> None:
    with pytest.raises(UsageError, match="no AES-NI"):
        aesni.refuse_unless_applicable(None, {"machine": "x86_64", "aes_ni": False})
    with pytest.raises(UsageError, match="aarch64"):
        aesni.refuse_unless_applicable(None, {"machine": "aarch64", "aes_ni": True})


def test_refused_when_ssh_is_not_built_with_openssl() -> None:
    with pytest.raises(UsageError, match="not OpenSSL"):
        aesni.refuse_unless_applicable(None, X86_WITH_AES, client_crypto_library="LibreSSL 3.8.2")
    aesni.refuse_unless_applicable(None, X86_WITH_AES, client_crypto_library="OpenSSL 3.0.19")


def test_cli_refuses_a_remote_target_in_one_line() -> None:
    # Refused before any connection is attempted: the host need not exist.
    done = run_cli("run", "nosuchhost.invalid", "--no-aesni", timeout=30)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--no-aesni needs the private sshd" in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not cpu_info()["aes_ni"], reason="this CPU has no AES-NI to mask")
def test_no_aesni_collapses_aes_gcm(tmp_path: Path) -> None:
    common = [
        "run",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--size",
        "64M",
        "--runs",
        "2",
        "--warmup",
        "1",
        "--no-baselines",
    ]
    normal, masked = tmp_path / "normal.json", tmp_path / "masked.json"
    done = run_cli(*common, "--json", str(normal))
    assert done.returncode == 0, done.stderr
    done = run_cli(*common, "--no-aesni", "--json", str(masked))
    assert done.returncode == 0, done.stderr
    normal_doc, masked_doc = json.loads(normal.read_text()), json.loads(masked.read_text())
    check = masked_doc["baselines"]["aesni_check"]
    assert masked_doc["baselines"]["aesni_masked"] is True
    assert check["masked_mib_s"] < aesni.MAX_MASKED_FRACTION * check["unmasked_mib_s"]
    # The ssh transfer itself: ~450 -> ~120 MiB/s was seen here. Rates from two runs on a shared
    # machine move with its load, CPU time per GiB does not: the masked client must spend clearly more.
    (normal_s,), (masked_s,) = normal_doc["summaries"], masked_doc["summaries"]
    assert masked_s["client_cpu_s_per_gib"] > 1.5 * normal_s["client_cpu_s_per_gib"], (masked_s, normal_s)
    assert "AES-NI" in done.stdout and "masked" in done.stdout
