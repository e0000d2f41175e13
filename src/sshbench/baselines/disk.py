"""Disk baseline: how fast the payload's source can be read (and a disk sink written), at a large block size.

Only meaningful when the payload or the sink is on a real disk: sshbench keeps payloads on
/dev/shm when it has room, and then there is no disk in the path (said in the report). Seed 002
ruled the disk out by hand with `dd` at several block sizes; this does the same for one large one.

Page cache: the trials read the payload through the page cache, warm after the first pass, so
the verdict uses the warm read rate. The cold rate (after asking the kernel to drop the file's
clean pages with posix_fadvise(DONTNEED), which needs no root) is reported alongside, so that
a reader can see how much of the figure is the cache.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from sshbench.units import MIB

BLOCK_SIZE = 8 * MIB
MEMORY_FILESYSTEMS = {"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"}
WRITE_SIZE = 256 * MIB  # enough to get past the drive's own write cache on most disks


@dataclass
class DiskBaseline:
    path: str
    filesystem: str | None
    on_disk: bool  # False on tmpfs/ramfs: nothing to measure
    block_size: int = BLOCK_SIZE
    read_mib_s: float | None = None  # warm (page cache): what the trials see after their first pass
    cold_read_mib_s: float | None = None  # after dropping the file's cached pages
    write_mib_s: float | None = None  # a disk sink's directory, with fsync; None where no disk sink is used
    sink_dir: str | None = None
    sink_filesystem: str | None = None
    note: str | None = None

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def limit_mib_s(self) -> float | None:
        """The slowest disk stage the trials go through (None where none was measured)."""
        rates = [r for r in (self.read_mib_s, self.write_mib_s) if r]
        return min(rates) if rates else None


def filesystem_of(path: Path, mounts_text: str | None = None) -> str | None:
    """The filesystem type of the mount holding `path` (longest mount point prefix in /proc/mounts)."""
    if mounts_text is None:
        try:
            mounts_text = Path("/proc/mounts").read_text()
        except OSError:
            return None
    resolved = str(Path(path).resolve())
    best, best_type = "", None
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        mount_point = fields[1].replace("\\040", " ")
        inside = resolved == mount_point or resolved.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= len(best):
            best, best_type = mount_point, fields[2]
    return best_type


def measure_read(path: Path, block_size: int = BLOCK_SIZE, cold: bool = False) -> float | None:
    """MiB/s reading the whole file in `block_size` blocks; `cold` drops its cached pages first."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if cold:
            with contextlib.suppress(OSError):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        buffer = bytearray(block_size)
        total = 0
        start = time.perf_counter()
        with os.fdopen(os.dup(fd), "rb", buffering=0) as f:
            while n := f.readinto(buffer):
                total += n
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
    return total / MIB / elapsed if total and elapsed > 0 else None


def measure_write(directory: Path, size: int = WRITE_SIZE, block_size: int = BLOCK_SIZE) -> float | None:
    """MiB/s writing `size` bytes in `block_size` blocks to a temp file in `directory`, fsync included
    (without it the figure is the page cache's). The file is removed whatever happens; at most a
    quarter of the free space is used."""
    size = max(block_size, min(size, shutil.disk_usage(directory).free // 4))
    block = os.urandom(block_size)
    fd, name = tempfile.mkstemp(prefix="sshbench-disk-", dir=directory)
    try:
        start = time.perf_counter()
        written = 0
        while written < size:
            written += os.write(fd, block[: min(block_size, size - written)])
        os.fsync(fd)
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)
    return written / MIB / elapsed if elapsed > 0 else None


def source_baseline(payload: Path) -> DiskBaseline:
    """Read speed of the payload's source, or a note saying why there is no disk to measure."""
    fs = filesystem_of(payload)
    base = DiskBaseline(path=str(payload), filesystem=fs, on_disk=fs not in MEMORY_FILESYSTEMS)
    if not base.on_disk:
        base.note = f"payload on {fs} (memory): no disk in the path"
        return base
    try:
        base.cold_read_mib_s = measure_read(payload, cold=True)
        base.read_mib_s = measure_read(payload)  # now warm, as the trials after their first pass
    except OSError as err:
        base.note = f"could not read {payload}: {err.strerror}"
        return base
    base.note = (
        "payload on disk; trials read it through the page cache (warm rate used for the verdict, "
        "cold rate after dropping its cached pages)"
    )
    return base
