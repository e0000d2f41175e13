"""The bottleneck verdict on constructed measurements (a pure function: no I/O)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sshbench.baselines import bottleneck
from sshbench.baselines.bottleneck import Measurements, verdict


def word(**kwargs) -> str:
    found = verdict(Measurements(**kwargs))
    assert found is not None
    return found.bound_by


def test_no_throughput_no_verdict() -> None:
    assert verdict(Measurements(mib_s=None)) is None
    assert verdict(Measurements(mib_s=0.0)) is None


def test_network_when_within_ten_percent_of_raw_tcp() -> None:
    assert word(mib_s=95, raw_tcp_mib_s=100, client_cpu_cores=1.0, crypto_ceiling_mib_s=100) == "network"
    # Just below the threshold the next check decides.
    assert word(mib_s=89, raw_tcp_mib_s=100, crypto_ceiling_mib_s=100) == "crypto"


def test_compressed_the_wire_not_the_payload_is_held_against_raw_tcp() -> None:
    """zlib on text at 100 Mbit/s: 36 MiB/s of payload is 316% of raw TCP's 11.5, which read as "network" while the
    client's core compressing it was full and the wire carried 6 MiB/s. The wire's rate decides."""
    compressing = {"mib_s": 36.2, "raw_tcp_mib_s": 11.5, "client_cpu_cores": 0.99, "server_cpu_cores": 0.3}
    assert word(**compressing, wire_mib_s=6.0) == "client-cpu"
    found = verdict(Measurements(**compressing, wire_mib_s=11.2))  # the wire full: the link is the limit
    assert found is not None and found.bound_by == "network"
    assert found.evidence.startswith("11.2 MiB/s on the wire (36 of payload) is 97% of raw TCP"), found.evidence


def test_crypto_when_within_twenty_percent_of_the_ceiling() -> None:
    found = verdict(Measurements(mib_s=20, raw_tcp_mib_s=3000, crypto_ceiling_mib_s=22, client_cpu_cores=1.0))
    assert found is not None and found.bound_by == "crypto"
    assert "91%" in found.evidence and "22 MiB/s" in found.evidence
    assert word(mib_s=79, crypto_ceiling_mib_s=100) == "ssh-overhead"


def test_client_or_server_cpu_when_near_one_core() -> None:
    assert (
        word(mib_s=400, raw_tcp_mib_s=3000, crypto_ceiling_mib_s=4000, client_cpu_cores=0.97, server_cpu_cores=0.5)
        == "client-cpu"
    )
    assert (
        word(mib_s=400, raw_tcp_mib_s=3000, crypto_ceiling_mib_s=4000, client_cpu_cores=0.5, server_cpu_cores=0.93)
        == "server-cpu"
    )
    # Both busy: naming the busier one would be a guess (0.92 vs 0.99 of a core); --why tells by experiment.
    both = verdict(Measurements(mib_s=400, client_cpu_cores=0.92, server_cpu_cores=0.99))
    assert both is not None and both.bound_by == "both-cpu"
    assert "client used 0.92" in both.evidence and "session 0.99" in both.evidence
    # The threshold itself counts as busy; just under it does not.
    assert word(mib_s=400, client_cpu_cores=bottleneck.CPU_BUSY_CORES) == "client-cpu"
    assert word(mib_s=400, client_cpu_cores=0.89) == "ssh-overhead"


def test_disk_only_when_a_disk_is_in_the_path() -> None:
    assert word(mib_s=180, disk_mib_s=190, raw_tcp_mib_s=3000) == "disk"
    assert word(mib_s=180, disk_mib_s=None, raw_tcp_mib_s=3000) == "ssh-overhead"


def test_window_on_an_emulated_link() -> None:
    # 2 MiB window over 20 ms RTT caps a channel at 100 MiB/s.
    assert word(mib_s=90, window_bytes=2 * 1024 * 1024, rtt_s=0.020, raw_tcp_mib_s=500) == "window"
    assert word(mib_s=50, window_bytes=2 * 1024 * 1024, rtt_s=0.020, raw_tcp_mib_s=500) == "ssh-overhead"
    assert word(mib_s=90, window_bytes=2 * 1024 * 1024, rtt_s=None) == "ssh-overhead"


def test_order_network_before_crypto_before_cpu() -> None:
    everything = dict(mib_s=100, raw_tcp_mib_s=100, crypto_ceiling_mib_s=100, client_cpu_cores=1.0)
    assert word(**everything) == "network"
    assert word(**{**everything, "raw_tcp_mib_s": 1000}) == "crypto"
    assert word(**{**everything, "raw_tcp_mib_s": 1000, "crypto_ceiling_mib_s": 1000}) == "client-cpu"


def test_ssh_overhead_evidence_names_the_fractions() -> None:
    found = verdict(
        Measurements(
            mib_s=400, raw_tcp_mib_s=2000, crypto_ceiling_mib_s=4000, client_cpu_cores=0.3, server_cpu_cores=0.8
        )
    )
    assert found is not None and found.bound_by == "ssh-overhead"
    assert "20% of raw TCP" in found.evidence and "10% of the crypto ceiling" in found.evidence
    assert "server CPU 0.80 core" in found.evidence


@pytest.mark.parametrize("name", bottleneck.VERDICTS)
def test_every_verdict_has_one_sentence(name: str) -> None:
    sentence = bottleneck.EXPLANATIONS[name]
    assert sentence.endswith(".") and sentence.count(". ") == 0


def test_crypto_by_cpu_share_on_a_busy_machine() -> None:
    """3des at 20.7 MiB/s, ceiling 33 MiB/s per core, each side on 0.68 of a core (the rest taken by
    other load): the cipher needs 92% of the client's CPU time per byte, so crypto, not overhead."""
    found = verdict(
        Measurements(
            mib_s=20.7, raw_tcp_mib_s=3000, crypto_ceiling_mib_s=33.0, client_cpu_cores=0.68, server_cpu_cores=0.67
        )
    )
    assert found is not None and found.bound_by == "crypto"
    assert "94%" in found.evidence and "sshd session" in found.evidence  # the larger share: 0.67 core
    share = bottleneck.crypto_cpu_share(Measurements(mib_s=20.7, crypto_ceiling_mib_s=33.0, client_cpu_cores=0.68))
    assert share is not None and share[1] == "client" and share[0] == pytest.approx(0.922, abs=0.001)
    # A CPU figure that missed most of the time (a 2 MiB trial: 0.0125 core at 1000 MiB/s) is no evidence, where it
    # read "the cipher/MAC alone takes 1786% of the ssh client's CPU"; a zero quota (an imported document) no quota.
    assert (
        bottleneck.crypto_cpu_share(Measurements(mib_s=1000, crypto_ceiling_mib_s=4478, client_cpu_cores=0.0125))
        is None
    )
    assert word(mib_s=1000, crypto_ceiling_mib_s=4478, client_cpu_cores=0.0125, server_cpu_cores=0.01) == "ssh-overhead"
    assert word(mib_s=400, client_cpu_cores=0.5, server_cpu_cores=0.95, server_cpu_limit_cores=0.0) == "server-cpu"
    # aes-gcm far from its ceiling and a half-idle process: the crypto is a small share.
    assert word(mib_s=775, crypto_ceiling_mib_s=4837, client_cpu_cores=0.5, server_cpu_cores=0.6) == "ssh-overhead"


def test_shared_cores_when_client_and_server_fill_one_machine() -> None:
    # The 2-core loopback case: ssh 0.85 + sshd 0.76 of a core, neither full on its own.
    m = Measurements(
        mib_s=945.0,
        client_cpu_cores=0.85,
        server_cpu_cores=0.76,
        raw_tcp_mib_s=4400.0,
        crypto_ceiling_mib_s=4500.0,
        machine_cores=2,
        sink_cpu_cores=0.1,
    )
    v = verdict(m)
    assert v is not None and v.bound_by == "shared-cpu"
    assert "1.71 of this machine's 2 cores" in v.evidence
    # The same figures between two machines (no shared core count): judged per side, not full.
    apart = verdict(
        Measurements(
            mib_s=945.0, client_cpu_cores=0.85, server_cpu_cores=0.76, raw_tcp_mib_s=4400.0, crypto_ceiling_mib_s=4500.0
        )
    )
    assert apart is not None and apart.bound_by == "ssh-overhead"
    # --pin: ssh on one CPU, sshd and its reader on the other; both cores busy is no longer "shared": the
    # server side (sshd 0.76 + reader 0.2) filled its own core.
    pinned = verdict(replace(m, sink_cpu_cores=0.2, server_pinned_cpus=1))
    assert pinned is not None and pinned.bound_by == "server-cpu"
    assert "0.96 of a core" in pinned.evidence and "on its own 1 CPU" in pinned.evidence
    # An 8 MiB run's sshd read 2.80 cores on its 1 pinned CPU (a data phase of a few 10 ms ticks): no evidence
    implausible = verdict(replace(m, server_cpu_cores=2.6, sink_cpu_cores=0.2, server_pinned_cpus=1))
    assert implausible is not None and implausible.bound_by not in ("server-cpu", "both-cpu"), implausible


def test_shared_cores_below_threshold_and_crypto_first() -> None:
    quiet = Measurements(mib_s=300.0, client_cpu_cores=0.5, server_cpu_cores=0.4, machine_cores=4)
    assert verdict(quiet).bound_by == "ssh-overhead"  # 0.9 of 4 cores is not a full machine
    slow_cipher = Measurements(
        mib_s=29.0, client_cpu_cores=1.0, server_cpu_cores=0.95, crypto_ceiling_mib_s=30.0, machine_cores=2
    )
    assert verdict(slow_cipher).bound_by == "crypto"  # 3des-cbc stays `crypto`


# --- two machines (a remote host) and --server-cpu ----------------------------------------------------

TWO = {"two_machines": True, "client_machine_cores": 2, "server_machine_cores": 4}


def test_two_machines_name_the_side_whose_crypto_is_the_limit() -> None:
    # The server's ceiling is the slower: 90 MiB/s of its 100 is server-crypto, though the client is far from its own.
    found = verdict(
        Measurements(mib_s=90, raw_tcp_mib_s=1000, crypto_ceiling_mib_s=3000, server_crypto_ceiling_mib_s=100, **TWO)
    )
    assert found is not None and found.bound_by == "server-crypto"
    assert "server's one-core crypto ceiling (100 MiB/s" in found.evidence
    assert word(mib_s=90, crypto_ceiling_mib_s=100, server_crypto_ceiling_mib_s=3000, **TWO) == "client-crypto"
    # The CPU-share form per side: 10% of the client's ceiling but the client had only 0.1 core for it.
    assert (
        word(mib_s=100, crypto_ceiling_mib_s=1000, client_cpu_cores=0.11, server_crypto_ceiling_mib_s=5000, **TWO)
        == "client-crypto"
    )
    # Network and window still come first; one machine keeps the plain word.
    assert word(mib_s=95, raw_tcp_mib_s=100, server_crypto_ceiling_mib_s=100, **TWO) == "network"
    assert word(mib_s=90, crypto_ceiling_mib_s=100) == "crypto"


def test_two_machines_never_say_shared_cpu_and_judge_each_core_on_its_own() -> None:
    busy = {"mib_s": 400, "raw_tcp_mib_s": 3000, "crypto_ceiling_mib_s": 4000, "server_crypto_ceiling_mib_s": 4000}
    found = verdict(Measurements(**busy, client_cpu_cores=0.5, server_cpu_cores=0.95, machine_cores=None, **TWO))
    assert found is not None and found.bound_by == "server-cpu"
    assert "the server's machine has 4 cores" in found.evidence
    assert word(**busy, client_cpu_cores=0.6, server_cpu_cores=0.6, **TWO) == "ssh-overhead"


def test_server_cpu_quota_is_the_servers_whole_machine() -> None:
    # --server-cpu 0.1: 0.085 of a core is the whole quota (threshold 0.8 x 0.1; measured 0.084-0.099).
    found = verdict(
        Measurements(
            mib_s=30,
            crypto_ceiling_mib_s=3000,
            client_cpu_cores=0.05,
            server_cpu_cores=0.085,
            server_cpu_limit_cores=0.1,
        )
    )
    assert found is not None and found.bound_by == "server-cpu"
    assert "quota of 0.1 core" in found.evidence
    assert (
        word(mib_s=30, crypto_ceiling_mib_s=3000, server_cpu_cores=0.075, server_cpu_limit_cores=0.1) == "ssh-overhead"
    )
    # The reader's CPU counts with the session's (the quota limits them as a group).
    assert word(mib_s=30, server_cpu_cores=0.075, sink_cpu_cores=0.01, server_cpu_limit_cores=0.1) == "server-cpu"
    # A quota of a core or more: a session is one thread, so 0.9 of one core as without a quota.
    assert word(mib_s=300, server_cpu_cores=0.85, server_cpu_limit_cores=2.0) == "ssh-overhead"
    # 3DES under the same quota: its crypto alone needs the quota's time, so the cipher is named.
    assert word(mib_s=2, crypto_ceiling_mib_s=20, server_cpu_cores=0.1, server_cpu_limit_cores=0.1) == "crypto"


def test_a_server_at_its_quota_is_not_explained_by_the_clients_idle_crypto() -> None:
    # As measured at 0.1 core: 3des-cbc at 1.5 MiB/s (ceiling 24); the client's 0.065 core was all
    # cipher work (98%), but the server had used its whole quota, of which 3DES took 65%.
    quota = {"mib_s": 1.55, "crypto_ceiling_mib_s": 24, "client_cpu_cores": 0.065, "server_cpu_limit_cores": 0.1}
    assert word(**quota, server_cpu_cores=0.099) == "server-cpu"
    # The server's own crypto share still names the cipher; below its quota the client's counts as before.
    assert word(**{**quota, "mib_s": 2.2}, server_cpu_cores=0.099) == "crypto"
    assert word(**quota, server_cpu_cores=0.05) == "crypto"


@pytest.mark.parametrize(
    ("kind", "limited_by", "word"),
    [
        ("server-cpu", ["server-cpu"], "server-cpu"),
        ("shared", ["client-cpu", "server-cpu"], "both-cpu"),
        ("link", ["link"], "network"),
        ("partial", [], None),  # partly: the row keeps its inferred verdict
    ],
)
def test_an_experiments_verdict_replaces_the_inferred_one_for_its_row(kind, limited_by, word) -> None:
    from sshbench.baselines.analysis import _by_experiment
    from sshbench.results import Combination

    combo = Combination("aes128-gcm@openssh.com", "hmac-sha2-256", "curve25519-sha256")
    why = {
        "combinations": [
            {
                "combination": {"cipher": combo.cipher, "mac": combo.mac, "kex": combo.kex},
                "verdict": {"kind": kind, "limited_by": limited_by, "line": "slowing it by 50% cost 63%"},
            }
        ]
    }
    found = _by_experiment(why, combo)
    assert (found.bound_by if found else None) == word
    if found:
        assert found.evidence == "by experiment: slowing it by 50% cost 63%"
    assert _by_experiment(why, Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256")) is None


def test_an_hpn_ssh_receivers_window_is_its_socket_buffer_not_openssh_2_mib() -> None:
    """baselines/bottleneck.channel_window: the end that receives the data sets the window one channel waits on. HPN-SSH
    sizes it from its socket's buffer (lfn1g: 114 MiB/s at 167 ms, where 2 MiB holds OpenSSH at 11.7), so an HPN-SSH
    receiver's row is held against that buffer / RTT, not 2 MiB / RTT ("window" would have been its verdict)."""
    from types import SimpleNamespace

    from sshbench.baselines.bottleneck import channel_window
    from sshbench.results import Combination

    stock, hpn = "OpenSSH_9.2p1", "OpenSSH_10.2p1_hpn18.8.0"
    link = {"window_bytes": 2 << 20, "rtt_s": 0.167, "tcp_rmem_initial": 32 << 20}
    result = SimpleNamespace(environment={"client_ssh_version": stock, "server_ssh_version": stock})

    def row(ssh: str, sshd: str, direction: str = "up") -> Combination:
        return Combination(
            "aes128-gcm@openssh.com", "implicit", "k", direction=direction, ssh_build=ssh, sshd_build=sshd
        )

    assert channel_window(row(stock, stock), link, result) == 2 << 20
    assert channel_window(row(stock, hpn), link, result) == 32 << 20  # upload: hpnsshd receives
    assert channel_window(row(hpn, stock), link, result) == 2 << 20  # upload: OpenSSH's sshd receives
    assert channel_window(row(hpn, stock, "down"), link, result) == 32 << 20  # download: hpnssh receives
    hpn_server = SimpleNamespace(environment={"client_ssh_version": stock, "server_ssh_version": hpn})
    assert channel_window(row("", ""), link, hpn_server) == 32 << 20  # no sweep: the run's own server
    assert channel_window(row(stock, hpn), {"window_bytes": 2 << 20, "rtt_s": 0.167}, result) is None  # unknown
