"""A run over several conditions (sshbench/answers/condition_answer.py) on constructed runs: each link (or direction) is
answered against its own fastest row, a link that sets every row's rate says the algorithms do not matter there,
and the run's one ranking across links no longer names a WAN row as "slowest"."""

from __future__ import annotations

import json

from sshbench.answers import answer, condition_answer
from sshbench.baselines import raw_tcp
from sshbench.report import conclusion as report_conclusion
from sshbench.results import IMPLICIT_MAC, Combination, RunResult, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.store.document import to_document
from sshbench.units import MIB

GCM, CHACHA, CTR = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr"
KEX = "curve25519-sha256"
LOOPBACK = {GCM: [1000, 960, 1040, 990, 1010], CHACHA: [500, 470, 520, 495, 505], CTR: [480, 455, 500, 470, 490]}
WAN = {GCM: [11.5, 11.4, 11.6, 11.5, 11.5], CHACHA: [11.4, 11.3, 11.5, 11.4, 11.4], CTR: [11.5, 11.4, 11.5, 11.6, 11.5]}


def _transfers(link: str, rates: dict[str, list[float]], **setup: str) -> list[Trial]:
    trials = []
    for cipher, per_round in rates.items():
        mac = "umac-64-etm@openssh.com" if cipher == CTR else IMPLICIT_MAC
        combo = Combination(cipher=cipher, mac=mac, kex=KEX, link=link, **setup)
        trials += [
            Trial(combo, TrialKind.TRANSFER, rep, False, payload_bytes=64 * MIB, started_at=float(rep), valid=True)
            for rep in range(len(per_round))
        ]
        for t, rate in zip(trials[-len(per_round) :], per_round, strict=True):
            t.data_s = 64 / rate
    return trials


def _raw_tcp(link: str, mib_s: float) -> list[Trial]:
    combo = Combination(**{**raw_tcp.RAW_TCP.__dict__, "link": link})
    return [
        Trial(
            combo,
            TrialKind.RAW_TCP,
            rep,
            False,
            payload_bytes=64 * MIB,
            started_at=float(rep),
            valid=True,
            data_s=64 / mib_s,
        )
        for rep in range(3)
    ]


def _run(wan: dict[str, list[float]], raw_wan_mib_s: float | None = 11.8, links: str = "loopback,wan100m") -> RunResult:
    trials = _transfers("loopback", LOOPBACK) + _raw_tcp("loopback", 2400)
    if "wan100m" in links:
        trials += _transfers("wan100m", wan)
    if raw_wan_mib_s is not None:
        trials += _raw_tcp("wan100m", raw_wan_mib_s)
    return RunResult(
        settings=RunSettings(runs=5, link=links),
        environment={"cores": 2, "client_strict_kex": True, "server_strict_kex": True},
        trials=trials,
        status="complete",
        started_at=0.0,
        finished_at=60.0,
    )


def test_each_link_against_its_own_fastest_and_a_link_bound_link_says_the_algorithms_do_not_matter():
    result = _run(WAN)
    found = condition_answer.compute(result)
    assert found is not None
    loopback, wan = found.conditions
    assert found.axes == ["link"] and (loopback.condition, wan.condition) == (
        "loopback",
        "wan100m",
    )  # the order given on the command line
    assert loopback.fastest == "aes128-gcm" and loopback.behind == 2 and loopback.algorithms_matter is True
    assert loopback.slowest == "aes128-ctr + umac-64-etm" and loopback.slowest_ratio is not None
    assert 2.0 < loopback.slowest_ratio < 2.2
    assert wan.outside_bound_rows == 3 and wan.behind == 0 and wan.algorithms_matter is False
    lines = found.lines()
    assert lines[0].startswith("per link (each row against the fastest with the same link; tied: within ±3%)")
    assert lines[1].startswith("  loopback: aes128-gcm ") and lines[1].endswith("MiB/s, ahead of the other 2")
    assert lines[2].startswith("    slowest: aes128-ctr + umac-64-etm, 2.09x (")
    assert lines[3] == (
        "  wan100m: every row 11.4-11.5 MiB/s, limited by the link's rate: the algorithms do not matter here"
    )
    assert all(len(line) <= 100 for line in lines), lines
    # the run's own answer: no "slowest" row from the WAN, 85x behind the loopback's fastest
    conclusion = answer.compute(result)
    assert conclusion is not None and conclusion.slowest is None
    # Markdown and HTML drop the answer's own two-space indent, not the block's: its items stay under its head
    block = report_conclusion.markdown(result)
    head = block.index(lines[0])
    assert block[head + 1 : head + 4] == lines[1:4], block
    assert "\n  wan100m: every row" in report_conclusion.html(result)  # the HTML dropped it from every line
    doc = json.loads(json.dumps(to_document(result)))
    assert [entry["algorithms_matter"] for entry in doc["conditions_answer"]["conditions"]] == [True, False]
    assert doc["conditions_answer"]["lines"] == lines


def test_without_a_raw_tcp_figure_the_wan_rows_are_not_said_not_to_matter():
    """No control on the link (--no-baselines): nothing says the link set their rates, so the line counts ties."""
    found = condition_answer.compute(_run(WAN, raw_wan_mib_s=None))
    assert found is not None
    wan = found.conditions[1]
    assert wan.algorithms_matter is None and wan.behind == 0 and wan.tied + wan.undecided == 2
    assert "do not matter" not in wan.text() and wan.text().startswith("wan100m: ")


def test_a_run_on_one_link_has_no_block():
    result = _run({}, raw_wan_mib_s=None, links="loopback")
    assert condition_answer.compute(result) is None
    assert to_document(result)["conditions_answer"] is None


def _one_link(trials: list[Trial], **settings: str) -> RunResult:
    return RunResult(
        settings=RunSettings(runs=5, **settings),
        environment={"cores": 2},
        trials=trials + _raw_tcp("loopback", 2400),
        status="complete",
        started_at=0.0,
        finished_at=60.0,
    )


def test_each_direction_is_answered_on_its_own_and_a_tool_sweep_is_not_a_condition():
    """--direction both: downloads are a condition like a link (here chacha20-poly1305 is the fastest down);
    --tool scp,sftp is a choice: the run's one ranking answers it, with no block."""
    down = {GCM: [400, 390, 410, 405, 395], CHACHA: [600, 590, 610, 605, 595]}
    result = _one_link(
        _transfers("loopback", LOOPBACK, direction="up") + _transfers("loopback", down, direction="down"),
        direction="both",
    )
    found = condition_answer.compute(result)
    assert found is not None and found.axes == ["direction"]
    up, downloads = found.conditions
    assert (up.condition, up.fastest, up.behind) == ("up", "aes128-gcm", 2)
    assert (downloads.condition, downloads.fastest, downloads.behind) == ("down", "chacha20-poly1305", 1)
    assert found.lines()[0].startswith("per direction (each row against the fastest with the same direction")
    conclusion = answer.compute(result)
    assert conclusion is not None and conclusion.slowest is None  # the slowest of both directions is neither's
    tools = _one_link(
        _transfers("loopback", LOOPBACK, tool="scp") + _transfers("loopback", LOOPBACK, tool="sftp"), tool="scp,sftp"
    )
    assert condition_answer.compute(tools) is None


def test_the_tables_legend_says_where_each_link_is_answered():
    """The table still ranks every row together ("x fastest 89.3" for a WAN row): its legend says so."""
    from sshbench.report import compact

    lines = compact.legend(_run(WAN))
    assert (
        lines[-1] == "x fastest: against row 1 of the whole table; each link against its own fastest: under the answer"
    )
    assert len(compact.legend(_run({}, raw_wan_mib_s=None, links="loopback"))) == 1  # one link: nothing to say
