"""The inventory as Ansible reads it (`ansible-inventory --list`, the user's inventory plugins included),
read once before any host runs: which hosts a `--limit` selects, each group's hosts (for `--pairs
all:GROUP`) and each host's `sshbench_host_run_args` (checked here, not refused on every host)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.errors import UsageError
from sshbench.fleet import playbook

LIST_TIMEOUT_S = 120.0


@dataclass
class Inventory:
    hosts: list[str]  # the hosts a run of this inventory and limit reaches, in inventory order
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> its hosts (children's too) among them
    host_vars: dict[str, dict] = field(default_factory=dict)


def from_listing(listing: dict) -> Inventory:
    """`ansible-inventory --list` JSON -> Inventory: hosts in the order a depth-first walk from `all`
    meets them (the inventory's order), each group's hosts with its children's."""
    hosts: list[str] = []
    groups: dict[str, list[str]] = {}

    def walk(group: str, seen: tuple[str, ...]) -> list[str]:
        if group in groups:
            return groups[group]
        found = listing.get(group)
        entry: dict = found if isinstance(found, dict) else {}
        members: list[str] = []
        for host in entry.get("hosts") or []:
            if isinstance(host, str) and host not in members:
                members.append(host)
                if host not in hosts:
                    hosts.append(host)
        for child in entry.get("children") or []:
            if isinstance(child, str) and child not in seen:
                members += [h for h in walk(child, (*seen, child)) if h not in members]
        groups[group] = members
        return members

    walk("all", ("all",))
    for name in listing:  # groups not under `all` (none in practice), so a name is never missed
        if name != "_meta" and isinstance(listing[name], dict):
            walk(name, (name,))
    found = listing.get("_meta")
    meta: dict = found if isinstance(found, dict) else {}
    host_vars = {h: v for h, v in (meta.get("hostvars") or {}).items() if isinstance(v, dict)}
    return Inventory(hosts=hosts, groups={g: m for g, m in groups.items() if g != "all"}, host_vars=host_vars)


def read_inventory(inventory: str, limit: str | None) -> Inventory:
    """Run `ansible-inventory -i INVENTORY --list [--limit LIMIT]` (beside ansible-playbook)."""
    program = str(Path(playbook.find_ansible_playbook()).with_name("ansible-inventory"))
    argv = [program, "-i", inventory, "--list", *(["--limit", limit] if limit else [])]
    try:
        # its local temp files in a directory of ours, removed after (as the playbook's are)
        with tempfile.TemporaryDirectory(prefix="sshbench-fleet-") as stage:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=LIST_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                env=playbook.ansible_env(Path(stage), 1),
            )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise UsageError(f"ansible-inventory could not read {inventory}: {err}") from None
    try:
        listing = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        listing = None
    if not isinstance(listing, dict):
        why = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()][-1:] or ["no output"]
        raise UsageError(f"ansible-inventory could not read {inventory}: {why[0].strip()}")
    return from_listing(listing)


def host_run_args(inventory: Inventory, host: str) -> list[str] | None:
    """A host's `sshbench_host_run_args` as a list (None: a template, resolved by Ansible only)."""
    value = inventory.host_vars.get(host, {}).get("sshbench_host_run_args")
    if value is None:
        return []
    if isinstance(value, str):
        return None if "{{" in value or "{%" in value else value.split()
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        words = [str(v) for v in value]
        return None if any("{{" in w or "{%" in w for w in words) else words
    raise UsageError(f"inventory host {host}: sshbench_host_run_args must be a list of options or a string")
