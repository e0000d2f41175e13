"""`run --json-stream`: one JSON object per line on standard output as the run goes (as iperf3's
`--json-stream`), for dashboards and scripts that watch a long run: `plan` when the schedule is known, one
`trial` per completed trial (warm-ups and invalid ones included, in the order run), then `end` with the run's
document without its trials (summaries, answer, stats: docs/results-json.md), which the `trial` lines already
carried. Every line is a complete object, flushed as it is written, so `jq` or a tail can follow the run."""

from __future__ import annotations

import json
from typing import TextIO

from sshbench.results import RunResult, Trial
from sshbench.store.document import SCHEMA_VERSION, to_document
from sshbench.store.record_json import jsonable


class JsonStream:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.written = 0  # trials so far: a trial run again in its round (too short) has an index of its own

    def _write(self, event: str, **fields: object) -> None:
        line = json.dumps({"event": event, "schema_version": SCHEMA_VERSION, **fields}, default=jsonable)
        self.out.write(line + "\n")
        self.out.flush()

    def plan(self, total: int, result: RunResult) -> None:
        self._write("plan", total_trials=total, settings=result.settings_json())

    def trial(self, index: int, total: int, trial: Trial) -> None:
        self.written += 1
        self._write("trial", index=self.written, total_trials=max(total, self.written), trial=trial.to_json())

    def end(self, result: RunResult) -> None:
        document = to_document(result)
        document.pop("trials", None)
        self._write("end", **{k: v for k, v in document.items() if k != "schema_version"})
