"""Where a run's trials go when the results database stops taking them (a full disk, a store gone read-only): a JSON
document `sshbench import` takes, rewritten after every trial, so that nothing measured is lost. A run on a 120 KiB
tmpfs stopped after 3 trials with "database or disk is full" and its trials survived only in the terminal.

The first place it can write, in order: beside the database, the default data directory, the current directory, the
temp directory (a full disk leaves the database's own directory unwritable too).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from sshbench.host.osfiles import atomic_write
from sshbench.results import RunResult
from sshbench.store.document import record_fields, to_document
from sshbench.store.sqlite import default_path


def _candidates(db_path: Path, name: str) -> list[Path]:
    places = [db_path.parent, default_path().parent, Path.cwd(), Path(tempfile.gettempdir())]
    return [place / name for place in dict.fromkeys(p.resolve() for p in places)]


def light_document(result: RunResult) -> dict:
    """What `sshbench import` reads of a run (settings, environment, planned rows, every trial), without the figures
    derived from them (it derives them again): cheap enough to rewrite after each trial."""
    return {
        **record_fields(result),
        "status": result.status if result.status != "running" else "interrupted",
        "combinations": [asdict(c) for c in result.combinations],
        "trials": [t.to_json() for t in result.trials],
    }


class UnsavedRun:
    """The file a run writes instead of the store, from the moment the store failed (`why`: its one line)."""

    def __init__(self, db_path: Path, why: str) -> None:
        self.why = why
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.candidates = _candidates(db_path, f"sshbench-unsaved-run-{stamp}-{os.getpid()}.json")
        self.path: Path | None = None  # where it was last written
        self.last_error: str | None = None

    def save(self, result: RunResult, final: bool = False) -> Path | None:
        """Write the run (`final`: the whole export, with its answer; else the light document) to the first place
        that takes it, from the one that took it last; the path, or None where no place could."""
        try:
            text = json.dumps(to_document(result) if final else light_document(result), indent=1) + "\n"
        except Exception:  # the derived figures must not cost the trials: the light form then
            text = json.dumps(light_document(result), indent=1) + "\n"
        start = self.candidates.index(self.path) if self.path in self.candidates else 0
        for path in self.candidates[start:]:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, text)
            except OSError as err:
                self.last_error = f"{path}: {err.strerror}"
                continue
            self.path = path
            return path
        self.path = None
        return None
