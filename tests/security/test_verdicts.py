"""Security verdicts: the ssh-audit adapter (pinned version, layout check), the mapping rule and sshbench's
overrides, and Terrapin on KEXINITs recorded from real `ssh -vv` runs (tests/data)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, ROOT
from sshbench.algorithms import threaded
from sshbench.security import audit_adapter, terrapin
from sshbench.security.verdicts import (
    FAIL_LEVELS,
    IGNORED_WARNINGS,
    WARN_LEVELS,
    Level,
    algorithm_verdict,
    combination_verdict,
)

sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/kexinit_peer.py
from kexinit_peer import serve_one_kexinit

CHACHA = "chacha20-poly1305@openssh.com"


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        ("cipher", "3des-cbc", {Level.BROKEN}),
        ("cipher", "aes128-gcm@openssh.com", {Level.RECOMMENDED}),
        ("cipher", "aes256-gcm@openssh.com", {Level.RECOMMENDED}),
        ("mac", "umac-64-etm@openssh.com", {Level.ACCEPTABLE, Level.WEAK, Level.BROKEN}),  # acceptable at most
        ("mac", "hmac-md5", {Level.WEAK, Level.BROKEN}),  # weak or worse
        ("cipher", "arcfour", {Level.BROKEN}),
        ("cipher", "arcfour128", {Level.BROKEN}),
        ("cipher", "arcfour256", {Level.BROKEN}),
        ("cipher", "blowfish-cbc", {Level.WEAK}),
        ("cipher", "cast128-cbc", {Level.WEAK}),
        ("cipher", "aes128-cbc", {Level.WEAK}),
        ("cipher", "aes128-ctr", {Level.ACCEPTABLE}),
        ("cipher", "none", {Level.INSECURE}),  # HPN-SSH's unencrypted cipher (issue 26)
        ("mac", "hmac-sha2-256-etm@openssh.com", {Level.RECOMMENDED}),
        ("mac", "hmac-sha2-256", {Level.ACCEPTABLE}),
        ("mac", "hmac-sha1", {Level.WEAK}),
        ("mac", "hmac-sha2-256-96", {Level.WEAK}),
        ("kex", "diffie-hellman-group1-sha1", {Level.BROKEN}),
        ("kex", "diffie-hellman-group14-sha1", {Level.WEAK}),
        ("kex", "diffie-hellman-group14-sha256", {Level.ACCEPTABLE}),
        ("kex", "diffie-hellman-group16-sha512", {Level.ACCEPTABLE}),
        ("kex", "ecdh-sha2-nistp256", {Level.ACCEPTABLE}),  # ssh-audit's curve opinion, not an attack
        ("kex", "curve25519-sha256", {Level.RECOMMENDED}),  # its "not post-quantum" warning is not counted
        ("kex", "sntrup761x25519-sha512", {Level.RECOMMENDED}),
        ("kex", "mlkem768x25519-sha256", {Level.RECOMMENDED}),
        ("kex", "sntrup4591761x25519-sha512@tinyssh.org", {Level.WEAK}),
        ("compression", "none", {Level.RECOMMENDED}),
        ("compression", "zlib@openssh.com", {Level.WEAK}),
        ("compression", "zlib", {Level.BROKEN}),
        ("mac", "no-such-mac@example.com", {Level.WEAK}),  # unknown to ssh-audit: not rated, never recommended
    ],
)
def test_known_algorithms_map_to_expected_verdicts(kind, name, expected):
    verdict = algorithm_verdict(kind, name)
    assert verdict.level in expected, (name, verdict)
    assert verdict.reason and "\n" not in verdict.reason


def test_post_quantum_warning_is_named_in_the_reason():
    assert "not post-quantum" in algorithm_verdict("kex", "curve25519-sha256").reason


def test_ssh_audit_pin_matches_pyproject_and_installed_version():
    pyproject = (ROOT / "pyproject.toml").read_text()
    pinned = re.search(r'"ssh-audit==([^"]+)"', pyproject)
    assert pinned and pinned.group(1) == audit_adapter.PINNED_VERSION
    assert audit_adapter.installed_version() == audit_adapter.PINNED_VERSION


def test_every_ssh_audit_note_is_classified():
    """A new FAIL/WARN note in a newer ssh-audit must be placed on the scale deliberately."""
    db = audit_adapter.load()
    assert db.constants("FAIL_") <= set(FAIL_LEVELS)
    assert db.constants("WARN_") <= set(WARN_LEVELS) | IGNORED_WARNINGS


class _ChangedLayout:
    FAIL_SHA1 = "using broken SHA-1 hash algorithm"
    MASTER_DB = {"kex": {"diffie-hellman-group14-sha1": {"fail": ["using broken SHA-1 hash algorithm"]}}}


def test_changed_ssh_audit_layout_fails_with_one_line_naming_the_version():
    with pytest.raises(audit_adapter.AuditLayoutError) as err:
        audit_adapter.validate_layout(_ChangedLayout, "9.9.9")
    message = str(err.value)
    assert "ssh-audit 9.9.9" in message and "\n" not in message
    with pytest.raises(audit_adapter.AuditLayoutError, match="ssh-audit 3.9.0: .*no MASTER_DB"):
        audit_adapter.validate_layout(object, "3.9.0")


def test_real_layout_passes_validation():
    from ssh_audit.ssh2_kexdb import SSH2_KexDB

    db = audit_adapter.validate_layout(SSH2_KexDB, "3.9.0")
    rating = db.rating("cipher", "3des-cbc")
    assert rating.known and "FAIL_3DES" in rating.fails


# --- Terrapin --------------------------------------------------------------------------------------


def test_terrapin_affected_combinations():
    assert terrapin.affected(CHACHA, "implicit")
    assert terrapin.affected("aes128-cbc", "hmac-sha2-256-etm@openssh.com")
    assert not terrapin.affected("aes128-cbc", "hmac-sha2-256")
    assert not terrapin.affected("aes128-ctr", "hmac-sha2-256-etm@openssh.com")
    assert not terrapin.affected("aes128-gcm@openssh.com", "implicit")


def test_strict_kex_read_from_recorded_private_sshd_log():
    """Recorded from the private sshd (OpenSSH 9.2p1 Debian, strict kex backported): both markers."""
    strict = terrapin.from_ssh_log((DATA / "ssh-vv-strict-kex.txt").read_text())
    assert (strict.client, strict.server, strict.negotiated) == (True, True, True)


def test_no_strict_kex_from_recorded_server_without_marker():
    """Recorded from tests/kexinit_peer.py: a server KEXINIT without kex-strict-s-v00@openssh.com."""
    strict = terrapin.from_ssh_log((DATA / "ssh-vv-no-strict-kex.txt").read_text())
    assert (strict.client, strict.server, strict.negotiated) == (True, False, False)


def test_client_without_marker_means_no_strict_kex():
    text = (DATA / "ssh-vv-strict-kex.txt").read_text().replace(",kex-strict-c-v00@openssh.com", "")
    strict = terrapin.from_ssh_log(text)
    assert (strict.client, strict.server, strict.negotiated) == (False, True, False)
    assert terrapin.from_ssh_log("no kexinit here").negotiated is None


def test_live_server_without_strict_marker():
    """The same as the recording, live: real ssh -vv against a KEXINIT without the server marker."""
    port, thread = serve_one_kexinit(strict=False)
    done = subprocess.run(
        [
            "ssh",
            "-F",
            "/dev/null",
            "-vv",
            "-p",
            str(port),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "ConnectTimeout=5",
            "127.0.0.1",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=20,
        stdin=subprocess.DEVNULL,
    )
    thread.join(timeout=10)
    assert terrapin.from_ssh_log(done.stderr).server is False


def test_chacha20_and_cbc_etm_depend_on_strict_kex():
    assert algorithm_verdict("cipher", CHACHA, strict_kex=True).level == Level.RECOMMENDED
    assert algorithm_verdict("cipher", CHACHA, strict_kex=False).level == Level.WEAK
    assert algorithm_verdict("cipher", CHACHA, strict_kex=None).level == Level.WEAK
    kex = "curve25519-sha256"
    assert combination_verdict(CHACHA, "implicit", kex, strict_kex=True).level == Level.RECOMMENDED
    off = combination_verdict(CHACHA, "implicit", kex, strict_kex=False)
    assert off.level == Level.WEAK and "CVE-2023-48795" in off.reason
    # CBC is weak on its own; with an -etm MAC and no strict kex the reason is Terrapin.
    cbc_etm = combination_verdict("aes128-cbc", "hmac-sha2-256-etm@openssh.com", kex, strict_kex=False)
    assert cbc_etm.level == Level.WEAK
    assert combination_verdict("aes128-gcm@openssh.com", "implicit", kex, strict_kex=False).level == Level.RECOMMENDED


def test_combination_takes_the_worst_part():
    v = combination_verdict("aes128-gcm@openssh.com", "implicit", "diffie-hellman-group1-sha1")
    assert v.level == Level.BROKEN and v.reason.startswith("diffie-hellman-group1-sha1:")
    v = combination_verdict("aes128-ctr", "umac-64-etm@openssh.com", "curve25519-sha256", "zlib@openssh.com")
    assert v.level == Level.WEAK and "compression" in v.reason


# --- HPN-SSH's threaded ("parallel") ciphers ----------------------------------------------------------

MT_CHACHA = "chacha20-poly1305-mt@hpnssh.org"


@pytest.mark.parametrize(("threaded_name", "twin"), sorted(threaded.SERIAL_TWINS.items()))
@pytest.mark.parametrize("strict_kex", [None, False, True])
def test_threaded_cipher_is_rated_as_its_serial_twin(threaded_name, twin, strict_kex):
    verdict = algorithm_verdict("cipher", threaded_name, strict_kex)
    serial = algorithm_verdict("cipher", twin, strict_kex)
    assert verdict.level == serial.level
    assert verdict.reason.startswith(f"{twin} computed in threads (parallel, HPN-SSH): rated as it; ")
    assert verdict.reason.endswith(serial.reason) and "\n" not in verdict.reason


def test_threaded_chacha20_is_terrapin_affected_as_its_twin():
    assert threaded.serial_twin(MT_CHACHA) == CHACHA
    assert terrapin.affected(MT_CHACHA, "implicit")
    assert algorithm_verdict("cipher", MT_CHACHA, strict_kex=True).level == Level.RECOMMENDED
    for strict_kex in (False, None):
        verdict = algorithm_verdict("cipher", MT_CHACHA, strict_kex=strict_kex)
        assert verdict.level == Level.WEAK and "CVE-2023-48795" in verdict.reason
    kex = "curve25519-sha256"
    assert combination_verdict(MT_CHACHA, "implicit", kex, strict_kex=True).level == Level.RECOMMENDED
    off = combination_verdict(MT_CHACHA, "implicit", kex, strict_kex=False)
    assert off.level == Level.WEAK and off.reason.startswith(f"{MT_CHACHA}: {CHACHA} computed in threads")
    assert "CVE-2023-48795" in off.reason and off.level == combination_verdict(CHACHA, "implicit", kex).level


@pytest.mark.parametrize(
    "name",
    [
        "no-such-cipher@example.com",  # unknown, not HPN-SSH's
        "aes128-ctr-mt@hpnssh.org",  # not an HPN-SSH name (its threaded AES-CTR runs as aes128-ctr): not in the table
    ],
)
def test_cipher_outside_the_twin_table_stays_not_rated(name):
    assert threaded.serial_twin(name) is None and threaded.serial(name) == name
    verdict = algorithm_verdict("cipher", name)
    assert verdict.level == Level.WEAK and verdict.reason.startswith("not rated by ssh-audit")
    assert "threads" not in verdict.reason
    assert not terrapin.affected(name, "implicit")
