"""The rekey probe (sshbench.measure.rekey; docs/clock.md "Rekeys"): before the measured rounds, one connection per key
exchange, link and server that rekeys every few MiB (`-o RekeyLimit=`), for the stall one rekey costs; then each
measured trial of a combination that rekeys every 1 GiB is charged the rekeys its payload would meet in a long
transfer (Trial.rekey_s), so its MiB/s is what a bulk transfer gets.

Only where it matters: a combination whose rekeys come every 16 GiB or more (AES against OpenSSH: every 64 GiB)
is not probed, and a client other than OpenSSH's ssh (AsyncSSH's, rclone's) has no RekeyLimit to ask for. Nor under
--server-cpu, whose CPU quota stops the flow every CFS period (those rates are on the server reader's clock).

The stall is the key exchange's computation on both machines and its round trips, so it is cached for a day per
machine, client and server version, target, placement, kex and link, as the crypto ceilings are (`openssl speed`,
baselines/crypto_ceiling.py): nearly every run has a row that rekeys every 1 GiB (OpenSSH's default cipher,
chacha20-poly1305, is the "your ssh's default" row), and the probe's ~1.1 s each time made the test suite 90 s
longer. The entry says `cached` and when it was measured."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from sshbench.baselines.crypto_ceiling import CeilingCache, cache_dir, machine_key
from sshbench.compression import NO_COMPRESSION
from sshbench.measure import rekey
from sshbench.measure.trial import TrialOverlay, run_trial
from sshbench.measure.trial_files import TrialPaths
from sshbench.results import Combination, Trial, TrialKind
from sshbench.targets import Target
from sshbench.tools import TransferTool, get_tool


def key_of(combo: Combination) -> tuple[str, ...]:
    """What a rekey's stall depends on: the key exchange (its computation on both sides), the link (its round
    trips), the server and the builds; not the cipher."""
    return (combo.server, combo.sshd_build, combo.ssh_build, combo.kex, combo.link)


CACHE_MAX_AGE_S = 24 * 3600


class StallCache(CeilingCache):
    """The crypto ceilings' JSON file shape, in a file of its own: {key: {"stall_s", "rekeys", "rekey_limit_bytes",
    "cipher", "measured_at"}}; best effort both ways."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(path or cache_dir() / "rekey-stalls.json")

    def get(self, key: str, now: float) -> dict | None:
        entry = self.load().get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("stall_s"), int | float):
            return None
        measured = entry.get("measured_at")
        if not isinstance(measured, int | float) or not 0 <= now - measured <= CACHE_MAX_AGE_S:
            return None
        return entry

    def put(self, key: str, entry: dict) -> None:
        self.save({**self.load(), key: entry})


def cache_key(combo: Combination, target: Target, where: str, client_version: str | None) -> str:
    """Same machine, client and server versions, target, placement, kex and link (and builds)."""
    placement = getattr(target, "placement", None)
    parts = [
        machine_key(None, None),
        client_version or "",
        target.server_version or "",
        target.kind,
        where,
        placement.text() if placement is not None else "not pinned",
        *key_of(combo),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def interval_for(combo: Combination, target: Target) -> int:
    return rekey.interval_bytes(combo.cipher, combo.client, combo.server, target.server_version)


@dataclass
class RekeyCosts:
    """The probes' stalls per rekey by key_of, and what each probe found (the run's baselines["rekeys"])."""

    stalls: dict[tuple[str, ...], float] = field(default_factory=dict)
    entries: list[dict] = field(default_factory=list)

    def charge(self, trial: Trial, target: Target) -> None:
        """Set the trial's rekey figures where its combination's rekeys matter and were measured."""
        combo = trial.combination
        if trial.kind != TrialKind.TRANSFER or combo.client != "openssh":
            return
        interval = interval_for(combo, target)
        stall = self.stalls.get(key_of(combo))
        if not rekey.matters(interval) or stall is None:
            return
        trial.rekey_every_bytes = interval
        # a connection that rekeyed keeps its own measured stall, unless it was set up with another kex than the
        # row's (plan.setup_kex): the row's kex is what a long transfer rekeys with
        if trial.rekey_stall_s is None or trial.setup_kex:
            trial.rekey_stall_s = stall


def rows_to_probe(
    combos: list[Combination],
    target_for: Callable[[Combination], Target],
    tool_for: Callable[[Combination], TransferTool],
) -> dict[tuple[str, ...], Combination]:
    """The first combination of each key_of whose rekeys matter and whose client can be asked for a RekeyLimit."""
    rows: dict[tuple[str, ...], Combination] = {}
    for combo in combos:
        if combo.client != "openssh" or combo.unpinned or tool_for(combo).client_name is not None:
            continue
        if rekey.matters(interval_for(combo, target_for(combo))):
            rows.setdefault(key_of(combo), combo)
    return rows


def measure(
    *,
    rows: dict[tuple[str, ...], Combination],
    target_for: Callable[[Combination], Target],
    paths_for: Callable[[Combination], TrialPaths],
    ssh_for: Callable[[Combination], str],
    rate_of: Callable[[Combination], float | None],
    workdir: Path,
    timeout_s: float,
    env: dict[str, str] | None,
    where: str = "",
    client_version: str | None = None,
    cache: StallCache | None = None,
) -> RekeyCosts:
    """One probe per row: an upload of PROBE_REKEYS and a half times its RekeyLimit through the pipe, sampled every
    5 ms (rekey.PROBE_SAMPLE_S)."""
    costs = RekeyCosts()
    pipe = get_tool("pipe")
    cache = cache or StallCache()
    for key, row in rows.items():
        stored_key = cache_key(row, target_for(row), where, client_version)
        if (stored := cache.get(stored_key, time.time())) is not None:
            costs.stalls[key] = float(stored["stall_s"])
            costs.entries.append(
                {
                    **_entry(row, stored.get("rekey_limit_bytes"), stored.get("rekeys"), stored["stall_s"]),
                    "cached": True,
                    "measured_at": stored.get("measured_at"),
                    "probe_cipher": stored.get("cipher"),
                }
            )
            continue
        combo = replace(row, tool="pipe", direction="up", streams=1, compression=NO_COMPRESSION, sink="null")
        limit = rekey.probe_limit(rate_of(row))
        size = limit * rekey.PROBE_REKEYS + limit // 2  # the last rekey half a limit before the end, not at it
        target = target_for(row)
        files = paths_for(row).for_trial(combo, TrialKind.TRANSFER, size, tail_ok=True)
        TrialOverlay().prepare(target, combo)
        trial = run_trial(
            ssh=ssh_for(row),
            target=target,
            tool=pipe,
            combo=combo,
            kind=TrialKind.TRANSFER,
            repetition=0,
            warmup=True,
            payload=Path(files.local_source),
            payload_bytes=size,
            workdir=workdir,
            timeout_s=timeout_s,
            env=env,
            files=files,
            extra_options=["-o", f"RekeyLimit={limit}"],
            sample_interval_s=rekey.PROBE_SAMPLE_S,
        )
        entry = {**_entry(row, limit, trial.rekeys, trial.rekey_stall_s), "cached": False, "measured_at": time.time()}
        if not trial.valid:
            entry["note"] = f"not measured: {trial.invalid_reason}"
        elif trial.rekey_stall_s is None:
            entry["note"] = "not measured: the probe's ssh -v logged no rekey, or its progress was not sampled"
        else:
            costs.stalls[key] = trial.rekey_stall_s
            cache.put(
                stored_key,
                {
                    "stall_s": trial.rekey_stall_s,
                    "rekeys": trial.rekeys,
                    "rekey_limit_bytes": limit,
                    "cipher": row.cipher,
                    "measured_at": entry["measured_at"],
                },
            )
        costs.entries.append(entry)
    return costs


def _entry(row: Combination, limit: object, rekeys: object, stall_s: object) -> dict:
    entry = {
        "server": row.server,
        "kex": row.kex,
        "link": row.link,
        "cipher": row.cipher,
        "rekey_limit_bytes": limit,
        "rekeys": rekeys,
        "stall_s": stall_s,
    }
    if row.ssh_build or row.sshd_build:
        entry.update(ssh_build=row.ssh_build, sshd_build=row.sshd_build)
    return entry


def calibration_rate(trials: list[Trial], combo: Combination) -> float | None:
    """A row's rate for spacing its probe's rekeys: the last valid trial's of its cipher and link (its calibration
    probe's, before the measured rounds)."""
    for t in reversed(trials):
        if t.combination.cipher == combo.cipher and t.combination.link == combo.link and t.valid:
            if rate := t.steady_mib_s or t.late_mib_s:
                return rate
    return None


def probe_run(
    combos: list[Combination],
    trials: list[Trial],
    *,
    target_for: Callable[[Combination], Target],
    tool_for: Callable[[Combination], TransferTool],
    paths_for: Callable[[Combination], TrialPaths],
    ssh_for: Callable[[Combination], str],
    workdir: Path,
    timeout_s: float,
    env: dict[str, str] | None,
    where: str = "",
    client_version: str | None = None,
) -> RekeyCosts | None:
    """A run's probes (measure), where some combination rekeys every 1 GiB (chacha20-poly1305, 3des-cbc; Dropbear
    and AsyncSSH servers): ~1.1 s a probe; None where no row needs one. The run's `trials` measured before (a
    resumed run's) are charged here; the runner charges each one measured after."""
    rows = rows_to_probe(combos, target_for, tool_for)
    if not rows:
        return None
    costs = measure(
        rows=rows,
        target_for=target_for,
        paths_for=paths_for,
        ssh_for=ssh_for,
        rate_of=lambda combo: calibration_rate(trials, combo),
        workdir=workdir,
        timeout_s=timeout_s,
        env=env,
        where=where,
        client_version=client_version,
    )
    for trial in trials:  # a resumed run's trials measured before
        if not trial.warmup:
            costs.charge(trial, target_for(trial.combination))
    return costs
