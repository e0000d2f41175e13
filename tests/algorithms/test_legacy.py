"""Every cipher and MAC the seeds measured has a row in `sshbench algorithms --all` (runnable somewhere, or
`unavailable here` with the reason), and the legacy primitives have raw crypto rows."""

from __future__ import annotations

import pytest

from conftest import run_cli
from sshbench.algorithms import legacy
from sshbench.baselines import legacy_speed


def _rows(stdout: str) -> dict[str, str]:
    """algorithm name -> its table line, from the --all table (names are never wrapped there)."""
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 3 and cells[1] in ("cipher", "mac") and cells[2]:
            rows.setdefault(cells[2], line)
    return rows


def test_algorithms_all_lists_every_seed_cipher_and_mac():
    done = run_cli("algorithms", "--all", timeout=120)
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("Every cipher and MAC the seeds measured") :]
    rows = _rows(table)
    for name in (*legacy.SEED_CIPHERS, *legacy.SEED_MACS):
        assert name in rows, f"{name} has no row"
    assert "unavailable here" in rows["hmac-ripemd160"] and "neither Dropbear nor AsyncSSH" in done.stdout
    assert "unavailable here" in rows["rijndael-cbc@lysator.liu.se"]
    assert "runs as openssh/openssh" in rows["aes128-ctr"]
    algs = legacy.asyncssh_algorithms()
    if not algs.missing_reason and "arcfour" in algs.ciphers:
        assert "runs as asyncssh/asyncssh" in rows["arcfour"] and "openssh/openssh" not in rows["arcfour"]
    assert "AsyncSSH (Python)" in done.stdout


def test_availability_says_why_nothing_runs_a_name():
    without = legacy.AsyncsshAlgorithms(
        version=None, missing_reason="AsyncSSH is not installed; pip install it", unavailable={}
    )
    offers = [
        legacy.Offer("openssh/openssh", ["aes128-ctr"], ["hmac-sha1"]),
        legacy.Offer("openssh/dropbear", None, None, reason="Dropbear is not installed"),
    ]
    rows = {r.name: r for r in legacy.availability(offers, without)}
    assert rows["aes128-ctr"].status == "runs as openssh/openssh"
    assert rows["arcfour"].status.startswith("unavailable here: removed from OpenSSH in 7.6")
    assert "AsyncSSH is not installed" in rows["arcfour"].status
    assert rows["hmac-ripemd160"].in_seeds and rows["hmac-ripemd160"].status.startswith("unavailable here")
    broken = legacy.AsyncsshAlgorithms(version="x", unavailable={"blowfish-cbc": "cryptography cannot run Blowfish"})
    rows = {r.name: r for r in legacy.availability(offers, broken)}
    assert rows["blowfish-cbc"].status == "unavailable here: cryptography cannot run Blowfish"
    assert set(legacy.SEED_CIPHERS) <= set(rows)


def test_legacy_hint_names_the_implementation_that_can_run_it():
    assert "neither Dropbear nor AsyncSSH" in legacy.legacy_hint("mac", "hmac-ripemd160")
    algs = legacy.asyncssh_algorithms()
    if algs.missing_reason is None and "arcfour" in algs.ciphers:
        assert "--server asyncssh" in legacy.legacy_hint("cipher", "arcfour")


def test_raw_crypto_rows_for_legacy_primitives():
    rows = legacy_speed.primitive_speeds(names=("RC4", "DES-EDE3-CBC"))
    sources = {(r.primitive, r.source.split()[0]): r for r in rows}
    assert set(sources) == {
        ("RC4", "openssl"),
        ("RC4", "cryptography"),
        ("DES-EDE3-CBC", "openssl"),
        ("DES-EDE3-CBC", "cryptography"),
    }
    assert sources[("RC4", "openssl")].ssh_names == ["arcfour", "arcfour128", "arcfour256"]
    assert "-provider legacy" in sources[("RC4", "openssl")].source
    if sources[("RC4", "openssl")].mib_s is None:
        pytest.skip(f"openssl speed cannot run RC4 here: {sources[('RC4', 'openssl')].note}")
    assert sources[("RC4", "openssl")].mib_s > sources[("DES-EDE3-CBC", "openssl")].mib_s > 0
    sentence = legacy_speed.seed_002_check(rows)
    assert sentence and "RC4 runs" in sentence


def test_each_implementation_pair_is_its_own_ranking():
    """Pure: an AsyncSSH row is never 'x fastest' of an OpenSSH row, and pairs are not interleaved."""
    from sshbench.model.summary import summarise_transfers
    from sshbench.results import Combination, Trial

    def trial(cipher: str, client: str, server: str, mib_s: float) -> Trial:
        t = Trial(
            combination=Combination(cipher, "hmac-sha1", "curve25519-sha256", client=client, server=server),
            kind="transfer",
            repetition=0,
            warmup=False,
            payload_bytes=64 * 1024 * 1024,
            started_at=0.0,
        )
        t.valid, t.data_s = True, 64 / mib_s
        return t

    trials = [
        trial("aes128-ctr", "openssh", "openssh", 800),
        trial("arcfour", "asyncssh", "asyncssh", 100),
        trial("aes128-ctr", "asyncssh", "asyncssh", 200),
        trial("3des-cbc", "openssh", "openssh", 20),
        trial("aes128-ctr", "openssh", "dropbear", 150),
    ]
    summaries = summarise_transfers(trials)
    got = [
        (s.combination.client, s.combination.server, s.combination.cipher, round(s.relative_to_fastest, 2))
        for s in summaries
    ]
    assert got == [
        ("openssh", "openssh", "aes128-ctr", 1.0),
        ("openssh", "openssh", "3des-cbc", 40.0),
        ("asyncssh", "asyncssh", "aes128-ctr", 1.0),
        ("asyncssh", "asyncssh", "arcfour", 2.0),
        ("openssh", "dropbear", "aes128-ctr", 1.0),
    ]
