"""Bad input across every subcommand: one `sshbench: error:` line naming the problem, the right exit code,
no traceback, no `internal error`, nothing stored and nothing created. Most fail before any server starts."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, sshbench_temp_dirs
from sshbench.cli.main import main
from sshbench.store import open_store

BIG = "9" * 400

# (command line, exit code, a word the one error line must contain). {tmp}: this test's temp dir, which
# holds bad.json (not JSON), list.json (a JSON list), notypes.json (trial fields of the wrong type).
CASES: list[tuple[tuple[str, ...], int, str]] = [
    # run: options
    (("run", "--ciphers", ""), 2, "--ciphers is empty"),
    (("run", "--ciphers", ","), 2, "--ciphers is empty"),
    (("run", "--ciphers", "aes128-ctr,"), 2, "empty item"),
    (("run", "--macs", " "), 2, "--macs is empty"),
    (("run", "--kex", ""), 2, "--kex is empty"),
    (("run", "--link", ""), 2, "--link is empty"),
    (("run", "--tool", ""), 2, "--tool is empty"),
    (("run", "--server", ""), 2, "--server is empty"),
    (("run", "--sink", ""), 2, "--sink is empty"),
    (("run", "--payload", ""), 2, "--payload is empty"),
    (("run", "--ciphers", "typo", "--size", "1M"), 2, "unknown cipher 'typo'"),
    (("run", "--macs", "hmac-nonesuch", "--size", "1M"), 2, "unknown mac"),
    (("run", "--tool", "ftp", "--size", "1M"), 2, "unknown transfer tool"),
    (("run", "--server", "telnetd", "--size", "1M"), 2, "unknown server"),
    (("run", "--sink", "floppy", "--size", "1M"), 2, "unknown sink"),
    (("run", "--payload", "lorem", "--size", "1M"), 2, "unknown payload"),
    (("run", "--link", "dialup", "--size", "1M"), 2, "unknown link"),
    (("run", "--link", "rate=fast", "--size", "1M"), 2, "malformed rate"),
    (("run", "--size", BIG), 2, "far too large"),
    (("run", "--size", "lots"), 2, "not a size"),
    (("run", "--size", "0"), 2, "too small"),
    (("run", "--max-size", "0"), 2, "--max-size"),
    (("run", "--seconds", "nan"), 2, "finite"),
    (("run", "--trial-timeout", "nan"), 2, "finite"),
    (("run", "--trial-timeout", "-1"), 2, "positive"),
    (("run", "--runs", "0"), 2, "--runs"),
    (("run", "--warmup", "-1"), 2, "--warmup"),
    (("run", "--runs", BIG), 2, "at most 10000"),
    (("crossover", "--points", "100000"), 2, "--points 2-50"),
    (("run", "--direction", "sideways"), 2, "invalid choice"),
    (("run", "-R", "--direction", "up"), 2, "contradicts"),
    (("run", "--verify", "--no-verify"), 2, "not allowed"),
    (("run", "--file", "/nonexistent/payload"), 2, "--file"),
    (("run", "--preset", "seed999"), 2, "unknown preset"),
    (("run", "--seeds", "--preset", "seed000"), 2, "either --seeds or --preset"),
    (("run", "--dropbear-window", "8M"), 2, "--server dropbear"),
    (("run", "--verify", "--size", "1M"), 2, "--sink null keeps nothing"),
    (("run", "localhost", "--sshd", "/usr/sbin/sshd"), 2, "a HOST's sshd is its own"),
    (("run", "--tool", "rclone", "--compression", "on", "--size", "1M"), 2, "rclone cannot compress"),
    (("run", "--raw-tcp-port", "5001"), 2, "applies to a remote HOST"),
    (("run", "somehost", "--raw-tcp-port", "70000"), 2, "from 1 to 65535"),
    (("run", "--no-aesni", "somehost", "--size", "1M"), 2, "private sshd"),
    (("run", "--sshd", "/tmp", "--size", "1M"), 2, "not a program"),
    (("run", "--sshd", "/usr/bin/true", "--size", "1M"), 2, "not OpenSSH"),
    (("run", "--sshd", "/nonexistent/sshd", "--size", "1M"), 2, "no such program"),
    (("run", "--json", "/nonexistent-dir/r.json", "--size", "1M"), 1, "cannot write"),
    (("run", "--json", "{tmp}", "--size", "1M"), 1, "Is a directory"),
    (("run", "--db", "{tmp}", "--size", "1M"), 2, "is a directory"),
    (("run", "--resume", "99"), 2, "no run 99"),
    (("run", "--resume", "first"), 2, "number or 'latest'"),
    (("run", "--resume", "1", "--ciphers", "aes128-ctr"), 2, "drop --ciphers"),
    (("run", "bad host", "--size", "1M"), 2, "ssh -G"),
    (("run", "nosuch.invalid", "--size", "1M"), 1, "cannot resolve"),
    # the store's commands
    (("runs", "--db", "/nonexistent/r.db"), 2, "does not exist"),
    (("runs", "--db", "{tmp}"), 2, "is a directory"),
    (("runs", "--db", "{tmp}/bad.json"), 2, "not SQLite"),
    (("report",), 2, "no runs with results"),
    (("report", "42"), 2, "no run 42"),
    (("report", "first"), 2, "number or 'latest'"),
    (("report", "--format", "pdf"), 2, "invalid choice"),
    (("report", "--db", "/nonexistent/r.db"), 2, "does not exist"),
    (("report", "-o", "/nonexistent-dir/r.txt"), 1, "cannot write"),
    (("report", "--charts", "/etc/passwd"), 1, "not a directory"),
    (("report", ""), 2, "RUN is empty"),
    (("compare", "1"), 2, "at least two"),
    (("compare", "x", "y"), 2, "number or 'latest'"),
    (("compare", "1", "2", "--db", "/nonexistent/r.db"), 2, "does not exist"),
    (("export",), 2, "required"),
    (("export", "7"), 2, "no run 7"),
    (("export", "latest", "-o", "/nonexistent-dir/x.json"), 1, "cannot write"),
    (("report", "1", "-o", "/dev/full", "--db", "{db}"), 1, "No space left"),  # a device is never replaced
    (("export", "1", "-o", "/dev/full", "--db", "{db}"), 1, "No space left"),
    (("import", "/nonexistent.json"), 2, "cannot read"),
    (("import", "{tmp}"), 2, "cannot read"),
    (("import", "{tmp}/bad.json"), 2, "invalid JSON"),
    (("import", "{tmp}/list.json"), 2, "not a JSON object"),
    (("import", "{tmp}/notypes.json"), 2, "'trials[0].payload_bytes' must be an integer"),
    # security and the rest
    (("recommend", "--policy", "lax"), 2, "unknown policy"),
    (("recommend", "--for", "both"), 2, "--for"),
    (("recommend", "--from-json", "{tmp}/bad.json"), 2, "invalid JSON"),
    (("recommend", "5"), 2, "no run 5"),
    (("recommend", "--db", "/nonexistent/r.db"), 2, "does not exist"),
    (("audit", "--from-json", "{tmp}/list.json"), 2, "not a JSON object"),
    (("audit", "--sshd", "/tmp"), 2, "not a program"),
    (("audit", "--db", "/nonexistent/r.db"), 2, "does not exist"),
    (("algorithms", "--sshd", "/tmp"), 2, "not a program"),
    (("algorithms", "--db", "/nonexistent/r.db"), 2, "does not exist"),
    (("crossover", "--low", "1gbit", "--high", "10mbit"), 2, "must be below"),
    (("crossover", "--low", "fast"), 2, "malformed rate"),
    (("crossover", "--seconds", "inf"), 2, "finite"),
    (("crossover", "--cipher", ""), 2, "--cipher is empty"),
    (("crossover", "--json", "/nonexistent-dir/c.json"), 1, "cannot write"),
    (("completion", ""), 2, "SHELL is empty"),
    (("completion", "cmd.exe"), 2, "cmd.exe"),
    (("frobnicate",), 2, "invalid choice"),
]

DOCUMENT = (
    '{"schema_version": 1, "settings": {}, "environment": {}, "started_at": 1, "status": "complete", "trials": '
    '[{"kind": "transfer", "cipher": "aes128-ctr", "mac": "implicit", "kex": "k", "repetition": 0,'
    ' "warmup": false, "payload_bytes": 2097152, "started_at": 1, "valid": true, "data_s": 0.01, "wall_s": 0.02}]}'
)
NOTYPES = (
    '{"schema_version": 1, "settings": {}, "environment": {}, "started_at": 1, "status": "complete", "trials": '
    '[{"kind": "transfer", "cipher": "c", "mac": "m", "kex": "k", "repetition": 0, "warmup": false,'
    ' "payload_bytes": "2M", "started_at": 1, "valid": true}]}'
)


# These go through the real command line in a subprocess too (the rest in-process: ~2 s less each).
SUBPROCESS = {("run", "--ciphers", ""), ("report", "42"), ("import", "{tmp}/notypes.json")}


@pytest.mark.parametrize("argv,code,word", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_bad_input(argv, code, word, tmp_path, capfd):
    (tmp_path / "bad.json").write_text("this is not JSON\n")
    (tmp_path / "list.json").write_text("[1, 2]\n")
    (tmp_path / "notypes.json").write_text(NOTYPES)
    default_db = Path(os.environ["SSHBENCH_DB"])
    open_store(default_db).close()  # an empty store: read-only commands reach their own checks
    if "{db}" in argv:  # a store with one (imported) run
        with open_store(tmp_path / "one.db") as store:
            store.import_document(json.loads(DOCUMENT), "doc.json")
    args = [a.replace("{tmp}", str(tmp_path)).replace("{db}", str(tmp_path / "one.db")) for a in argv]
    if argv in SUBPROCESS:
        done = run_cli(*args, timeout=60)
    else:
        returncode = main(args)
        captured = capfd.readouterr()
        done = subprocess.CompletedProcess(args, returncode, captured.out, captured.err)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("sshbench: error:")]
    assert len(errors) == 1, done.stderr
    assert word in errors[0], errors[0]
    # nothing stored, nothing created, nothing left behind
    with sqlite3.connect(default_db) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert not Path("/nonexistent").exists()
    assert Path("/dev/full").is_char_device()
    assert not sshbench_temp_dirs()


def test_the_table_is_big_enough():
    assert len(CASES) >= 40
    commands = {c[0][0] for c in CASES}
    assert commands >= {"run", "runs", "report", "compare", "export", "import", "recommend", "audit"}
    assert commands >= {"algorithms", "crossover", "completion"}
