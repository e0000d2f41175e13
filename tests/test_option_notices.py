"""Options that do nothing in the combination given say so: one notice (stored with the run and printed
after its report), or one line and exit 2 where the run would measure something else than was asked.
The up-front ones (cli/run_notices.py) from the parsed command line; the algorithm-dependent ones
(plan.plan_matrix) on the real client/server lists of a plan; the issue's case end to end."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conftest import run_cli
from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms
from sshbench.cli import run_notices
from sshbench.cli.main import build_parser
from sshbench.cli.run_options import given_options, settings_from_args
from sshbench.errors import UsageError
from sshbench.measure.plan import plan_matrix
from sshbench.settings import RunSettings
from sshbench.tools import get_tool

AEAD = {"aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"}
CLIENT = ClientAlgorithms(
    ciphers=["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr"],
    macs=["hmac-sha2-256", "umac-64@openssh.com"],
    kex=["curve25519-sha256"],
    aead_ciphers=AEAD,
    default_ciphers=["chacha20-poly1305@openssh.com"],
    default_macs=["umac-64@openssh.com"],
    default_kex=["curve25519-sha256"],
)
SERVER = ServerAlgorithms(ciphers=CLIENT.ciphers, macs=CLIENT.macs, kex=CLIENT.kex)


def _notices(*argv: str) -> list[str]:
    """run_notices.check for `sshbench run ARGV`, with the settings cli/run_options.settings_from_args builds from the same options."""
    args = build_parser().parse_args(["run", *argv])
    settings = settings_from_args(args)
    return run_notices.check(args, given_options(["run", *argv]), settings)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--size", "4M", "--seconds", "2"], "--size fixes it, so --seconds has no effect"),
        (["--size", "4M", "--max-size", "64M"], "--size fixes it, so --max-size has no effect"),
        (["--file", "/etc/services", "--payload", "zero"], "--file is the payload: --payload has no effect"),
        (["--runs", "4", "--budget", "2m"], "--runs 4 is fixed: no effect"),
        (["--no-baselines", "--no-reference"], "--no-reference has no effect"),
        (["HOST", "--no-baselines", "--raw-tcp-port", "5001"], "--raw-tcp-port has no effect"),
        (["--sink", "null,tmpfs", "--verify"], "the null sink's rows keep nothing to check"),
        (["--server", "dropbear", "--sshd", "/usr/sbin/sshd"], "--server dropbear starts none: no effect"),
    ],
)
def test_an_option_without_effect_is_one_notice(argv, said):
    notices = _notices(*argv)
    assert len(notices) == 1 and said in notices[0], notices


@pytest.mark.parametrize(
    "argv",
    [
        ["--seconds", "2"],  # adaptive sizing: it applies
        ["--runs", "auto", "--budget", "2m"],
        ["--sink", "tmpfs", "--verify"],
        ["--no-baselines"],
        ["--tool", "pipe,rclone", "--compression", "on"],  # the pipe compresses; plan.py drops rclone's zlib rows
    ],
)
def test_options_that_apply_say_nothing(argv):
    assert _notices(*argv) == []


def test_a_tool_that_cannot_compress_alone_with_compression_on_is_refused():
    with pytest.raises(UsageError, match="rclone cannot compress"):
        _notices("--tool", "rclone", "--compression", "on")


def _plan(notices: list[str], **settings) -> list:
    target = SimpleNamespace(
        label="fake",
        sshd_build="",
        client_implementations=lambda: {"openssh": CLIENT},
        server_algorithms=lambda: SERVER,
    )
    tools = {name: get_tool(name) for name in settings.pop("tools", ["pipe"])}
    return plan_matrix({"openssh": target}, tools, RunSettings(baselines=False, **settings), notices)  # type: ignore[dict-item]


def test_macs_and_full_with_only_aead_ciphers_say_so_once():
    notices: list[str] = []
    combos = _plan(notices, ciphers="aes128-gcm@openssh.com,chacha20-poly1305@openssh.com", macs="hmac-sha2-256")
    assert {c.mac for c in combos} == {"implicit"}
    assert notices == ["every selected cipher is AEAD (it carries its own integrity): --macs has no effect"]
    notices = []
    _plan(notices, ciphers="aes128-gcm@openssh.com", full=True)
    assert notices == ["every selected cipher is AEAD (it carries its own integrity): --full sweeps no MACs"]
    # one cipher with a MAC among them: --macs applies to it, nothing to say
    notices = []
    combos = _plan(notices, ciphers="aes128-gcm@openssh.com,aes128-ctr", macs="hmac-sha2-256")
    assert notices == [] and {c.mac for c in combos} == {"implicit", "hmac-sha2-256"}


def test_a_tool_that_cannot_compress_gets_no_zlib_rows_beside_one_that_can():
    notices: list[str] = []
    combos = _plan(notices, ciphers="aes128-ctr", compression="both", tools=["pipe", "rclone"], sink="tmpfs")
    assert {c.compression for c in combos if c.tool == "rclone"} == {"none"}
    assert {c.compression for c in combos if c.tool == "pipe"} == {"none", "zlib@openssh.com"}
    assert any(n.startswith("rclone cannot compress") for n in notices), notices


def test_the_issues_case_prints_one_notice(tmp_path):
    """`run --ciphers aes128-gcm@openssh.com --macs hmac-sha2-256`, as small as a run gets (~3 s)."""
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--macs",
        "hmac-sha2-256",
        "--size",
        "1M",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--no-baselines",
        "--db",
        str(tmp_path / "r.db"),
    )
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "--macs" in line]
    assert said == ["sshbench: every selected cipher is AEAD (it carries its own integrity): --macs has no effect"]
