"""`sshbench check` for real: each exit code as a user gets it, side by side and against a stored run, the Markdown,
JUnit and JSON it writes and the check it stores with the run. NEW is made slower by running the same sshd in a
cgroup with a CPU quota of a quarter of a core (a wrapper script that moves itself in, then execs sshd): 3-5x slower
side by side, so the decisions asserted here do not rest on this machine's noise (bench/gate.py measures that).
About 35 s of runs: one check per exit code, the stored-run one against a `run --json` file."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli
from sshbench.store.sqlite import Store
from sshbench.targets import cpu_quota

SSHD = "/usr/sbin/sshd"
# A connection per trial (--no-warm): the slow sshd's fixed cost a connection falls on every round alike; the
# quickest kex (curve25519) and one cipher: ~12 s a check.
FAST = ("--ciphers", "aes128-gcm@openssh.com", "--kex", "curve25519-sha256", "--seconds", "0.4", "--no-warm")

pytestmark = pytest.mark.skipif(
    cpu_quota.missing_requirement() is not None or not os.access(SSHD, os.X_OK),
    reason=f"needs root, a cgroup cpu controller and {SSHD}",
)


@pytest.fixture(scope="module")
def slow_sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same sshd in a cgroup limited to 0.25 core: what a check must call a regression."""
    quota = cpu_quota.CpuQuota(0.25).create()
    assert quota.path is not None
    wrapper = tmp_path_factory.mktemp("slow") / "sshd"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'for a in "$@"; do [ "$a" = -V ] && exec {SSHD} "$@"; done\n'  # its version: builds.inspect asks
        f"echo $$ > {quota.path / 'cgroup.procs'}\n"
        f'exec {SSHD} "$@"\n'
    )
    wrapper.chmod(0o755)
    yield str(wrapper)
    quota.destroy(kill=True)


def check(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    done = run_cli("check", *args, "--db", str(tmp_path / "runs.db"), timeout=240)
    return done.returncode, done.stdout, done.stderr


def test_a_slower_sshd_is_a_regression(tmp_path: Path, slow_sshd: str) -> None:
    files = [tmp_path / "c.json", tmp_path / "c.md", tmp_path / "c.xml"]
    code, out, err = check(
        tmp_path, "--sshd", f"{SSHD},{slow_sshd}", *FAST, "--runs", "3",
        "--json", str(files[0]), "--markdown", str(files[1]), "--junit", str(files[2]),
    )  # fmt: skip
    assert code == 1, out + err
    assert out.startswith("check (side by side): sshd OpenSSH_")
    assert "aes128-gcm" in out and "REGRESSION" in out and "(exit 1: a regression decided)" in " ".join(out.split())
    assert all(len(line) <= 100 for line in out.splitlines()), out
    stored = json.loads(files[0].read_text())["environment"]["check"]
    assert stored["decision"] == "regression" and stored["overall"]["high"] < 0.95
    assert "| aes128-gcm@openssh.com |" in files[1].read_text()
    suite = ET.fromstring(files[2].read_text())
    assert suite.get("failures") == "2" and suite.find("testcase/failure").get("type") == "regression"  # type: ignore[union-attr]
    with Store(tmp_path / "runs.db") as store:  # the check is kept with its run
        assert store.load_result("latest").environment["check"]["decision"] == "regression"


def test_one_round_cannot_tell(tmp_path: Path, slow_sshd: str) -> None:
    code, out, err = check(tmp_path, "--sshd", f"{SSHD},{slow_sshd}", *FAST, "--runs", "1")
    assert code == 3, out + err
    assert "(no interval)" in out and "result: COULD NOT TELL" in out


def test_against_a_stored_run_measures_its_settings_again(tmp_path: Path, slow_sshd: str) -> None:
    # The stored run with the slow sshd; checked again with the system's: faster, exit 0.
    db, base = str(tmp_path / "runs.db"), str(tmp_path / "base.json")
    done = run_cli("run", "--sshd", slow_sshd, *FAST, "--runs", "3", "--no-baselines", "--no-why", "--db", db, "--json", base, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stderr
    code, out, err = check(tmp_path, "--against", base, "--sshd", SSHD)
    assert code == 0, out + err
    assert out.startswith("check (against a stored run): run 2 (NEW) against base.json (OLD)")
    assert "result: no regression" in out and "faster" in out
    assert "fewer than 3 pairs stored" in " ".join(out.split())
    with Store(tmp_path / "runs.db") as store:
        new = store.load_result("latest")
    assert new.settings.sshd == SSHD and new.settings.runs == 3  # the stored run's settings, --sshd given here
    assert new.settings.why == "off" and new.settings.check_threshold == 0.05
    code, out, err = check(tmp_path, "--against", base, "--sshd", f"{SSHD},{slow_sshd}")
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
