"""`sshbench recommend --fleet FLEET`: one policy for every host of a fleet run.

Each host's run goes through recommend/config.build (the policy filter, Terrapin rules and AEAD/MAC logic
per host); the fleet keeps what every host's recommendation allows and measured, and orders it as the
slowest host's own recommendation does (a shared policy runs at that speed on the slowest machine; its decided
groups, and your ssh's default order inside a group). Each host's loss is
its speed with the fleet's first choice against its own best under the same policy.

No live connection is made (the hosts are elsewhere): every setting on the lines was measured on every
host, i.e. each host's ssh and sshd negotiated it there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sshbench.errors import RunError, UsageError
from sshbench.recommend.config import Choice, Recommendation, build
from sshbench.results import RunResult


@dataclass
class HostLoss:
    host: str
    own_best: str
    own_best_mib_s: float | None
    fleet_choice_mib_s: float | None

    @property
    def loss(self) -> float | None:
        """The share of its own best this host gives up with the fleet's first choice (0.0: none)."""
        if not self.own_best_mib_s or self.fleet_choice_mib_s is None:
            return None
        return max(0.0, 1.0 - self.fleet_choice_mib_s / self.own_best_mib_s)


@dataclass
class FleetRecommendation:
    fleet_id: int
    hosts: list[str]
    rec: Recommendation  # its Choices carry the slowest host's figure; measured_with names that host
    losses: list[HostLoss] = field(default_factory=list)
    not_everywhere: list[str] = field(default_factory=list)  # "name: why" for algorithms some host lacks

    def render(self) -> str:
        where = "~/.ssh/config" if self.rec.target == "client" else "sshd_config"
        lines = [
            f"# sshbench recommend --fleet {self.fleet_id} --policy {self.rec.policy} --for {self.rec.target} ({where})",
            f"# fleet run {self.fleet_id}: {', '.join(self.hosts)}; every setting here was measured on each host",
            *(f"# WARNING: {w}" for w in self.rec.warnings),
        ]
        indent = "    " if self.rec.target == "client" else ""
        if self.rec.target == "client":
            lines.append(f"Host {self.rec.host_pattern}")
        figures = {
            "Ciphers": self.rec.ciphers,
            "MACs": self.rec.macs,
            "KexAlgorithms": self.rec.kex,
        }
        for option, value in self.rec.settings().items():
            lines.append(f"{indent}{option} {value}")
            choices = figures.get(option)
            if choices:
                order = (
                    "slowest host's set-up first"
                    if option == "KexAlgorithms"
                    else "in the slowest host's order (its groups, then your ssh's)"
                )
                lines.append(f"{indent}# {order}: " + ", ".join(_figure(c) for c in choices))
        if not self.rec.macs:
            lines.append(f"{indent}# (no MACs line: every cipher above is AEAD and carries its own integrity)")
        return "\n".join(lines) + "\n"


def _figure(choice: Choice) -> str:
    if choice.kind == "kex":
        ms = "not measured" if choice.handshake_ms is None else f"{choice.handshake_ms:.0f} ms"
        return f"{choice.name} {ms} ({choice.measured_with})"
    rate = "not measured" if choice.median_mib_s is None else f"{choice.median_mib_s:.0f} MiB/s"
    return f"{choice.name} {rate} ({choice.measured_with})"


def _slowest(kind: str, per_host: dict[str, Recommendation], name: str) -> Choice:
    """The host's Choice of `name` with the lowest speed (kex: the longest set-up)."""
    picks = [(host, next(c for c in getattr(rec, kind) if c.name == name)) for host, rec in per_host.items()]
    if kind == "kex":
        host, worst = max(picks, key=lambda hc: hc[1].handshake_ms if hc[1].handshake_ms is not None else -1.0)
    else:
        host, worst = min(picks, key=lambda hc: hc[1].median_mib_s if hc[1].median_mib_s is not None else 0.0)
    return Choice(worst.kind, worst.name, worst.verdict, worst.median_mib_s, f"slowest: {host}", worst.handshake_ms)


def _common(kind: str, per_host: dict[str, Recommendation], not_everywhere: list[str]) -> list[Choice]:
    names = [[c.name for c in getattr(rec, kind)] for rec in per_host.values()]
    everywhere = set(names[0]).intersection(*names[1:])
    for name in dict.fromkeys(n for host_names in names for n in host_names):
        if name not in everywhere:
            lacking = [h for h, rec in per_host.items() if name not in {c.name for c in getattr(rec, kind)}]
            not_everywhere.append(f"{name}: not measured or not allowed on {', '.join(lacking)}")
    choices = [_slowest(kind, per_host, name) for name in everywhere]
    if kind == "kex":
        return sorted(choices, key=lambda c: (c.handshake_ms is None, c.handshake_ms or 0.0))
    # The slowest host's own order (its decided groups, your ssh's default order inside a group: policy.build),
    # so that the fleet's lines follow the same rule as one host's and stay the same when that host's run
    # cannot tell two algorithms apart.
    slowest = min(per_host.values(), key=lambda rec: rec.ciphers[0].median_mib_s or 0.0 if rec.ciphers else 0.0)
    order = {c.name: i for i, c in enumerate(getattr(slowest, kind))}
    return sorted(choices, key=lambda c: (order.get(c.name, len(order)), -(c.median_mib_s or 0.0)))


def build_fleet(
    fleet_id: int, runs: dict[str, RunResult], policy: str, target: str = "client", host_pattern: str | None = None
) -> FleetRecommendation:
    """runs: inventory host -> its run. RunError when the hosts share no allowed cipher or kex."""
    if not runs:
        raise UsageError(f"fleet run {fleet_id} has no stored host results")
    per_host = {
        host: build(result, policy, target, host_pattern or "*", run_label=host) for host, result in runs.items()
    }
    not_everywhere: list[str] = []
    ciphers = _common("ciphers", per_host, not_everywhere)
    if not ciphers:
        raise RunError(f"no cipher that policy {policy} allows was measured on every host of fleet run {fleet_id}")
    # config.build leaves an AEAD cipher's measured_with empty (no MAC was part of its combination)
    aead = {c.name for rec in per_host.values() for c in rec.ciphers if not c.measured_with}
    macs: list[Choice] = []
    if any(c.name not in aead for c in ciphers):
        macs = _common("macs", per_host, not_everywhere)
        if not macs:  # no MAC every host allows: only the AEAD ciphers can stay
            not_everywhere += [f"{c.name}: no MAC allowed on every host" for c in ciphers if c.name not in aead]
            ciphers = [c for c in ciphers if c.name in aead]
            if not ciphers:
                raise RunError(f"no cipher + MAC that policy {policy} allows was measured on every host")
    kex = _common("kex", per_host, not_everywhere)
    if not kex:
        raise RunError(
            f"no key exchange that policy {policy} allows was measured on every host of fleet run {fleet_id}"
        )
    first = next(iter(per_host.values()))
    # strict kex: the weakest host's state (a host without it decides the Terrapin rules for the fleet)
    strict = next((r.strict for r in per_host.values() if r.strict.negotiated is not True), first.strict)
    rec = Recommendation(
        policy=policy,
        target=target,
        host_pattern=host_pattern or "*",
        run_label=f"fleet run {fleet_id}",
        strict=strict,
        ciphers=ciphers,
        macs=macs,
        kex=kex,
        compression="yes" if all(r.compression == "yes" for r in per_host.values()) else "no",
        warnings=list(dict.fromkeys(w for r in per_host.values() for w in r.warnings)),
    )
    losses = []
    for host, host_rec in per_host.items():
        own = host_rec.ciphers[0]
        there = next(c for c in host_rec.ciphers if c.name == ciphers[0].name)
        losses.append(HostLoss(host, own.name, own.median_mib_s, there.median_mib_s))
    return FleetRecommendation(fleet_id, list(runs), rec, losses, not_everywhere)
