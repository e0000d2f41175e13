"""The playbook's events -> per-host and per-pair progress lines and outcomes, each result imported into
the store as it is fetched (a host that fails later, or an interrupted fleet, loses nothing already
measured), and what may be left on a host (its working directory, a throwaway key line) when the
playbook could not remove it.

Stages (the role names its tasks `sshbench: <stage> (...)`): python (a Python that runs, found with the
raw module), check, install, run, fetch for the host's
own benchmark; pair source (its throwaway key; later known_hosts and ssh_config), pair target (authorize
its sources' keys, read its host keys), pair run and pair fetch (one event per pair: a loop item); clean
up (the throwaway key lines, then the working directory), or stop after an interruption.
A failure in a pair stage is the pairs' outcome, never the host's: its own result stays stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.errors import SshbenchError
from sshbench.fleet.pairs import Pair
from sshbench.fleet.playbook import HostEvent
from sshbench.store import fleets
from sshbench.store.fleets import Fleet, FleetHost
from sshbench.store.sqlite import Store

# The check stage's own first words (the role prints them) -> the host's status.
CHECK_STATUSES = {"no sshd": "no sshd", "no ssh": "no sshd", "no python": "no python", "busy": "busy"}
CLEAN_UP_STAGES = ("clean up", "stop")


@dataclass
class _HostProgress:
    started: float | None = None
    stage: str = ""
    status: str | None = None
    message: str = ""
    work: str = ""  # its working directory there (from the role's set_fact)
    dir_made: bool = False  # this run's check made it (or found an earlier one)
    dir_removed: bool = False
    keys_file: str = ""  # where this run authorized the throwaway key (a pair's target)
    key_removed: bool = False

    def leftover(self) -> str:
        parts = []
        if self.dir_made and not self.dir_removed:
            parts.append(self.work or "its working directory")
        if self.keys_file and not self.key_removed:
            parts.append(f"a throwaway key line in {self.keys_file}")
        return " and ".join(parts)


@dataclass
class _PairRun:
    rc: int | None = None
    message: str = ""


@dataclass
class Tracker:
    store: Store
    fleet: Fleet
    results: Path
    log: Callable[[str], None]
    pairs: list[Pair] = field(default_factory=list)
    pending: dict[str, tuple[int, str]] = field(default_factory=dict)  # leftovers of earlier fleet runs
    hosts: dict[str, _HostProgress] = field(default_factory=dict)
    pair_runs: dict[str, _PairRun] = field(default_factory=dict)
    last_event: float | None = None  # of any host: pairs run one at a time, so a pair took since then

    def on_event(self, event: HostEvent) -> None:
        host = self.hosts.setdefault(event.host, _HostProgress(started=event.time))
        if event.work:
            host.work = event.work
        since, self.last_event = self.last_event, event.time
        if event.stage in CLEAN_UP_STAGES:
            self._clean_up(event.host, host, event)
        elif event.stage.startswith("pair "):
            self._pair(event, host, since)
        elif host.status is not None:
            return  # already decided (ansible does not run a failed host's later tasks anyway)
        elif event.item is not None:
            return  # the role's own stages have no loops
        elif event.event == "unreachable":
            # the stage it was lost in: a host that died while it benchmarked reads "run: ..."
            self._fail(event.host, "unreachable", f"{event.stage}: {event.message or 'unreachable'}")
        elif event.event == "failed" and event.stage == "python":
            self._fail(event.host, "no python", event.message.removeprefix("no python: ") or "no Python runs there")
        elif event.event == "failed":
            status = {"install": "install failed", "run": "run failed"}.get(event.stage, "")
            if event.stage == "check":
                status = next((s for p, s in CHECK_STATUSES.items() if event.message.startswith(p)), "install failed")
            self._fail(event.host, status or "run failed", f"{event.stage}: {event.message}")
        elif event.event == "ok":
            self._ok(event.host, host, event)

    # the host's own benchmark ------------------------------------------------------------------

    def _ok(self, name: str, host: _HostProgress, event: HostEvent) -> None:
        elapsed = f"{event.time - (host.started or event.time):.0f} s"
        if event.stage == "python":
            found = dict(
                line.split("=", 1) for line in event.stdout.splitlines() if line.startswith(("python=", "tag="))
            )
            if "python" in found:
                passed = [line for line in event.stdout.splitlines() if line.startswith("passed over: ")]
                self.log(
                    f"{name}: python {found['python']} ({found.get('tag', '?')})" + "".join(f"; {p}" for p in passed)
                )
        elif event.stage == "check":
            host.dir_made = True
            self.pending.pop(name, None)  # the check removed whatever an earlier run left
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
        self.fleet.hosts[name] = FleetHost("ok", "" if status in (None, "complete") else f"run {status}", run_id)
        self.save()
        self.log(f"{name}: stored as run {run_id}")

    def _fail(self, name: str, status: str, message: str) -> None:
        host = self.hosts.setdefault(name, _HostProgress())
        host.status, host.message = status, message
        stored = self.fleet.hosts.get(name)
        run_id = stored.run_id if stored is not None else None
        # a failed run's measured trials were imported above: kept, with the failure beside them
        self.fleet.hosts[name] = FleetHost(status, message, run_id)
        self.save()
        kept = f" (its measured trials are stored as run {run_id})" if run_id is not None else ""
        self.log(f"{name}: {status}: {message}{kept}")

    def _clean_up(self, name: str, host: _HostProgress, event: HostEvent) -> None:
        """The working directory's and the throwaway key's removal; a failure here changes no outcome,
        it leaves something behind, which the report names."""
        if event.event == "ok":  # the throwaway key lines first, then the directory holding their undo script
            host.dir_removed = host.key_removed = True
        elif event.event in ("failed", "unreachable") and event.stage != "stop":
            self.log(f"{name}: {event.stage} failed: {event.message or event.event}")

    # pairs ---------------------------------------------------------------------------------------

    def _pair(self, event: HostEvent, host: _HostProgress, since: float | None) -> None:
        stage, name = event.stage, event.host
        if event.event in ("failed", "unreachable") and event.item is None:
            # a pair target or source could not be set up: its pairs do not run
            side = "target" if stage == "pair target" else "source"
            why = f"{name} ({stage}): {event.message or event.event}"
            for pair in self.pairs:
                if (pair.target if side == "target" else pair.source) == name:
                    self._pair_outcome(pair, "not run", why)
            return
        if event.event == "ok" and stage == "pair target" and event.item is None:
            keys = [line for line in event.stdout.splitlines() if line.startswith("keys=")]
            if keys:
                host.keys_file = keys[-1].partition("=")[2]
            # how its sources' keys are bounded (the role: from= always, expiry-time= where its OpenSSH reads it)
            for line in event.stdout.splitlines():
                if line.startswith("bounded=none"):
                    self.log(f"{name}: its pair keys are valid until removed: {line.partition('=')[2]}")
            return
        if event.item is None:
            return
        pair = Pair(name, event.item)
        if stage == "pair run":
            ok = event.event == "ok" and event.rc == 0
            lines = [line for line in event.stderr.splitlines() if line.strip()]
            why = next((line for line in lines if line.startswith("sshbench: error")), lines[-1] if lines else "")
            ended = "finished" if ok else f"ended with exit {event.rc}" if event.rc is not None else event.event
            message = "" if ok else f"run {ended}: {why or event.message}"
            self.pair_runs[pair.label] = _PairRun(event.rc, message)
            elapsed = f" ({event.time - since:.0f} s)" if since is not None else ""
            self.log(f"{pair.label}: benchmark over the network {ended}{elapsed}")
        elif stage == "pair fetch":
            self._import_pair(pair)

    def _import_pair(self, pair: Pair) -> None:
        ran = self.pair_runs.get(pair.label, _PairRun())
        path = self.results / "pairs" / pair.source / f"{pair.target}.json"
        if not path.is_file():
            self._pair_outcome(pair, "run failed", ran.message or "it wrote no result")
            return
        try:
            doc = json.loads(path.read_text())
            run_id = self.store.import_document(doc, path.name, label=pair.label, fleet_id=self.fleet.id)
        except (ValueError, SshbenchError) as err:
            self._pair_outcome(pair, "run failed", f"its result could not be stored: {err}")
            return
        self.log(f"{pair.label}: stored as run {run_id}")
        self._pair_outcome(pair, "ok" if ran.rc == 0 else "run failed", ran.message, run_id)

    def _pair_outcome(self, pair: Pair, status: str, message: str, run_id: int | None = None) -> None:
        self.fleet.pairs[pair.label] = FleetHost(status, message, run_id)
        self.save()
        if status != "ok":
            kept = f" (its measured trials are stored as run {run_id})" if run_id is not None else ""
            self.log(f"{pair.label}: {status}: {message}{kept}")

    # the end ----------------------------------------------------------------------------------------

    def finish(self) -> None:
        """Outcomes of hosts and pairs the playbook never got to, and what each host may still hold."""
        for name, host in self.hosts.items():
            if name not in self.fleet.hosts:
                self.fleet.hosts[name] = FleetHost("not run", host.message or "the playbook ended before its result")
        for pair in self.pairs:
            entry = self.fleet.pairs.get(pair.label)
            if entry is None or (entry.status == "not run" and not entry.message):
                ends = [
                    h for h in (pair.source, pair.target) if self.fleet.hosts.get(h, FleetHost("ok")).status != "ok"
                ]
                why = ", ".join(f"{h} {self.fleet.hosts[h].status}" for h in ends) or "the playbook ended before it"
                self.fleet.pairs[pair.label] = FleetHost("not run", why)
        self.save()

    def save(self) -> None:
        for name, host in self.hosts.items():
            entry = self.fleet.hosts.get(name)
            if entry is not None:
                carried = self.pending.get(name, (0, ""))[1]  # not reached: an earlier run's leftover stays
                entry.leftover = host.leftover() or carried
        fleets.save_fleet(self.store, self.fleet)
