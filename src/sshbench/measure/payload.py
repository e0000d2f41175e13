"""Payloads: generated once per run into the run's temp dir (on /dev/shm when it has room) and reused.

Sizes come from a ladder (1, 2, 3 MiB, then 4, 5, 6 and 7 times each power of two) so that adaptive sizing (a
data phase of about `--seconds` per combination) needs only a few files; a smaller size is a prefix of a larger
one. Why the quarter steps: sizing rounds up (calibration.py). With powers of two alone a trial moved up to twice
what its data phase needed (aes256-gcm at ~1200 MiB/s wanted 542 MiB and moved 1024: 0.84 s of data for a 0.45 s
target), which cost a default run a third of its rounds' time. With half steps (x1.5, x1.33) a `--full` run's
trials still had a median steady part of 0.49 s where 0.25 s was the target (3 rounds: 386 s against 5 minutes).
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import shutil
import sysconfig
import tarfile
import zlib
from pathlib import Path

from sshbench.errors import RunError
from sshbench.units import GIB, MIB, format_size

MIN_SIZE = 1 * MIB  # below this the data phase is too short for any clock here
PROBE_SIZE = 16 * MIB  # calibration transfer: ~0.8 s even for 3des-cbc (~20 MiB/s)
# 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16 MiB .. 8 GiB: each step at most 1.25x from 4 MiB on
LADDER = [MIB, 2 * MIB, 3 * MIB] + sorted(
    k * MIB << i for k in (4, 5, 6, 7) for i in range(12) if k * MIB << i <= 8 * GIB
)
_CHUNK = 8 * MIB
# Random payloads repeat one block drawn from the kernel's generator once per run: writing 1 GiB took
# 3.6 s with os.urandom for every byte (the raw TCP control's payload: 6% of a default run's minute) and
# ~0.5 s as copies of one block. The repeat is invisible to ssh's zlib (its window is 32 KiB), and the
# block's odd length (not a divisor of any ladder size) keeps every byte range of a split transfer
# distinct, so a range written at the wrong offset still fails the checksum.
_RANDOM_PERIOD = 32 * MIB + 4093


def size_for_rate(mib_s: float, target_seconds: float, max_size: int) -> int:
    """The ladder size nearest (on a log scale) to `mib_s` x `target_seconds`, within [MIN_SIZE, max_size]:
    the data phase then lasts between 0.8 and 1.25 times the target."""

    wanted = max(mib_s * MIB * target_seconds, 1.0)
    best = min(LADDER, key=lambda size: abs(math.log(size / wanted)))
    return max(MIN_SIZE, min(best, max_size))


def size_at_least(nbytes: int, max_size: int) -> int:
    """The smallest ladder size holding `nbytes`, within [MIN_SIZE, max_size]."""
    fits = [size for size in LADDER if size >= nbytes]
    return max(MIN_SIZE, min(fits[0] if fits else LADDER[-1], max_size))


def needs_bigger_probe(data_s: float | None, size: int, target_seconds: float, max_size: int) -> bool:
    """A probe shorter than a quarter of the target is dominated by fixed stalls (~40 ms delayed-ACK
    pauses were seen here): probe again, bigger, before trusting its rate."""
    return data_s is not None and data_s < target_seconds / 4 and size < max_size


PAYLOAD_KINDS = ("random", "zero", "text")
# zero-filled data compresses ~1000:1 with zlib: any compressed figure on it flatters compression.
FLATTERING_KINDS = {"zero"}


def sha256_of(path: Path, length: int | None = None, offset: int = 0) -> str:
    """SHA-256 of a file (or of `length` bytes from `offset`), read in large blocks."""
    digest = hashlib.sha256()
    remaining = length
    with open(path, "rb") as f:
        f.seek(offset)
        while remaining is None or remaining > 0:
            block = f.read(_CHUNK if remaining is None else min(_CHUNK, remaining))
            if not block:
                break
            digest.update(block)
            if remaining is not None:
                remaining -= len(block)
    return digest.hexdigest()


def text_corpus(limit: int = 16 * MIB) -> bytes:
    """Deterministic, compressible, realistic text: a tar of the installed Python standard library's
    .py files (sorted, fixed metadata), as the seeds' Linux source tar but present everywhere."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path in sorted(stdlib.rglob("*.py")):
            if buffer.tell() >= limit:
                break
            try:
                data = path.read_bytes()
            except OSError:
                continue
            info = tarfile.TarInfo(str(path.relative_to(stdlib)))
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zlib_ratio(path: Path, sample_bytes: int = 8 * MIB) -> float:
    """Compressed / original size of the file's first `sample_bytes` at zlib level 6 (what ssh uses)."""
    with open(path, "rb") as f:
        sample = f.read(sample_bytes)
    return len(zlib.compress(sample, 6)) / len(sample) if sample else 1.0


class PayloadStore:
    """Payload files of a kind and the sizes asked for, each written from the kind's block.
    A user's own file (`--file`) is used in place and never modified."""

    def __init__(self, directory: Path, kind: str = "random", user_file: Path | None = None) -> None:
        if kind not in PAYLOAD_KINDS and kind != "file":
            raise ValueError(f"unknown payload kind {kind!r}")
        self.directory = directory
        self.kind = kind
        self.user_file = user_file
        self._files: dict[int, Path] = {}
        self._digests: dict[tuple[Path, int, int | None], str] = {}
        self._text: bytes | None = None
        self._random: bytes | None = None

    def path_for(self, size: int) -> Path:
        if self.kind == "file":
            assert self.user_file is not None
            return self.user_file
        if size in self._files:
            return self._files[size]
        free = shutil.disk_usage(self.directory).free
        if free < size + 16 * MIB:
            raise RunError(
                f"not enough space in {self.directory} for a {format_size(size)} payload "
                f"({format_size(free)} free); use a smaller --size or --max-size"
            )
        path = self.directory / f"payload-{self.kind}-{size}"
        try:
            self._generate(path, size)
        except OSError as err:
            path.unlink(missing_ok=True)
            raise RunError(f"cannot write payload {path}: {err.strerror}") from None
        self._files[size] = path
        return path

    def tail_for(self, size: int) -> tuple[Path, int]:
        """A payload of `size` bytes for a client that reads it from its stdin (TransferTool.source_on_stdin):
        the last `size` bytes of the smallest payload file at least that big, as (path, offset), writing one
        only when none is. A size of its own is a file written between two trials, and on this VM a fresh
        768 MiB-1 GiB file took 0.4-2.6 s (tmpfs pages the hypervisor has to back again): in 20 default runs
        these writes left 0.1-4.2 s gaps (1.4 s median) among ~31 s of measured rounds. The bytes are the same
        kind's (a window of the block's repeats); a user's own file (`--file`) is always read whole."""
        if self.kind != "file":
            bigger = sorted(n for n in self._files if n >= size)
            if bigger:
                return self._files[bigger[0]], bigger[0] - size
        return self.path_for(size), 0

    def digest(self, path: Path, offset: int = 0, length: int | None = None) -> str:
        """SHA-256 of a payload file, or of `length` bytes of it from `offset` (cached: payloads never change
        during a run)."""
        key = (path, offset, length)
        if key not in self._digests:
            self._digests[key] = sha256_of(path, length, offset)
        return self._digests[key]

    def _source(self, size: int) -> bytes:
        """The block a payload of `size` bytes repeats, cut to size (random: _RANDOM_PERIOD, drawn only as far as
        the sizes asked for so far need: 32 MiB took 0.1 s here, most of a 2 MiB `--size` run's set-up; a bigger
        size later extends the block, so each earlier payload is still its prefix)."""
        if self.kind == "zero":
            return bytes(_CHUNK)
        if self.kind == "text":
            if self._text is None:
                self._text = text_corpus()
            return self._text
        # The kernel's generator: incompressible for zlib and faster here than random.randbytes.
        wanted = min(size, _RANDOM_PERIOD)
        if self._random is None:
            self._random = os.urandom(wanted)
        elif len(self._random) < wanted:
            self._random += os.urandom(wanted - len(self._random))
        return self._random

    def _generate(self, path: Path, size: int) -> None:
        """Every size is written from the in-memory block, never copied from a larger payload file (the same
        bytes: a prefix of the repeats): here 1 GiB took 0.47 s to write and a 512 MiB copy 1.3 s; new sizes
        come mid-round as trials follow their rates, so this time sits between two trials. Not hashed here:
        only a verified trial (a sink other than null) needs the digest (`digest`), and hashing 1 GiB took 0.8 s."""
        source = memoryview(self._source(size))
        with open(path, "wb") as out:
            written = 0
            while written < size:
                start = written % len(source)
                written += out.write(source[start : start + min(_CHUNK, size - written)])
