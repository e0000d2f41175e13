"""A real terminal (tmux) runs `sshbench run` on the private sshd: the conclusion block comes first, and the
table shows every cipher and MAC name whole at 100 and 120 columns (and at 80, where it drops columns
instead). One real run at 100 columns; 80 and 120 render the same stored run with `sshbench report` (the
same renderer, sized by the same terminal). Over that stored run: the conclusion's figures are the
summaries', its config lines connect to a fresh private sshd, and `bound by` is a CPU-or-earlier verdict
wherever ssh + sshd held the machine's cores."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import with_shared_ceilings
from sshbench.answers import answer
from sshbench.baselines import bottleneck
from sshbench.host.cleanup import Cleanup
from sshbench.model import summary
from sshbench.report.cells import short
from sshbench.results import IMPLICIT_MAC
from sshbench.store import open_store
from sshbench.targets.private_openssh import PrivateOpenSSH

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (Makefile TEST_PACKAGES)"),
    pytest.mark.timed,  # runs alone (`make test`): the rows' bound-by verdicts are from their CPU and rates
]

CIPHERS = "aes128-gcm@openssh.com,aes128-ctr,3des-cbc"
RUN_TIMEOUT_S = 240


def _tmux(sock: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-S", str(sock), *args], capture_output=True, text=True, timeout=timeout)


def _in_terminal(sock: Path, width: int, argv: list[str], env: dict[str, str]) -> str:
    """Run `sshbench ARGV` in a detached tmux window WIDTH columns wide; the pane's text once it exits
    (wrapped lines joined, as a user reads them). The command signals a tmux channel when done: no polling."""
    channel = f"done-{width}"
    command = (
        f"{shlex.join([sys.executable, '-m', 'sshbench', *argv])}; "
        f"{shlex.join(['tmux', '-S', str(sock), 'wait-for', '-S', channel])}"
    )
    started = subprocess.run(
        ["tmux", "-S", str(sock), "-f", str(sock.with_suffix(".conf")), "new-session", "-d", "-s", f"w{width}"]
        + ["-x", str(width), "-y", "300", command],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert started.returncode == 0, started.stderr
    _tmux(sock, "wait-for", channel, timeout=RUN_TIMEOUT_S)  # a signal sent before this returns at once
    return _tmux(sock, "capture-pane", "-p", "-J", "-S", "-", "-t", f"w{width}").stdout


@pytest.fixture(scope="module")
def terminal(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("terminal")
    env = {
        **os.environ,
        "SSHBENCH_RUNTIME_DIR": str(base / "runtime"),
        "SSHBENCH_DB": str(base / "results.db"),
        "XDG_CACHE_HOME": with_shared_ceilings(base / "cache", tmp_path_factory),
        "XDG_DATA_HOME": str(base / "data"),
        "TERM": "xterm-256color",
    }
    env.pop("COLUMNS", None), env.pop("LINES", None)
    sock = base / "tmux.sock"
    sock.with_suffix(".conf").write_text("set -g remain-on-exit on\nset -g history-limit 10000\n")
    try:
        screens = {100: _in_terminal(sock, 100, ["run", "--ciphers", CIPHERS, "--size", "4M", "--runs", "3"], env)}
        for width in (80, 120):
            screens[width] = _in_terminal(sock, width, ["report", "latest"], env)
    finally:
        _tmux(sock, "kill-server")
    with open_store(str(base / "results.db"), read_only=True) as store:
        result = store.load_result("latest")
    yield {"screens": screens, "result": result, "env": env}


def _table_rows(screen: str, ciphers: set[str]) -> list[str]:
    """The compact table's rows: a rank, then one of the run's ciphers (short names)."""
    return [line for line in screen.splitlines() if re.match(r"^=?\d+ +(\S+) ", line) and line.split()[1] in ciphers]


def test_conclusion_first_and_whole_names(terminal) -> None:
    result = terminal["result"]
    rows = summary.summaries(result)
    assert {s.combination.cipher for s in rows} == {*CIPHERS.split(","), "chacha20-poly1305@openssh.com"}
    for width in (80, 100, 120):
        screen = terminal["screens"][width]
        lines = [line for line in screen.splitlines() if line.strip() and not line.startswith("sshbench: ")]
        assert lines[0].startswith("Fastest here: "), (width, screen[:2000])
        # a line longer than the terminal goes on under its indent + 4, broken between words
        default = next(i for i, line in enumerate(lines) if line.startswith("  your ssh's default ("))
        assert all(line.startswith("    ") for line in lines[1:default]), (width, lines[: default + 1])
        assert lines[default].startswith("  your ssh's default (chacha20-poly1305@openssh.com)"), (width, lines[:3])
        assert any(line.startswith("  limited by: ") for line in lines[default : default + 4]), (width, lines[:6])
        table = _table_rows(screen, {short(s.combination.cipher) for s in rows})
        assert len(table) == len(rows), (width, screen[:3000])
        for s, line in zip(rows, table):
            mac = "(AEAD)" if s.combination.mac == IMPLICIT_MAC else short(s.combination.mac)
            assert f" {short(s.combination.cipher)} " in line and f" {mac} " in line, (width, line)
            assert "…" not in line and max(len(t) for t in table) <= width, (width, line)
        if width >= 100:  # every default column fits
            assert "s/GiB" in screen and "bound by" in screen and " (" in table[-1], width  # the full ratio CI
    assert "checked: a new private sshd like the run's took these lines" in terminal["screens"][100]


def test_conclusion_figures_are_the_summaries(terminal) -> None:
    result = terminal["result"]
    found = answer.compute(result)
    assert found is not None
    by_combo = {(s.combination.cipher, s.combination.mac): s for s in summary.summaries(result)}
    for pick in found.fastest:
        s = by_combo[(pick.cipher, pick.mac)]
        assert s.rank == 1 and pick.median_mib_s == s.median_mib_s and pick.ci95_mib_s == s.ci95_mib_s
    assert found.default is not None
    d = by_combo[(found.default.cipher, found.default.mac)]
    assert found.default.relative_to_fastest == d.relative_to_fastest
    assert found.default.relative_to_fastest_ci95 == d.relative_to_fastest_ci95
    document = json.loads(
        subprocess.run(
            [sys.executable, "-m", "sshbench", "report", "latest", "--format", "json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=terminal["env"],
        ).stdout
    )
    flowing = " ".join(terminal["screens"][100].split())  # the headline may go on over a second line
    assert " ".join(document["answer"]["lines"][0].split()) in flowing
    for fmt, headline in (("markdown", f"**{found.lines()[0]}**"), ("html", '<section id="answer">')):
        text = subprocess.run(
            [sys.executable, "-m", "sshbench", "report", "latest", "--format", fmt],
            capture_output=True,
            text=True,
            timeout=60,
            env=terminal["env"],
        ).stdout
        assert headline in text and text.index(headline) < text.index("cipher"), fmt  # at the top
    assert document["answer"]["fastest"][0]["median_mib_s"] == found.fastest[0].median_mib_s
    # bound by: where ssh + sshd held the machine's cores, a CPU verdict (or one checked before it); pinned
    # (--pin, the default on 2+ CPUs) each side is judged on its own cores: never "shared-cpu".
    cores = result.environment["cores"]
    pinned = "placement" in document["target"]
    cpu_words = ("client-cpu", "server-cpu", "both-cpu", "ssh-overhead") if pinned else ("shared-cpu",)
    for row in document["summaries"]:
        busy = (row.get("client_cpu_cores") or 0.0) + (row.get("server_cpu_cores") or 0.0)
        if busy >= bottleneck.SHARED_BUSY_FRACTION * cores:
            assert row["bound_by"] in ("network", "disk", "window", "crypto", *cpu_words), row
        assert not (pinned and row["bound_by"] == "shared-cpu"), row


def test_conclusion_config_lines_connect(terminal, tmp_path) -> None:
    """The block's lines under `Host *`, pasted into a config, connect to a fresh private sshd."""
    found = answer.compute(terminal["result"])
    assert found is not None and found.config, found.config_note
    assert not any(line.startswith("KexAlgorithms ") and line[14] not in "^-" for line in found.config)
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n" + "".join(f"    {line}\n" for line in found.config))
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        options = target.client_options()
        options[options.index("-F") + 1] = str(config)
        done = subprocess.run(
            ["ssh", *options, "-v", *target.destination(), "true"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    finally:
        cleanup.close()
    assert done.returncode == 0, done.stderr[-1500:]
    cipher = re.search(r"kex: client->server cipher: (\S+)", done.stderr)
    # no Ciphers line: your ssh's own first choice, which is then in the fastest group (equivalent)
    assert cipher is not None and cipher.group(1) in {p.cipher for p in [*found.fastest, *found.equivalent]} | {
        line.split()[1].lstrip("^").split(",")[0] for line in found.config if line.startswith("Ciphers")
    }


def test_into_a_file_columns_sets_the_width(terminal) -> None:
    """Not a terminal: 220 columns (a file keeps the table unfolded), or what COLUMNS says."""

    def report(columns: str | None) -> list[str]:
        env = {k: v for k, v in terminal["env"].items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
        done = subprocess.run(
            [sys.executable, "-m", "sshbench", "report", "latest"], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    narrow, wide = report("100"), report(None)
    # the conclusion block (up to its first blank line) stays one line per fact into a file, for grep
    tables = narrow[narrow.index("") :]
    assert max(len(line) for line in wide) > 100 and len(tables) > 10
    assert all(len(line) <= 100 for line in tables), [line for line in tables if len(line) > 100]
    assert narrow[0].startswith("Fastest here: ") and any(line.startswith("  your ssh's default (") for line in narrow)
