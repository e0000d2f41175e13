"""The conclusion block (sshbench/answers/answer.py) on constructed runs: ties share the headline, the default's
ratio and CI are the summaries' own, the undecided line says what to run, and the lines keep the defaults."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sshbench.answers import answer
from sshbench.model import summary
from sshbench.results import IMPLICIT_MAC, Combination, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.units import MIB

GCM128, GCM256, CHACHA = "aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com"
KEX = "sntrup761x25519-sha512@openssh.com"
DEFAULT_LISTS = {
    "cipher": [CHACHA, "aes128-ctr", "aes192-ctr", "aes256-ctr", GCM128, GCM256],
    "mac": ["umac-64-etm@openssh.com", "hmac-sha2-256-etm@openssh.com", "hmac-sha1"],
    "kex": [KEX, "curve25519-sha256"],
}


def _run(rates: dict[str, list[float]], default: bool = True, runs: int | None = None) -> RunResult:
    """Valid AEAD transfers at the given MiB/s per round; every round measures every cipher."""
    trials = []
    for cipher, per_round in rates.items():
        combo = Combination(cipher=cipher, mac=IMPLICIT_MAC, kex=KEX)
        trials += [
            Trial(
                combination=combo,
                kind="transfer",
                repetition=rep,
                warmup=False,
                payload_bytes=64 * MIB,
                started_at=float(rep),
                valid=True,
                data_s=64 / rate,
            )
            for rep, rate in enumerate(per_round)
        ]
    environment = {
        "client_strict_kex": True,
        "server_strict_kex": True,
        "client_ssh_version": "OpenSSH_9.2p1 Debian-2+deb12u10",
        "cores": 2,
    }
    if default:
        environment["client_default_algorithms"] = {
            "negotiated": {"cipher": CHACHA, "mac": IMPLICIT_MAC, "kex": KEX},
            "lists": DEFAULT_LISTS,
        }
    settings = RunSettings(runs=runs or len(next(iter(rates.values()))), adaptive=runs is None)
    return RunResult(
        settings=settings, environment=environment, trials=trials, status="complete", started_at=0.0, finished_at=60.0
    )


def test_tied_fastest_share_the_headline_and_the_default_ratio_is_the_summaries() -> None:
    result = _run(
        {
            GCM128: [640, 600, 660, 630, 650, 620],
            GCM256: [638, 602, 655, 633, 648, 622],
            CHACHA: [380, 350, 390, 372, 385, 366],
        }
    )
    found = answer.compute(result)
    assert found is not None
    rows = {s.combination.cipher: s for s in summary.summaries(result)}
    assert {p.cipher for p in found.fastest} == {GCM128, GCM256} and rows[GCM128].rank_label == "=1"
    assert found.default is not None and found.default.cipher == CHACHA
    assert found.default.relative_to_fastest == rows[CHACHA].relative_to_fastest
    assert found.default.relative_to_fastest_ci95 == rows[CHACHA].relative_to_fastest_ci95
    lines = found.lines()
    assert lines[0].startswith(f"Fastest here: {found.fastest[0].name} = {found.fastest[1].name} (tied within 3%)")
    ratio = rows[CHACHA].relative_to_fastest or 0.0
    assert f"your ssh's default ({CHACHA}) takes {ratio:.2f}x" in lines[1]
    # The lines keep every default after the fastest (no lock-out), and drop only what the policy refuses.
    assert any(line.startswith(f"    Ciphers ^{p.cipher}") for p in found.fastest for line in lines)
    assert "    MACs -hmac-sha1" in lines
    assert not any(line.strip().startswith("KexAlgorithms") for line in lines)  # the default kex is first already
    doc = found.to_json()
    assert doc["tied"] and doc["default"]["is_fastest"] is False and doc["policy"] == "compatible"
    assert doc["config"].splitlines() == found.config and doc["undecided"] == [] and doc["advice"] is None


def test_default_fastest_says_configuring_buys_nothing_and_missing_default_says_why() -> None:
    fast_default = answer.compute(_run({CHACHA: [700, 710, 690], GCM128: [300, 310, 305]}))
    assert fast_default is not None and fast_default.default_is_fastest
    assert "is the fastest: configuring buys nothing measurable here" in fast_default.lines()[1]
    no_reference = _run({GCM128: [700, 710, 690], GCM256: [300, 310, 305]})
    no_reference.settings = replace(no_reference.settings, default_reference=False)
    unmeasured = answer.compute(no_reference)
    assert unmeasured is not None and unmeasured.default is None
    assert "was not measured in this run (--no-reference leaves it out)" in unmeasured.lines()[1]
    no_baselines = _run({GCM128: [700, 710, 690], GCM256: [300, 310, 305]})
    no_baselines.settings = replace(
        no_baselines.settings, baselines=False
    )  # the option the user passed is the one named
    found = answer.compute(no_baselines)
    assert found is not None and "(--no-baselines leaves it out)" in found.lines()[1]
    failed = answer.compute(_run({GCM128: [700, 710, 690], GCM256: [300, 310, 305]}))  # measured, none valid
    assert failed is not None and failed.lines()[1].endswith("): no valid trial in this run")
    older = answer.compute(_run({GCM128: [700, 710, 690]}, default=False))
    assert older is not None and "not recorded" in (older.default_note or "")


@pytest.mark.parametrize("runs", [None, 3])
def test_undecided_says_what_to_run(runs: int | None) -> None:
    result = _run({GCM128: [700, 450, 760], GCM256: [560, 600, 400], CHACHA: [100, 105, 98]}, runs=runs)
    found = answer.compute(result)
    assert found is not None and found.undecided and found.advice is not None
    assert found.advice.startswith("undecided: aes")
    # about 41 paired rounds in all would decide it: 38 more than the 3 run (15 s each)
    assert "about 38 more round(s)" in found.advice and found.undecided[0]["reason"] == "more-rounds"
    assert ("--budget 11m" in found.advice) if runs is None else ("--runs 41" in found.advice)
    head, _, rest = (found.advice or "").partition("; ")
    assert found.lines()[-2:] == [f"  {head}", f"    {rest}"]


def test_rows_the_run_cannot_order_share_the_headline_and_the_line_in_ssh_default_order() -> None:
    """Issue 24: two runs that cannot tell aes128-gcm from aes256-gcm paste the same line, whichever of the
    two the rounds happened to put first, and the headline says they are not told apart (issue 64: "equivalent" is
    for a decided tie only)."""
    lines = []
    for first, second in ((GCM256, GCM128), (GCM128, GCM256)):
        result = _run({first: [700, 450, 760], second: [560, 600, 400], CHACHA: [100, 105, 98]})
        found = answer.compute(result)
        assert found is not None and found.fastest[0].cipher == first and found.not_told_apart
        assert not found.equivalent  # not decided tied: 560-760 against 400-600 MiB/s over three rounds
        assert found.lines()[0].startswith(f"Fastest here: {GCM128} or {GCM256} (not told apart)")
        lines.append(found.config)
        rows = summary.summaries(result)
        assert [s.relative_to_fastest for s in rows][0] == 1.0
        assert [s.relative_to_fastest for s in rows] == sorted(s.relative_to_fastest or 0 for s in rows)
    assert lines[0] == lines[1] and lines[0][0] == f"Ciphers ^{GCM128},{GCM256}"


def test_a_default_only_not_told_apart_and_well_behind_shows_its_ratio() -> None:
    """A noisy 3-round --full put chacha20-poly1305 (the default) at 1.41x (0.72-2.76) in the fastest group, and
    the block said "among the fastest: no change needed"; a default close to the first keeps its place. Issue 64:
    absence of evidence is not "as fast": the far default is not among the fastest, its interval down to 1 is no
    "takes N x as long", and the Ciphers line is written as the medians place it, marked not decided."""
    far = answer.compute(_run({GCM128: [900, 500, 1000], CHACHA: [600, 560, 620]}))
    assert far is not None and not far.default_is_fastest and far.default is not None
    ratio, ci = far.default.relative_to_fastest, far.default.relative_to_fastest_ci95
    assert ratio is not None and ratio > 1.03 and ci is not None and ci[0] < 1
    line = far.lines()[1]
    assert line.startswith(f"  your ssh's default ({CHACHA}): {ratio:.2f}x (") and line.endswith("as long, not decided")
    assert "no change needed" not in line and "takes" not in line and len(line) <= 100
    assert far.config[0] == f"Ciphers ^{GCM128}" and far.config_status["Ciphers"]["decided"] is False
    why = far.config_status["Ciphers"]["why"]
    assert why.startswith("not decided: aes128-gcm against your default chacha20-poly1305, ")
    assert f"    {why.partition('; ')[0]}" in far.lines() and len(f"    {why.partition('; ')[0]}") <= 100
    near = answer.compute(_run({GCM128: [700, 450, 760], CHACHA: [690, 470, 740]}))
    assert near is not None and near.default_is_fastest
    assert near.lines()[1].endswith(("not told apart: no change", "configuring buys nothing measurable here"))
    assert not near.config_status  # the line keeps your default first: nothing to decide


def test_too_few_rounds_is_said_as_such_not_blamed_on_the_tie_margin() -> None:
    """Issue 24: `--runs 2` left a pair at 1.23 (1.16-1.30) undecided for lack of rounds, and the answer had
    said their ratio sat at the tie margin."""
    found = answer.compute(_run({GCM128: [700, 690], CHACHA: [570, 560]}, runs=2))
    assert found is not None and found.undecided and found.undecided[0]["reason"] == "few-rounds"
    assert "tie margin" not in (found.advice or "") and "--runs 3" in (found.advice or "")


def test_the_slowest_row_has_a_line_of_its_own_and_the_block_fits_100_columns() -> None:
    result = _run(
        {
            GCM128: [640, 600, 660, 630, 650, 620],
            CHACHA: [380, 350, 390, 372, 385, 366],
            "3des-cbc": [24, 23, 25, 24, 22, 24],
        }
    )
    found = answer.compute(result)
    assert found is not None and found.slowest is not None
    lines = found.lines()
    assert lines[1].endswith("as long") and "3des" not in lines[1]
    assert lines[2].startswith("  slowest: 3des-cbc") and lines[2].endswith("x as long")
    assert all(len(line) <= 100 for line in lines if line.strip() not in found.config), lines


def test_the_config_lines_put_first_what_the_headline_names() -> None:
    # aes128-gcm is faster round by round (paired ratios 1.014, 1.010, 0.997) though its median is lower.
    result = _run({GCM128: [700, 500, 610], GCM256: [690, 495, 612], CHACHA: [300, 290, 310]})
    found = answer.compute(result)
    assert found is not None and found.config
    ciphers = next(line for line in found.config if line.startswith("Ciphers"))
    assert ciphers.startswith(f"Ciphers ^{found.fastest[0].cipher}"), (found.fastest, ciphers)


def test_on_a_narrow_terminal_lines_break_between_words_and_config_lines_stay_whole() -> None:
    import io

    from rich.console import Console

    from sshbench.report import conclusion

    result = _run({GCM128: [700, 690, 710], GCM256: [695, 700, 690], CHACHA: [380, 350, 390]})
    found = answer.compute(result)
    assert found is not None and found.config
    out = io.StringIO()
    conclusion.print_block(result, Console(file=out, width=60, force_terminal=True, color_system=None))
    printed = out.getvalue().splitlines()
    for line in found.config:  # pasted as they are: one line each, however long
        assert f"    {line}" in printed
    words = {w for line in found.lines() for w in line.split()}
    for line in printed:
        if line.strip() not in found.config:
            assert len(line) <= 60 or len(line.split()) == 1, line
            assert all(w in words for w in line.split()), line  # no word cut in two
    piped = io.StringIO()
    conclusion.print_block(result, Console(file=piped, width=60, color_system=None))
    assert piped.getvalue().splitlines() == found.lines()  # into a pipe: one line per fact


def test_a_check_of_other_lines_than_the_ones_shown_says_so() -> None:
    """A stored run's check was of the lines `run` wrote then: shown under other lines (a later sshbench's
    rules), it says which; under the same lines, or from a run stored before the lines were recorded, as it was."""
    result = _run({GCM128: [700, 710, 705], GCM256: [500, 505, 502], CHACHA: [300, 290, 310]})
    checked = "connected to private sshd 127.0.0.1:2222 with these lines (got aes128-gcm)"
    result.environment[answer.CHECKED_KEY] = checked
    found = answer.compute(result)
    assert found is not None and found.config and found.config_checked == checked  # nothing recorded: as it was
    result.environment[answer.CHECKED_LINES_KEY] = list(found.config)
    result.cache.clear()  # the answer is cached per state of the trials; a stored run is loaded afresh
    same = answer.compute(result)
    assert same is not None and same.config_checked == checked
    result.environment[answer.CHECKED_LINES_KEY] = ["Ciphers ^aes128-ctr"]
    result.cache.clear()
    other = answer.compute(result)
    assert other is not None and other.config_checked is not None
    assert other.config_checked.startswith(checked) and "not these: Ciphers ^aes128-ctr" in other.config_checked


def test_rows_that_differ_only_in_kex_are_named_with_it() -> None:
    """`--kex curve25519-sha256` also measures your ssh's default kex: two chacha20-poly1305 rows, which the
    headline and the undecided line named alike ("chacha20-poly1305 or chacha20-poly1305")."""
    result = _run({CHACHA: [500, 470, 520, 495, 505], GCM128: [300, 290, 310, 305, 295]})
    other_kex = Combination(cipher=CHACHA, mac=IMPLICIT_MAC, kex="curve25519-sha256")
    result.trials += [
        Trial(
            other_kex, "transfer", rep, False, payload_bytes=64 * MIB, started_at=float(rep), valid=True, data_s=64 / r
        )
        for rep, r in enumerate([480, 500, 490, 510, 470])
    ]
    found = answer.compute(result)
    assert found is not None
    headline = found.lines()[0]
    assert "chacha20-poly1305@openssh.com (kex curve25519-sha256)" in headline, headline
    assert f"chacha20-poly1305@openssh.com (kex {KEX.removesuffix('@openssh.com')})" in headline, headline
    assert found.advice is not None and "chacha20-poly1305 (kex " in found.advice, found.advice
    assert "kex_shown" not in found.to_json()["fastest"][0]  # the JSON's picks keep their keys


def test_a_run_says_whether_it_agrees_with_the_earlier_runs_of_its_set_up() -> None:
    """Issue 64: five runs wrote the Ciphers line, the sixth (a noisier minute) did not; each answered from its own
    minute alone. A run now holds its answer against the earlier comparable runs (answers/agreement.py)."""
    from sshbench.answers import agreement

    decided = [_run({GCM128: [900, 880, 910], CHACHA: [500, 490, 520]}) for _ in range(3)]
    noisy = _run({GCM128: [900, 500, 1000], CHACHA: [600, 560, 620]})  # chacha20 not told apart, 1.3x at the median
    same = agreement.agreement(noisy, decided)
    assert same is not None and same.runs == 3 and same.agrees  # the same line, here with a not-decided status
    line = same.line()
    assert line.startswith("agrees with the 3 earlier runs of this set-up: the same config lines (there decided, here")
    assert "your default 1.29x here, 1.78x there" in line, line
    upgraded = replace(noisy, environment={**noisy.environment, "server_ssh_version": "OpenSSH_10.0"})
    assert agreement.agreement(upgraded, decided) is None  # another sshd: a change to see, not a run to agree with
    near = _run({GCM128: [700, 450, 760], CHACHA: [690, 470, 740]})  # its default keeps its place: no line
    differs = agreement.agreement(near, decided)
    assert differs is not None and not differs.agrees
    assert differs.line().startswith(f"differs from the 3 earlier runs of this set-up: 3 wrote Ciphers ^{GCM128}")
    noisy.environment[answer.AGREEMENT_KEY] = same.to_json()
    found = answer._compute(noisy)
    assert found is not None and [f"  {same.lines()[0]}", f"    {same.lines()[1]}"] == found.lines()[-2:]
