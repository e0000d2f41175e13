"""The results database as a file: opened (created where absent; for the commands that only read, never created and
opened read-only where this process cannot write it), refused with one line when it is not sshbench's (not SQLite,
other tables, a newer schema), migrated to this sshbench's schema (schema.py), with a WAL journal (`sshbench
report` can read while a run writes) and autocommit, and every sqlite3 error as one line (a busy database after
`timeout_s`). Store (sqlite.py) reads and writes runs through it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Self

from sshbench.errors import RunError, UsageError
from sshbench.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

DEFAULT_TIMEOUT_S = 5.0  # how long to wait for another writer before giving up with one line


def _check_writable(path: Path) -> None:
    """A store that is to be written: the file, and its directory (SQLite's -wal and -shm go beside it), written to now,
    so that a read-only mount or a full disk is one line naming the way out, not SQLite's "unable to open database
    file" (as root, os.access says yes to a read-only mount's files)."""
    try:
        if path.exists():
            os.close(os.open(path, os.O_RDWR))
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=".sshbench-writable-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise UsageError(
            f"the results database {path} is not writable ({err.strerror}): give a writable one with --db or "
            "$SSHBENCH_DB"
        ) from None


class Database:
    """An open results database (`db`: its sqlite3 connection)."""

    def __init__(self, path: Path, timeout_s: float = DEFAULT_TIMEOUT_S, read_only: bool = False) -> None:
        """read_only (the commands that only read): never creates a file or a directory; a database
        this process cannot write (a read-only mount, another user's file) is opened with sqlite's mode=ro."""
        self.path = path
        self.timeout_s = timeout_s
        self.read_only = False
        if path.is_dir():
            raise UsageError(f"the results database {path} is a directory")
        if read_only:
            if not path.is_file():
                raise UsageError(f"no results database at {path}; `sshbench run` makes one (or give --db)")
            uri = None
            if not os.access(path.parent, os.W_OK):  # no -wal/-shm can be made beside it: nobody writes it
                uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
            elif not os.access(path, os.W_OK):
                uri = f"{path.resolve().as_uri()}?mode=ro"
            if uri is not None:
                self.read_only = True
                with self._guard():
                    self.db = sqlite3.connect(uri, uri=True, timeout=timeout_s, isolation_level=None)
                try:
                    self._open()
                except BaseException:
                    self.db.close()
                    raise
                return
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise RunError(f"cannot create the results directory {path.parent}: {err.strerror}") from None
            _check_writable(path)
        with self._guard():
            # isolation_level=None: autocommit, so a trial's INSERT is durable when it returns.
            self.db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
        try:
            self._open()
        except BaseException:
            self.db.close()
            raise

    # -- opening and migrating

    def _open(self) -> None:
        with self._guard():
            try:
                tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            except sqlite3.DatabaseError as err:
                if "not a database" in str(err) or "malformed" in str(err):
                    raise UsageError(
                        f"{self.path} is not an sshbench results database (not SQLite); "
                        "choose another with --db or SSHBENCH_DB"
                    ) from None
                raise
            app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
            if tables and ("schema_version" not in tables or app_id != APPLICATION_ID):
                raise UsageError(
                    f"{self.path} is an SQLite database but not sshbench's; choose another with --db or SSHBENCH_DB"
                )
            version = 0
            if tables:
                row = self.db.execute("SELECT max(version) FROM schema_version").fetchone()
                version = row[0] or 0
            if version > SCHEMA_VERSION:
                raise UsageError(
                    f"{self.path} was written by a newer sshbench (schema {version}; this one "
                    f"reads up to {SCHEMA_VERSION}): upgrade sshbench"
                )
            if self.read_only:
                if version < SCHEMA_VERSION:
                    raise UsageError(
                        f"{self.path} is read-only and was written by an older sshbench (schema {version}): "
                        "copy it somewhere writable and use --db"
                    )
                return
            if self.db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA foreign_keys = ON")
            if version < SCHEMA_VERSION:
                self._migrate(version, fresh=not tables)

    def _migrate(self, version: int, fresh: bool) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if fresh:
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self.db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at REAL NOT NULL)")
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    self.db.execute(statement)
                self.db.execute("INSERT INTO schema_version VALUES (?, ?)", (step + 1, time.time()))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """sqlite3 errors become one line: a busy database after `timeout_s` of waiting, anything else."""
        try:
            yield
        except sqlite3.OperationalError as err:
            text = str(err)
            if "locked" in text or "busy" in text:
                raise RunError(
                    f"the results database {self.path} is busy (another sshbench writing to it?); "
                    f"waited {self.timeout_s:g} s, try again when it is done"
                ) from None
            raise RunError(f"results database {self.path}: {text}") from None
        except sqlite3.DatabaseError as err:
            raise RunError(f"results database {self.path}: {err}") from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._guard():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
