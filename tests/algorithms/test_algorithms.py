"""Selection of algorithms from --ciphers/--macs/--kex specs (pure)."""

import pytest

from sshbench.algorithms import (
    ClientAlgorithms,
    ServerAlgorithms,
    parse_ssh_G,
    select,
    strip_kex_pseudo,
    would_negotiate,
)
from sshbench.errors import UsageError
from sshbench.measure.trial import check_negotiated
from sshbench.results import Combination, Negotiated

CLIENT = ClientAlgorithms(
    ciphers=["3des-cbc", "aes128-ctr", "aes256-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"],
    macs=["hmac-sha1", "hmac-md5", "umac-64-etm@openssh.com"],
    kex=["curve25519-sha256", "sntrup761x25519-sha512@openssh.com"],
    aead_ciphers={"aes128-gcm@openssh.com", "aes256-gcm@openssh.com"},
    default_ciphers=["aes128-ctr", "aes128-gcm@openssh.com"],
    default_macs=["umac-64-etm@openssh.com", "hmac-sha1"],
    default_kex=["sntrup761x25519-sha512@openssh.com", "curve25519-sha256"],
)
SERVER = ServerAlgorithms(
    ciphers=["aes128-ctr", "aes256-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"],
    macs=["hmac-sha1", "umac-64-etm@openssh.com"],
    kex=["curve25519-sha256"],
)


def test_all_glob_default_and_names_keep_client_order():
    assert select("cipher", "all", CLIENT, SERVER, "t") == SERVER.ciphers
    assert select("cipher", "aes*-gcm*", CLIENT, SERVER, "t") == ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
    assert select("cipher", "default", CLIENT, SERVER, "t") == ["aes128-ctr", "aes128-gcm@openssh.com"]
    assert select("cipher", "aes256-ctr,aes*-ctr", CLIENT, SERVER, "t") == ["aes256-ctr", "aes128-ctr"]


def test_unknown_name_names_it_and_what_is_supported():
    with pytest.raises(UsageError) as err:
        select("cipher", "rot13", CLIENT, SERVER, "t")
    assert "rot13" in str(err.value) and "aes128-ctr" in str(err.value)
    with pytest.raises(UsageError, match="removed from OpenSSH"):
        select("cipher", "arcfour", CLIENT, SERVER, "t")


def test_refused_by_server():
    with pytest.raises(UsageError, match="does not offer cipher '3des-cbc'"):
        select("cipher", "3des-cbc", CLIENT, SERVER, "myhost")
    with pytest.raises(UsageError, match="matches no"):
        select("mac", "hmac-sha2*", CLIENT, SERVER, "t")


def test_would_negotiate_and_pseudo_kex():
    assert would_negotiate(CLIENT.default_kex, SERVER.kex) == "curve25519-sha256"
    assert strip_kex_pseudo(["curve25519-sha256", "ext-info-c", "kex-strict-s-v00@openssh.com"]) == [
        "curve25519-sha256"
    ]
    assert parse_ssh_G("user root\nciphers a,b\nciphers c\n") == {"user": "root", "ciphers": "a,b"}


def test_check_negotiated():
    combo = Combination("aes128-ctr", "hmac-sha1", "curve25519-sha256")
    ok = Negotiated(cipher="aes128-ctr", mac="hmac-sha1", kex="curve25519-sha256", compression="none")
    assert check_negotiated(combo, ok) is None
    bad = Negotiated(cipher="aes128-ctr", mac="hmac-sha1", kex="sntrup761x25519-sha512", compression="none")
    assert "negotiated kex sntrup761x25519-sha512" in check_negotiated(combo, bad)
    assert check_negotiated(combo, Negotiated()) == "no negotiated algorithms in ssh -v output"
