"""What `sshbench runs` lists: a StoredRun per run, with its swept column (what the run varied), for throughput and
latency runs alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from sshbench.results import AXES, IMPLICIT_MAC, Combination
from sshbench.store.schema import THROUGHPUT


def swept(combinations: list[Combination]) -> str:
    """What a run varied, for `sshbench runs`: '3 ciphers x 2 MACs; kex X' style."""
    if not combinations:
        return "-"
    parts, fixed = [], []
    for axis in AXES:
        attr, singular, plural = axis.name, axis.singular, axis.plural
        values = list(dict.fromkeys(getattr(c, attr) for c in combinations))
        if attr == "mac" and len(values) > 1:  # AEAD ciphers' "implicit" is not a MAC that was swept
            values = [v for v in values if v != IMPLICIT_MAC]
        if attr.endswith("_build"):  # "": a Dropbear/AsyncSSH row of a build sweep, not a build
            values = [v for v in values if v]
        if len(values) > 1:
            parts.append(f"{len(values)} {plural}")
        elif attr in ("cipher", "mac", "kex"):
            fixed.append(f"{singular} {values[0]}")
    return " x ".join(parts) + ("; " if parts and fixed else "") + ", ".join(fixed)


def latency_swept(rows: list) -> str:
    """`sshbench runs`' swept column for a latency run: 'latency: 3 ciphers x 2 links' style."""
    parts = []
    for key, plural in (("cipher", "ciphers"), ("link", "links")):
        values = list(dict.fromkeys(str(row.get(key)) for row in rows if isinstance(row, dict)))
        if len(values) > 1:
            parts.append(f"{len(values)} {plural}")
        elif values and key == "cipher":
            parts.append(f"cipher {values[0]}")
    return "latency: " + (" x ".join(parts) or "nothing measured")


@dataclass
class StoredRun:
    """One line of `sshbench runs`."""

    id: int
    started_at: float
    finished_at: float | None
    status: str  # effective: a 'running' run whose writer is gone reads as 'interrupted'
    hostname: str | None
    target: str | None
    swept: str
    measured_trials: int
    client_ssh_version: str | None
    server_ssh_version: str | None
    imported: bool
    label: str | None = None  # a fleet run's inventory host name
    fleet_id: int | None = None
    kind: str = THROUGHPUT  # or LATENCY: `sshbench latency`'s run
