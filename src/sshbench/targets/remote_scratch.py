"""What a run leaves on a remote host, recorded on this machine so that the next run against the same
host removes what a `kill -9`'d run left there.

One JSON record per owner process and host in the runtime dir (`cleanup.runtime_dir()`):
`remote-<owner pid>-<n>.json` = {owner_pid, owner_start, host, paths}. `host` is the effective
`user@hostname:port` (from `ssh -G`), so an alias and its address are one host. The paths are
written *before* they are made on the remote (a kill between the two leaves a record of a path
that never existed: removing it is harmless), and dropped from the record once removed. Only
paths named `sshbench-<hex>` directly under /dev/shm, /var/tmp or /tmp are ever removed.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path

from sshbench.host.cleanup import runtime_dir
from sshbench.host.osfiles import atomic_write, process_start_time

BASES = ("/dev/shm", "/var/tmp", "/tmp")
_SAFE = re.compile(r"^/(dev/shm|var/tmp|tmp)/sshbench-[0-9a-f]{12}$")
_counter = itertools.count(1)


def new_name() -> str:
    return f"sshbench-{secrets.token_hex(6)}"


def safe_path(path: str) -> bool:
    return bool(_SAFE.match(path))


class RemoteRecord:
    """The record of one owner's scratch paths on one host."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.owner_pid = os.getpid()
        self.owner_start = process_start_time(self.owner_pid)
        self.paths: list[str] = []
        self.path = runtime_dir() / f"remote-{self.owner_pid}-{next(_counter)}.json"

    def _save(self) -> None:
        if not self.paths:
            with contextlib.suppress(OSError):
                self.path.unlink()
            return
        data = {"owner_pid": self.owner_pid, "owner_start": self.owner_start, "host": self.host, "paths": self.paths}
        atomic_write(self.path, json.dumps(data))

    def add(self, paths: list[str]) -> None:
        self.paths += [p for p in paths if p not in self.paths]
        self._save()

    def discard(self, paths: list[str]) -> None:
        self.paths = [p for p in self.paths if p not in paths]
        self._save()


def stale_records(host: str) -> list[tuple[Path, list[str]]]:
    """(record file, paths) of records for `host` whose owner is gone (dead, or its pid reused)."""
    found = []
    for record in sorted(runtime_dir().glob("remote-*.json")):
        try:
            data = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if data.get("host") != host:
            continue
        pid = data.get("owner_pid")
        if isinstance(pid, int) and process_start_time(pid) == data.get("owner_start"):
            continue  # its owner is alive (another run against the same host)
        found.append((record, [p for p in data.get("paths", []) if isinstance(p, str) and safe_path(p)]))
    return found


def remove_stale(host: str, run_remote: Callable[[str], tuple[int, str]]) -> list[str]:
    """Remove, on `host` (through `run_remote`), the scratch paths of dead owners; the records whose
    removal worked are deleted (a failed one stays for the next run). A description of each path."""
    removed: list[str] = []
    for record, paths in stale_records(host):
        if paths:
            quoted = " ".join(f"'{p}'" for p in paths)
            status, _ = run_remote(f"rm -rf {quoted}")
            if status != 0:
                continue
            removed += [f"{host}:{p}" for p in paths]
        with contextlib.suppress(OSError):
            record.unlink()
    return removed
