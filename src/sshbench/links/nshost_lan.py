"""A network between namespace hosts, so that one of them can reach another's sshd (the fleet's `--pairs`
on the namespace test fleet), the way machines of a real fleet reach each other by address.

Layout (one `NamespaceLan`, any number of `NamespaceHost(lan=...)`):

    namespace sshbench-host-<pid>-<n> (the LAN)       each host's namespace
    bridge br0 (no address)                           eth0  10.254.X.2/30 (to the root namespace, unchanged)
      port l<m>  <------------- veth ------------->   eth1  10.254.64.<k>/24 (sshd listens here too)

Why a namespace of its own for the bridge rather than a bridge in the root namespace: the hosts' root
ends already carry the root namespace's /30 addresses (they cannot also be bridge ports), and a bridge
or forwarding in the root namespace would touch this machine's own network (ip_forward is global to a
namespace). Here the root namespace gains nothing: the bridge and its ports exist only in the LAN
namespace, and the /24 addresses only inside the hosts' namespaces, which have no default route. The
/24 is the same for every LAN (each LAN is its own isolated bridge) and lies outside the pool of the
hosts' /30s, so it never overlaps a host's other address.

The LAN namespace is named like a namespace host's (`sshbench-host-<pid>-<n>`, with an owner record), so
`sweep_stale_hosts()` removes it after a `kill -9`; deleting it deletes every veth pair with it (the
hosts' eth1 ends too). `destroy()` is idempotent.
"""

from __future__ import annotations

import fcntl
import ipaddress
import json
import os
from dataclasses import dataclass, field

from sshbench.host.cleanup import Made
from sshbench.host.osfiles import process_start_time
from sshbench.links import nshost_state
from sshbench.links.nshost_config import NsHostError
from sshbench.links.nshost_state import NS_PREFIX, RECORD_DIR, _record_path, _remove_namespace, _run

LAN_SUBNET = ipaddress.ip_network("10.254.64.0/24")  # outside nshost.SUBNET_POOL (10.254.128.0/17)
LAN_IF = "eth1"  # the host's end (names are per namespace)
BRIDGE = "br0"


@dataclass
class NamespaceLan(Made):
    """A bridge in a namespace of its own; `attach(host_namespace)` plugs a host in and returns its address."""

    name: str = ""
    members: dict[str, str] = field(default_factory=dict)  # host namespace -> its address on the LAN

    def create(self) -> NamespaceLan:
        reason = nshost_state.missing_requirement()
        if reason:
            raise NsHostError(reason)
        RECORD_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        pid = os.getpid()
        with open(RECORD_DIR / "lock", "w") as lock:  # the name, one creator at a time (as nshost does)
            fcntl.flock(lock, fcntl.LOCK_EX)
            existing = set(nshost_state.list_host_namespaces())
            number = 1000
            while f"{NS_PREFIX}{pid}-{number}" in existing:
                number += 1
            self.name = f"{NS_PREFIX}{pid}-{number}"
            record = {"name": self.name, "owner_pid": pid, "owner_start": process_start_time(pid), "lan": True}
            _record_path(self.name).write_text(json.dumps(record) + "\n")
            _run(["ip", "netns", "add", self.name])
        _run(["ip", "-n", self.name, "link", "add", BRIDGE, "type", "bridge"])
        _run(["ip", "-n", self.name, "link", "set", BRIDGE, "up"])
        return self

    def attach(self, host_namespace: str) -> str:
        """A veth pair: `eth1` in the host's namespace with the next /24 address, its peer a port of the
        bridge. Returns the host's address on the LAN."""
        if not self.name:
            raise NsHostError("create() the LAN first")
        hosts = list(LAN_SUBNET.hosts())
        if len(self.members) >= len(hosts):
            raise NsHostError(f"the LAN {LAN_SUBNET} is full")
        address = str(hosts[len(self.members) + 1])  # .1 is left free (a gateway's, by habit)
        port = f"l{len(self.members)}"
        # both ends created directly in their namespaces: nothing appears in the root namespace
        _run(
            [
                "ip",
                "link",
                "add",
                port,
                "netns",
                self.name,
                "type",
                "veth",
                "peer",
                "name",
                LAN_IF,
                "netns",
                host_namespace,
            ]
        )
        _run(["ip", "-n", self.name, "link", "set", port, "master", BRIDGE, "up"])
        _run(["ip", "-n", host_namespace, "addr", "add", f"{address}/{LAN_SUBNET.prefixlen}", "dev", LAN_IF])
        _run(["ip", "-n", host_namespace, "link", "set", LAN_IF, "up"])
        self.members[host_namespace] = address
        return address

    def destroy(self) -> None:
        """Delete the LAN namespace (its bridge and every veth pair: the hosts' eth1 go with them) and record."""
        if self.name:
            _remove_namespace(self.name)
        self.members.clear()
