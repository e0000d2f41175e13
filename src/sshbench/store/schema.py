"""The results database's schema: its tables as MIGRATIONS (append-only; the `schema_version` table records each one
applied), the application id that marks the file as sshbench's, the kinds of run a `runs` row holds, and which
RunResult fields have a column of their own (the rest go to its extra_json). Trials are stored whole (every
dataclass field, as JSON) plus a few columns to query by, so fields added to Trial later round-trip without a
migration. database.py applies the migrations; sqlite.py reads and writes the rows.
"""

from __future__ import annotations

# PRAGMA application_id: marks the file as an sshbench database ("sshb").
APPLICATION_ID = 0x73736862

# Each entry upgrades the schema from version i to i+1 (index i). Never edit a released entry: append.
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            status TEXT NOT NULL,            -- running | complete | interrupted | failed
            started_at REAL NOT NULL,
            finished_at REAL,
            error TEXT,
            exit_code INTEGER,
            hostname TEXT,                   -- the client machine
            target TEXT,                     -- the target's label
            owner_pid INTEGER,               -- the process writing it while status = running
            owner_start INTEGER,             -- that process's start time (pids are reused)
            origin TEXT NOT NULL,            -- hostname|started_at: the same run in any database
            imported_at REAL,
            sshbench_version TEXT,
            settings_json TEXT NOT NULL,
            environment_json TEXT NOT NULL,
            target_json TEXT NOT NULL,
            combinations_json TEXT NOT NULL,
            notices_json TEXT NOT NULL,
            extra_json TEXT NOT NULL DEFAULT '{}'  -- RunResult fields added later (e.g. baselines)
        )""",
        "CREATE INDEX runs_origin ON runs(origin)",
        """CREATE TABLE trials (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,            -- position in the run, in the order measured
            kind TEXT NOT NULL,
            cipher TEXT NOT NULL,
            mac TEXT NOT NULL,
            kex TEXT NOT NULL,
            repetition INTEGER NOT NULL,
            warmup INTEGER NOT NULL,
            valid INTEGER NOT NULL,
            mib_s REAL,
            trial_json TEXT NOT NULL,        -- the whole Trial
            PRIMARY KEY (run_id, seq)
        )""",
    ],
    [  # `sshbench fleet`: one row per fleet run; each host's run labelled with its inventory name
        """CREATE TABLE fleets (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at REAL NOT NULL,
            finished_at REAL,
            inventory TEXT NOT NULL,         -- the inventory file, as given (resolved)
            host_limit TEXT,                 -- --limit
            run_args_json TEXT NOT NULL,     -- the `sshbench run` options every host ran
            hosts_json TEXT NOT NULL DEFAULT '{}'  -- inventory host -> {status, message, run_id}
        )""",
        "ALTER TABLE runs ADD COLUMN label TEXT",  # the inventory host name (machines may share a hostname)
        "ALTER TABLE runs ADD COLUMN fleet_id INTEGER REFERENCES fleets(id)",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)
# What a run measured: "throughput" (`sshbench run`: no kind in extra_json) or "latency" (`sshbench latency`,
# store/latency_runs.py): kept in extra_json, so no migration.
THROUGHPUT = "throughput"
LATENCY = "latency"
KIND_SQL = "coalesce(json_extract(r.extra_json, '$.kind'), 'throughput')"

# RunResult fields with a column (or JSON column) of their own; the rest go to extra_json.
RUN_COLUMNS = {
    "settings",
    "environment",
    "target",
    "combinations",
    "trials",
    "status",
    "error",
    "exit_code",
    "started_at",
    "finished_at",
    "notices",
    "run_id",
}
# Derived in memory, never stored (RunResult.cache: summaries computed once per state of the trials).
NOT_STORED = {"cache"}
