"""HPN-SSH as users have it: built from the vendored source into its own prefix (scripts/build-hpnssh.sh, which
`make test` runs; cached), its programs and helpers under HPN's own names (hpnssh, hpnsshd, libexec/hpnsshd-session
and hpnsshd-auth). `--sshd PREFIX/sbin/hpnsshd` alone must find its helpers, run, and check the conclusion's lines
against it; swept beside this machine's sshd, each build is labelled by its banner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_json, sshbench_temp_dirs
from sshbench.links import LINKS, namespaces
from sshbench.openssh import builds

# Read before the autouse fixture points XDG_CACHE_HOME at a per-test dir: the prefix build-hpnssh.sh made.
HPN = Path(
    os.environ.get("SSHBENCH_HPN_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sshbench" / "hpn-ssh-18.8.0"
)
HPNSSH, HPNSSHD = str(HPN / "bin/hpnssh"), str(HPN / "sbin/hpnsshd")
needs_hpn = pytest.mark.skipif(
    not (os.access(HPNSSH, os.X_OK) and os.access(HPNSSHD, os.X_OK)),
    reason=f"HPN-SSH not built at {HPN} (sh scripts/build-hpnssh.sh: it says what it lacks)",
)


def test_a_renamed_builds_helpers_are_looked_for_under_its_own_names_first():
    assert builds.helper_names("/opt/hpn/sbin/hpnsshd", "sshd-session") == ["hpnsshd-session", "sshd-session"]
    assert builds.helper_names("/opt/hpn/sbin/hpnsshd", "sshd-auth") == ["hpnsshd-auth", "sshd-auth"]
    assert builds.helper_names("/usr/sbin/sshd", "sshd-session") == ["sshd-session"]


@needs_hpn
def test_hpnsshd_alone_finds_its_helpers_where_it_was_built_to():
    found = builds.inspect(HPNSSHD, "sshd")
    assert found.family == "hpn-ssh" and found.label.startswith("OpenSSH_10.2p1")
    assert dict(found.helpers) == {
        "SshdSessionPath": str((HPN / "libexec/hpnsshd-session").resolve()),
        "SshdAuthPath": str((HPN / "libexec/hpnsshd-auth").resolve()),
    }
    assert builds.inspect(HPNSSH, "ssh").family == "hpn-ssh"


@needs_hpn
def test_hpn_ssh_at_both_ends_and_beside_this_machines_sshd_runs_and_checks_its_lines(tmp_path):
    before = sshbench_temp_dirs()
    done, doc = run_json(
        tmp_path,
        "run",
        "--ssh",
        HPNSSH,
        "--sshd",
        f"/usr/sbin/sshd,{HPNSSHD}",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "4M",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--no-why",
        timeout=180,
    )
    sshd = doc["environment"]["builds"]["sshd"]
    assert [b["family"] for b in sshd] == ["openssh", "hpn-ssh"]
    served = {t["sshd_build"] for t in doc["trials"] if t["valid"] and t["kind"] == "transfer"}
    assert served == {b["label"] for b in sshd}  # every row measured against both servers
    assert doc["answer"]["config_checked"].startswith("checked"), doc["answer"]["config_checked"]
    assert "NOT checked" not in done.stderr
    assert sshbench_temp_dirs() == before


def test_an_emulated_paths_sockets_start_with_the_buffer_a_real_path_of_its_rtt_grows_to():
    """links.shaping.receive_buffer: twice the bandwidth-delay product (autotuning's target), within this machine's
    tcp_rmem; nothing where autotuning has a round trip of its own to grow on (no delay) or no BDP (no rate)."""
    from sshbench.links import LINKS
    from sshbench.links.shaping import receive_buffer

    root = (4096, 131072, 32 * 1024 * 1024)
    lfn = LINKS["lfn1g"]  # 1 Gbit/s x 167 ms: a BDP of 20.9 MB
    assert receive_buffer(lfn, root) == 32 * 1024 * 1024  # 41.8 MB wanted, this machine's max allows 32 MiB
    assert receive_buffer(lfn, (4096, 131072, 128 * 1024 * 1024)) == 2 * (lfn.bdp_bytes() or 0)
    assert receive_buffer(LINKS["wan24m"], root) == max(131072, 2 * (LINKS["wan24m"].bdp_bytes() or 0))
    assert receive_buffer(LINKS["loopback"], root) is None
    assert receive_buffer(LINKS["lan1g"], root) is None  # no delay: the veth's own round trip


LONG_FAT = "rate=1gbit,delay=25ms"  # 50 ms RTT: OpenSSH's 2 MiB window holds one channel near 40 MiB/s


@needs_hpn
@pytest.mark.timed
@pytest.mark.skipif(
    namespaces.missing_requirement([LINKS["wan100m"]]) is not None,
    reason=f"emulated links unavailable here: {namespaces.missing_requirement([LINKS['wan100m']])}",
)
def test_on_a_long_fat_link_remedies_measure_hpn_ssh_and_streams_against_the_users_setup(tmp_path, monkeypatch):
    """--remedies (auto over a link with a delay) finds HPN-SSH ($SSHBENCH_HPN_DIR: the tests' cache is their own)
    and measures it at both ends, the server only and the client only, and -P 4, beside the user's row, each sshd
    build behind a namespace pair of its own, the sockets with the buffer a real path of the RTT grows to. Measured
    here against OpenSSH 9.2's 38.5 MiB/s: -P 4 2.67x, HPN-SSH at the server only 2.33x, at both ends 2.31x (the
    link's 119 MiB/s less a 32 MiB payload's window growth), the client only 0.99x (an upload waits on the server's
    window). At 80 ms and 48 MiB the test took 51 s instead of 33.
    """
    monkeypatch.setenv("SSHBENCH_HPN_DIR", str(HPN))
    done, doc = run_json(
        tmp_path,
        "run",
        "--link",
        LONG_FAT,
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--size",
        "32M",
        "--runs",
        "3",
        "--warmup",
        "0",
        "--no-why",
        "--no-baselines",
        timeout=300,
    )
    found = {r["name"]: r for r in doc["remedies"]["remedies"]}
    assert set(found) == {"hpn-both", "hpn-server", "hpn-client", "streams"}, found
    assert found["hpn-both"]["ratio"] >= 2 and found["hpn-both"]["decision"] == "faster", found["hpn-both"]
    # four 8 MiB streams, each mostly its own ramp-up: 2.0-2.7x here
    assert found["streams"]["ratio"] >= 1.5 and found["streams"]["decision"] == "faster", found["streams"]
    assert found["hpn-client"]["ratio"] < 1.3, found["hpn-client"]  # an upload waits on the server's window
    order = [r["name"] for r in doc["remedies"]["remedies"]]
    assert order.index("hpn-both") < order.index("hpn-client")  # most gain first
    assert "What would help" in done.stdout and "HPN-SSH at both ends" in done.stdout
    assert doc["answer"]["bound_by"]["verdict"] == "window"  # the user's row: OpenSSH's window over the RTT
    servers = doc["target"]["servers"]
    assert len({s["label"] for s in servers.values()}) == 2  # two sshds, each in a namespace of its own
    link = next(iter(doc["baselines"]["links"].values()))
    assert link["tcp_rmem_initial"] >= 2 * link["bdp_bytes"] or link["tcp_rmem_initial"] == link["tcp_rmem_max"]
    assert "TCP receive buffers: " in done.stdout
    assert not namespaces.own_namespaces()
