"""The run's targets, started, and the files each trial of theirs uses, looked up by combination.

A run is handed how to start them (`start_target_set`, or a test's fake targets): the runner never makes a target
itself, so a whole run can be driven against fakes. One target per --server, or per sshd build of a sweep
(sshbench.measure.run_targets); the first started is the primary (the baselines and the header use it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sshbench.algorithms import ClientAlgorithms
from sshbench.host.cleanup import Cleanup
from sshbench.measure.plan import target_key
from sshbench.measure.run_targets import start_targets
from sshbench.measure.trial_files import TrialPaths
from sshbench.openssh import builds
from sshbench.results import Combination
from sshbench.settings import RunSettings
from sshbench.targets import Target


@dataclass
class TargetSet:
    """Started targets by key (plan.target_key: the server, and an sshd build's label), the client builds of a
    sweep, and once the matrix is planned each target's trial files (`plan_files`)."""

    ssh: str = "ssh"  # --ssh: the client program of rows without a build of their own
    targets: dict[str, Target] = field(default_factory=dict)
    ssh_builds: list[builds.Build] = field(default_factory=list)  # --ssh A,B: one client build each
    sshd_builds: list[builds.Build] = field(default_factory=list)  # --sshd A,B: relabelled by their banners
    notices: list[str] = field(default_factory=list)  # what starting them found (a remote's leftovers removed)
    paths: dict[str, TrialPaths] = field(default_factory=dict)

    def add(self, key: str, target: Target) -> None:
        self.targets[key] = target

    @property
    def primary(self) -> Target | None:
        return next(iter(self.targets.values()), None)

    def of(self, combo: Combination) -> Target:
        """The target a combination runs against (its server and sshd build); the primary for the raw TCP control."""
        found = self.targets.get(target_key(combo.server, combo.sshd_build)) or self.primary
        assert found is not None, "no target started"
        return found

    def ssh_for(self, combo: Combination) -> str:
        """The ssh program of a combination: its client build's in a build sweep, else --ssh."""
        if combo.ssh_build:
            return next(b.path for b in self.ssh_builds if b.label == combo.ssh_build)
        return self.ssh

    def client_builds(self) -> dict[str, ClientAlgorithms] | None:
        """A client build sweep's algorithms per build label, read through the primary target (None: no sweep)."""
        if len(self.ssh_builds) < 2 or self.primary is None:
            return None
        return {b.label: self.primary.client_build_algorithms(b.path) for b in self.ssh_builds}

    def plan_files(self, cleanup: Cleanup, workdir: Path, combos: list[Combination], settings: RunSettings) -> None:
        """Each target's trial files (payloads, sinks, its server's copies), once the matrix is known."""
        self.paths = {key: TrialPaths(t, cleanup, workdir, combos, settings) for key, t in self.targets.items()}

    @property
    def files(self) -> TrialPaths:
        """The primary target's trial files (the raw TCP control's payloads, the payload notes)."""
        return next(iter(self.paths.values()))

    def paths_of(self, combo: Combination) -> TrialPaths:
        return self.paths.get(target_key(combo.server, combo.sshd_build), self.files)

    def describe(self) -> dict | None:
        """The run record's `target`: the primary's, with every server's where there are several."""
        if self.primary is None:
            return None
        record = self.primary.describe()
        if len(self.targets) > 1:
            record["servers"] = {name: t.describe() for name, t in self.targets.items()}
        return record


def start_target_set(settings: RunSettings, into: TargetSet, cleanup: Cleanup, env: dict[str, str] | None) -> None:
    """Start the run's targets into `into`, one --server after the other (what started before a failure stays
    there, to be described and stopped). A build sweep's client builds are inspected first: each private sshd
    offers what any of them speaks."""
    spec = settings.target
    into.ssh_builds = builds.inspect_all(settings.ssh, "ssh") if builds.sweeps(settings.ssh) else []
    for server in spec.servers:
        started, relabelled = start_targets(server, spec, settings, cleanup, env=env, ssh_builds=into.ssh_builds)
        if relabelled is not None:  # a build sweep's sshd builds, labelled by their banners
            into.sshd_builds = relabelled
        for key, target in started:
            into.add(key, target)
        one = into.targets.get(server)
        if one is not None and (left := one.removed_leftovers):  # a remote host's
            into.notices.append(f"removed leftovers of an earlier run that was killed: {', '.join(left)}")


__all__ = ["TargetSet", "start_target_set"]
