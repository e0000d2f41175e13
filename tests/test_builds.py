"""Build sweeps (--ssh A,B / --sshd A,B): OpenSSH 9.2 (this machine's) against 10.0 (bookworm-backports,
fetched and extracted by scripts/fetch-openssh10.sh, which `make test` runs) in all four pairings, for real;
and the bad input that must be refused before anything runs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, run_json, sshbench_temp_dirs
from sshbench.errors import UsageError
from sshbench.openssh import builds

# Read before the autouse fixture points XDG_CACHE_HOME at a per-test dir: the tree fetch-openssh10.sh made.
OPENSSH10 = Path(
    os.environ.get("SSHBENCH_OPENSSH10_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sshbench" / "openssh-10.0"
)
SSH92, SSHD92 = "/usr/bin/ssh", "/usr/sbin/sshd"
SSH10, SSHD10 = str(OPENSSH10 / "usr/bin/ssh"), str(OPENSSH10 / "usr/sbin/sshd")
needs_10 = pytest.mark.skipif(
    not (os.access(SSH10, os.X_OK) and os.access(SSHD10, os.X_OK)),
    reason=f"OpenSSH 10.0 not extracted at {OPENSSH10} (sh scripts/fetch-openssh10.sh; the archive was unreachable?)",
)
needs_92 = pytest.mark.skipif(
    not (os.access(SSH92, os.X_OK) and os.access(SSHD92, os.X_OK))
    or "OpenSSH_9.2" not in subprocess.run([SSH92, "-V"], capture_output=True, text=True).stderr,
    reason="this machine's ssh/sshd are not OpenSSH 9.2",
)
MLKEM, SNTRUP = "mlkem768x25519-sha256", "sntrup761x25519-sha512"


@needs_10
@needs_92
def test_four_pairings_interleaved_each_negotiating_what_its_builds_speak(tmp_path):
    before = sshbench_temp_dirs()
    done, doc = run_json(
        tmp_path,
        "run",
        "--ssh",
        f"{SSH92},{SSH10}",
        "--sshd",
        f"{SSHD92},{SSHD10}",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--size",
        "2M",
        "--runs",
        "2",
        "--warmup",
        "0",
        timeout=180,
    )
    env = doc["environment"]["builds"]
    assert [b["label"] for b in env["ssh"]] == ["OpenSSH_9.2p1", "OpenSSH_10.0p2"]
    assert [b["label"] for b in env["sshd"]] == ["OpenSSH_9.2p1", "OpenSSH_10.0p2"]
    assert env["sshd"][1]["helpers"]["SshdSessionPath"].endswith("/usr/lib/openssh/sshd-session")
    defaults = {(p["ssh_build"], p["sshd_build"]): p["negotiated"]["kex"] for p in env["pairings"]}
    # 10.0's client defaults to ML-KEM; 9.2 has none, so every pairing with a 9.2 end falls back to sntrup761
    assert defaults == {
        ("OpenSSH_9.2p1", "OpenSSH_9.2p1"): SNTRUP,
        ("OpenSSH_9.2p1", "OpenSSH_10.0p2"): SNTRUP,
        ("OpenSSH_10.0p2", "OpenSSH_9.2p1"): SNTRUP,
        ("OpenSSH_10.0p2", "OpenSSH_10.0p2"): MLKEM,
    }
    transfers = [t for t in doc["trials"] if t["kind"] == "transfer" and not t["warmup"]]
    pairings = {(t["ssh_build"], t["sshd_build"]) for t in transfers if t["cipher"] == "aes128-gcm@openssh.com"}
    assert pairings == set(defaults)
    for t in transfers:
        assert t["valid"], t["invalid_reason"]
        assert t["negotiated"]["kex"] == t["kex"] and t["negotiated"]["cipher"] == t["cipher"]
        # the server each trial reached is the build it is labelled with (its banner)
        assert t["sshd_build"].removeprefix("OpenSSH_") in (t.get("remote_version") or t["sshd_build"])
    # interleaved: every round holds every pairing (not one build's trials after the other's)
    for rep in (0, 1):
        assert {(t["ssh_build"], t["sshd_build"]) for t in transfers if t["repetition"] == rep} == set(defaults)
    # the set-up per kex and build: 10.0 <-> 10.0 measured with both kex
    shakes = {(h["kex"], h["ssh_build"], h["sshd_build"]) for h in doc["handshakes"] if h["valid_trials"]}
    assert {(MLKEM, "OpenSSH_10.0p2", "OpenSSH_10.0p2"), (SNTRUP, "OpenSSH_10.0p2", "OpenSSH_10.0p2")} <= shakes
    answer = doc["builds_answer"]
    assert answer["pairings"][0] == ["OpenSSH_9.2p1", "OpenSSH_9.2p1"]
    assert any(c["what"] == "default" and c["ratio"] for c in answer["comparisons"])
    upgrade = next(line for line in answer["lines"] if "upgrade" in line)
    assert "sntrup761x25519-sha512 -> mlkem768x25519-sha256" in upgrade
    # the terminal: the build block, and the ssh/sshd columns (they vary)
    assert "upgrade 9.2p1 -> 9.2p1 => 10.0p2 -> 10.0p2" in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.lstrip().startswith("#") and "MiB/s" in line)
    assert " ssh " in header and " sshd " in header
    assert sshbench_temp_dirs() == before


@needs_10
def test_algorithms_with_two_builds_shows_what_differs():
    done = run_cli("algorithms", "--ssh", f"{SSH92},{SSH10}", "--sshd", f"{SSHD92},{SSHD10}")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if "algorithm" in line)
    assert [c.strip() for c in header.split("┃")[3:7]] == [
        "ssh OpenSSH_9.2p1",
        "ssh OpenSSH_10.0p2",
        "sshd OpenSSH_9.2p1",
        "sshd OpenSSH_10.0p2",
    ]
    row = next(line for line in lines if f" {MLKEM} " in line)  # in 10.0 only, both sides
    assert [c.strip() for c in row.split("│")[3:7]] == ["-", "yes", "-", "yes"]
    assert "default cipher order changed between the ssh builds:" in lines
    order_10 = next(line for line in lines if line.startswith("  ssh OpenSSH_10.0p2:") and "aes" in line)
    assert order_10.index("aes128-gcm") < order_10.index("aes128-ctr")  # 10.0: AES-GCM ahead of AES-CTR


def _one_error_line(done) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("option", "path", "words"),
    [
        ("--ssh", "/nonexistent/ssh", "no such program"),
        ("--sshd", "/nonexistent/sshd", "no such program"),
        ("--ssh", "{tmp}/plain-file", "not executable"),
        ("--sshd", "/usr/bin/true", "is not OpenSSH's sshd"),
        ("--ssh", "/usr/bin/true", "is not OpenSSH's ssh"),
    ],
)
def test_bad_build_path_is_refused_before_anything_runs(option, path, words, tmp_path):
    (tmp_path / "plain-file").write_text("not a program\n")
    (tmp_path / "plain-file").chmod(0o644)
    path = path.format(tmp=tmp_path)
    before = sshbench_temp_dirs()
    done = run_cli("run", option, f"{SSH92 if option == '--ssh' else SSHD92},{path}", "--size", "1M")
    line = _one_error_line(done)
    assert words in line and path in line
    assert sshbench_temp_dirs() == before


def test_several_sshd_builds_refuse_a_host():
    """A HOST's sshd is its own. (Behind emulated links each build gets a namespace pair of its own:
    tests/test_hpn.py runs that.)"""
    line = _one_error_line(run_cli("run", "somehost", "--sshd", f"{SSHD92},{SSHD92}x", "--size", "1M"))
    assert "HOST" in line or "no such program" in line


def test_dropbear_as_a_build_points_at_its_own_server_option():
    dropbear = shutil.which("dropbear") or "/usr/sbin/dropbear"
    if not os.access(dropbear, os.X_OK):
        pytest.skip("no dropbear here")
    line = _one_error_line(run_cli("run", "--sshd", f"{SSHD92},{dropbear}", "--size", "1M"))
    assert "Dropbear" in line and "--server dropbear" in line


@needs_10
def test_extracted_sshd_without_its_sshd_session_names_the_file_and_the_option(tmp_path):
    lone = tmp_path / "usr" / "sbin"
    lone.mkdir(parents=True)
    shutil.copy(SSHD10, lone / "sshd")
    line = _one_error_line(run_cli("run", "--sshd", f"{SSHD92},{lone / 'sshd'}", "--size", "1M"))
    assert "sshd-session" in line and "--sshd-session" in line and "SshdSessionPath" in line
    # with the option, the same build is accepted (its sshd-auth found beside the given sshd-session)
    found = builds.inspect(str(lone / "sshd"), "sshd", session=str(OPENSSH10 / "usr/lib/openssh/sshd-session"))
    assert dict(found.helpers)["SshdAuthPath"] == str(OPENSSH10 / "usr/lib/openssh/sshd-auth")


def test_labels_hpn_and_duplicates():
    assert builds.version_label("OpenSSH_10.0p2 Debian-7~bpo12+1, OpenSSL 3.0.19") == "OpenSSH_10.0p2"
    assert builds.version_label("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10") == "OpenSSH_9.2p1"
    assert builds.is_hpn("OpenSSH_9.7p1-hpn18.4.0, OpenSSL 3.0.13") and not builds.is_hpn("OpenSSH_9.2p1")
    one = builds.inspect(SSH92, "ssh")
    assert builds.relabel([one, one], ["X", "X"])[1].label == "X#2"
    with pytest.raises(UsageError, match="twice"):
        builds.inspect_all(f"{SSH92},/usr/bin/../bin/ssh", "ssh")


def test_none_cipher_only_when_named_and_rated_insecure():
    from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms
    from sshbench.algorithms.select import select
    from sshbench.security.verdicts import Level, algorithm_verdict

    client = ClientAlgorithms(ciphers=["aes128-ctr", "none"], macs=[], kex=[], aead_ciphers=set())
    client.default_ciphers = ["none", "aes128-ctr"]
    server = ServerAlgorithms(ciphers=["aes128-ctr", "none"], macs=[], kex=[], compression=[])
    for spec in ("all", "default", "*"):
        assert select("cipher", spec, client, server, "x") == ["aes128-ctr"]
    assert select("cipher", "none", client, server, "x") == ["none"]
    assert algorithm_verdict("cipher", "none").level == Level.INSECURE
    assert algorithm_verdict("cipher", "none").level.label == "insecure"


class _FakeServer:
    """Just what plan_matrix reads of a started target (a fast test of the wiring; the real pairings above)."""

    label = "fake"

    def __init__(self, build: str, kex: list[str]) -> None:
        from sshbench.algorithms import ServerAlgorithms

        self.sshd_build = build
        self._server = ServerAlgorithms(
            ciphers=["aes128-gcm@openssh.com"], macs=["umac-64-etm@openssh.com"], kex=kex, compression=["none"]
        )

    def server_algorithms(self):
        return self._server

    def client_implementations(self):
        return {"openssh": _client([SNTRUP])}


def _client(kex: list[str]):
    from sshbench.algorithms import ClientAlgorithms

    algs = ClientAlgorithms(
        ciphers=["aes128-gcm@openssh.com"],
        macs=["umac-64-etm@openssh.com"],
        kex=kex,
        aead_ciphers={"aes128-gcm@openssh.com"},
    )
    algs.default_ciphers, algs.default_macs, algs.default_kex = algs.ciphers, algs.macs, kex
    return algs


def test_a_kex_one_build_lacks_is_skipped_for_its_pairings_with_a_notice():
    from sshbench.measure.plan import kex_handshakes, plan_matrix
    from sshbench.settings import RunSettings
    from sshbench.tools import get_tool

    targets = {"openssh@A": _FakeServer("A", [MLKEM, SNTRUP]), "openssh@B": _FakeServer("B", [SNTRUP])}
    clients = {"old": _client([SNTRUP]), "new": _client([MLKEM, SNTRUP])}
    notices: list[str] = []
    settings = RunSettings(kex=f"{MLKEM},{SNTRUP}", baselines=False)
    combos = plan_matrix(targets, {"pipe": get_tool("pipe")}, settings, notices, clients)  # type: ignore[arg-type]
    got = {(c.ssh_build, c.sshd_build, c.kex) for c in combos}
    assert got == {
        ("old", "A", SNTRUP),
        ("old", "B", SNTRUP),
        ("new", "A", MLKEM),
        ("new", "A", SNTRUP),
        ("new", "B", SNTRUP),
    }
    assert {n.split(" leaves out")[0] for n in notices if "leaves out" in n} == {"old -> A", "old -> B", "new -> B"}
    assert all(f"kex {MLKEM}" in n for n in notices if "leaves out" in n)
    # the set-up table per kex and build: nothing beyond what the transfers' shapes give, as every pairing
    # already measures each kex it speaks
    assert kex_handshakes(combos, clients, targets) == []  # type: ignore[arg-type]
    only_defaults = [c for c in combos if not (c.ssh_build == "new" and c.sshd_build == "A" and c.kex == SNTRUP)]
    extra = kex_handshakes(only_defaults, clients, targets)  # type: ignore[arg-type]
    assert [(c.ssh_build, c.sshd_build, c.kex) for c in extra] == [("new", "A", SNTRUP)]
