"""The run's warm sessions (sshbench.measure.warm) as the runner uses them: which rows' transfers can be bursts, each row's
session opened (ssh's argv as a trial's, the file it reads), all of them tracked in the run record, and what the
environment records of them. Every value comes in as a parameter: the targets, paths and ssh programs are the
runner's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from sshbench.compression import NO_COMPRESSION
from sshbench.measure.calibration import steady_window_cap
from sshbench.measure.plan import ScheduledTrial
from sshbench.measure.trial import algorithm_options
from sshbench.measure.trial_files import TrialPaths
from sshbench.measure.warm import OMIT_S, READER, WarmSession
from sshbench.results import Combination, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.targets import Target
from sshbench.units import GIB

# The biggest file a warm session's ssh reads from the start in every burst (sshbench.measure.warm; WarmRows.files): at
# 1.2 GiB/s a burst (0.1 s omit, a window of 0.25-1 s, 0.05 s margin) reads ~0.5-1.4 GiB; one stops early near the end.
WARM_FILE_BYTES = 2 * GIB


def warm_row(combo: Combination, target: Target, paths: TrialPaths, settings: RunSettings, emulated: bool) -> bool:
    """Warm sessions: this row's transfers after its first round can be bursts (burst_fits)."""
    s = settings
    return (
        combo.tool == "pipe"
        and combo.client == "openssh"
        and combo.server == "openssh"
        and combo.direction == "up"
        and combo.streams == 1
        and combo.compression == NO_COMPRESSION
        and combo.sink == "null"
        and not paths.verify_on(combo)
        and s.size is None
        and s.file is None
        and s.server_cpu is None
        and s.host is None
        and not emulated
        and target.server_pid() is not None
    )


def burst_fits(item: ScheduledTrial, row: Callable[[Combination], bool]) -> bool:
    """Warm sessions: this measured transfer is a burst in its row's warm session (sshbench.measure.warm). Not the first
    measured round (a fresh connection's trial: the row keeps its start-up figure and a whole trial's checks), not
    calibration or warm-up, and only where a burst measures what the trial would (`row`, warm_row): the pipe tool's
    uploads, one stream, no compression (a burst's bytes are its file's), a null sink and no --verify (nothing to
    compare per burst), sizes sshbench chose (a burst's length is the clock's stretch, not a payload), a private
    OpenSSH server on loopback (its sessions' CPU is ours to read; a remote sshd may drop a stopped client)."""
    return (
        item.kind == TrialKind.TRANSFER
        and item.repetition >= 1
        and not (item.warmup or item.calibration)
        and row(item.combination)
    )


def open_warm(
    combo: Combination,
    target: Target,
    index: int,
    *,
    ssh: str,
    setup_kex: str | None,
    payload: Path,
    workdir: Path,
    ssh_env: dict[str, str] | None,
    settings: RunSettings,
) -> WarmSession:
    """A warm session of `combo`: its client as a trial's (prefix, options, the set-up kex), reading READER."""
    argv = [
        *target.client_prefix(),
        ssh,
        *target.client_options(),
        *algorithm_options(combo, setup_kex),
        "-v",
        *target.destination(),
        READER,
    ]
    return WarmSession(
        argv=argv,
        combo=combo,
        payload=payload,
        workdir=workdir,
        index=index,
        env=ssh_env if ssh_env is not None else target.client_env(),
        server_pid=target.server_pid(),
        setup_kex=setup_kex,
        max_window_s=steady_window_cap(settings),
    )


def warm_files(
    rows: list[Combination],
    sizes: Mapping[Combination, int],
    paths_of: Callable[[Combination], TrialPaths],
    max_size: int,
) -> dict[Combination, Path]:
    """The file each row's warm session reads from its start in every burst: one per payload kind, at least twice
    the biggest of those rows' trial payloads as sized after their first round (at most WARM_FILE_BYTES and
    --max-size), usually the tail file the round's trials read already. A burst reads less than a trial (0.1 s
    omitted, not 0.3 s), and twice leaves room for a rate that doubles; past it a burst ends early, at the
    file's end less warm.FILE_HEADROOM. Sized before the rounds instead, from the probes, it held 192 MiB where
    aes128-gcm's bursts needed ~450: they ended after a 0.10-0.14 s window, one with none."""
    need: dict[tuple[int, str], int] = {}
    for c in rows:
        key = (id(paths_of(c)), c.payload)
        need[key] = max(need.get(key, 0), min(WARM_FILE_BYTES, max_size, 2 * sizes[c]))
    out: dict[Combination, Path] = {}
    for c in rows:
        paths = paths_of(c)
        out[c] = paths.tail(c.payload, need[(id(paths), c.payload)])[0]
    return out


def warm_record(trials: list[Trial]) -> dict:
    """The environment's record of the warm sessions: how many, and how many bursts counted."""
    bursts = [t for t in trials if t.warm_burst is not None]
    return {
        "sessions": len({t.combination for t in bursts}),
        "bursts": len(bursts),
        "valid_bursts": sum(t.valid for t in bursts),
        "omit_s": OMIT_S,  # what a burst's clock leaves out after its data moves again
    }
