"""The JSON document keeps its keys and types (docs/results-json.md): `run --json` and `report --format json`
of a real small run against the shape recorded before the layout refactor (tests/data/document-shape.json).
New keys may appear; recorded ones never disappear or change type."""

from __future__ import annotations

import json

from conftest import DATA, run_cli
from sshbench.measure.steady import OMIT_S


def _shape(value: object) -> object:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        merged: dict = {}
        kinds: set[str] = set()
        for item in value:
            s = _shape(item)
            if isinstance(s, dict):
                merged.update(s)
            else:
                kinds.add(json.dumps(s))
        return [merged] if merged else sorted(kinds)
    return type(value).__name__


def _missing(recorded: object, now: object, path: str = "") -> list[str]:
    """Keys of `recorded` absent from `now`, or whose type changed (None may become a value and back)."""
    if isinstance(recorded, dict):
        if not isinstance(now, dict):
            return [f"{path}: was an object"]
        return [
            m
            for k, v in recorded.items()
            for m in ([f"{path}.{k}: missing"] if k not in now else _missing(v, now[k], f"{path}.{k}"))
        ]
    if isinstance(recorded, list):
        if not isinstance(now, list):
            return [f"{path}: was a list"]
        if recorded and isinstance(recorded[0], dict) and now and isinstance(now[0], dict):
            return _missing(recorded[0], now[0], f"{path}[]")
        return []
    if recorded != now and "NoneType" not in (recorded, now) and {recorded, now} != {"int", "float"}:
        return [f"{path}: {recorded} became {now}"]
    return []


def test_run_json_and_stored_report_keep_the_recorded_shape(tmp_path):
    recorded = json.loads((DATA / "document-shape.json").read_text())
    run_json, report_json = tmp_path / "run.json", tmp_path / "report.json"
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-gcm@openssh.com,aes128-ctr",
        "--size",
        "2M",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--json",
        str(run_json),
    )
    assert done.returncode == 0, done.stderr
    assert run_cli("report", "latest", "--format", "json", "-o", str(report_json)).returncode == 0
    for path in (run_json, report_json):
        assert _missing(recorded, _shape(json.loads(path.read_text()))) == [], path.name
        # the start-up the clock left out is the run's own (0.2 s in runs before it was recorded; docs/clock.md)
        assert json.loads(path.read_text())["environment"]["steady_omit_s"] == OMIT_S, path.name
