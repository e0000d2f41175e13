"""The results store: every run and every trial in an SQLite database, so no measurement is ever lost.

- One row per run (its settings, environment, target and status) and one per trial; a trial is
  committed the moment it finishes (autocommit), so `kill -9` loses at most the trial in flight.
- The file itself (opening, refusing what is not ours, migrating, one-line errors) is database.py's, its
  tables schema.py's, and what `sshbench runs` lists listing.py's.

Path: --db PATH, else $SSHBENCH_DB, else $XDG_DATA_HOME/sshbench/results.db (~/.local/share/...).
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import time
from dataclasses import asdict
from pathlib import Path

from sshbench import __version__
from sshbench.errors import RunError, UsageError
from sshbench.host.cleanup import process_start_time
from sshbench.results import Combination, RunResult, Trial
from sshbench.store.database import DEFAULT_TIMEOUT_S, Database
from sshbench.store.document import result_from_document, to_document
from sshbench.store.listing import StoredRun, latency_swept, swept
from sshbench.store.record_json import from_plain, jsonable, settings_from, with_extras
from sshbench.store.schema import KIND_SQL, LATENCY, NOT_STORED, RUN_COLUMNS, THROUGHPUT


def default_path() -> Path:
    if env := os.environ.get("SSHBENCH_DB"):
        return Path(env)
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "sshbench" / "results.db"


class Store(Database):
    """Runs and trials written as they happen, read back, exported and imported (merging machines)."""

    # -- writing a run as it happens

    @staticmethod
    def _extra_json(result: RunResult) -> str:
        extras = {
            f.name: getattr(result, f.name)
            for f in dataclasses.fields(RunResult)
            if f.name not in RUN_COLUMNS and f.name not in NOT_STORED
        }
        return json.dumps(extras, default=jsonable)

    def create_run(self, result: RunResult) -> int:
        """Record a run before its first trial; sets and returns result.run_id."""
        with self._guard():
            cur = self.db.execute(
                "INSERT INTO runs (status, started_at, hostname, owner_pid, owner_start, origin, sshbench_version,"
                " settings_json, environment_json, target_json, combinations_json, notices_json)"
                " VALUES ('running', ?, ?, ?, ?, ?, ?, ?, '{}', '{}', '[]', '[]')",
                (
                    result.started_at,
                    socket.gethostname(),
                    os.getpid(),
                    process_start_time(os.getpid()),
                    _origin(socket.gethostname(), result.started_at),
                    __version__,
                    json.dumps(result.settings_json()),
                ),
            )
        result.run_id = int(cur.lastrowid)  # type: ignore[arg-type]
        self.update_run(result)
        return result.run_id

    def update_run(self, result: RunResult) -> None:
        """Write the run's row (settings, environment, status, ...) from `result`."""
        assert result.run_id is not None
        env = result.environment
        with self._guard():
            self.db.execute(
                "UPDATE runs SET status = ?, finished_at = ?, error = ?, exit_code = ?, target = ?,"
                " settings_json = ?, environment_json = ?, target_json = ?, combinations_json = ?, notices_json = ?,"
                " extra_json = ? WHERE id = ?",
                (
                    result.status,
                    result.finished_at,
                    result.error,
                    result.exit_code,
                    env.get("target") or result.target.get("label"),
                    json.dumps(result.settings_json()),
                    json.dumps(env),
                    json.dumps(result.target),
                    json.dumps([asdict(c) for c in result.combinations]),
                    json.dumps(result.notices),
                    self._extra_json(result),
                    result.run_id,
                ),
            )

    def add_trial(self, run_id: int, seq: int, trial: Trial) -> None:
        """Commit one trial (seq: its position in the run)."""
        with self._guard():
            self._put_trial(run_id, seq, trial)

    def _put_trial(self, run_id: int, seq: int, trial: Trial) -> None:
        c = trial.combination
        self.db.execute(
            "INSERT OR REPLACE INTO trials (run_id, seq, kind, cipher, mac, kex, repetition, warmup, valid, mib_s,"
            " trial_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                seq,
                trial.kind,
                c.cipher,
                c.mac,
                c.kex,
                trial.repetition,
                int(trial.warmup),
                int(trial.valid),
                trial.mib_s,
                json.dumps(asdict(trial)),
            ),
        )

    def finish_run(self, result: RunResult) -> None:
        """The final status, and every trial again: the run's end-of-run cross-check fills in fields."""
        assert result.run_id is not None
        with self._transaction():
            self.update_run(result)
            self.db.execute("UPDATE runs SET owner_pid = NULL, owner_start = NULL WHERE id = ?", (result.run_id,))
            for seq, trial in enumerate(result.trials):
                self._put_trial(result.run_id, seq, trial)

    def claim_run(self, run_id: int) -> None:
        """This process takes over a stored run (to resume it): status running, owned by us."""
        with self._guard():
            self.db.execute(
                "UPDATE runs SET status = 'running', owner_pid = ?, owner_start = ? WHERE id = ?",
                (os.getpid(), process_start_time(os.getpid()), run_id),
            )

    def release_run(self, run_id: int, status: str) -> None:
        """Give a claimed run back untouched (a resume that was refused before measuring)."""
        with self._guard():
            self.db.execute(
                "UPDATE runs SET status = ?, owner_pid = NULL, owner_start = NULL WHERE id = ?", (status, run_id)
            )

    # -- reading

    def resolve(self, run_ref: str | int, kind: str | None = None) -> int:
        """A run id from 'latest' or a number; UsageError when there is no such run. kind (THROUGHPUT or
        LATENCY): 'latest' is the latest run of that kind (None: of any)."""
        with self._guard():
            if str(run_ref).strip().lower() == "latest":
                # The latest run with results: one that measured something (or completed).
                row = self.db.execute(
                    "SELECT max(id) FROM runs r WHERE (r.status = 'complete'"
                    " OR EXISTS (SELECT 1 FROM trials t WHERE t.run_id = r.id)"
                    " OR json_extract(r.extra_json, '$.results[0]') IS NOT NULL)"
                    f" AND (? IS NULL OR {KIND_SQL} = ?)",
                    (kind, kind),
                ).fetchone()
                if row[0] is None:
                    if kind == LATENCY:
                        raise UsageError(f"no latency runs in {self.path} yet; `sshbench latency` makes one")
                    raise UsageError(f"no runs with results in {self.path} yet; `sshbench run` makes one")
                return int(row[0])
            try:
                run_id = int(str(run_ref).strip())
            except ValueError:
                raise UsageError(f"a run is named by its number or 'latest' (got {run_ref!r})") from None
            if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise UsageError(f"no run {run_id} in {self.path}; `sshbench runs` lists them")
            return run_id

    def run_kind(self, run_id: int) -> str:
        """THROUGHPUT or LATENCY."""
        with self._guard():
            row = self.db.execute(f"SELECT {KIND_SQL} FROM runs r WHERE r.id = ?", (run_id,)).fetchone()
        return str(row[0]) if row else THROUGHPUT

    def load_result(self, run_ref: str | int) -> RunResult:
        """A throughput run ('latest': the latest throughput run); a latency run is refused with one line
        (its document: store.latency_runs.load)."""
        run_id = self.resolve(run_ref, kind=THROUGHPUT)
        if self.run_kind(run_id) == LATENCY:
            raise UsageError(
                f"run {run_id} is a latency run (`sshbench latency`): this reads throughput runs "
                f"(`sshbench report {run_id}` shows it)"
            )
        with self._guard():
            row = self.db.execute(
                "SELECT status, started_at, finished_at, error, exit_code, owner_pid, owner_start, settings_json,"
                " environment_json, target_json, combinations_json, notices_json, extra_json FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            trial_rows = self.db.execute(
                "SELECT trial_json FROM trials WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        (
            status,
            started_at,
            finished_at,
            error,
            exit_code,
            owner_pid,
            owner_start,
            settings_json,
            env_json,
            target_json,
            combos_json,
            notices_json,
            extra_json,
        ) = row
        try:
            extras = {k: v for k, v in json.loads(extra_json).items() if k not in RUN_COLUMNS}
            return with_extras(
                RunResult(
                    settings=settings_from(json.loads(settings_json)),
                    environment=json.loads(env_json),
                    target=json.loads(target_json),
                    combinations=[from_plain(Combination, c) for c in json.loads(combos_json)],
                    trials=[from_plain(Trial, json.loads(r[0])) for r in trial_rows],
                    status=_effective_status(status, owner_pid, owner_start),
                    error=error,
                    exit_code=exit_code or 0,
                    started_at=started_at,
                    finished_at=finished_at,
                    notices=json.loads(notices_json),
                    run_id=run_id,
                ),
                extras,
            )
        except (ValueError, TypeError, KeyError) as err:
            raise RunError(f"run {run_id} in {self.path} cannot be read: {err}") from None

    def list_runs(self) -> list[StoredRun]:
        with self._guard():
            rows = self.db.execute(
                "SELECT r.id, r.started_at, r.finished_at, r.status, r.owner_pid, r.owner_start, r.hostname,"
                " r.target, r.combinations_json, r.environment_json, r.imported_at, r.label, r.fleet_id,"
                " (SELECT count(*) FROM trials t WHERE t.run_id = r.id AND NOT t.warmup AND t.valid),"
                f" {KIND_SQL}, CASE WHEN {KIND_SQL} = 'latency' THEN json_extract(r.extra_json, '$.results') END"
                " FROM runs r ORDER BY r.id"
            ).fetchall()
        out = []
        for (
            run_id,
            started,
            finished,
            status,
            pid,
            start,
            host,
            target,
            combos_json,
            env_json,
            imported,
            label,
            fleet_id,
            measured,
            kind,
            latency_rows,
        ) in rows:
            try:
                combos = [from_plain(Combination, c) for c in json.loads(combos_json)]
                env = json.loads(env_json)
                latency = json.loads(latency_rows) if latency_rows else []
            except (ValueError, TypeError):
                combos, env, latency = [], {}, []
            if kind == LATENCY:
                measured = sum(1 for row in latency if isinstance(row, dict) and (row.get("echo") or {}).get("n"))
            out.append(
                StoredRun(
                    id=run_id,
                    started_at=started,
                    finished_at=finished,
                    status=_effective_status(status, pid, start),
                    hostname=env.get("hostname") or host,
                    target=target,
                    swept=latency_swept(latency) if kind == LATENCY else swept(combos),
                    measured_trials=measured,
                    client_ssh_version=env.get("client_ssh_version"),
                    server_ssh_version=env.get("server_ssh_version"),
                    imported=imported is not None,
                    label=label,
                    fleet_id=fleet_id,
                    kind=kind,
                )
            )
        return out

    # -- export / import (merging machines into one database)

    def export_document(self, run_ref: str | int) -> dict:

        result = self.load_result(run_ref)
        # The `run --json` document, plus the planned combinations (so an import can be resumed/compared
        # with the combinations that had no valid trial).
        return {**to_document(result), "combinations": [asdict(c) for c in result.combinations]}

    def insert_imported_run(
        self,
        source: str,
        status: str,
        started_at: float,
        hostname: str | None,
        sshbench_version: str | None,
        label: str | None = None,
        fleet_id: int | None = None,
        trials: int | None = None,
    ) -> int:
        """The row of an imported run (inside the caller's transaction), its documents empty until the caller
        fills them; refused when a run from the same machine and start (its origin) is already here, unless that one
        is an unfinished copy of it with fewer than its `trials` (replaced)."""
        origin = _origin(hostname, started_at)
        existing = self.db.execute(
            "SELECT id, status, owner_pid, owner_start FROM runs WHERE origin = ?", (origin,)
        ).fetchone()
        if existing and trials is not None and self._unfinished_copy(existing, trials):
            # the run's own row, left unfinished where the store stopped taking its trials (a full disk): the file
            # the run wrote instead (store/unsaved.py) holds all of them
            self.db.execute("DELETE FROM runs WHERE id = ?", (existing[0],))
        elif existing:
            raise UsageError(f"{source} is already in {self.path} as run {existing[0]}")
        cur = self.db.execute(
            "INSERT INTO runs (status, started_at, hostname, origin, imported_at, sshbench_version, label, fleet_id,"
            " settings_json, environment_json, target_json, combinations_json, notices_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}', '{}', '{}', '[]', '[]')",
            (status, started_at, hostname, origin, time.time(), sshbench_version, label, fleet_id),
        )
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def _unfinished_copy(self, row: tuple, trials: int) -> bool:
        """A stored run (id, status, owner) that did not finish, whose process is gone, with at most `trials` trials."""
        run_id, status, owner_pid, owner_start = row
        if _effective_status(status, owner_pid, owner_start) not in ("interrupted", "failed"):
            return False
        stored = self.db.execute("SELECT count(*) FROM trials WHERE run_id = ?", (run_id,)).fetchone()[0]
        return bool(stored <= trials)

    def import_document(self, doc: object, source: str, label: str | None = None, fleet_id: int | None = None) -> int:
        """Add a run from an export (or a `run --json` file); all or nothing. Returns its new id.
        label, fleet_id: a fleet run's host (its inventory name) and the fleet it belongs to."""
        result = result_from_document(doc, source)
        with self._transaction():
            result.run_id = self.insert_imported_run(
                source,
                result.status,
                result.started_at,
                result.environment.get("hostname"),
                doc.get("sshbench_version") if isinstance(doc, dict) else None,
                label,
                fleet_id,
                trials=len(result.trials),
            )
            self.update_run(result)
            for seq, trial in enumerate(result.trials):
                self._put_trial(result.run_id, seq, trial)
        return result.run_id


def _origin(hostname: str | None, started_at: float) -> str:
    return f"{hostname or '?'}|{float(started_at)!r}"


def _effective_status(status: str, owner_pid: int | None, owner_start: int | None) -> str:
    """A run still marked 'running' whose process is gone (kill -9, power loss) was interrupted."""
    if status != "running":
        return status
    if owner_pid is not None and owner_start is not None and process_start_time(owner_pid) == owner_start:
        return "running"
    return "interrupted"


def open_store(
    path: str | os.PathLike[str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, read_only: bool = False
) -> Store:
    """The results store at `path` (--db), else $SSHBENCH_DB, else the XDG data dir; created if absent
    (read_only: never created, UsageError when absent)."""
    return Store(Path(path) if path else default_path(), timeout_s=timeout_s, read_only=read_only)
