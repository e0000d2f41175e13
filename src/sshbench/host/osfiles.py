"""Two pieces of infrastructure every layer needs, written once: a file replaced atomically, and a
process's identity that survives pid reuse. Standard library only, at the bottom of the layers."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Replace `path` with `data` in one step (a temp file beside it, renamed into place): a reader never
    sees half a file and a full disk never leaves one. The temp name carries the pid, so two processes
    saving the same file (two runs, one cache) never write into each other's temp file. OSError as it
    came, with the temp file removed."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
        tmp.replace(target)
    except OSError:
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)
        raise


def process_start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat): with the pid,
    it identifies a process even after the pid is reused. None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None
