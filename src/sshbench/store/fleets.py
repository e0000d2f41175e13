"""Fleet runs in the store: one row per `sshbench fleet` (its inventory, limit, run options and each
host's outcome); each host's result is an ordinary run whose `label` is its inventory host name and
whose `fleet_id` points here, so `runs`, `report` and `compare` read it like any other run.

A pair (`--pairs`: host A benchmarks host B) is stored the same way, labelled `A->B`; its outcome sits in
the same `hosts_json` under that label (no migration: the separator tells them apart), read back into
`Fleet.pairs`."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import asdict, dataclass, field

from sshbench.errors import RunError, UsageError
from sshbench.store.sqlite import Store

# A host's outcome: ok (its run is stored), or why not.
STATUSES = ("ok", "unreachable", "no sshd", "no python", "busy", "install failed", "run failed", "not run")


PAIR_SEPARATOR = "->"  # as sshbench.fleet.pairs.SEPARATOR (the store sits below the fleet package)


@dataclass
class FleetHost:
    status: str
    message: str = ""
    run_id: int | None = None
    # what this fleet run may have left on the host (its working directory, a throwaway key line), where
    # the next fleet run that reaches the host removes it; "" when nothing is left
    leftover: str = ""


@dataclass
class Fleet:
    id: int
    started_at: float
    finished_at: float | None
    inventory: str
    host_limit: str | None
    run_args: list[str]
    hosts: dict[str, FleetHost] = field(default_factory=dict)
    pairs: dict[str, FleetHost] = field(default_factory=dict)  # "A->B" -> its outcome

    def stored_hosts(self) -> list[str]:
        return [name for name, host in self.hosts.items() if host.run_id is not None and host.status == "ok"]

    def stored_pairs(self) -> list[str]:
        return [label for label, pair in self.pairs.items() if pair.run_id is not None and pair.status == "ok"]


def create_fleet(store: Store, inventory: str, host_limit: str | None, run_args: list[str]) -> Fleet:
    started = time.time()
    with store._guard():
        cur = store.db.execute(
            "INSERT INTO fleets (started_at, inventory, host_limit, run_args_json) VALUES (?, ?, ?, ?)",
            (started, inventory, host_limit, json.dumps(run_args)),
        )
    return Fleet(int(cur.lastrowid or 0), started, None, inventory, host_limit, list(run_args))


def save_fleet(store: Store, fleet: Fleet) -> None:
    """Each host's outcome so far (written after every host, so an interrupted fleet keeps them)."""
    hosts = {name: asdict(host) for name, host in {**fleet.hosts, **fleet.pairs}.items()}
    with store._guard():
        store.db.execute(
            "UPDATE fleets SET finished_at = ?, hosts_json = ? WHERE id = ?",
            (fleet.finished_at, json.dumps(hosts), fleet.id),
        )


def _from_row(row: tuple) -> Fleet:
    fleet_id, started, finished, inventory, host_limit, run_args_json, hosts_json = row
    try:
        entries = {name: FleetHost(**host) for name, host in json.loads(hosts_json).items()}
        hosts = {name: e for name, e in entries.items() if PAIR_SEPARATOR not in name}
        pairs = {name: e for name, e in entries.items() if PAIR_SEPARATOR in name}
        return Fleet(fleet_id, started, finished, inventory, host_limit, json.loads(run_args_json), hosts, pairs)
    except (ValueError, TypeError) as err:
        raise RunError(f"fleet run {fleet_id} cannot be read: {err}") from None


_COLUMNS = "id, started_at, finished_at, inventory, host_limit, run_args_json, hosts_json"


def load_fleet(store: Store, ref: str | int) -> Fleet:
    """A fleet run by number or 'latest'; UsageError when there is none."""
    with store._guard():
        if str(ref).strip().lower() == "latest":
            row = store.db.execute(f"SELECT {_COLUMNS} FROM fleets ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                raise UsageError(f"no fleet runs in {store.path} yet; `sshbench fleet` makes one")
            return _from_row(row)
        try:
            fleet_id = int(str(ref).strip())
        except ValueError:
            raise UsageError(f"a fleet run is named by its number or 'latest' (got {ref!r})") from None
        row = store.db.execute(f"SELECT {_COLUMNS} FROM fleets WHERE id = ?", (fleet_id,)).fetchone()
    if row is None:
        raise UsageError(f"no fleet run {fleet_id} in {store.path}; `sshbench runs` lists fleet runs' hosts")
    return _from_row(row)


def latest_fleet_for(store: Store, inventory: str, host_limit: str | None) -> Fleet | None:
    """The newest fleet run of this inventory and limit (what `fleet --resume` continues)."""
    with store._guard():
        row = store.db.execute(
            f"SELECT {_COLUMNS} FROM fleets WHERE inventory = ? AND host_limit IS ? ORDER BY id DESC LIMIT 1",
            (inventory, host_limit),
        ).fetchone()
    return _from_row(row) if row else None


def fleet_runs(store: Store, fleet_id: int, pairs: bool = False) -> dict[str, int]:
    """Inventory host name -> its stored run in this fleet (the newest when a host ran twice); with
    `pairs`, the pairs' runs instead ("A->B" -> run)."""
    with store._guard():
        rows = store.db.execute(
            "SELECT label, max(id) FROM runs WHERE fleet_id = ? AND label IS NOT NULL GROUP BY label ORDER BY label",
            (fleet_id,),
        ).fetchall()
    return {label: run_id for label, run_id in rows if (PAIR_SEPARATOR in label) == pairs}


def pending_leftovers(store: Store, inventory: str) -> dict[str, tuple[int, str]]:
    """Host -> (fleet run, what it may still hold) for each host of this inventory whose newest fleet
    run entry says something may be left there (a later run that reached the host clears it)."""
    with store._guard():
        rows = store.db.execute(
            f"SELECT {_COLUMNS} FROM fleets WHERE inventory = ? ORDER BY id", (inventory,)
        ).fetchall()
    latest: dict[str, tuple[int, str]] = {}
    for row in rows:
        with contextlib.suppress(RunError):
            fleet = _from_row(row)
            latest.update({name: (fleet.id, host.leftover) for name, host in fleet.hosts.items()})
    return {name: entry for name, entry in latest.items() if entry[1]}
