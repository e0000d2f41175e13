"""--remedies (measure.remedies, answers.remedies): the rows a run adds to measure what would help, each changing one
thing of the user's setup, ranked apart from the user's rows and answered against that setup by the paired ratio
of their rounds. Whole runs against fakes (tests/fakes.py), in milliseconds; HPN-SSH on an emulated long fat link
is measured for real in tests/test_hpn.py."""

from __future__ import annotations

import random

import pytest

from fakes import CLIENT, FakeTarget, MadeUpRates, fake_parts
from sshbench.answers import answer, remedies
from sshbench.measure.remedies import REMEDY_STREAMS, with_remedy_rows
from sshbench.measure.runner import Runner
from sshbench.measure.spec import RunSpec
from sshbench.report import model as report_model
from sshbench.report import table
from sshbench.results import Combination
from sshbench.settings import RunSettings
from sshbench.store.document import to_document

pytestmark = pytest.mark.fast

GCM, CTR, CHACHA = "aes128-gcm@openssh.com", "aes128-ctr", "chacha20-poly1305@openssh.com"
MAC = "umac-64-etm@openssh.com"


class RemedyRates(MadeUpRates):
    """Per cipher, times each remedy's gain, with 3% noise per row and round (seeded)."""

    gains = {"streams": 3.9, "compression": 0.6, "hpn-both": 9.7}

    def __call__(self, combo: Combination, repetition: int) -> float:
        noise = random.Random(f"{combo}/{repetition}").uniform(-0.03, 0.03)
        return self.per_cipher.get(combo.cipher, self.other) * self.gains.get(combo.remedy, 1.0) * (1 + noise)


def _run(**options):
    settings = RunSettings(
        **{  # type: ignore[arg-type]
            "ciphers": f"{GCM},{CTR}",
            "macs": MAC,
            "runs": 4,
            "baselines": True,
            "why": "off",
            "max_size": 64 << 20,
            "seed": 5,
            **options,
        }
    )
    parts, _ = fake_parts(RemedyRates(per_cipher={GCM: 400.0, CTR: 300.0, CHACHA: 250.0}))
    return Runner(RunSpec.check(settings), parts=parts).run()


def test_the_remedies_are_measured_beside_the_users_rows_and_answered_against_its_setup():
    result = _run(remedies="on", payload="text")
    added = [c for c in result.combinations if c.remedy]
    assert {c.remedy for c in added} == {"streams", "compression"}
    assert all((c.cipher, c.mac) == (CHACHA, "implicit") for c in added)  # the default: a connection's own
    assert {c.streams for c in added if c.remedy == "streams"} == {REMEDY_STREAMS}
    # ranked apart: the answer, its config lines and its ranking are the user's rows'
    found = answer.compute(result)
    assert found is not None and found.fastest[0].cipher == GCM
    assert not any("Compression" in line for line in found.config)
    helps = remedies.compute(result)
    assert helps is not None and helps.reference == CHACHA
    assert [r.name for r in helps.remedies] == ["streams", "cipher", "compression"]  # most gain first
    streams, cipher, zlib = helps.remedies
    assert streams.decision == "faster" and streams.low is not None and 3.5 < streams.low < streams.ratio
    assert cipher.what == f"another cipher: {GCM}" and cipher.decision == "faster"
    assert zlib.decision == "slower" and zlib.high is not None and zlib.high < 1
    lines = helps.lines()
    assert lines[0].startswith(f"What would help (each against {CHACHA}")
    assert "4 connections (-P 4)" in lines[1] and "3.9" in lines[1]
    assert to_document(result)["remedies"]["remedies"][0]["name"] == "streams"
    # the table is the user's rows (the remedies' ssh/sshd/-P columns pushed its rates past 100 columns); the CSV
    # and the JSON keep every row
    report = report_model.build(result)
    assert not any(r.combination.remedy for r in report.rows) and len(report.remedy_rows) == 2
    assert {s["remedy"] for s in to_document(result)["summaries"]} == {"", "streams", "compression"}
    assert "-P 1" not in (found.advice or "") and "-P 4" not in "\n".join(table.decision_lines(result))


def test_random_bytes_get_no_compression_row_and_the_answer_says_why():
    result = _run(remedies="on")
    assert {c.remedy for c in result.combinations if c.remedy} == {"streams"}
    helps = remedies.compute(result)
    assert helps is not None
    assert any(why.startswith("compression: the payload is random bytes") for why in helps.not_tried)
    assert any(why.startswith("HPN-SSH: not installed here") for why in helps.not_tried)


def test_auto_measures_remedies_only_where_the_path_is_the_question():
    assert not RunSettings(remedies="auto").remedies_on()  # plain loopback: the default run stays a minute
    assert RunSettings(remedies="auto", link="wan100m").remedies_on()
    assert not RunSettings(remedies="auto", host="nas").remedies_on()  # a remote HOST: asked for with "on"
    assert RunSettings(remedies="on", host="nas").remedies_on()
    assert not RunSettings(remedies="auto", link="lan1g").remedies_on()  # no delay: no window to lift
    assert not RunSettings(remedies="off", link="lfn1g").remedies_on()
    assert to_document(_run())["remedies"] is None and not any(c.remedy for c in _run().combinations)


def test_hpn_builds_added_by_remedies_keep_only_the_reference_row_one_change_at_a_time():
    """A sweep --remedies added (remedy_builds): the other pairings keep one row each, the reference's algorithms
    with that pairing's kex, made where HPN-SSH at both ends negotiated its own default (chacha20-poly1305-mt)."""
    stock, hpn = "OpenSSH_9.2p1", "OpenSSH_10.2p1_hpn18.8.0"
    settings = RunSettings(remedies="on", remedy_builds=True, baselines=True)
    combos = [
        Combination(cipher, "implicit", kex, ssh_build=ssh, sshd_build=sshd)
        for ssh, sshd, cipher, kex in (
            (stock, stock, GCM, "curve25519-sha256"),
            (stock, stock, CHACHA, "curve25519-sha256"),
            (hpn, stock, GCM, "curve25519-sha256"),
            (hpn, stock, CHACHA, "curve25519-sha256"),
            (stock, hpn, CHACHA, "curve25519-sha256"),
            (hpn, hpn, GCM, "mlkem768x25519-sha256"),
            (hpn, hpn, "chacha20-poly1305-mt@hpnssh.org", "mlkem768x25519-sha256"),
        )
    ]
    notices = [f"{hpn} -> {hpn}: also measured the default", f"{stock} -> {stock}: also measured the default"]
    planned = with_remedy_rows(combos, settings, FakeTarget(), {stock: CLIENT, hpn: CLIENT}, notices)
    assert planned[:2] == combos[:2]  # the user's rows, as they were
    added = {c.remedy: c for c in planned if c.remedy}
    assert set(added) >= {"hpn-both", "hpn-client", "hpn-server", "streams"}
    assert (added["hpn-both"].cipher, added["hpn-both"].kex) == (CHACHA, "mlkem768x25519-sha256")
    assert (added["hpn-client"].ssh_build, added["hpn-client"].sshd_build) == (hpn, stock)
    assert all(c.cipher == CHACHA for c in added.values())
    assert notices[0] == f"{stock} -> {stock}: also measured the default" and not any(hpn in n for n in notices)
