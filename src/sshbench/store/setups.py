"""What "the same set-up" means, once: the stored runs `check --against` takes its run-to-run scatter from
(model/gate_stored.py) and the runs `sshbench history` lines up (model/history.py).

Two runs are of the same set-up when they ran on the same host, measured the same rows (their combinations with the
build labels left out: an upgrade changes those, and is what a history or a check is about) and the same ssh, sshd,
server, link, tool, direction, payload, sink, compression and server CPU quota. Other settings (rounds, budget,
sizes) may differ: they change how closely a run measures, not what."""

from __future__ import annotations

from collections.abc import Callable

from sshbench.errors import SshbenchError
from sshbench.model import gate
from sshbench.results import RunResult
from sshbench.store.schema import THROUGHPUT
from sshbench.store.sqlite import Store


def setup_key(run: RunResult) -> tuple:
    """What two runs of one set-up on one host share (the module's docstring); compare with ==."""
    s = run.settings
    settings = (s.ssh, s.sshd, s.server, s.link, s.tool, s.direction, s.payload, s.sink, s.compression, s.server_cpu)
    return frozenset(gate.row_key(c) for c in run.combinations), settings


def runs_of_setup(
    store: Store,
    reference: RunResult,
    keep: int | None = None,
    scan: int | None = None,
    exclude: int | None = None,
    skip: Callable[[RunResult], bool] = lambda run: False,
) -> list[RunResult]:
    """The stored complete runs of `reference`'s set-up, oldest first: the newest `keep` of them, looked for among the
    newest `scan` complete throughput runs on its host (None: all), `exclude` (a run id) and runs `skip` says
    left out. Loaded newest first, so that no more runs (with their trials) are read than are kept."""
    host = reference.environment.get("hostname")
    key = setup_key(reference)
    candidates = [
        r
        for r in store.list_runs()
        if r.hostname == host and r.status == "complete" and r.id != exclude and r.kind == THROUGHPUT
    ]
    if scan is not None:
        candidates = candidates[-scan:]
    same: list[RunResult] = []
    for stored in reversed(candidates):
        if keep is not None and len(same) == keep:
            break
        try:
            run = store.load_result(stored.id)
        except SshbenchError:  # a run this version cannot read is no part of any set-up's history
            continue
        if setup_key(run) == key and not skip(run):
            same.append(run)
    same.reverse()
    return same
