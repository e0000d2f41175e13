"""`sshbench check` for real: each exit code as a user gets it, side by side and against a stored run, the Markdown,
JUnit and JSON it writes and the check it stores with the run. NEW is a link shaped to 100 Mbit/s against a 1 Gbit/s
one (tc in network namespaces): 10x slower whatever else `make test` runs beside it (a CPU quota on one sshd was not:
at a quarter of a core, a loaded run measured the fast sshd at 176 MiB/s and the slow one at 189), so the decisions
asserted here do not rest on this machine's noise (bench/gate.py measures that). ~12 s a check."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import run_cli
from sshbench.store.sqlite import Store

SSHD = "/usr/sbin/sshd"
FAST, SLOW = "lan1g", "rate=100mbit"
ROW = ("--ciphers", "aes128-gcm@openssh.com", "--kex", "curve25519-sha256", "--seconds", "0.4")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="emulated links need root (network namespaces, tc)")


def check(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    done = run_cli("check", *args, "--db", str(tmp_path / "runs.db"), timeout=240)
    return done.returncode, done.stdout, done.stderr


@needs_root
def test_a_slower_link_is_a_regression(tmp_path: Path) -> None:
    files = [tmp_path / "c.json", tmp_path / "c.md", tmp_path / "c.xml"]
    code, out, err = check(
        tmp_path, "--link", f"{FAST},{SLOW}", *ROW, "--runs", "3",
        "--json", str(files[0]), "--markdown", str(files[1]), "--junit", str(files[2]),
    )  # fmt: skip
    assert code == 1, out + err
    assert out.startswith("check (side by side): link 100mbit/0ms (NEW) against link lan1g (OLD), threshold 5%")
    assert "aes128-gcm" in out and "REGRESSION" in out and "(exit 1: a regression decided)" in " ".join(out.split())
    assert all(len(line) <= 100 for line in out.splitlines()), out
    stored = json.loads(files[0].read_text())["environment"]["check"]
    assert stored["decision"] == "regression" and stored["overall"]["high"] < 0.95
    assert "| aes128-gcm@openssh.com |" in files[1].read_text()
    suite = ET.fromstring(files[2].read_text())
    assert suite.get("failures") == "2" and suite.find("testcase/failure").get("type") == "regression"  # type: ignore[union-attr]
    with Store(tmp_path / "runs.db") as store:  # the check is kept with its run
        assert store.load_result("latest").environment["check"]["decision"] == "regression"


@needs_root
def test_one_round_cannot_tell(tmp_path: Path) -> None:
    code, out, err = check(tmp_path, "--link", f"{FAST},{SLOW}", *ROW, "--runs", "1")
    assert code == 3, out + err
    assert "(no interval)" in out and "result: COULD NOT TELL" in out


@needs_root
def test_against_a_stored_run_measures_its_settings_again(tmp_path: Path) -> None:
    # The stored run over the slow link; checked again over the fast one: faster, exit 0.
    db, base = str(tmp_path / "runs.db"), str(tmp_path / "base.json")
    done = run_cli("run", "--link", SLOW, *ROW, "--runs", "3", "--no-baselines", "--no-why", "--db", db, "--json", base, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stderr
    code, out, err = check(tmp_path, "--against", base, "--link", FAST, "--sshd", SSHD)
    assert code == 0, out + err
    assert out.startswith("check (against a stored run): run 2 (NEW) against base.json (OLD)")
    assert "result: no regression" in out and "faster" in out
    assert "fewer than 3 pairs stored" in " ".join(out.split())
    with Store(tmp_path / "runs.db") as store:
        new = store.load_result("latest")
    assert (new.settings.link, new.settings.sshd, new.settings.runs) == (FAST, SSHD, 3)  # typed here; the stored run's
    assert new.settings.why == "off" and new.settings.check_threshold == 0.05
    code, out, err = check(tmp_path, "--against", base, "--link", f"{FAST},{SLOW}")
    assert code == 2 and "--against compares one set-up with a stored run" in err, out + err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "check needs two things to compare"),
        (("--sshd", f"{SSHD},/no/such/sshd"), "--sshd /no/such/sshd: no such program"),
        (("--link", "loopback,lan1g,wan24m"), "check compares two: --link OLD,NEW (it has 3)"),
        (("--sshd", f"{SSHD},/bin/true", "--threshold", "5 percent"), "--threshold '5 percent' is not a percentage"),
        (("--against", "missing.json"), "--against missing.json: No such file or directory"),
        (("--against", "latest"), "no runs with results"),
        (("--against", "latest", "--json-stream"), "check prints its own lines"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    code, out, err = check(tmp_path, *args)
    assert code == 2, out + err
    assert says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_help_names_the_exit_codes_and_the_threshold() -> None:
    done = run_cli("check", "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "(default 5%: docs/check.md says why)" in text and "3 could not tell" in text
