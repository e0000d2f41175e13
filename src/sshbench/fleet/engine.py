"""`sshbench fleet`: every inventory host benchmarks its own private sshd through the role in ansible/;
each host's result is imported into the store as it arrives (its own run, labelled with the inventory
host name, tagged with the fleet run), so a host that fails later, or an interrupted fleet, loses no
other host's result. `--resume` runs only the hosts the fleet run has not stored yet.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.errors import RunError, SshbenchError, UsageError
from sshbench.fleet import playbook, wheelhouse
from sshbench.fleet.playbook import HostEvent
from sshbench.store import fleets, open_store
from sshbench.store.fleets import Fleet, FleetHost
from sshbench.store.sqlite import Store

# The check stage's own first words (the role prints them) -> the host's status.
CHECK_STATUSES = {"no sshd": "no sshd", "no ssh": "no sshd", "no python": "no python", "busy": "busy"}


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


@dataclass
class _HostProgress:
    started: float | None = None
    stage: str = ""
    status: str | None = None
    message: str = ""


class _Tracker:
    """Turns the playbook's events into per-host progress lines and outcomes, importing each fetched
    result at once."""

    def __init__(self, store: Store, fleet: Fleet, results: Path, log: Callable[[str], None]) -> None:
        self.store, self.fleet, self.results, self.log = store, fleet, results, log
        self.hosts: dict[str, _HostProgress] = {}

    def on_event(self, event: HostEvent) -> None:
        host = self.hosts.setdefault(event.host, _HostProgress(started=event.time))
        if host.status is not None and event.stage != "clean up":
            return  # already decided (ansible does not run a failed host's later tasks anyway)
        if event.event == "unreachable":
            self._fail(event.host, "unreachable", event.message or "unreachable")
        elif event.event == "failed":
            status = {"install": "install failed", "run": "run failed"}.get(event.stage, "")
            if event.stage == "check":
                status = next((s for p, s in CHECK_STATUSES.items() if event.message.startswith(p)), "install failed")
            self._fail(event.host, status or "run failed", f"{event.stage}: {event.message}")
        elif event.event == "ok":
            self._ok(event.host, host, event)

    def _ok(self, name: str, host: _HostProgress, event: HostEvent) -> None:
        elapsed = f"{event.time - (host.started or event.time):.0f} s"
        if event.stage == "check":
            lines = [line for line in event.stdout.splitlines() if line.strip()]
            for line in lines[:-1]:  # "removed a leftover ..."
                self.log(f"{name}: {line}")
            self.log(f"{name}: checked ({lines[-1] if lines else 'ok'}, OpenSSH server present)")
        elif event.stage == "install" and event.stdout.strip():
            self.log(f"{name}: installed {event.stdout.strip().splitlines()[-1]} in a private venv ({elapsed})")
        elif event.stage == "run" and event.rc is not None:
            ended = "finished" if event.rc == 0 else f"ended with exit {event.rc}"
            self.log(f"{name}: benchmark {ended} ({elapsed})")
        elif event.stage == "fetch":
            self._import(name)
        host.stage = event.stage

    def _import(self, name: str) -> None:
        path = self.results / f"{name}.json"
        if not path.is_file():
            return  # the run wrote nothing: its failure comes next
        try:
            doc = json.loads(path.read_text())
            run_id = self.store.import_document(doc, f"{name}.json", label=name, fleet_id=self.fleet.id)
        except (ValueError, SshbenchError) as err:
            self._fail(name, "run failed", f"its result could not be stored: {err}")
            return
        status = doc.get("status") if isinstance(doc, dict) else None
        self.fleet.hosts[name] = FleetHost("ok", "", run_id)
        if status not in (None, "complete"):
            self.fleet.hosts[name].message = f"run {status}"
        fleets.save_fleet(self.store, self.fleet)
        self.log(f"{name}: stored as run {run_id}")

    def _fail(self, name: str, status: str, message: str) -> None:
        host = self.hosts.setdefault(name, _HostProgress())
        host.status, host.message = status, message
        stored = self.fleet.hosts.get(name)
        run_id = stored.run_id if stored is not None else None
        # a failed run's measured trials were imported above: kept, with the failure beside them
        self.fleet.hosts[name] = FleetHost(status, message, run_id)
        fleets.save_fleet(self.store, self.fleet)
        kept = f" (its measured trials are stored as run {run_id})" if run_id is not None else ""
        self.log(f"{name}: {status}: {message}{kept}")


def _resolve_inventory(inventory: str) -> str:
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
        return fleets.create_fleet(store, inventory, options.limit, options.run_args), {}
    if options.resume == "auto":
        fleet = fleets.latest_fleet_for(store, inventory, options.limit)
        if fleet is None:
            raise UsageError(f"no fleet run of {inventory} to resume in {store.path}")
    else:
        fleet = fleets.load_fleet(store, options.resume)
        if fleet.inventory != inventory:
            raise UsageError(f"fleet run {fleet.id} used the inventory {fleet.inventory}, not {inventory}")
    if options.run_args and options.run_args != fleet.run_args:
        raise UsageError(
            f"--resume runs the fleet's own options ({' '.join(fleet.run_args) or 'none'}); give no run options"
        )
    stored = fleets.fleet_runs(store, fleet.id)
    return fleet, {h: r for h, r in stored.items() if fleet.hosts.get(h, FleetHost("ok")).status == "ok"}


def run_fleet(options: FleetOptions, log: Callable[[str], None]) -> tuple[Fleet, list[str]]:
    """Run (or resume) a fleet run; returns it and the hosts skipped as already stored."""
    inventory = _resolve_inventory(options.inventory)
    dependencies = None
    if options.wheelhouse:
        dependencies = Path(options.wheelhouse)
        wheelhouse.check_wheelhouse(dependencies)
    playbook.find_ansible_playbook()  # missing ansible: one line before anything is stored
    with open_store(options.db) as store:
        fleet, stored = _open_fleet(store, options, inventory)
        skipped = sorted(stored)
        if options.resume is not None:
            log(
                f"resuming fleet run {fleet.id}: "
                + (f"{', '.join(skipped)} already stored" if skipped else "no host stored yet")
            )
        else:
            log(f"fleet run {fleet.id}: {inventory}" + (f" (--limit {options.limit})" if options.limit else ""))
        stage = Path(tempfile.mkdtemp(prefix="sshbench-fleet-"))
        try:
            if dependencies is None:
                dependencies = wheelhouse.dependency_wheelhouse(log)
            archive = wheelhouse.make_archive(dependencies, stage)
            results = stage / "results"
            results.mkdir()
            tracker = _Tracker(store, fleet, results, log)
            limit = options.limit or "all"
            if skipped:
                limit += "".join(f":!{host}" for host in skipped)
            extra_vars = {
                "sshbench_wheelhouse_archive": str(archive),
                "sshbench_results_dir": str(results),
                "sshbench_run_args": fleet.run_args,
                "sshbench_wheelhouse_tag": "" if options.wheelhouse else wheelhouse.host_tag(),
                "sshbench_run_throttle": 1 if options.serial else 0,
            }
            lines: list[str] = []
            try:
                status = playbook.run_playbook(
                    playbook.PLAYBOOK,
                    inventory,
                    limit,
                    extra_vars,
                    stage,
                    options.forks,
                    tracker.on_event,
                    lines.append,
                )
            except BaseException:
                _stop_hosts(inventory, limit, stage, options.forks, tracker, log)
                raise
            finally:
                fleet.finished_at = time.time()
                fleets.save_fleet(store, fleet)
            if not tracker.hosts:
                if status == 0 or any("no hosts matched" in line for line in lines):
                    log("no host to run" + (" (every host of the fleet run is stored)" if skipped else ""))
                else:
                    why = next((line for line in lines if "ERROR" in line), lines[-1] if lines else f"exit {status}")
                    raise RunError(f"ansible-playbook failed before any host ran: {why.strip()}")
            for name, host in tracker.hosts.items():
                if name not in fleet.hosts:
                    fleet.hosts[name] = FleetHost("not run", host.message or "the playbook ended before its result")
            fleets.save_fleet(store, fleet)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return fleet, skipped


def _stop_hosts(inventory: str, limit: str, stage: Path, forks: int, tracker: _Tracker, log) -> None:
    """After an interruption: stop the benchmark and remove the working directory on each host that had
    started (bounded); a host it cannot reach keeps them until the next fleet run's check removes them."""
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
            lambda event: None,
            lambda line: None,
            timeout_s=playbook.STOP_TIMEOUT_S,
        )
