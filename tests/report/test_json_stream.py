"""`run --json-stream` on a real run: one JSON object per line, in the order things happen (issue 24)."""

from __future__ import annotations

import json

from tests.conftest import run_cli


def test_json_stream_writes_plan_each_trial_then_the_summary_one_object_per_line(tmp_path) -> None:
    done = run_cli(
        "run",
        "--ciphers",
        "aes128-gcm@openssh.com,aes128-ctr",
        "--macs",
        "hmac-sha2-256-etm@openssh.com",
        "--runs",
        "3",
        "--warmup",
        "0",
        "--size",
        "2M",
        "--no-baselines",
        "--db",
        str(tmp_path / "r.db"),
        "--json",
        str(tmp_path / "r.json"),
        "--json-stream",
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    # every line a whole object and nothing else: the human report stays off the stream
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "plan" and kinds[-1] == "end" and set(kinds[1:-1]) == {"trial"}
    trials = [e for e in events if e["event"] == "trial"]
    assert [e["index"] for e in trials] == list(range(1, len(trials) + 1))
    assert all(e["total_trials"] == events[0]["total_trials"] for e in trials)
    document = json.loads((tmp_path / "r.json").read_text())
    # the stream carried every trial of the run, and its end is the document less the trials
    assert [e["trial"]["started_at"] for e in trials] == [t["started_at"] for t in document["trials"]]
    end = events[-1]
    assert "trials" not in end and end["summaries"] == document["summaries"] and end["answer"] == document["answer"]
    assert end["schema_version"] == document["schema_version"] == 3
