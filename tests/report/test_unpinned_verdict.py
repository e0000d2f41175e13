"""A tool that cannot be told which algorithms to use (rclone 1.60: rows "unpinned") gets no security verdict:
its verdict cell says `unpinned` in every report, never `weak` (rating the placeholder name as an unknown
cipher would), and it never reaches the config lines. Constructed runs, no server."""

from __future__ import annotations

import pytest
from rich.console import Console

from sshbench.errors import RunError
from sshbench.model import summary
from sshbench.report import compact, markdown, model, ranked
from sshbench.results import IMPLICIT_MAC, UNPINNED, Combination, RunResult, Trial
from sshbench.security import policy, report_hooks
from sshbench.settings import RunSettings
from sshbench.store.document import to_document
from sshbench.units import MIB

GCM = "aes128-gcm@openssh.com"
KEX = "sntrup761x25519-sha512@openssh.com"
PINNED = Combination(GCM, IMPLICIT_MAC, KEX, tool="split", direction="down", sink="tmpfs", streams=8)
RCLONE = Combination(
    UNPINNED, IMPLICIT_MAC, UNPINNED, tool="rclone", direction="down", sink="tmpfs", client="rclone", streams=8
)


def _run() -> RunResult:
    trials = [
        Trial(
            combo, "transfer", rep, False, payload_bytes=64 * MIB, started_at=float(rep), valid=True, data_s=64 / rate
        )
        for combo, rates in ((PINNED, (80.0, 82.0, 81.0)), (RCLONE, (90.0, 91.0, 89.0)))
        for rep, rate in enumerate(rates)
    ]
    environment = {"client_strict_kex": True, "server_strict_kex": True, "cores": 2}
    return RunResult(
        settings=RunSettings(runs=3), environment=environment, trials=trials, status="complete", started_at=0.0
    )


def test_an_unpinned_row_says_unpinned_where_verdicts_are_shown_never_weak() -> None:
    result = _run()
    rows = {s.combination.tool: s for s in summary.summaries(result)}
    rclone, split = rows["rclone"], rows["split"]
    assert report_hooks.table_cell(rclone, result.environment) == "unpinned"
    assert report_hooks.table_cell(split, result.environment) == "recommended"
    doc = report_hooks.summary_json(rclone, result.environment)
    assert doc["verdict"] == "unpinned" and "not pinned" in doc["verdict_reason"]
    assert doc["terrapin_affected"] is None
    assert not any(UNPINNED in note for note in report_hooks.report_notes(list(rows.values()), result.environment))
    # the JSON document, and the Markdown/HTML rows built from it
    by_tool = {s["tool"]: s for s in to_document(result)["summaries"]}
    assert by_tool["rclone"]["verdict"] == "unpinned" and by_tool["split"]["verdict"] == "recommended"
    columns, cells = ranked.ranked(model.build(result))
    verdicts = [row[[c.key for c in columns].index("verdict")] for row in cells]
    assert sorted(verdicts) == ["recommended", "unpinned"]
    assert "weak" not in markdown.render(result)
    # the terminal's default table
    console = Console(width=160, record=True)
    console.print(compact.results_table(result, 160))
    text = console.export_text()
    assert "unpinned" in text and "weak" not in text


def test_an_unpinned_row_never_reaches_the_config_lines() -> None:
    built = policy.build(_run(), "trusted-lan")  # the loosest policy: a weak row would be let in
    lines = [line.text for line in built.option_lines()]
    assert lines and not any(UNPINNED in line for line in lines)
    only_rclone = _run()
    only_rclone.trials = [t for t in only_rclone.trials if t.combination == RCLONE]
    with pytest.raises(RunError, match="only tools that chose their own algorithms"):
        policy.build(only_rclone, "trusted-lan")
