"""`sshbench fleet`: every inventory host benchmarks its own private sshd through the role in ansible/;
each host's result is imported into the store as it arrives (its own run, labelled with the inventory
host name, tagged with the fleet run), so a host that fails later, or an interrupted fleet, loses no
other host's result. `--pairs`: then host A benchmarks host B's sshd over the network, authorised by a
throwaway key A makes for this fleet run (pairs.py, the role's pair stages). `--resume` runs only
the hosts and pairs the fleet run has not stored yet.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.errors import RunError, UsageError
from sshbench.fleet import pairs as fleet_pairs
from sshbench.fleet import playbook, wheelhouse
from sshbench.fleet.pairs import Pair
from sshbench.fleet.tracker import Tracker
from sshbench.store import fleets, open_store
from sshbench.store.fleets import Fleet, FleetHost
from sshbench.store.sqlite import Store


@dataclass
class FleetOptions:
    inventory: str
    limit: str | None = None
    run_args: list[str] = field(default_factory=list)
    resume: str | None = None  # None: a new fleet run; "auto": the newest of this inventory; else its number
    wheelhouse: str | None = None  # a prepared dependency wheelhouse (else downloaded and cached)
    forks: int = 10
    serial: bool = False  # one host benchmarking at a time (hosts sharing hardware)
    db: str | None = None
    pairs: list[Pair] | None = None  # --pairs, expanded (None: not given; a resumed run takes its fleet's)


def resolve_inventory(inventory: str) -> str:
    """A file or directory inventory by its absolute path (a resumed fleet finds its runs by it); anything
    else (an inline 'host1,host2,' list) as given."""
    path = Path(inventory)
    if path.exists():
        return str(path.resolve())
    if "," in inventory:
        return inventory
    raise UsageError(f"--inventory {inventory}: no such file")


def _open_fleet(store: Store, options: FleetOptions, inventory: str) -> tuple[Fleet, dict[str, int]]:
    if options.resume is None:
        fleet = fleets.create_fleet(store, inventory, options.limit, options.run_args)
        # every pair is recorded before it runs: a resumed fleet run knows the ones still missing
        fleet.pairs = {pair.label: FleetHost("not run") for pair in options.pairs or []}
        fleets.save_fleet(store, fleet)
        return fleet, {}
    if options.resume == "auto":
        latest = fleets.latest_fleet_for(store, inventory, options.limit)
        if latest is None:
            raise UsageError(f"no fleet run of {inventory} to resume in {store.path}")
        fleet = latest
    else:
        fleet = fleets.load_fleet(store, options.resume)
        if fleet.inventory != inventory:
            raise UsageError(f"fleet run {fleet.id} used the inventory {fleet.inventory}, not {inventory}")
    if options.run_args and options.run_args != fleet.run_args:
        raise UsageError(
            f"--resume runs the fleet's own options ({' '.join(fleet.run_args) or 'none'}); give no run options"
        )
    if options.pairs is not None and {p.label for p in options.pairs} != set(fleet.pairs):
        raise UsageError(f"--resume runs the fleet's own pairs ({', '.join(fleet.pairs) or 'none'}); give no --pairs")
    stored = fleets.fleet_runs(store, fleet.id)
    return fleet, {h: r for h, r in stored.items() if fleet.hosts.get(h, FleetHost("ok")).status == "ok"}


# ansible-playbook's words for a play whose --limit leaves no host: a resumed fleet run with every host stored
# (older ansible-core: "no hosts matched"; 2.19: "... leaves us with no hosts to target", exit 1).
NO_HOSTS_LEFT = ("no hosts matched", "leaves us with no hosts to target")


def run_fleet(options: FleetOptions, log: Callable[[str], None]) -> tuple[Fleet, list[str]]:
    """Run (or resume) a fleet run; returns it and the hosts skipped as already stored."""
    inventory = resolve_inventory(options.inventory)
    dependencies = None
    if options.wheelhouse:
        dependencies = Path(options.wheelhouse)
        wheelhouse.check_wheelhouse(dependencies)
    playbook.find_ansible_playbook()  # missing ansible: one line before anything is stored
    with open_store(options.db) as store:
        fleet, stored = _open_fleet(store, options, inventory)
        skipped = sorted(stored)
        pairs = [Pair.from_label(label) for label in fleet.pairs if label not in fleet.stored_pairs()]
        if options.resume is not None:
            log(
                f"resuming fleet run {fleet.id}: "
                + (f"{', '.join(skipped)} already stored" if skipped else "no host stored yet")
                + (f"; pairs to run: {', '.join(p.label for p in pairs)}" if pairs else "")
            )
        else:
            log(f"fleet run {fleet.id}: {inventory}" + (f" (--limit {options.limit})" if options.limit else ""))
            if pairs:
                log(f"pairs (A benchmarks B over the network, one at a time): {', '.join(p.label for p in pairs)}")
        pending = fleets.pending_leftovers(store, inventory)
        for name, (earlier, what) in sorted(pending.items()):
            log(f"{name} may still hold {what} (fleet run {earlier}): removed when this run reaches {name}")
        plan = fleet_pairs.play_plan(options.limit, skipped, pairs)
        stage = Path(tempfile.mkdtemp(prefix="sshbench-fleet-"))
        try:
            if dependencies is None:
                dependencies = wheelhouse.dependency_wheelhouse(log)
            archive = wheelhouse.make_archive(dependencies, stage)
            results = stage / "results"
            (results / "pairs").mkdir(parents=True)
            tracker = Tracker(store, fleet, results, log, pairs=pairs, pending=pending)
            extra_vars = {
                "sshbench_wheelhouse_archive": str(archive),
                "sshbench_results_dir": str(results),
                "sshbench_run_args": fleet.run_args,
                "sshbench_wheelhouse_tag": "" if options.wheelhouse else wheelhouse.host_tag(),
                "sshbench_run_throttle": 1 if options.serial else 0,
                "sshbench_pairs": [{"source": p.source, "target": p.target} for p in pairs],
                "sshbench_skip_own_run": plan.skip_own_run,
            }
            if pairs:
                # the comment of every throwaway key of this fleet run: the targets remove their lines by it
                extra_vars["sshbench_pair_marker"] = f"sshbench-fleet-pair-{fleet.id}-{secrets.token_hex(6)}"
            lines: list[str] = []
            try:
                status = playbook.run_playbook(
                    playbook.PLAYBOOK,
                    inventory,
                    plan.limit,
                    extra_vars,
                    stage,
                    options.forks,
                    tracker.on_event,
                    lines.append,
                )
            except BaseException:
                _stop_hosts(inventory, stage, options.forks, tracker, log)
                raise
            finally:
                tracker.finish()
                fleet.finished_at = time.time()
                fleets.save_fleet(store, fleet)
            if not tracker.hosts:
                if status == 0 or any(wording in line for line in lines for wording in NO_HOSTS_LEFT):
                    log("no host to run" + (" (every host of the fleet run is stored)" if skipped else ""))
                else:
                    why = next((line for line in lines if "ERROR" in line), lines[-1] if lines else f"exit {status}")
                    raise RunError(f"ansible-playbook failed before any host ran: {why.strip()}")
            for name, host in sorted(fleet.hosts.items()):
                if host.leftover:
                    log(f"{name} may still hold {host.leftover}: the next fleet run that reaches {name} removes it")
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return fleet, skipped


def _stop_hosts(inventory: str, stage: Path, forks: int, tracker: Tracker, log: Callable[[str], None]) -> None:
    """After an interruption: stop the benchmark, remove the throwaway key and the working directory on
    each host that had started (bounded); a host it cannot reach keeps them until the next fleet run's
    check removes them (the report names them)."""
    started = [name for name, host in tracker.hosts.items() if host.status is None]
    if not started:
        return
    log(f"stopping sshbench on {', '.join(started)}")
    with contextlib.suppress(Exception):
        playbook.run_playbook(
            playbook.STOP_PLAYBOOK,
            inventory,
            ",".join(started),
            {},
            stage,
            forks,
            tracker.on_event,
            lambda line: None,
            timeout_s=playbook.STOP_TIMEOUT_S,
        )
