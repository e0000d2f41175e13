"""The ssh_config lines that change preference without locking anyone out (security/config_lines.py): pure
on OpenSSH 9.2's default lists, and checked against the local ssh's own expansion (`ssh -G`, no connection)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sshbench.security.config_lines import openssh_version, option_line

CIPHERS = [
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
]
KEX = ["sntrup761x25519-sha512@openssh.com", "curve25519-sha256", "ecdh-sha2-nistp256", "diffie-hellman-group14-sha256"]
MACS = ["umac-64-etm@openssh.com", "hmac-sha2-256-etm@openssh.com", "hmac-sha1-etm@openssh.com", "hmac-sha1"]
NEW = (9, 2)


def everything(name: str) -> bool:
    return True


def no_sha1(name: str) -> bool:
    return "sha1" not in name


def test_version_parsing() -> None:
    assert openssh_version("OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL 3.0.19") == (9, 2)
    assert openssh_version("OpenSSH_10.0") == (10, 0)
    assert openssh_version("dropbear_2022.83") is None and openssh_version(None) is None


def test_the_default_kex_measured_alone_needs_no_line() -> None:
    """The lock-out the issue names (`KexAlgorithms sntrup...` alone under Host *): it is first already."""
    assert option_line("KexAlgorithms", [KEX[0]], KEX, everything, NEW) is None
    prefer = option_line("KexAlgorithms", [KEX[1]], KEX, everything, NEW)
    assert (
        prefer is not None
        and prefer.text == f"KexAlgorithms ^{KEX[1]}"
        and prefer.offered == [KEX[1], KEX[0], *KEX[2:]]
    )


def test_preference_keeps_the_defaults_after_the_fastest() -> None:
    line = option_line("Ciphers", ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"], CIPHERS, everything, NEW)
    assert line is not None and line.text == "Ciphers ^aes128-gcm@openssh.com,aes256-gcm@openssh.com"
    assert line.offered == ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", *CIPHERS[:4]]
    assert option_line("Ciphers", CIPHERS[:2], CIPHERS, everything, NEW) is None  # the defaults' own order
    head = option_line("Ciphers", ["aes128-gcm@openssh.com", *CIPHERS[:4]], CIPHERS, everything, NEW)
    assert head is not None and head.value == "^aes128-gcm@openssh.com"  # the shortest head giving that order


def test_no_reorder_behind_the_clients_own_first_choice() -> None:
    """Issue 24: a noisy run grouped chacha20-poly1305 (the default) with aes192-ctr and the GCMs and wrote
    `Ciphers ^chacha20-poly1305@openssh.com,aes192-ctr,...`: a line that changes nothing ssh negotiates,
    under a conclusion saying the default is among the fastest."""
    group = [CIPHERS[0], "aes192-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
    assert option_line("Ciphers", group, CIPHERS, everything, NEW) is None
    removal = option_line("MACs", [MACS[0], "hmac-sha1"], MACS, no_sha1, NEW)  # removals are still written
    assert removal is not None and removal.text == "MACs -hmac-sha1-etm@openssh.com"


def test_no_reorder_of_the_fallbacks_below_the_clients_own_first_choice() -> None:
    """Issue 24: 1 of 5 default runs decided chacha20-poly1305 > aes256-ctr > the other CTRs below the GCMs and wrote
    `^aes128-gcm,aes256-gcm,chacha20-poly1305,aes256-ctr`; the other four `^aes128-gcm,aes256-gcm`. The order behind
    the client's first choice only picks among fallbacks: the same line either way."""
    gcm = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
    ranked = [*gcm, CIPHERS[0], "aes256-ctr", "aes128-ctr", "aes192-ctr"]
    line = option_line("Ciphers", ranked, CIPHERS, everything, NEW)
    assert line is not None and line.value == "^" + ",".join(gcm)
    assert line == option_line("Ciphers", gcm, CIPHERS, everything, NEW)


def test_policy_removals_use_minus_and_both_spell_the_list_out() -> None:
    removal = option_line("MACs", [MACS[0]], MACS, no_sha1, NEW)
    assert removal is not None and removal.text == "MACs -hmac-sha1-etm@openssh.com,hmac-sha1"
    assert removal.offered == MACS[:2] and removal.removed == MACS[2:]
    both = option_line("MACs", [MACS[1]], MACS, no_sha1, NEW)
    assert both is not None and both.form == "list"
    assert both.value == "hmac-sha2-256-etm@openssh.com,umac-64-etm@openssh.com"


def test_old_clients_unknown_defaults_and_full_lists() -> None:
    before_caret = option_line("Ciphers", ["aes128-gcm@openssh.com"], CIPHERS, everything, (8, 0))
    assert before_caret is not None and before_caret.form == "list"
    assert before_caret.value.split(",") == ["aes128-gcm@openssh.com", *CIPHERS[:4], CIPHERS[5]]
    before_minus = option_line("MACs", [MACS[0]], MACS, no_sha1, (7, 4))
    assert before_minus is not None and before_minus.value == ",".join(MACS[:2])
    unknown = option_line("Ciphers", ["aes128-gcm@openssh.com"], None, everything, NEW)
    assert unknown is not None and unknown.value == "^aes128-gcm@openssh.com" and unknown.offered is None
    assert option_line("Ciphers", ["aes128-gcm@openssh.com"], None, everything, None).form == "replace"
    full = option_line("KexAlgorithms", [KEX[0]], KEX, everything, NEW, replace=True)
    assert full is not None and full.text == f"KexAlgorithms {KEX[0]}"


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh client")
def test_offered_is_what_the_local_ssh_expands_the_line_to(tmp_path) -> None:
    """`ssh -G` (no connection) applies the line to the client's real defaults: the same list, in order."""

    def effective(option: str, value: str | None) -> list[str]:
        config = tmp_path / "config"
        config.write_text("" if value is None else f"Host *\n    {option} {value}\n")
        done = subprocess.run(
            ["ssh", "-G", "-F", str(config), "example.invalid"], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        key = option.lower()
        return next(line.split(" ", 1)[1].split(",") for line in done.stdout.splitlines() if line.startswith(key + " "))

    version = openssh_version(subprocess.run(["ssh", "-V"], capture_output=True, text=True, timeout=30).stderr)
    defaults = effective("Ciphers", None)
    for preferred, allowed in ((["aes256-gcm@openssh.com", "aes128-ctr"], everything), ([defaults[-1]], no_sha1)):
        line = option_line("Ciphers", preferred, defaults, allowed, version)
        assert line is not None and effective("Ciphers", line.value) == line.offered
    macs = effective("MACs", None)
    line = option_line("MACs", [macs[0]], macs, no_sha1, version)
    if line is not None:  # a client whose defaults still carry SHA-1 MACs
        assert effective("MACs", line.value) == line.offered
