"""A second host on this machine: a network namespace with its own address, its own sshd on port 22
and an ssh_config alias that reaches it the way a user reaches a real server.

Layout (one per `NamespaceHost`; `<pid>` is the owner's, so `sweep_stale_hosts()` can tell a leftover
of a `kill -9`'d owner from a live one):

    root namespace                                  namespace sshbench-host-<pid>-<n>
    ssh, scp, sftp, rsync, sshbench (unchanged)     sshd -D -e -f <dir>/sshd_config on 10.254.X.2:22
    veth nh<pid>-<n>  10.254.X.1/30   <--------->   veth eth0  10.254.X.2/30,  lo up
    [tbf egress when shaped]                        [tbf egress when shaped]

Why the client end is in the root namespace (with a /30 only) rather than in a second namespace:
the alias must work for an unmodified `ssh -F FILE nshost-N` and `sshbench run nshost-N
--ssh-config FILE`, through the kernel's real TCP/veth path, with no `ip netns exec` prefix and no
ProxyCommand relay (a relay process would sit in the data path and distort throughput). The root
namespace gets exactly one new route, the /30's link route on our veth (`10.254.X.0/30 dev
nh...`, scope link): it covers only the two addresses of the pair, both on this machine. The host
namespace has only that /30 and its loopback, no default route, so it cannot send anything
anywhere else, and nothing is routed through the root namespace to it or from it. The /30 is
chosen so that it overlaps no address or route already present in the root namespace (checked
under a lock, so two creators never pick the same one), so nothing that used to go elsewhere is
captured either.

Everything is undone by `destroy()` (idempotent, safe after a partial `create()`): sshd and any
process left in the namespace are killed, the veth pair and the namespace are deleted, the temp
dir and the owner record (`/run/sshbench-nshost/<name>.json`) are removed.

Self-contained on purpose (stdlib + `ip`, `tc`, `sshd`, `ssh-keygen`): the fleet and the remote
target tests reuse it without the link machinery (only the profiles' tc arguments, for `link=`).
Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN). Split in three: this module (the host), nshost_config.py
(keys, sshd_config, the ssh_config alias, shaping arguments), nshost_state.py (process helpers,
requirements, the owner record and the sweep).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.host.cleanup import Made, held_stop
from sshbench.host.osfiles import process_start_time
from sshbench.links import nshost_config
from sshbench.links.nshost_config import NsHostError, parse_rate_mbit, tbf_args
from sshbench.links.nshost_lan import NamespaceLan
from sshbench.links.nshost_state import (
    NETNS_DIR,
    NS_PREFIX,
    RECORD_DIR,
    _kill_and_wait,
    _record_path,
    _remove_namespace,
    _run,
    _tool,
    _unblock_signals,
    find_sshd,
    list_host_namespaces,
    missing_requirement,
    sweep_stale_hosts,
)

__all__ = [
    "NETNS_DIR",
    "NS_PREFIX",
    "RECORD_DIR",
    "NamespaceHost",
    "NamespaceLan",
    "NsHostError",
    "find_sshd",
    "list_host_namespaces",
    "missing_requirement",
    "parse_rate_mbit",
    "sweep_stale_hosts",
    "tbf_args",
]

HOST_IF = "eth0"  # the veth end inside the namespace (names are per namespace)
SUBNET_POOL = ipaddress.ip_network("10.254.128.0/17")  # /30s are taken from here
PORT = 22
READY_TIMEOUT_S = 10.0

_counter = 0  # per process: the <n> of the next namespace


# --- the host --------------------------------------------------------------------------------------


@dataclass
class NamespaceHost(Made):
    """A throwaway "remote" host: see the module docstring. Use as a context manager, or call
    `create()` and `destroy()` yourself.

    rate_mbit: shape both veth ends with tbf at this rate (None: unshaped).
    link: shape both ends as this link profile (sshbench.links: `lan100m`, `lan1g`...; tbf for the rate,
    netem for a delay where the kernel has it, else refused: nshost_config.link_qdisc_args); overrides rate_mbit.
    tc_host / tc_client: explicit qdisc arguments (after `root`, e.g. ["tbf", "rate", ...]) for the
    namespace's end / the root namespace's end; they override rate_mbit for that end.
    user: the login user (default: the invoking user, whose fresh client key is authorized).
    sshd_options: sshd_config lines that override ours (e.g. {"Ciphers": "aes128-ctr"}).
    lan: also plug the host into this NamespaceLan (nshost_lan.py): other hosts of the LAN reach its sshd
    at `lan_address` (the fleet's --pairs); None: only the /30 to the root namespace.
    """

    rate_mbit: float | None = None
    link: str | None = None
    tc_host: list[str] | None = None
    tc_client: list[str] | None = None
    user: str = field(default_factory=lambda: pwd.getpwuid(os.getuid()).pw_name)
    sshd_options: dict[str, str] = field(default_factory=dict)
    lan: NamespaceLan | None = None

    name: str = ""  # the namespace
    alias: str = ""  # the ssh_config Host
    host_if: str = ""  # the veth end in the root namespace
    client_addr: str = ""  # 10.254.X.1 (root namespace)
    address: str = ""  # 10.254.X.2 (inside the namespace; sshd listens here)
    lan_address: str = ""  # its address on `lan` (sshd listens there too); "" without a LAN
    port: int = PORT
    dir: Path | None = None
    ssh_config: Path | None = None
    identity: Path | None = None
    known_hosts: Path | None = None
    sshd: subprocess.Popen[bytes] | None = None

    # set-up -------------------------------------------------------------------------------------

    def create(self) -> NamespaceHost:
        """Make the namespace, the veth pair, the keys, sshd and the ssh_config. On failure, what was
        made is left for destroy() (the context manager calls it)."""
        global _counter
        reason = missing_requirement()
        if reason:
            raise NsHostError(reason)
        if self.name:
            raise NsHostError(f"{self.name} already created")
        pid = os.getpid()
        RECORD_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        sshd_path = find_sshd()
        assert sshd_path is not None
        with open(RECORD_DIR / "lock", "w") as lock:  # address choice and creation, one creator at a time
            fcntl.flock(lock, fcntl.LOCK_EX)
            existing = set(list_host_namespaces())
            while True:
                _counter += 1
                name = f"{NS_PREFIX}{pid}-{_counter}"
                if name not in existing:
                    break
            self.name = name
            self.alias = f"nshost-{_counter}"
            self.host_if = f"nh{pid}-{_counter}"[:15]
            subnet = self._free_subnet()
            first, second = list(subnet.hosts())
            self.client_addr, self.address = str(first), str(second)
            self.dir = Path(tempfile.mkdtemp(prefix="sshbench-nshost-"))
            os.chmod(self.dir, 0o700)
            self._write_record()
            _run(["ip", "netns", "add", self.name])
            _run(["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", HOST_IF, "netns", self.name])
            _run(["ip", "-n", self.name, "addr", "add", f"{self.address}/30", "dev", HOST_IF])
            _run(["ip", "-n", self.name, "link", "set", "lo", "up"])
            _run(["ip", "-n", self.name, "link", "set", HOST_IF, "up"])
            _run(["ip", "addr", "add", f"{self.client_addr}/30", "dev", self.host_if])
            _run(["ip", "link", "set", self.host_if, "up"])
        if self.lan is not None:
            self.lan_address = self.lan.attach(self.name)
        if self.link is not None:
            self.shape_link(self.link)
        else:
            self.shape(self.rate_mbit, tc_host=self.tc_host, tc_client=self.tc_client)
        self._make_keys()
        self._start_sshd(sshd_path)
        self._write_ssh_config()
        return self

    def _free_subnet(self) -> ipaddress.IPv4Network:
        """The first /30 of SUBNET_POOL that overlaps no address or route of the root namespace."""
        taken: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        addrs = _run(["ip", "-4", "-j", "addr", "show"], check=False).stdout or "[]"
        for link in json.loads(addrs):
            for a in link.get("addr_info", []):
                with contextlib.suppress(ValueError, KeyError):
                    taken.append(ipaddress.ip_network(f"{a['local']}/{a['prefixlen']}", strict=False))
        routes = _run(["ip", "-4", "-j", "route", "show", "table", "all"], check=False).stdout or "[]"
        for r in json.loads(routes):
            dst = r.get("dst", "")
            if dst in ("default", "") or ":" in dst:
                continue  # a default route does not make an address taken; more specific ones do
            with contextlib.suppress(ValueError):
                taken.append(ipaddress.ip_network(dst if "/" in dst else f"{dst}/32", strict=False))
        for subnet in ipaddress.IPv4Network(SUBNET_POOL).subnets(new_prefix=30):
            if not any(subnet.overlaps(t) for t in taken):
                return subnet
        raise NsHostError(f"no free /30 left in {SUBNET_POOL} (every one overlaps an address or route here)")

    def _write_record(self) -> None:
        assert self.dir is not None
        record = {
            "name": self.name,
            "owner_pid": os.getpid(),
            "owner_start": process_start_time(os.getpid()),
            "host_if": self.host_if,
            "temp_dir": str(self.dir),
            "address": self.address,
        }
        _record_path(self.name).write_text(json.dumps(record) + "\n")

    def shape(
        self, rate_mbit: float | None, tc_host: list[str] | None = None, tc_client: list[str] | None = None
    ) -> None:
        """(Re)apply shaping on both ends (egress of each: the namespace's end shapes downloads, the
        root end uploads). rate_mbit None and no tc lists: unshaped (the qdisc is removed)."""
        for ns_args, dev, explicit in ((["-n", self.name], HOST_IF, tc_host), ([], self.host_if, tc_client)):
            args = explicit or (tbf_args(rate_mbit) if rate_mbit else None)
            if args:
                _run(["tc", *ns_args, "qdisc", "replace", "dev", dev, "root", *args])
            else:
                _run(["tc", *ns_args, "qdisc", "del", "dev", dev, "root"], check=False)
        self.rate_mbit, self.tc_host, self.tc_client = rate_mbit, tc_host, tc_client

    def shape_link(self, name: str | None) -> None:
        """(Re)shape both ends as link profile `name` (None or `loopback`: unshaped)."""
        profile = nshost_config.profile_named(name or "loopback")
        args = nshost_config.link_qdisc_args(profile, netem=self._has_netem()) if profile.emulated else None
        self.shape(profile.rate_mbit_s if args and args[0] == "tbf" else None, tc_host=args, tc_client=args)
        self.link = name if profile.emulated else None

    def _has_netem(self) -> bool:
        """Whether this kernel accepts a netem qdisc (tried on the namespace's own loopback, then removed)."""
        ns = ["-n", self.name]
        if _run(["tc", *ns, "qdisc", "replace", "dev", "lo", "root", "netem", "delay", "0ms"], check=False).returncode:
            return False
        _run(["tc", *ns, "qdisc", "del", "dev", "lo", "root"], check=False)
        return True

    def _make_keys(self) -> None:
        assert self.dir is not None
        self.identity, self.known_hosts = nshost_config.make_keys(self.dir, self.address)

    def _sshd_config(self, session_env: bool = True) -> str:
        assert self.dir is not None
        addresses = [self.address, *([self.lan_address] if self.lan_address else [])]
        return nshost_config.sshd_config(self.dir, addresses, self.port, self.user, self.sshd_options, session_env)

    def _start_sshd(self, sshd_path: str) -> None:
        assert self.dir is not None
        if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege-separation dir
        config = self.dir / "sshd_config"
        config.write_text(self._sshd_config())
        check = _run([sshd_path, "-t", "-f", str(config)], check=False, timeout=30)
        if check.returncode != 0 and "SetEnv" in check.stderr:  # a system sshd before 8.7
            config.write_text(self._sshd_config(session_env=False))
            check = _run([sshd_path, "-t", "-f", str(config)], check=False, timeout=30)
        if check.returncode != 0:
            raise NsHostError(f"sshd rejects the namespace host's config: {check.stderr.strip()}")
        log_path = self.dir / "sshd.log"
        # `ip netns exec` execs sshd: the pid is sshd's; its own session keeps terminal signals away. Held: started
        # and known to destroy() as one step
        with open(log_path, "wb") as log, held_stop():
            self.sshd = subprocess.Popen(
                [_tool("ip"), "netns", "exec", self.name, sshd_path, "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_unblock_signals,
            )
        ready = f"Server listening on {self.address} port {self.port}"
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if ready in log_path.read_text(errors="replace") and self._port_open():
                return
            if self.sshd.poll() is not None:
                raise NsHostError(
                    f"sshd in {self.name} exited at start ({self.sshd.returncode}): {self.sshd_log_tail()}"
                )
            if time.monotonic() > deadline:
                raise NsHostError(
                    f"sshd in {self.name} not listening within {READY_TIMEOUT_S:.0f} s: {self.sshd_log_tail()}"
                )
            time.sleep(0.02)  # bounded poll of the log and the port

    def _port_open(self) -> bool:
        try:
            with socket.create_connection((self.address, self.port), timeout=1.0) as s:
                s.settimeout(1.0)
                return s.recv(4).startswith(b"SSH-")  # the server's banner: sshd itself answers
        except OSError:
            return False

    def sshd_log_tail(self, lines: int = 3) -> str:
        if self.dir is None:
            return ""
        try:
            text = (self.dir / "sshd.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(text[-lines:]) or "(no output)"

    def _write_ssh_config(self) -> None:
        assert self.dir is not None and self.identity is not None and self.known_hosts is not None
        self.ssh_config = nshost_config.write_ssh_config(
            self.dir, self.name, self.alias, self.address, self.port, self.user, self.identity, self.known_hosts
        )

    # use ----------------------------------------------------------------------------------------

    def ssh_argv(self, ssh: str = "ssh") -> list[str]:
        """`ssh -F CONFIG ALIAS`: append a command."""
        assert self.ssh_config is not None, "create() first"
        return [ssh, "-F", str(self.ssh_config), self.alias]

    def inventory_line(self, name: str, **host_vars: object) -> str:
        """This host in an INI inventory as a user writes it (nshost_config.inventory_line); ssh must
        know its host key from `known_hosts` (e.g. -o UserKnownHostsFile through ANSIBLE_SSH_COMMON_ARGS)."""
        assert self.identity is not None, "create() first"
        return nshost_config.inventory_line(name, self.address, self.user, self.identity, **host_vars)

    def alive(self) -> bool:
        return self.sshd is not None and self.sshd.poll() is None

    # tear-down ----------------------------------------------------------------------------------

    def destroy(self) -> None:
        """Kill sshd (and its sessions: everything in the namespace), delete the veth pair, the
        namespace, the temp dir and the record. Idempotent; safe after a partial create()."""
        if self.sshd is not None and self.sshd.poll() is None:
            _kill_and_wait([self.sshd.pid])
        if self.sshd is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.sshd.wait(timeout=5)
        if self.name:
            _remove_namespace(self.name, self.host_if or None, str(self.dir) if self.dir else None)
        elif self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.sshd = None

    def describe(self) -> dict:
        return {
            "namespace": self.name,
            "alias": self.alias,
            "address": self.address,
            "port": self.port,
            "client_address": self.client_addr,
            "lan_address": self.lan_address or None,
            "host_if": self.host_if,
            "user": self.user,
            "rate_mbit": self.rate_mbit,
            "link": self.link,
            "ssh_config": str(self.ssh_config) if self.ssh_config else None,
        }
