"""The ceiling per swept stream count and the "how many streams" conclusion (pure figures)."""

from __future__ import annotations

import pytest

from sshbench.baselines.stream_ceiling import sweeps
from sshbench.results import IMPLICIT_MAC, Combination, Trial
from sshbench.summary import summarise_transfers
from sshbench.units import GIB, MIB

GCM = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256")
CRYPTO = {"AES-128-GCM": {"mib_s": 1000.0}}


def _trials(combo: Combination, mib_s: float, cpu_s_per_gib: float = 2.0, kind: str = "transfer") -> list[Trial]:
    out = []
    for rep in range(3):
        t = Trial(combo, kind, rep, False, payload_bytes=GIB, started_at=float(rep))
        t.valid, t.data_s, t.data_clock = True, GIB / MIB / mib_s, "server-reader"
        t.client_cpu_s = t.server_cpu_s = cpu_s_per_gib / 2
        out.append(t)
    return out


def _sweep(rates: dict[int, float], raw: dict[int, float] | None = None, link: str = "loopback", cpu=None):
    cpu = cpu or {}
    trials = [
        t
        for n, r in rates.items()
        for t in _trials(Combination(**{**GCM.__dict__, "streams": n, "link": link}), r, cpu.get(n, 2.0))
    ]
    raw_trials = [
        t
        for n, r in (raw or {}).items()
        for t in _trials(
            Combination("raw-tcp", IMPLICIT_MAC, "none", tool="raw-tcp", streams=n, link=link), r, kind="raw-tcp"
        )
    ]
    raw_by = {(s.combination.link, s.combination.streams): s for s in summarise_transfers(raw_trials, kind="raw-tcp")}
    (sweep,) = sweeps(summarise_transfers(trials), raw_by, CRYPTO, cores=2, shares_machine=True)
    return sweep


def test_loopback_two_cores_stop_scaling_and_say_it_is_the_cores():
    # 2 s of CPU per GiB at 400 MiB/s: one stream keeps 0.8 of the 2 cores busy; -P 2 and -P 4 hardly add,
    # and each byte costs more CPU as the streams contend (3.2 s/GiB at -P 4: 1.8 of the 2 cores busy)
    sweep = _sweep({1: 400.0, 2: 560.0, 4: 580.0}, raw={1: 3000.0, 2: 4000.0, 4: 4000.0}, cpu={2: 2.8, 4: 3.2})
    one, two, four = sweep.rows
    assert one.terms["streams"] == pytest.approx(400.0) and two.terms["streams"] == pytest.approx(800.0)
    assert four.terms["cores"] == pytest.approx(1000.0)  # min(crypto 1 core x 1000, 2 cores / 2 s/GiB = 1024)
    assert sweep.enough.streams == 2 and sweep.best.streams == 4
    assert four.limited_by == "cores" and four.cpu_cores == pytest.approx(1.81, abs=0.01)
    assert sweep.why_no_more() == "the cores: at -P 4 client and server used 1.8 of this machine's 2 cores"
    assert "-P 2 is within 10% of the best (-P 4)" in sweep.conclusion()


def test_a_link_rate_is_the_ceiling():
    sweep = _sweep({1: 11.7, 8: 110.0}, raw={1: 50.0, 8: 115.0}, link="lfn1g")
    assert sweep.rows[1].terms["link"] == pytest.approx(1e9 / 8 / MIB)
    assert sweep.rows[1].limited_by == "streams"  # 8 x 11.7 = 93.6, below raw TCP 115 and the link 119
    assert sweep.enough.streams == 8 and sweep.why_no_more() is not None


def test_one_stream_count_makes_no_sweep():
    trials = _trials(GCM, 400.0)
    assert sweeps(summarise_transfers(trials), {}, CRYPTO, cores=2, shares_machine=True) == []
