"""`sshbench recommend` on a real (small) run against the private sshd: the config it prints connects,
holds nothing below the policy, `--for server` passes `sshd -t`; bad input gets one line and an exit code.
Also the verdict column/keys the run's table and JSON gained."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import sshbench_argv, with_shared_ceilings
from sshbench.errors import RunError
from sshbench.host.cleanup import Cleanup
from sshbench.recommend import config as recommend
from sshbench.results import RunResult
from sshbench.security.verdicts import Level, algorithm_verdict
from sshbench.store import read_document, result_from_document
from sshbench.targets.private_openssh import PrivateOpenSSH, find_sshd

CIPHERS = "aes128-gcm@openssh.com,aes128-ctr,3des-cbc"
POLICY_KIND = {"Ciphers": "cipher", "MACs": "mac", "KexAlgorithms": "kex"}


def _cli(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        sshbench_argv(*args), capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
    )


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One real run (3 ciphers, 2 MiB, 2 runs) stored in a private database and written as JSON."""
    base = tmp_path_factory.mktemp("recommend")
    env = {
        **os.environ,
        "SSHBENCH_RUNTIME_DIR": str(base / "runtime"),
        "SSHBENCH_DB": str(base / "results.db"),
        "XDG_CACHE_HOME": with_shared_ceilings(base / "cache", tmp_path_factory),
        "XDG_DATA_HOME": str(base / "data"),
    }
    json_path = base / "run.json"
    done = _cli(
        env, "run", "--ciphers", CIPHERS, "--size", "2M", "--runs", "2", "--no-baselines", "--json", str(json_path)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {"env": env, "json": json_path, "stdout": done.stdout, "db": str(base / "results.db"), "base": base}


def _settings(snippet: str) -> dict[str, str]:
    lines = {}
    for line in snippet.splitlines():
        words = line.strip().split(None, 1)
        if len(words) == 2 and words[0] in ("Ciphers", "MACs", "KexAlgorithms", "Compression", "Host"):
            lines[words[0]] = words[1]
    return lines


def _load(path: Path) -> RunResult:
    doc, source = read_document(str(path))
    return result_from_document(doc, source)


def test_run_table_and_json_carry_verdicts(measured):
    assert "verdict" in measured["stdout"] and "broken" in measured["stdout"]
    doc = json.loads(measured["json"].read_text())
    by_cipher = {s["cipher"]: s for s in doc["summaries"]}
    assert by_cipher["3des-cbc"]["verdict"] == "broken"
    assert by_cipher["aes128-gcm@openssh.com"]["verdict"] == "recommended"
    assert by_cipher["aes128-ctr"]["verdict"] in ("acceptable", "weak")
    assert all(s["verdict_reason"] for s in doc["summaries"])
    assert "median_mib_s" in by_cipher["3des-cbc"]  # existing keys kept
    assert doc["strict_kex"]["server"] is True and doc["strict_kex"]["client"] is True
    assert doc["environment"]["client_strict_kex"] is True


@pytest.mark.parametrize("policy", ["modern", "compatible"])
def test_recommended_client_config_connects_and_respects_policy(measured, policy, tmp_path):
    done = _cli(measured["env"], "recommend", "latest", "--policy", policy, "--for", "client")
    assert done.returncode == 0, done.stderr
    snippet = done.stdout
    settings = _settings(snippet)
    assert settings["Host"] == "*"
    assert "3des-cbc" not in settings["Ciphers"]
    minimum = recommend.POLICIES[policy]
    for option, kind in POLICY_KIND.items():
        value = settings.get(option, "")
        # Under Host *: `^a,b` puts a, b first and keeps the defaults; `-x,y` removes what the policy refuses.
        names = value[1:].split(",") if value[:1] in "^-" and value else value.split(",") if value else []
        for name in names:
            level = algorithm_verdict(kind, name, strict_kex=True).level
            assert (level < minimum[kind]) if value.startswith("-") else (level >= minimum[kind]), (option, name)
    assert settings["Ciphers"].lstrip("^").split(",")[0] in ("aes128-gcm@openssh.com", "aes128-ctr")
    assert settings["Compression"] == "no"
    assert "# checked: a new private sshd like the run's took these lines" in snippet
    assert re.search(r"aes128-gcm@openssh.com \d+ MiB/s", snippet)  # measured figures in the comments
    if policy == "modern":
        # The defaults with the fastest first and without the CTR ciphers (below modern), spelt out: one
        # option line carries one prefix.
        assert settings["Ciphers"].split(",")[0] == "aes128-gcm@openssh.com"
        assert "aes128-ctr" not in settings["Ciphers"] and "chacha20-poly1305@openssh.com" in settings["Ciphers"]
        assert "aes128-ctr" in done.stderr and "3des-cbc" in done.stderr  # the rationale table
    # Never a lone KexAlgorithms list under Host *: a server without that kex would refuse the connection.
    assert not re.fullmatch(r"[^^-][^,]*", settings.get("KexAlgorithms", "-"))
    # Independently of sshbench's own check: the pasted block works with a fresh private sshd.
    config = tmp_path / "ssh_config"
    config.write_text(snippet)
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        options = target.client_options()
        options[options.index("-F") + 1] = str(config)
        ok = subprocess.run(
            ["ssh", *options, "-v", *target.destination(), "true"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    finally:
        cleanup.close()
    assert ok.returncode == 0, ok.stderr[-1500:]
    cipher = re.search(r"kex: client->server cipher: (\S+)", ok.stderr).group(1)
    assert cipher == settings["Ciphers"].lstrip("^").split(",")[0]  # the fastest allowed, first


def test_recommended_server_lines_pass_sshd_t(measured, tmp_path):
    done = _cli(
        measured["env"], "recommend", "--from-json", str(measured["json"]), "--policy", "compatible", "--for", "server"
    )
    assert done.returncode == 0, done.stderr
    assert "Host " not in done.stdout
    key = tmp_path / "host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=30)
    config = tmp_path / "sshd_config"
    config.write_text(f"HostKey {key}\n" + done.stdout)
    check = subprocess.run([find_sshd(None), "-t", "-f", str(config)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    # Both safe ciphers: the run's groups in their decided order and, inside a group (not told apart), the
    # client's own default order, so that two runs that cannot tell them apart write the same line (issue 24).
    doc = json.loads(measured["json"].read_text())
    group = {s["cipher"]: s["group"] for s in doc["summaries"]}
    defaults = doc["environment"]["client_default_algorithms"]["lists"]["cipher"]
    ciphers = _settings(done.stdout)["Ciphers"].split(",")
    assert sorted(ciphers) == ["aes128-ctr", "aes128-gcm@openssh.com"]
    assert ciphers == sorted(ciphers, key=lambda c: (group[c], defaults.index(c)))


def test_trusted_lan_never_allows_broken(measured):
    rec = recommend.build(_load(measured["json"]), "trusted-lan")
    assert all(c.verdict.level >= Level.WEAK for c in rec.chosen())
    assert "3des-cbc" in {x.name for x in rec.left_out}


def test_weak_cipher_only_with_a_warning_on_trusted_lan(measured):
    """chacha20-poly1305 without strict kex is weak: allowed on trusted-lan only with a warning."""
    result = _load(measured["json"])
    result.environment["client_strict_kex"] = False
    for trial in result.trials:
        if trial.combination.cipher == "aes128-ctr":
            trial.combination = dataclasses.replace(
                trial.combination, cipher="chacha20-poly1305@openssh.com", mac="implicit"
            )
    modern = recommend.build(result, "modern")
    assert "chacha20-poly1305@openssh.com" not in {c.name for c in modern.ciphers}
    lan = recommend.build(result, "trusted-lan")
    assert "chacha20-poly1305@openssh.com" in {c.name for c in lan.ciphers}
    assert any("chacha20-poly1305" in w and "weak" in w for w in lan.warnings)
    assert "# WARNING:" in lan.render()


# --- bad input -------------------------------------------------------------------------------------


def test_unknown_policy(measured):
    done = _cli(measured["env"], "recommend", "--policy", "paranoid")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "unknown policy 'paranoid'" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_with_no_valid_trials(measured, tmp_path):
    doc = json.loads(measured["json"].read_text())
    for trial in doc["trials"]:
        trial["valid"], trial["invalid_reason"] = False, "made invalid by the test"
    path = tmp_path / "invalid.json"
    path.write_text(json.dumps(doc))
    done = _cli(measured["env"], "recommend", "--from-json", str(path))
    assert done.returncode == 1
    assert "no valid trials" in done.stderr and done.stderr.strip().count("\n") == 0


def test_all_measured_ciphers_fail_policy_names_closest_set(measured, tmp_path):
    doc = json.loads(measured["json"].read_text())
    doc["trials"] = [t for t in doc["trials"] if t["cipher"] != "aes128-gcm@openssh.com"]
    path = tmp_path / "no-gcm.json"
    path.write_text(json.dumps(doc))
    done = _cli(measured["env"], "recommend", "--from-json", str(path), "--policy", "modern")
    assert done.returncode == 1
    line = done.stderr.strip()
    assert "\n" not in line and "none of the measured ciphers meets policy modern" in line
    assert "closest acceptable set (--policy compatible): Ciphers aes128-ctr" in line


def test_unknown_run_and_bad_json(measured, tmp_path):
    done = _cli(measured["env"], "recommend", "999")
    assert done.returncode == 2 and "no run 999" in done.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done = _cli(measured["env"], "recommend", "--from-json", str(bad))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def _synthetic(rates: dict[tuple[str, str, str], float]) -> RunResult:
    """Valid transfers (two each) at the given MiB/s per (cipher, mac, compression)."""
    from sshbench.results import Combination, Trial
    from sshbench.settings import RunSettings
    from sshbench.units import MIB

    trials = []
    for (cipher, mac, compression), rate in rates.items():
        combo = Combination(cipher=cipher, mac=mac, kex="curve25519-sha256", compression=compression)
        trials += [
            Trial(
                combination=combo,
                kind="transfer",
                repetition=rep,
                warmup=False,
                payload_bytes=2 * MIB,
                started_at=0.0,
                valid=True,
                data_s=2 / rate,
            )
            for rep in range(2)
        ]
    return RunResult(
        settings=RunSettings(),
        environment={"client_strict_kex": True, "server_strict_kex": True},
        trials=trials,
        status="complete",
    )


def test_compression_from_measured_crossover_only_where_policy_allows():
    gcm = "aes128-gcm@openssh.com"
    result = _synthetic({(gcm, "implicit", "none"): 100.0, (gcm, "implicit", "zlib@openssh.com"): 300.0})
    lan = recommend.build(result, "trusted-lan", host_pattern="lan-*")
    assert lan.compression == "yes" and any("Compression yes is weak" in w for w in lan.warnings)
    assert "Host lan-*" in lan.render()
    modern = recommend.build(result, "modern")
    assert modern.compression == "no" and "does not allow" in modern.compression_note
    assert modern.ciphers[0].median_mib_s == pytest.approx(100.0)  # the uncompressed figure


def test_verify_against_a_remote_alias_uses_the_users_config_plus_the_lines(measured, tmp_path):
    """A run of HOST (an ssh_config alias, here pointing at a private sshd): the check connects to HOST
    with the user's config and exactly the recommended algorithms; a set the server refuses is not printed."""
    cleanup = Cleanup()
    try:
        t = PrivateOpenSSH()
        t.start(cleanup)
        config = tmp_path / "ssh_config"
        config.write_text(
            "Host bench-alias\n"
            f"    HostName 127.0.0.1\n    Port {t.port}\n    User {t.user}\n"
            f"    IdentityFile {t.dir / 'client_key'}\n    IdentitiesOnly yes\n    IdentityAgent none\n"
            f"    UserKnownHostsFile {t.dir / 'known_hosts'}\n    GlobalKnownHostsFile /dev/null\n"
            "    StrictHostKeyChecking yes\n    HostKeyAlgorithms ssh-ed25519\n"
        )
        result = _load(measured["json"])
        result.settings = replace(result.settings, host="bench-alias", ssh_config=str(config))
        for target_kind in ("client", "server"):
            rec = recommend.build(result, "compatible", target_kind)
            assert rec.host_pattern == "bench-alias"
            assert "connected to bench-alias" in recommend.verify(rec, result)
        rec = recommend.build(result, "compatible", "client")
        rec.kex = [dataclasses.replace(rec.kex[0], name="no-such-kex@example.com")]  # cannot connect
        with pytest.raises(RunError, match="did not connect to bench-alias"):
            recommend.verify(rec, result)
        server = recommend.build(result, "compatible", "server")
        server.kex = rec.kex
        with pytest.raises(RunError, match="sshd -t rejects"):
            recommend.verify(server, result)
    finally:
        cleanup.close()


def test_a_cipher_is_placed_by_its_rows_with_a_mac_the_lines_allow():
    """A cipher fast only with a weak MAC (left off the MACs line) is not put first: the lines would negotiate
    it with an allowed MAC, which was measured slower (`--full` put aes128-ctr first for its hmac-sha1-96-etm row)."""
    gcm, ctr = "aes256-gcm@openssh.com", "aes128-ctr"
    result = _synthetic(
        {
            (gcm, "implicit", "none"): 1000.0,
            (ctr, "hmac-sha1-96-etm@openssh.com", "none"): 1100.0,
            (ctr, "hmac-sha2-256-etm@openssh.com", "none"): 500.0,
        }
    )
    rec = recommend.build(result, "compatible")
    assert "hmac-sha1-96-etm@openssh.com" not in [m.name for m in rec.macs]
    assert [c.name for c in rec.ciphers][:2] == [gcm, ctr]
    ctr_choice = rec.ciphers[1]
    assert (
        ctr_choice.median_mib_s == pytest.approx(500.0) and ctr_choice.measured_with == "hmac-sha2-256-etm@openssh.com"
    )


def test_the_lines_come_from_the_first_client_server_pair_alone():
    """`--server openssh,dropbear`: Dropbear's rows negotiate curve25519 (no sntrup in Dropbear 2022) and their
    set-up, quicker than OpenSSH's sntrup, put "KexAlgorithms ^curve25519-sha256" on OpenSSH's lines, which a run
    against OpenSSH alone does not write. The lines are the first pair's, as the answer is."""
    from sshbench.results import Combination, Trial
    from sshbench.settings import RunSettings
    from sshbench.units import MIB

    sntrup, curve = "sntrup761x25519-sha512@openssh.com", "curve25519-sha256"
    gcm, chacha = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"
    trials = []
    for cipher, kex, server, rate, setup_s in (
        (gcm, sntrup, "openssh", 900.0, 0.22),
        (chacha, sntrup, "openssh", 500.0, 0.22),
        (chacha, curve, "dropbear", 90.0, 0.15),
    ):
        combo = Combination(cipher=cipher, mac="implicit", kex=kex, server=server)
        for rep in range(2):
            trials.append(Trial(combo, "transfer", rep, False, payload_bytes=2 * MIB, started_at=0.0, valid=True))
            trials[-1].data_s = 2 / rate
            trials.append(Trial(combo, "handshake", rep, False, payload_bytes=0, started_at=0.0, valid=True))
            trials[-1].wall_s = setup_s
    result = RunResult(
        settings=RunSettings(server="openssh,dropbear"),
        environment={
            "client_strict_kex": True,
            "server_strict_kex": True,
            "client_default_algorithms": {  # OpenSSH 9.2's, as a run records them
                "negotiated": {"cipher": chacha, "mac": "implicit", "kex": sntrup},
                "lists": {"cipher": [chacha, gcm], "mac": ["umac-64-etm@openssh.com"], "kex": [sntrup, curve]},
            },
        },
        trials=trials,
        status="complete",
    )
    rec = recommend.build(result, "compatible")
    assert [k.name for k in rec.kex] == [sntrup]  # not curve25519, measured against Dropbear only
    assert {c.name for c in rec.ciphers} == {gcm, chacha}
    assert not any(line.text.startswith("KexAlgorithms") for line in rec.option_lines())


def test_a_build_sweeps_lines_are_for_the_first_pairing_which_the_check_connects_with():
    """--ssh 9.2,hpnssh --sshd 9.2,hpnsshd --no-pin: HPN-SSH's pairing was fastest with mlkem768x25519-sha256, and
    its kex went onto OpenSSH 9.2's lines ("bad configuration options": not checked). Only the first pairing's rows."""
    from fakes import MadeUpRates, run_from_plan
    from sshbench.measure.plan import schedule
    from sshbench.results import Combination
    from sshbench.security import policy

    stock, hpn = "OpenSSH_9.2p1", "OpenSSH_10.2p1_hpn18.8.0"
    gcm, mlkem, sntrup = "aes128-gcm@openssh.com", "mlkem768x25519-sha256", "sntrup761x25519-sha512@openssh.com"
    combos = [
        Combination(gcm, "implicit", sntrup, ssh_build=stock, sshd_build=stock),
        Combination("aes128-ctr", "hmac-sha2-256", sntrup, ssh_build=stock, sshd_build=stock),
        Combination(gcm, "implicit", mlkem, ssh_build=hpn, sshd_build=hpn),
    ]

    class Rates(MadeUpRates):
        def __call__(self, combo: Combination, repetition: int) -> float:
            return {stock: 500.0, hpn: 900.0}[combo.ssh_build] * (1.1 if combo.cipher == gcm else 1.0)

    result = run_from_plan(schedule(combos, [], 4, 0, calibrate=False), combos, Rates())
    result.environment = {
        **result.environment,
        "builds": {"pairings": [{"ssh_build": stock, "sshd_build": stock}, {"ssh_build": hpn, "sshd_build": hpn}]},
    }
    lines = [line.text for line in policy.build(result, "compatible", "client", host_pattern="*").option_lines()]
    assert not any(mlkem in line for line in lines), lines
