"""The ceiling per swept stream count and the "how many streams" conclusion (pure figures)."""

from __future__ import annotations

import pytest

from sshbench.baselines.analysis import machine_busy_cores
from sshbench.baselines.stream_ceiling import sweeps
from sshbench.model.summary import summarise_transfers
from sshbench.results import IMPLICIT_MAC, Combination, Trial
from sshbench.units import GIB, MIB

GCM = Combination("aes128-gcm@openssh.com", IMPLICIT_MAC, "curve25519-sha256")
CRYPTO = {"AES-128-GCM": {"mib_s": 1000.0}}


def _trials(
    combo: Combination, mib_s: float, cpu_s_per_gib: float = 2.0, kind: str = "transfer", busy: float | None = None
) -> list[Trial]:
    out = []
    for rep in range(3):
        t = Trial(combo, kind, rep, False, payload_bytes=GIB, started_at=float(rep))
        t.valid, t.data_s, t.data_clock = True, GIB / MIB / mib_s, "server-reader"
        t.client_cpu_s = t.server_cpu_s = cpu_s_per_gib / 2
        t.machine_busy_cores = busy
        out.append(t)
    return out


def _sweep(rates: dict[int, float], raw: dict[int, float] | None = None, link: str = "loopback", cpu=None, busy=None):
    cpu, busy = cpu or {}, busy or {}
    trials = [
        t
        for n, r in rates.items()
        for t in _trials(
            Combination(**{**GCM.__dict__, "streams": n, "link": link}), r, cpu.get(n, 2.0), busy=busy.get(n)
        )
    ]
    raw_trials = [
        t
        for n, r in (raw or {}).items()
        for t in _trials(
            Combination("raw-tcp", IMPLICIT_MAC, "none", tool="raw-tcp", streams=n, link=link), r, kind="raw-tcp"
        )
    ]
    raw_by = {(s.combination.link, s.combination.streams): s for s in summarise_transfers(raw_trials, kind="raw-tcp")}
    (sweep,) = sweeps(
        summarise_transfers(trials),
        raw_by,
        CRYPTO,
        cores=2,
        shares_machine=True,
        machine_busy=machine_busy_cores(trials),
    )
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


def test_two_streams_on_a_busy_two_core_machine_stop_scaling_because_of_the_cores():
    # -P 2 hardly beats -P 1 while ssh used only 1.0 core: the machine's other load had the rest (/proc/stat)
    sweep = _sweep({1: 300.0, 2: 320.0}, raw={1: 1400.0, 2: 1300.0}, cpu={1: 2.6, 2: 3.2}, busy={2: 1.96})
    two = sweep.rows[1]
    assert two.machine_cores == pytest.approx(1.96) and two.cpu_cores == pytest.approx(1.0, abs=0.01)
    assert two.of_ceiling < 0.6 and sweep.enough.streams == 1
    why = "the cores: at -P 2 this machine's 2 cores were busy (2.0 of 2; ssh client and server 1.0, everything else"
    assert why in sweep.conclusion() and "more do not help" in sweep.conclusion()
    # the same figures on a quiet machine: not the cores, and the verdict says what else it could be
    quiet = _sweep({1: 300.0, 2: 320.0}, raw={1: 1400.0, 2: 1300.0}, cpu={1: 2.6, 2: 3.2}, busy={2: 1.1})
    assert quiet.why_no_more().startswith("not a ceiling measured here")


def test_the_best_count_short_of_its_ceiling_says_what_holds_it_back():
    # -P 2 is the best (12% above -P 1) but reaches 56% of 2 x one stream: scaling stops short of it
    sweep = _sweep({1: 200.0, 2: 224.0}, raw={1: 1400.0, 2: 1300.0}, cpu={1: 4.0, 2: 4.4}, busy={2: 1.9})
    assert sweep.enough.streams == 2 == sweep.best.streams
    assert (
        "; -P 2 stops short of its ceiling: the cores: at -P 2 this machine's 2 cores were busy" in sweep.conclusion()
    )
    # at its ceiling (here the link), nothing is said about what holds it back
    link = _sweep({1: 11.7, 8: 92.0}, raw={1: 50.0, 8: 115.0}, link="lfn1g", busy={8: 1.9})
    assert link.rows[1].of_ceiling > 0.9 and "stops short" not in link.conclusion()


def test_a_link_rate_is_the_ceiling():
    sweep = _sweep({1: 11.7, 8: 110.0}, raw={1: 50.0, 8: 115.0}, link="lfn1g")
    assert sweep.rows[1].terms["link"] == pytest.approx(1e9 / 8 / MIB)
    assert sweep.rows[1].limited_by == "streams"  # 8 x 11.7 = 93.6, below raw TCP 115 and the link 119
    assert sweep.enough.streams == 8 and sweep.why_no_more() is not None


def test_one_stream_count_makes_no_sweep():
    trials = _trials(GCM, 400.0)
    assert sweeps(summarise_transfers(trials), {}, CRYPTO, cores=2, shares_machine=True) == []


def test_the_figures_name_each_ceiling_and_say_when_a_rate_went_above_its_estimate():
    """A 2-core VM: -P 1 at 953 MiB/s with 2.1 s of CPU per GiB makes the cores' whole-cost ceiling ~975 MiB/s,
    and -P 2 moved 1164 (its CPU per byte was lower): that read "(118% of 986)", a rate above its ceiling. One
    stream at its own rate gets no figure ("100% of 953")."""
    sweep = _sweep({1: 953.0, 2: 1164.0}, raw={1: 3850.0, 2: 5400.0}, cpu={1: 2.1, 2: 1.9})
    text = sweep.conclusion()
    assert text is not None
    assert "-P 1 953 MiB/s, -P 2 1164 MiB/s (above the cores' estimated " in text, text
    assert "%" not in text.split("; ")[0].split(":", 1)[1], text
    below = _sweep({1: 400.0, 2: 560.0, 4: 580.0}, raw={1: 3000.0, 2: 4000.0, 4: 4000.0}, cpu={2: 2.8, 4: 3.2})
    assert "-P 2 560 MiB/s (70% of 2 x one stream's 800)" in (below.conclusion() or ""), below.conclusion()
