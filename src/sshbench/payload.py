"""Payloads: generated once per run into the run's temp dir (on /dev/shm when it has room) and reused.

Sizes come from a ladder of powers of two so that adaptive sizing (a data phase of about
`--seconds` per combination) needs only a few files; a smaller size is a prefix of a larger one.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sshbench.errors import RunError
from sshbench.units import MIB, format_size

MIN_SIZE = 1 * MIB  # below this the data phase is too short for any clock here
PROBE_SIZE = 16 * MIB  # calibration transfer: ~0.8 s even for 3des-cbc (~20 MiB/s)
LADDER = [MIB << i for i in range(0, 14)]  # 1 MiB .. 8 GiB
_CHUNK = 8 * MIB


def size_for_rate(mib_s: float, target_seconds: float, max_size: int) -> int:
    """The ladder size nearest (on a log scale) to `mib_s` x `target_seconds`, within [MIN_SIZE, max_size]:
    the data phase then lasts between 0.7 and 1.4 times the target."""
    import math

    wanted = max(mib_s * MIB * target_seconds, 1.0)
    best = min(LADDER, key=lambda size: abs(math.log(size / wanted)))
    return max(MIN_SIZE, min(best, max_size))


def needs_bigger_probe(data_s: float | None, size: int, target_seconds: float, max_size: int) -> bool:
    """A probe shorter than a quarter of the target is dominated by fixed stalls (~40 ms delayed-ACK
    pauses were seen here): probe again, bigger, before trusting its rate."""
    return data_s is not None and data_s < target_seconds / 4 and size < max_size


class PayloadStore:
    """Files of random bytes of the sizes asked for; a smaller size is copied from a larger one."""

    def __init__(self, directory: Path, kind: str = "random") -> None:
        if kind != "random":
            raise ValueError(f"unknown payload kind {kind!r}")
        self.directory = directory
        self.kind = kind
        self._files: dict[int, Path] = {}

    def path_for(self, size: int) -> Path:
        if size in self._files:
            return self._files[size]
        free = shutil.disk_usage(self.directory).free
        if free < size + 16 * MIB:
            raise RunError(f"not enough space in {self.directory} for a {format_size(size)} payload "
                           f"({format_size(free)} free); use a smaller --size or --max-size")
        path = self.directory / f"payload-{self.kind}-{size}"
        larger = [s for s in self._files if s > size]
        try:
            if larger:
                self._copy_prefix(self._files[min(larger)], path, size)
            else:
                self._generate(path, size)
        except OSError as err:
            path.unlink(missing_ok=True)
            raise RunError(f"cannot write payload {path}: {err.strerror}") from None
        self._files[size] = path
        return path

    def _generate(self, path: Path, size: int) -> None:
        # The kernel's generator: incompressible for zlib and faster here than random.randbytes.
        with open(path, "wb") as out:
            remaining = size
            while remaining:
                n = min(_CHUNK, remaining)
                out.write(os.urandom(n))
                remaining -= n

    @staticmethod
    def _copy_prefix(src: Path, dst: Path, size: int) -> None:
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            remaining = size
            while remaining:
                sent = os.sendfile(fout.fileno(), fin.fileno(), None, remaining)
                if sent == 0:
                    raise OSError(5, "short read from payload")
                remaining -= sent
