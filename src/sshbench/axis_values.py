"""The values of the run's axes besides the algorithms and targets, typed: the enums a run's direction, sink,
payload and compression take, the parsed axes (MatrixSpec), and the stream counts -P may ask of a target. Plain
data at the bottom of the layers: the settings (settings.py) parse into these, everything above reads them."""

from __future__ import annotations

import resource
from dataclasses import dataclass
from enum import StrEnum

from sshbench.compression import NO_COMPRESSION, ZLIB
from sshbench.errors import UsageError
from sshbench.links.profiles import LinkProfile

SINKS = ("null", "tmpfs", "disk")


class Direction(StrEnum):
    """Which way the payload moves: `up` client to server, `down` server to client (--direction, -R)."""

    UP = "up"
    DOWN = "down"


class Sink(StrEnum):
    """Where the receiving end writes (--sink)."""

    NULL = "null"
    TMPFS = "tmpfs"
    DISK = "disk"


class Payload(StrEnum):
    """What is sent (--payload; FILE: the user's own --file)."""

    RANDOM = "random"
    ZERO = "zero"
    TEXT = "text"
    FILE = "file"


class Compression(StrEnum):
    """What ssh's compression is asked to be (--compression sweeps these)."""

    NONE = NO_COMPRESSION
    ZLIB = ZLIB


# The values are str (StrEnum): a Combination made from them compares, prints and stores as the plain names it
# always had ("up", "none"), so the JSON and the store are unchanged. Tools and servers are plug-in registries
# (sshbench.tools.TOOLS, sshbench.targets.SERVERS): their names are checked against the registry when the run's
# spec is made (sshbench.measure.spec.RunSpec.check), not listed twice here.


@dataclass(frozen=True)
class MatrixSpec:
    """The run's axes besides the algorithms and the targets, parsed once (`RunSettings.axes`): what the
    plan crosses (plan.plan_matrix) and the runner's raw TCP control follows. The algorithm lists are resolved
    against what both ends speak, so they stay the settings' patterns."""

    tools: tuple[str, ...]
    directions: tuple[Direction, ...]
    sinks: tuple[Sink, ...]
    payloads: tuple[Payload, ...]
    compressions: tuple[Compression, ...]
    links: tuple[LinkProfile, ...]
    stream_counts: tuple[int, ...]  # -P: checked against the target's and the user's limits once (getrlimit)


# sshd's MaxStartups default (10:30:100) starts refusing unauthenticated connections beyond 10 at once;
# Dropbear's MAX_UNAUTH_PER_IP is 5. The private sshd is started with MaxStartups 1000: there the limit is
# what one machine sensibly runs (each stream is an ssh, an sshd session and a reader).
MAX_STREAMS_REMOTE = 10
MAX_STREAMS_DROPBEAR = 5
MAX_STREAMS_PRIVATE = 64


def max_streams(host: str | None, servers: list[str]) -> int:
    """The most connections one -P trial may open at once against this target (and the user's own
    limits: open files and processes, a few per stream)."""
    limit = MAX_STREAMS_REMOTE if host else MAX_STREAMS_DROPBEAR if "dropbear" in servers else MAX_STREAMS_PRIVATE
    for kind, per_stream in ((resource.RLIMIT_NOFILE, 16), (resource.RLIMIT_NPROC, 4)):
        soft = resource.getrlimit(kind)[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            limit = min(limit, max(soft // per_stream, 1))
    return limit


def parse_parallel(text: str | int, limit: int) -> list[int]:
    """`-P 4` or `-P 1,2,4,8` as stream counts; UsageError unless each is from 1 to `limit`."""
    counts = []
    for token in comma_list(str(text)) or ["1"]:
        try:
            value = int(token)
        except ValueError:
            raise UsageError(f"-P/--parallel {text!r}: a stream count or a comma list of them (e.g. 1,2,4)") from None
        if not 1 <= value <= limit:
            raise UsageError(
                f"-P/--parallel {value}: a stream count from 1 to {limit} (the most connections this target "
                "takes at once: sshd's MaxStartups, Dropbear's per-address limit, or your open-file limit)"
            )
        if value not in counts:
            counts.append(value)
    return counts


def comma_list(text: str | None) -> list[str]:
    return list(dict.fromkeys(t.strip() for t in (text or "").split(",") if t.strip()))
