"""`sshbench fleet --pairs`: host A benchmarks host B over the network (A runs `sshbench run B` against B's
own sshd). Pure: the option's grammar, its expansion over the inventory, and which hosts a (resumed)
fleet run needs for its pairs.

    --pairs web1:db1,web2:db1   explicit pairs, A:B = A benchmarks B (directed: B:A is another pair)
    --pairs all                 every ordered pair of the hosts the run reaches (inventory and --limit)
    --pairs all:GROUP           every ordered pair of GROUP's hosts among them

Items combine (`all:web,db1:web1`); duplicates count once. A pair's result is stored as its own run
labelled `A->B`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sshbench.errors import UsageError

SEPARATOR = "->"  # in a pair's label; an inventory host name never holds it (the pair is refused then)
GRAMMAR = "write A:B (host A benchmarks host B), all, or all:GROUP, comma-separated"


@dataclass(frozen=True)
class Pair:
    source: str  # runs `sshbench run` (the client side)
    target: str  # whose sshd is measured (the server side)

    @property
    def label(self) -> str:
        return f"{self.source}{SEPARATOR}{self.target}"

    @classmethod
    def from_label(cls, label: str) -> Pair:
        source, _, target = label.partition(SEPARATOR)
        return cls(source, target)


def is_pair_label(label: str | None) -> bool:
    return bool(label) and SEPARATOR in str(label)


def expand_pairs(spec: str, hosts: list[str], groups: dict[str, list[str]], limited: bool = False) -> list[Pair]:
    """The pairs `spec` names among `hosts` (the hosts the run reaches, in order; `groups`: each group's
    hosts among them). UsageError (one line) for anything that cannot run: an unknown host or group,
    a host outside --limit, a host paired with itself, fewer than two hosts for `all`."""
    where = "the hosts this run reaches (inventory and --limit)" if limited else "the inventory"
    pairs: list[Pair] = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            raise UsageError(f"--pairs {spec!r} has an empty item; {GRAMMAR}")
        if item == "all" or item.startswith("all:"):
            group = item[4:] if item.startswith("all:") else None
            if group is not None and group not in groups:
                known = ", ".join(sorted(groups)) or "none"
                raise UsageError(f"--pairs {item}: no group {group!r} among {where} (groups: {known})")
            members = hosts if group is None else groups[group]
            if len(members) < 2:
                raise UsageError(f"--pairs {item}: {len(members)} host(s) of {where}; a pair needs two")
            pairs += [Pair(a, b) for a in members for b in members if a != b]
            continue
        parts = item.split(":")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise UsageError(f"--pairs {item!r}: {GRAMMAR}")
        source, target = (p.strip() for p in parts)
        if source == target:
            raise UsageError(f"--pairs {item}: a host benchmarks its own sshd in its own run; a pair names two hosts")
        for name in (source, target):
            if name in hosts:
                continue
            if name in groups:
                raise UsageError(f"--pairs {item}: {name} is a group; pairs name hosts (or all:{name})")
            raise UsageError(f"--pairs {item}: {name} is not one of {where}")
        pairs.append(Pair(source, target))
    unique = list(dict.fromkeys(pairs))
    for pair in unique:
        if SEPARATOR in pair.source or SEPARATOR in pair.target:
            raise UsageError(f"--pairs: a host name holding {SEPARATOR!r} cannot be told from a pair's label")
    return unique


@dataclass
class PlayPlan:
    limit: str  # ansible-playbook --limit
    skip_own_run: list[str]  # hosts in the play only for pairs (their own result is stored)


def play_plan(limit: str | None, stored_hosts: list[str], pairs: list[Pair]) -> PlayPlan:
    """Which hosts the playbook runs on: every host of the limit except those whose own result is
    stored (`--resume`); a stored host that is one end of a pair still to run stays in the play, with
    its own run skipped."""
    ends = {p.source for p in pairs} | {p.target for p in pairs}
    needed = sorted(h for h in stored_hosts if h in ends)
    excluded = sorted(h for h in stored_hosts if h not in ends)
    return PlayPlan((limit or "all") + "".join(f":!{h}" for h in excluded), needed)
