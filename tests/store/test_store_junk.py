"""No junk in the store: refused runs store nothing, `latest` is the latest run with results, a failed run's
report says so first; read-only commands never create a database and read a read-only one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_cli
from sshbench.cli.main import main
from sshbench.errors import RunError, UsageError
from sshbench.results import RunResult
from sshbench.settings import RunSettings
from sshbench.store import open_store


def test_refused_runs_store_nothing_and_latest_has_results(capfd):
    ok = run_cli("run", "--ciphers", "aes128-ctr", "--size", "1M", "--runs", "1", "--warmup", "0", "--no-baselines")
    assert ok.returncode == 0, ok.stderr
    for argv in (("--ciphers", "typo"), ("nosuch.invalid",), ("--resume", "1")):
        assert main(["run", "--size", "1M", *argv]) in (1, 2)
    capfd.readouterr()
    with open_store() as store:
        assert [r.id for r in store.list_runs()] == [1]
        store.create_run(RunResult(settings=RunSettings(), status="failed"))  # an empty run of an older sshbench
        assert store.resolve("latest") == 1
    assert main(["report"]) == 0
    assert "aes128-ctr" in capfd.readouterr().out


def test_report_of_a_failed_run_says_so_first(capfd):
    with open_store() as store:
        result = RunResult(settings=RunSettings(), status="complete")
        store.create_run(result)
        result.status, result.error = "interrupted", "interrupted by signal 2"
        store.finish_run(result)
    assert main(["report", "1"]) == 0
    first = capfd.readouterr().out.splitlines()[0]
    assert first.startswith("run 1 interrupted: interrupted by signal 2"), first


def test_read_only_commands_never_create(tmp_path, capfd):
    missing = tmp_path / "no" / "such" / "r.db"
    for argv in (["runs"], ["report"], ["compare", "1", "2"], ["export", "1"], ["recommend"], ["audit", "--run", "1"]):
        assert main([*argv, "--db", str(missing)]) == 2
        assert "does not exist" in capfd.readouterr().err
    assert not (tmp_path / "no").exists()
    default = Path(os.environ["SSHBENCH_DB"])
    assert main(["runs"]) == 0 and main(["report"]) == 2
    assert "no results database" in capfd.readouterr().err
    assert not default.exists()


def test_a_read_only_database_is_opened_read_only(tmp_path, monkeypatch, capfd):
    path = tmp_path / "r.db"
    made = run_cli("run", "--ciphers", "aes128-ctr", "--size", "1M", "--runs", "1", "--warmup", "0", "--db", str(path))
    assert made.returncode == 0, made.stderr
    real_access = os.access
    # As on a read-only mount (root passes permission checks, so the mount is what is simulated).
    monkeypatch.setattr(
        os,
        "access",
        lambda p, mode, **kw: False if mode & os.W_OK and str(p).startswith(str(tmp_path)) else real_access(p, mode),
    )
    before = sorted(os.listdir(tmp_path))
    with open_store(path, read_only=True) as store:
        assert store.read_only and [r.id for r in store.list_runs()] == [1]
        with pytest.raises(RunError, match="readonly"):
            store.create_run(RunResult(settings=RunSettings()))
    assert main(["runs", "--db", str(path)]) == 0
    assert main(["report", "--db", str(path)]) == 0
    assert "aes128-ctr" in capfd.readouterr().out
    assert sorted(os.listdir(tmp_path)) == before
    with pytest.raises(UsageError, match="no results database"):
        open_store(tmp_path / "other.db", read_only=True)


def test_a_document_whose_settings_or_times_no_report_could_read_is_refused_in_one_line():
    """Found by test_import_fuzz: an empty --compression or --direction, or a start in the year 10000, imported
    and then broke the report with a traceback (the axes, the date)."""
    import json

    from fakes import constructed_run
    from sshbench.errors import UsageError
    from sshbench.store.document import result_from_document, to_document

    real = json.loads(json.dumps(to_document(constructed_run())))
    assert result_from_document(real, "real.json") is not None
    for broken, said in (
        ({"settings": {**real["settings"], "compression": ""}}, "--compression must be off, on or both"),
        ({"settings": {**real["settings"], "direction": ""}}, "--direction must be up, down or both"),
        ({"started_at": 1e12}, "'started_at' must be a time between 1970 and 2100"),
    ):
        with pytest.raises(UsageError) as refused:
            result_from_document({**real, **broken}, "junk.json")
        message = str(refused.value)
        assert said in message and message.startswith("junk.json is not an sshbench run export") and "\n" not in message
