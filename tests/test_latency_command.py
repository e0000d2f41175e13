"""`sshbench latency`: the command end to end on the private sshd (loopback) and over an emulated link."""

import json

import pytest

from conftest import run_cli
from sshbench.cli.latency import connect_summary
from sshbench.links import parse_links
from sshbench.links.namespaces import missing_requirement

CIPHERS = "aes128-gcm@openssh.com,aes128-ctr"


def test_connect_summary():
    assert connect_summary([]) == {"median_ms": None, "min_ms": None, "max_ms": None, "n": 0}
    s = connect_summary([0.1, 0.3, 0.2])
    assert s["n"] == 3 and s["median_ms"] == pytest.approx(200) and s["min_ms"] == pytest.approx(100)
    assert s["max_ms"] == pytest.approx(300)


def test_latency_on_loopback_per_cipher_table_and_json(tmp_path):
    out = tmp_path / "lat.json"
    done = run_cli("latency", "--ciphers", CIPHERS, "--chars", "50", "--connects", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "Keystroke echo" in done.stdout and "aes128-ctr" in done.stdout and "50/50" in done.stdout
    doc = json.loads(out.read_text())
    assert doc["command"] == "latency" and doc["settings"]["chars"] == 50
    assert [r["cipher"] for r in doc["results"]] == CIPHERS.split(",")
    for row in doc["results"]:
        assert row["error"] is None and row["link"] == "loopback"
        echo = row["echo"]
        assert echo["n"] == 50
        assert 0 < echo["median_us"] <= echo["p90_us"] <= echo["p99_us"] <= echo["max_us"]
        assert echo["median_us"] < 50_000  # loopback: well under 50 ms
        assert row["connect"]["n"] == 2 and row["connect"]["min_ms"] <= row["connect"]["median_ms"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chars", "0"], "--chars must be between"),
        (["--connects", "-1"], "--connects must be between"),
        (["--ciphers", "nope"], "nope"),
        (["--kex", "a,b"], "one key exchange"),
        (["--link", "nosuchlink"], "nosuchlink"),
        (["--ssh-config", "/dev/null"], "--ssh-config"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message):
    done = run_cli("latency", "--chars", "5", "--connects", "0", *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sshbench: error:") and message in lines[0], done.stderr


_NO_LINKS = missing_requirement(parse_links("wan24m"))


@pytest.mark.skipif(_NO_LINKS is not None, reason=_NO_LINKS or "")
def test_wan24m_echo_rtt_is_link_rtt_plus_loopback(tmp_path):
    out = tmp_path / "lat.json"
    done = run_cli(
        "latency",
        "--link",
        "loopback,wan24m",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--chars",
        "100",
        "--connects",
        "1",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    rows = {r["link"]: r for r in json.loads(out.read_text())["results"]}
    loop, wan = rows["loopback"], rows["wan24m"]
    assert wan["link_rtt_s"] and wan["link_rtt_s"] > 0.005
    expected_us = wan["link_rtt_s"] * 1e6 + loop["echo"]["median_us"]
    assert wan["echo"]["median_us"] == pytest.approx(expected_us, rel=0.10), (wan["echo"], expected_us)
