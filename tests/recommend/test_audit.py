"""`sshbench audit [HOST]`: the client's effective settings (ssh -G), what a real connection negotiates,
and the flags (broken/weak/slow with the measured alternative)."""

from __future__ import annotations

import pytest

from conftest import run_cli
from sshbench.host.cleanup import Cleanup
from sshbench.recommend import audit
from sshbench.results import Combination, RunResult, Trial
from sshbench.security import terrapin
from sshbench.settings import RunSettings
from sshbench.targets.private_openssh import PrivateOpenSSH
from sshbench.units import MIB

KEX = "curve25519-sha256"


def _run_with_rates(rates: dict[tuple[str, str], float]) -> RunResult:
    """A RunResult whose valid transfers measured the given MiB/s (two trials each)."""
    trials = []
    for (cipher, mac), rate in rates.items():
        combo = Combination(cipher=cipher, mac=mac, kex=KEX)
        for rep in range(2):
            trials.append(
                Trial(
                    combination=combo,
                    kind="transfer",
                    repetition=rep,
                    warmup=False,
                    payload_bytes=2 * MIB,
                    started_at=0.0,
                    valid=True,
                    data_s=2 / rate,
                )
            )
    return RunResult(
        settings=RunSettings(),
        environment={"client_strict_kex": True, "server_strict_kex": True},
        trials=trials,
        status="complete",
    )


def test_judge_flags_weak_negotiated_and_offered_and_names_measured_alternative():
    effective = {"cipher": ["aes128-cbc", "aes128-gcm@openssh.com"], "mac": ["hmac-sha1"], "kex": [KEX]}
    negotiated = {"cipher": "aes128-cbc", "mac": "hmac-sha1", "kex": KEX}
    run = _run_with_rates({("aes128-gcm@openssh.com", "implicit"): 900.0, ("aes128-cbc", "hmac-sha1"): 300.0})
    report = audit.judge("test", effective, negotiated, terrapin.StrictKex(True, True), run)
    assert report.negotiated_verdict.label == "weak"
    text = "\n".join(f"{f.severity}: {f.message}" for f in report.findings)
    assert "weak: negotiated aes128-cbc + hmac-sha1" in text
    assert "slow: negotiated aes128-cbc + hmac-sha1 measured 300 MiB/s; faster and safe: aes128-gcm@openssh.com" in text
    offered = dict(report.offered_verdicts["cipher"])
    assert offered["aes128-gcm@openssh.com"].label == "recommended"


def test_judge_terrapin_and_no_run():
    effective = {"cipher": ["chacha20-poly1305@openssh.com"], "mac": [], "kex": [KEX]}
    negotiated = {"cipher": "chacha20-poly1305@openssh.com", "mac": "implicit", "kex": KEX}
    unsafe = audit.judge("test", effective, negotiated, terrapin.StrictKex(True, False), None)
    assert unsafe.negotiated_verdict.label == "weak" and "CVE-2023-48795" in unsafe.negotiated_verdict.reason
    assert any(f.severity == "info" and "no measured run" in f.message for f in unsafe.findings)
    safe = audit.judge("test", effective, negotiated, terrapin.StrictKex(True, True), None)
    assert safe.negotiated_verdict.label == "recommended"


def test_effective_lists_from_ssh_G_text():
    text = "ciphers aes128-ctr,aes256-ctr\nmacs hmac-sha1\nkexalgorithms curve25519-sha256,ext-info-c\n"
    lists = audit.effective_client_lists(text)
    assert lists == {"cipher": ["aes128-ctr", "aes256-ctr"], "mac": ["hmac-sha1"], "kex": ["curve25519-sha256"]}


@pytest.fixture
def private_sshd():
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        yield target
    finally:
        cleanup.close()


def test_audit_host_through_ssh_config_alias(private_sshd, tmp_path):
    """`sshbench audit HOST`: a real ssh_config alias (read with ssh -G) with a weak cipher and MAC first."""
    t = private_sshd
    config = tmp_path / "ssh_config"
    config.write_text(
        "Host bench-alias\n"
        f"    HostName 127.0.0.1\n    Port {t.port}\n    User {t.user}\n"
        f"    IdentityFile {t.dir / 'client_key'}\n    IdentitiesOnly yes\n    IdentityAgent none\n"
        f"    UserKnownHostsFile {t.dir / 'known_hosts'}\n    GlobalKnownHostsFile /dev/null\n"
        "    StrictHostKeyChecking yes\n    HostKeyAlgorithms ssh-ed25519\n"
        "    Ciphers aes128-cbc,aes128-gcm@openssh.com\n    MACs hmac-sha1,hmac-sha2-256-etm@openssh.com\n"
    )
    done = run_cli("audit", "bench-alias", "--ssh-config", str(config), timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "negotiated with bench-alias" in out and "aes128-cbc + hmac-sha1" in out
    assert "weak: negotiated aes128-cbc + hmac-sha1" in out
    assert "strict kex in force (client yes, server yes)" in out
    assert "no measured run" in out  # the test's database is empty


def test_audit_bare_client_against_private_sshd():
    done = run_cli("audit", timeout=60)
    assert done.returncode == 0, done.stderr
    assert "negotiated with private sshd" in done.stdout
    assert "Terrapin (CVE-2023-48795): strict kex in force" in done.stdout


def test_audit_unknown_host_is_one_line(tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text("Host nowhere\n    HostName 127.0.0.1\n    Port 1\n    ConnectTimeout 3\n")
    done = run_cli("audit", "nowhere", "--ssh-config", str(config), timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and done.stderr.strip().count("\n") == 0


def test_algorithms_shows_verdicts_and_default_negotiation():
    done = run_cli("algorithms", timeout=60)
    assert done.returncode == 0, done.stderr
    assert "verdict" in done.stdout and "broken" in done.stdout  # 3des-cbc is offered by the private sshd
    assert "the client's default preference with this server's offer negotiates" in done.stdout
