"""`sshbench latency` runs in the store, beside `sshbench run`'s: `runs` lists them (swept "latency: ..."),
`report`, `export`, `import` and `compare` read them.

No migration: a latency run is an ordinary `runs` row (status, owner, times, hostname, target, settings,
environment and target JSON) with no trials, whose `extra_json` says `"kind": "latency"` and holds the
measured rows (each cipher and link: the echo summary and every round trip, the connect times).
Throughput runs have no `kind` there (read as "throughput"). `Store.load_result` refuses a latency run
with one line (recommend, resume, compare --by host read throughput runs only), and "latest" there means
the latest throughput run.

The document (`latency --json`, `export`, what `import` takes) is documented in docs/results-json.md
("The latency document"); its rows are written to the store as each cipher finishes, so Ctrl-C keeps
what was measured (the run then reads as interrupted).
"""

from __future__ import annotations

import json
import math
import os
import socket

from sshbench import __version__
from sshbench.errors import UsageError
from sshbench.host.cleanup import process_start_time
from sshbench.store.sqlite import Store, _effective_status, _origin

KIND = "latency"
SCHEMA_VERSION = 1  # of the latency document
COMMAND = "latency"  # the document's "command": how an import tells it from a `run --json` one


def is_latency_document(doc: object) -> bool:
    return isinstance(doc, dict) and doc.get("command") == COMMAND


def _extra(document: dict) -> str:
    return json.dumps({"kind": KIND, "results": document.get("results", [])})


def create(store: Store, document: dict) -> int:
    """The run's row once it starts measuring (status running, owned by this process); returns its id."""
    hostname = socket.gethostname()
    with store._guard():
        cur = store.db.execute(
            "INSERT INTO runs (status, started_at, hostname, owner_pid, owner_start, origin, sshbench_version,"
            " settings_json, environment_json, target_json, combinations_json, notices_json, extra_json)"
            " VALUES ('running', ?, ?, ?, ?, ?, ?, '{}', '{}', '{}', '[]', '[]', ?)",
            (
                document["started_at"],
                hostname,
                os.getpid(),
                process_start_time(os.getpid()),
                _origin(hostname, document["started_at"]),
                __version__,
                _extra(document),
            ),
        )
    run_id = int(cur.lastrowid)  # type: ignore[arg-type]
    update(store, run_id, document)
    return run_id


def update(store: Store, run_id: int, document: dict, finished: bool = False) -> None:
    """Write the document's state (each row as it is measured; status and times at the end)."""
    with store._guard():
        store.db.execute(
            "UPDATE runs SET status = ?, finished_at = ?, error = ?, target = ?, settings_json = ?,"
            " environment_json = ?, target_json = ?, extra_json = ? WHERE id = ?",
            (
                document.get("status", "running"),
                document.get("finished_at"),
                document.get("error"),
                (document.get("target") or {}).get("label"),
                json.dumps(document.get("settings", {})),
                json.dumps(document.get("environment", {})),
                json.dumps(document.get("target", {})),
                _extra(document),
                run_id,
            ),
        )
        if finished:
            store.db.execute("UPDATE runs SET owner_pid = NULL, owner_start = NULL WHERE id = ?", (run_id,))


def load(store: Store, run_id: int) -> dict:
    """The latency document of a stored run (as `latency --json` wrote it), with its effective status."""
    with store._guard():
        row = store.db.execute(
            "SELECT status, started_at, finished_at, error, owner_pid, owner_start, sshbench_version, settings_json,"
            " environment_json, target_json, extra_json FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
    if row is None:
        raise UsageError(f"no run {run_id} in {store.path}; `sshbench runs` lists them")
    status, started, finished, error, pid, start, version, settings, env, target, extra = row
    return {
        "command": COMMAND,
        "schema_version": SCHEMA_VERSION,
        "sshbench_version": version,
        "run_id": run_id,
        "status": _effective_status(status, pid, start),
        "error": error,
        "started_at": started,
        "finished_at": finished,
        "settings": json.loads(settings),
        "environment": json.loads(env),
        "target": json.loads(target),
        "results": json.loads(extra).get("results", []),
    }


def export_document(store: Store, run_id: int) -> dict:
    document = load(store, run_id)
    document.pop("run_id")
    return document


# --- import -------------------------------------------------------------------------------------------

_ROW_TYPES: dict[str, tuple[type, ...]] = {"cipher": (str,), "link": (str,), "echo": (dict,), "connect": (dict,)}


def check_document(doc: dict, source: str) -> dict:
    """The document as stored, or UsageError (one line) naming the first thing wrong with it."""

    def bad(reason: str) -> UsageError:
        return UsageError(f"{source} is not an sshbench latency export: {reason}")

    version = doc.get("schema_version", 1)  # `latency --json` files before the store had none
    if not isinstance(version, int) or isinstance(version, bool):
        raise bad("'schema_version' must be an integer")
    if version > SCHEMA_VERSION:
        raise UsageError(f"{source} was written by a newer sshbench (latency schema {version}); upgrade sshbench")
    started = doc.get("started_at")
    if not isinstance(started, (int, float)) or isinstance(started, bool) or not math.isfinite(started):
        raise bad("'started_at' is missing or not a finite number")
    finished = doc.get("finished_at")
    if finished is not None and (not isinstance(finished, (int, float)) or not math.isfinite(finished)):
        raise bad("'finished_at' must be a finite number or null")
    for key in ("settings", "environment", "target"):
        if not isinstance(doc.get(key, {}), dict):
            raise bad(f"'{key}' must be an object")
    results = doc.get("results")
    if not isinstance(results, list):
        raise bad("'results' is missing or not a list")
    for index, row in enumerate(results):
        if not isinstance(row, dict):
            raise bad(f"results[{index}] is not an object")
        for key, kinds in _ROW_TYPES.items():
            if not isinstance(row.get(key), kinds):
                raise bad(f"results[{index}].{key} is missing or has the wrong type")
        for key in ("rtts_us", "connect_ms"):
            values = row.get(key)
            if values is not None and (
                not isinstance(values, list)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)
            ):
                raise bad(f"results[{index}].{key} must be a list of finite numbers")
    status = doc.get("status", "complete")
    return {
        **doc,
        "status": status if status in ("complete", "interrupted", "failed") else "interrupted",
        "finished_at": finished,
        "settings": doc.get("settings", {}),
        "environment": doc.get("environment", {}),
        "target": doc.get("target", {}),
    }


def import_document(store: Store, doc: dict, source: str) -> int:
    """Add a latency run from an export or a `latency --json` file; all or nothing. Returns its new id."""
    document = check_document(doc, source)
    with store._transaction():
        run_id = store.insert_imported_run(
            source,
            document["status"],
            document["started_at"],
            document["environment"].get("hostname"),
            document.get("sshbench_version"),
        )
        store.db.execute(
            "UPDATE runs SET finished_at = ?, error = ?, target = ?, settings_json = ?, environment_json = ?,"
            " target_json = ?, extra_json = ? WHERE id = ?",
            (
                document["finished_at"],
                document.get("error") if isinstance(document.get("error"), str) else None,
                document["target"].get("label"),
                json.dumps(document["settings"]),
                json.dumps(document["environment"]),
                json.dumps(document["target"]),
                _extra(document),
                run_id,
            ),
        )
    return run_id
