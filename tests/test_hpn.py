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
    """links.path.receive_buffer: twice the bandwidth-delay product (autotuning's target), within this machine's
    tcp_rmem; nothing where autotuning has a round trip of its own to grow on (no delay) or no BDP (no rate)."""
    from sshbench.links import LINKS
    from sshbench.links.path import receive_buffer

    root = (4096, 131072, 32 * 1024 * 1024)
    lfn = LINKS["lfn1g"]  # 1 Gbit/s x 167 ms: a BDP of 20.9 MB
    assert receive_buffer(lfn, root) == 32 * 1024 * 1024  # 41.8 MB wanted, this machine's max allows 32 MiB
    assert receive_buffer(lfn, (4096, 131072, 128 * 1024 * 1024)) == 2 * (lfn.bdp_bytes() or 0)
    assert receive_buffer(LINKS["wan24m"], root) == max(131072, 2 * (LINKS["wan24m"].bdp_bytes() or 0))
    assert receive_buffer(LINKS["loopback"], root) is None
    assert receive_buffer(LINKS["lan1g"], root) is None  # no delay: the veth's own round trip


@needs_hpn
@pytest.mark.skipif(
    namespaces.missing_requirement([LINKS["wan100m"]]) is not None,
    reason=f"emulated links unavailable here: {namespaces.missing_requirement([LINKS['wan100m']])}",
)
def test_sshd_builds_side_by_side_behind_an_emulated_link_each_behind_a_namespace_pair_of_its_own(tmp_path):
    """`--link` with several `--sshd` builds (refused before): one namespace pair per build, every trial over the
    link, the receive buffer a real path of its RTT grows to recorded with the link; nothing left after."""
    done, doc = run_json(
        tmp_path,
        "run",
        "--link",
        "wan100m",
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
        "--no-baselines",
        timeout=240,
    )
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer"]
    assert {t["sshd_build"] for t in transfers if t["valid"]} == {
        b["label"] for b in doc["environment"]["builds"]["sshd"]
    }
    assert {t["link"] for t in transfers} == {"wan100m"}
    servers = doc["target"]["servers"]
    assert len({s["label"] for s in servers.values()}) == 2  # two sshds, each in a namespace of its own
    assert doc["baselines"]["links"]["wan100m"]["tcp_rmem_initial"] >= 128 * 1024
    assert "TCP receive buffers: wan100m " in done.stdout
    assert not namespaces.own_namespaces()
