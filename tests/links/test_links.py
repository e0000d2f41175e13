"""Emulated links (`--link`): profile parsing, real namespaces shaped with real tc, the delay relay,
the raw TCP control over the link, a real sshd behind it, and cleanup after a normal exit, SIGINT,
SIGTERM and kill -9 (tests skip with a reason without root or iproute2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from conftest import run_cli, start_cli, wait_for_line, wait_until
from sshbench.baselines.raw_tcp import run_raw_tcp_trial
from sshbench.errors import UsageError
from sshbench.host.cleanup import Cleanup
from sshbench.host.leftovers import clean_leftovers
from sshbench.links import LINKS, namespaces, parse_links, profile_named, shaping
from sshbench.links import path as linkpath
from sshbench.units import MIB

# Real namespaces, tc and sshd are `timed` (run alone by `make test`): RTTs, compression against a link's rate,
# and the host's own veths and namespaces counted. Parsing and bad input run with the rest.

NEEDS_NETNS = pytest.mark.skipif(
    namespaces.missing_requirement([LINKS["lan1g"]]) is not None,
    reason=f"emulated links unavailable here: {namespaces.missing_requirement([LINKS['lan1g']])}",
)
FAST_KEX = ["--kex", "curve25519-sha256", "--ciphers", "aes128-gcm@openssh.com", "--no-reference"]


def namespaces_of(pid: int) -> list[str]:
    return [n for n in namespaces.own_namespaces() if n.startswith(f"{namespaces.PREFIX}{pid}-")]


def host_has_our_veths() -> bool:
    out = subprocess.run(
        [namespaces._find_tool("ip") or "ip", "-o", "link", "show"], capture_output=True, text=True, timeout=10
    ).stdout
    return any(f" {dev}@" in out or f" {dev}:" in out for dev in (linkpath.CLIENT_IF, linkpath.SERVER_IF))


# --- parsing (no privileges needed) ----------------------------------------------------------------


def test_profiles_document_their_numbers():
    for profile in LINKS.values():
        assert profile.source, profile.name
    assert LINKS["wan24m"].rate_bit_s == 24_000_000 and "seed 000" in LINKS["wan24m"].source
    assert LINKS["lan1g"].rate_bit_s == 1_000_000_000


def test_custom_profiles_group_key_value_tokens():
    found = parse_links("lan1g,rate=200mbit,delay=20ms,loss=0.1%,jitter=2ms")
    assert [p.name for p in found] == ["lan1g", "200mbit/20ms/j2ms/loss0.1%"]
    custom = found[1]
    assert (custom.rate_bit_s, custom.delay_ms, custom.jitter_ms, custom.loss_pct) == (200_000_000, 20.0, 2.0, 0.1)
    # `+` (or `;`) separates custom profiles; a repeated key starts a new one too
    assert [p.name for p in parse_links("rate=50mbit,delay=40ms+rate=10mbit")] == ["50mbit/40ms", "10mbit/0ms"]
    assert [p.name for p in parse_links("rate=50mbit,rate=10mbit")] == ["50mbit/0ms", "10mbit/0ms"]
    # the stable name parses back to the same profile (stored results, charts)
    assert profile_named(custom.name) == custom


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", "unknown link 'nope'"),
        ("rate=fast", "malformed rate 'fast'"),
        ("rate=10mbps", "malformed rate '10mbps'"),
        ("rate=10mbit,delay=3", "malformed delay '3'"),
        ("rate=10mbit,speed=1", "unknown link setting 'speed'"),
        ("rate=10mbit,loss=150%", "malformed loss"),
    ],
)
def test_bad_link_specs_are_one_clear_line(spec: str, message: str):
    with pytest.raises(UsageError, match=message):
        parse_links(spec)


def test_bad_link_on_the_command_line_exits_2():
    for spec in ("nope", "rate=10mbps"):
        done = run_cli("run", "--link", spec, timeout=30)
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@NEEDS_NETNS
def test_without_cap_net_admin_a_link_fails_with_one_line():
    setpriv = namespaces._find_tool("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) not installed: cannot drop capabilities")
    done = subprocess.run(
        [setpriv, "--bounding-set", "-net_admin,-sys_admin", *_cli("run", "--link", "lan1g")],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "needs CAP_NET_ADMIN" in done.stderr and "Traceback" not in done.stderr


def _cli(*args: str) -> list[str]:
    from conftest import sshbench_argv

    return sshbench_argv(*args)


# --- real namespaces and tc ----------------------------------------------------------------------


@pytest.mark.timed
@NEEDS_NETNS
def test_shaped_link_rate_and_delayed_link_rtt(tmp_path):
    """100 Mbit/s within 10% by the raw TCP control through tbf; a 20 ms one-way delay adds 40 ms RTT
    (within 20%) through netem or, without it, the relay; everything removed by the Cleanup."""
    profiles = parse_links("lan100m,rate=100mbit,delay=20ms")
    payload = tmp_path / "payload"
    payload.write_bytes(os.urandom(6 * MIB))
    cleanup = Cleanup()
    path = linkpath.LinkPath(profiles)
    try:
        path.create(cleanup)
        path.start_relays(22, cleanup)
        for profile in profiles:
            path.switch(profile.name)
            end = path.endpoint(profile.name, 22, "raw")
            # tbf alone: within 10% (TCP/IP headers take ~4%). Through the userspace relay the receiver's
            # clock also holds the first chunk's 20 ms and the relay's scheduling: at least 80%.
            low = 90 if path.states[profile.name].method == shaping.METHOD_TBF else 80
            readings: list[float] = []
            # No reading above the profile, and the link carries it: up to 3 transfers, since one stall of this
            # shared machine in a 0.5 s transfer read 80.0 Mbit/s through tbf (one CI run in five)
            while len(readings) < 3 and (not readings or max(readings) < low):
                trial = run_raw_tcp_trial(
                    payload=payload,
                    payload_bytes=6 * MIB,
                    repetition=0,
                    warmup=False,
                    timeout_s=30,
                    path={
                        "sink": (linkpath.SERVER_ADDR, linkpath.RAW_TCP_PORT),
                        "sink_netns": path.server_ns,
                        "connect": (end.host, end.port),
                        "sender_netns": path.client_ns,
                    },
                )
                assert trial.valid, trial.invalid_reason
                readings.append(trial.payload_bytes * 8 / trial.data_s / 1e6)
            assert max(readings) <= 110 and max(readings) >= low, (
                f"{profile.name}: {', '.join(f'{r:.1f}' for r in readings)} Mbit/s over a 100 Mbit/s profile"
            )
        assert path.measure_rtt("lan100m", 22) < 2.0
        rtt = path.measure_rtt("100mbit/20ms", 22)
        assert rtt is not None and 32 <= rtt <= 48, f"RTT {rtt} ms for 2 x 20 ms"
        method = path.states["100mbit/20ms"].method
        assert method == (shaping.METHOD_NETEM if path.netem else shaping.METHOD_RELAY)
        path.collect_counters()
        assert path.states["lan100m"].tc["sent_bytes"] >= 6 * MIB  # the shaper saw the control's data
        assert len(namespaces_of(os.getpid())) == 2
    finally:
        cleanup.close()
    assert namespaces_of(os.getpid()) == [] and not host_has_our_veths()


@pytest.mark.timed
@NEEDS_NETNS
def test_netem_delay_when_the_kernel_has_it():
    cleanup = Cleanup()
    path = linkpath.LinkPath(parse_links("rate=100mbit,delay=10ms"))
    try:
        path.create(cleanup)
        if not path.netem:
            pytest.skip("this kernel has no sch_netem: delay comes from the userspace relay (tested above)")
        rtt = path.measure_rtt("100mbit/10ms", 22)
        assert rtt is not None and 16 <= rtt <= 24
    finally:
        cleanup.close()
    assert namespaces_of(os.getpid()) == []


@pytest.mark.timed
@NEEDS_NETNS
def test_compression_wins_on_wan24m_and_loses_on_loopback(tmp_path):
    """A real sshd behind the link: zlib on a text payload is faster than none at 24 Mbit/s (and the
    JSON carries the link's achieved rate and RTT), slower on loopback; nothing is left afterwards.
    Two runs: loopback needs a bigger payload to time (~800 MiB/s) than 24 Mbit/s can move quickly.
    The first runs over lan100m too: each link gets its own answer under the run's (condition_answer.py).
    One round over the links: there the uncompressed row moves at the shaper's rate whatever the load (2.7 MiB/s),
    and zlib's 4.5x on this text (12.3 MiB/s, at load 3 too) would have to lose two thirds of it to fall under
    1.5x. On loopback both rows are CPU-bound and the uncompressed one's data phase is ~0.1 s: three rounds,
    compared paired by round."""
    out = tmp_path / "wan.json"
    done = run_cli(
        "run",
        *FAST_KEX,
        "--link",
        "wan24m,lan100m",
        "--remedies",
        "off",  # its own compression rows are the question here (tests/test_remedies.py: --remedies)
        "--compression",
        "both",
        "--payload",
        "text",
        "--size",
        "4M",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--json",
        str(out),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout[-3000:]
    doc = json.loads(out.read_text())
    rates = {s["compression"]: s["median_mib_s"] for s in doc["summaries"] if s["link"] == "wan24m"}
    assert rates["zlib@openssh.com"] > 1.5 * rates["none"], rates
    per_link = doc["conditions_answer"]["conditions"]
    assert [entry["condition"] for entry in per_link] == ["wan24m", "lan100m"] and per_link[0]["rows"] == 2, per_link
    assert per_link[0]["fastest"].endswith("(zlib)"), per_link  # each link against its own fastest
    assert "per link (each row against the fastest with the same link" in done.stdout
    assert "\n  wan24m: " in done.stdout and "\n  lan100m: " in done.stdout
    assert "  slowest: " not in done.stdout.split("per link")[0]  # no WAN row named slowest across links
    wan = doc["baselines"]["links"]["wan24m"]
    assert 0.85 <= wan["achieved_vs_rate"] <= 1.10, wan
    assert 16 <= wan["rtt_measured_ms"] <= 24, wan
    assert wan["method"] in (shaping.METHOD_NETEM, shaping.METHOD_RELAY)
    assert "Links (emulated" in done.stdout
    assert ("how: tbf: tc tbf shapes the rate; relay: " in done.stdout) != ("how: netem: " in done.stdout), done.stdout
    assert not [n for n in namespaces.own_namespaces() if not _owner_alive(n)] and not host_has_our_veths()

    out = tmp_path / "loopback.json"
    done = run_cli(
        "run",
        *FAST_KEX,
        "--link",
        "loopback",
        "--compression",
        "both",
        "--payload",
        "text",
        "--size",
        "32M",
        "--runs",
        "3",
        "--warmup",
        "0",
        "--json",
        str(out),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout[-3000:]
    rows = {s["compression"]: s for s in json.loads(out.read_text())["summaries"]}
    # the run's ranking puts none first, zlib behind it by its paired ratio: 6-12x here; on loopback a zlib that
    # compressed nothing would read ~1x
    assert rows["none"]["rank"] == 1 and rows["zlib@openssh.com"]["relative_to_fastest"] > 2.0, rows


def _owner_alive(name: str) -> bool:
    m = namespaces._NAME.match(name)
    return bool(m) and namespaces._owner_alive(int(m.group(1)), int(m.group(2)))


def _start_long_run():
    proc = start_cli("run", *FAST_KEX, "--link", "wan24m", "--size", "16M", "--runs", "3", "--warmup", "0", "-v")
    assert proc.stderr is not None
    wait_for_line(proc.stderr, "trial 1/", timeout=60)  # namespaces, relay and sshd are up by the first trial
    assert len(namespaces_of(proc.pid)) == 2
    return proc


@pytest.mark.timed
@NEEDS_NETNS
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_nothing_left_after_a_signal(signum: int):
    proc = _start_long_run()
    proc.send_signal(signum)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum
    assert namespaces_of(proc.pid) == [] and not host_has_our_veths()


@pytest.mark.timed
@NEEDS_NETNS
def test_kill_9_leftovers_are_removed_by_the_next_run():
    proc = _start_long_run()
    proc.kill()
    proc.communicate(timeout=30)
    assert len(namespaces_of(proc.pid)) == 2  # what a kill -9 leaves behind
    removed = clean_leftovers()  # what the next run does first
    assert any(f"{namespaces.PREFIX}{proc.pid}-" in r for r in removed), removed
    wait_until(lambda: namespaces_of(proc.pid) == [], timeout=10, what="stale namespaces removed")
    assert not host_has_our_veths()


# --- sshbench crossover -----------------------------------------------------------------------------


def test_crossover_interpolates_inside_the_bracket():
    from sshbench.report.link_table import CrossoverPoint, crossover_rate

    points = [CrossoverPoint("a", 100, 10.0, 20.0), CrossoverPoint("b", 400, 40.0, 20.0)]  # 2x, then 0.5x
    assert crossover_rate(points) == pytest.approx(200, rel=0.01)  # log-log midway
    assert crossover_rate(points[:1]) is None
    assert crossover_rate([CrossoverPoint("a", 100, 10.0, 5.0), CrossoverPoint("b", 400, 40.0, 5.0)]) is None


def test_crossover_bad_input_is_one_line():
    done = run_cli("crossover", "--low", "1gbit", "--high", "10mbit", timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    done = run_cli("crossover", "--low", "fast", timeout=30)
    assert done.returncode == 2 and "malformed rate" in done.stderr


@pytest.mark.timed
@NEEDS_NETNS
def test_crossover_finds_compression_winning_at_the_low_rate(tmp_path):
    out = tmp_path / "cross.json"
    done = run_cli(
        "crossover",
        "--kex",
        "curve25519-sha256",
        "--low",
        "20mbit",
        "--high",
        "300mbit",
        "--points",
        "2",
        "--steps",
        "0",
        "--runs",
        "1",
        "--seconds",
        "0.3",
        "--json",
        str(out),
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(out.read_text())
    low = doc["points"][0]
    assert low["mbit_s"] == 20 and low["zlib_mib_s"] > low["plain_mib_s"]
    assert "seed 000 reported ~300 Mbit/s" in done.stdout
    assert not [n for n in namespaces.own_namespaces() if not _owner_alive(n)]
