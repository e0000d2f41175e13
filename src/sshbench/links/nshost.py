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
target tests reuse it without the link machinery. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from sshbench.links.namespaces import _find_tool

NS_PREFIX = "sshbench-host-"
_NS_NAME = re.compile(r"^sshbench-host-(\d+)-(\d+)$")
NETNS_DIR = "/run/netns"
RECORD_DIR = Path("/run/sshbench-nshost")
HOST_IF = "eth0"  # the veth end inside the namespace (names are per namespace)
SUBNET_POOL = ipaddress.ip_network("10.254.128.0/17")  # /30s are taken from here
PORT = 22
CMD_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 10.0
SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd", "/usr/bin/sshd")

_counter = 0  # per process: the <n> of the next namespace


class NsHostError(RuntimeError):
    """A namespace host could not be created (one line saying why)."""


# --- small helpers ---------------------------------------------------------------------------------


def _tool(name: str) -> str:
    return _find_tool(name) or name


def _run(argv: list[str], check: bool = True, timeout: float = CMD_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            [_tool(argv[0]), *argv[1:]], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise NsHostError(f"{' '.join(argv)} did not finish within {timeout:.0f} s") from None
    except FileNotFoundError:
        raise NsHostError(f"{argv[0]} not found (apt-get install iproute2 openssh-server)") from None
    if check and done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
        raise NsHostError(f"{' '.join(argv)} failed: {last[0]}")
    return done


def _start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks): with the pid, one process for good."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap it if it is our own child
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _kill_and_wait(pids: list[int], timeout_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL what is still there at the deadline (bounded poll, no fixed sleep)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    remaining = [p for p in pids if _alive(p)]
    while remaining and time.monotonic() < deadline:
        time.sleep(0.01)  # bounded poll of process state
        remaining = [p for p in remaining if _alive(p)]
    for pid in remaining:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while remaining and time.monotonic() < deadline:
        time.sleep(0.01)
        remaining = [p for p in remaining if _alive(p)]


def _unblock_signals() -> None:
    """In the child before exec: a caller that blocks signals (sigwait) must not hand sshd a mask in
    which SIGTERM is blocked (exec keeps the mask; destroy() would then wait for SIGKILL)."""
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _has_caps() -> bool:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("CapEff:"):
                eff = int(line.split()[1], 16)
                return bool(eff & (1 << 12)) and bool(eff & (1 << 21))  # CAP_NET_ADMIN, CAP_SYS_ADMIN
    except OSError:
        pass
    return False


def find_sshd() -> str | None:
    for candidate in SSHD_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("sshd")
    return os.path.abspath(found) if found else None


def missing_requirement() -> str | None:
    """One line saying why a namespace host cannot be made here (None: it can)."""
    if not _has_caps():
        return "a namespace host needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces"
    if shutil.which("ip") is None and not os.access("/usr/sbin/ip", os.X_OK) and not os.access("/sbin/ip", os.X_OK):
        return "a namespace host needs iproute2 (ip not found): apt-get install iproute2"
    if find_sshd() is None:
        return "a namespace host needs sshd: apt-get install openssh-server"
    if shutil.which("ssh-keygen") is None:
        return "a namespace host needs ssh-keygen: apt-get install openssh-client"
    return None


def list_host_namespaces() -> list[str]:
    """Namespaces named sshbench-host-* (any owner)."""
    done = _run(["ip", "netns", "list"], check=False)
    names = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    return [n for n in names if _NS_NAME.match(n)]


def tbf_args(rate_mbit: float) -> list[str]:
    """tbf qdisc arguments for `rate_mbit` Mbit/s, sized as sshbench's link profiles do (netns.tbf_args):
    a burst of ~1 ms of the rate (at least 32 KiB: veth hands over GSO super-packets) and ~100 ms of queue."""
    rate_bit_s = int(rate_mbit * 1_000_000)
    rate_bytes = rate_bit_s // 8
    burst = max(32 * 1024, rate_bytes // 1000)
    limit = max(2 * burst, rate_bytes // 10)
    return ["tbf", "rate", f"{rate_bit_s}bit", "burst", str(burst), "limit", str(limit)]


def parse_rate_mbit(text: str) -> float:
    """'100mbit', '1gbit', '500kbit' or a bare number of Mbit/s -> Mbit/s. tc's 'mbps' (megabytes) is refused."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(kbit|mbit|gbit)?\s*", text.lower())
    if not m:
        raise ValueError(f"rate {text!r}: write e.g. 100mbit, 1gbit or 500kbit")
    value = float(m.group(1)) * {"kbit": 0.001, "mbit": 1.0, "gbit": 1000.0, None: 1.0}[m.group(2)]
    if value <= 0:
        raise ValueError(f"rate {text!r} must be above 0")
    return value


# --- the record that lets a later sweep clean up after kill -9 -----------------------------------------


def _record_path(name: str) -> Path:
    return RECORD_DIR / f"{name}.json"


def _read_record(name: str) -> dict:
    try:
        return json.loads(_record_path(name).read_text())
    except (OSError, ValueError):
        return {}


def _owner_alive(name: str) -> bool:
    m = _NS_NAME.match(name)
    if not m:
        return True  # not ours: never touch
    pid = int(m.group(1))
    if not _alive(pid):
        return False
    recorded = _read_record(name).get("owner_start")
    # the pid is alive; if we recorded its start time and it differs, the pid was reused
    return recorded is None or recorded == _start_time(pid)


def _remove_namespace(name: str, host_if: str | None = None, temp_dir: str | None = None) -> None:
    """Kill everything inside `name`, delete its veth pair and the namespace, its temp dir and record.
    Each step tolerates what is already gone."""
    if os.path.exists(f"{NETNS_DIR}/{name}"):
        pids = [int(p) for p in _run(["ip", "netns", "pids", name], check=False).stdout.split() if p.isdigit()]
        _kill_and_wait(pids)
    if host_if:
        _run(["ip", "link", "del", host_if], check=False)  # deletes the pair (both ends)
    if os.path.exists(f"{NETNS_DIR}/{name}"):
        _run(["ip", "netns", "delete", name], check=False)
    if temp_dir and Path(temp_dir).name.startswith("sshbench-nshost-"):
        shutil.rmtree(temp_dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        _record_path(name).unlink()


def sweep_stale_hosts() -> list[str]:
    """Delete sshbench-host-* namespaces whose owner is dead (or whose pid was reused): the processes
    inside (`ip netns pids`) are killed first, then the veth pair, the namespace, the temp dir and the
    record go. Returns what was removed, one phrase each. A no-op without root."""
    if not _has_caps():
        return []
    removed = []
    names = set(list_host_namespaces())
    # records whose namespace is already gone still name a temp dir to remove
    if RECORD_DIR.is_dir():
        names |= {p.stem for p in RECORD_DIR.glob("sshbench-host-*.json")}
    for name in sorted(names):
        if _owner_alive(name):
            continue
        record = _read_record(name)
        existed = os.path.exists(f"{NETNS_DIR}/{name}")
        _remove_namespace(name, record.get("host_if"), record.get("temp_dir"))
        if existed and not os.path.exists(f"{NETNS_DIR}/{name}"):
            removed.append(f"network namespace {name}")
    return removed


# --- the host --------------------------------------------------------------------------------------


@dataclass
class NamespaceHost:
    """A throwaway "remote" host: see the module docstring. Use as a context manager, or call
    `create()` and `destroy()` yourself.

    rate_mbit: shape both veth ends with tbf at this rate (None: unshaped).
    tc_host / tc_client: explicit qdisc arguments (after `root`, e.g. ["tbf", "rate", ...]) for the
    namespace's end / the root namespace's end; they override rate_mbit for that end.
    user: the login user (default: the invoking user, whose fresh client key is authorized).
    sshd_options: sshd_config lines that override ours (e.g. {"Ciphers": "aes128-ctr"}).
    """

    rate_mbit: float | None = None
    tc_host: list[str] | None = None
    tc_client: list[str] | None = None
    user: str = field(default_factory=lambda: pwd.getpwuid(os.getuid()).pw_name)
    sshd_options: dict[str, str] = field(default_factory=dict)

    name: str = ""  # the namespace
    alias: str = ""  # the ssh_config Host
    host_if: str = ""  # the veth end in the root namespace
    client_addr: str = ""  # 10.254.X.1 (root namespace)
    address: str = ""  # 10.254.X.2 (inside the namespace; sshd listens here)
    port: int = PORT
    dir: Path | None = None
    ssh_config: Path | None = None
    identity: Path | None = None
    known_hosts: Path | None = None
    sshd: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> NamespaceHost:
        try:
            self.create()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

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
            "owner_start": _start_time(os.getpid()),
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

    def _make_keys(self) -> None:
        assert self.dir is not None
        for key in ("host_key", "client_key"):
            _run(
                [
                    "ssh-keygen",
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-C",
                    f"sshbench-nshost-{key}",
                    "-f",
                    str(self.dir / key),
                ],
                timeout=30,
            )
        shutil.copy(self.dir / "client_key.pub", self.dir / "authorized_keys")
        os.chmod(self.dir / "authorized_keys", 0o600)
        self.identity = self.dir / "client_key"
        host_key = (self.dir / "host_key.pub").read_text().split()
        self.known_hosts = self.dir / "known_hosts"
        # port 22: known_hosts names the bare address (no [host]:port form)
        self.known_hosts.write_text(f"{self.address} {host_key[0]} {host_key[1]}\n")

    def _sshd_config(self) -> str:
        assert self.dir is not None
        lines = {
            "ListenAddress": self.address,
            "Port": str(self.port),
            "PidFile": "none",
            "HostKey": str(self.dir / "host_key"),
            "AuthorizedKeysFile": str(self.dir / "authorized_keys"),
            "AllowUsers": self.user,
            "PermitRootLogin": "prohibit-password",
            "PubkeyAuthentication": "yes",
            "PasswordAuthentication": "no",
            "KbdInteractiveAuthentication": "no",
            "UsePAM": "no",
            "StrictModes": "no",  # keys under /tmp fail sshd's ownership checks of the path
            "PermitUserEnvironment": "no",
            "PermitUserRC": "no",
            "X11Forwarding": "no",
            "AllowAgentForwarding": "no",
            "PrintMotd": "no",
            "PrintLastLog": "no",
            "UseDNS": "no",
            "MaxStartups": "1000",
            "MaxSessions": "100",
            "LoginGraceTime": "30",
            "Subsystem": "sftp internal-sftp",
            "LogLevel": "INFO",
        }
        lines.update(self.sshd_options)
        return "".join(f"{k} {v}\n" for k, v in lines.items())

    def _start_sshd(self, sshd_path: str) -> None:
        assert self.dir is not None
        if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege-separation dir
        config = self.dir / "sshd_config"
        config.write_text(self._sshd_config())
        check = _run([sshd_path, "-t", "-f", str(config)], check=False, timeout=30)
        if check.returncode != 0:
            raise NsHostError(f"sshd rejects the namespace host's config: {check.stderr.strip()}")
        log_path = self.dir / "sshd.log"
        with open(log_path, "wb") as log:
            # `ip netns exec` execs sshd: the pid is sshd's; its own session keeps terminal signals away
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
        assert self.dir is not None
        self.ssh_config = self.dir / "ssh_config"
        self.ssh_config.write_text(
            f"# sshbench namespace host {self.name} (removed with it)\n"
            f"Host {self.alias}\n"
            f"    HostName {self.address}\n"
            f"    Port {self.port}\n"
            f"    User {self.user}\n"
            f"    IdentityFile {self.identity}\n"
            f"    IdentitiesOnly yes\n"
            f"    IdentityAgent none\n"
            f"    UserKnownHostsFile {self.known_hosts}\n"
            f"    GlobalKnownHostsFile /dev/null\n"
            f"    StrictHostKeyChecking yes\n"
            f"    HostKeyAlgorithms ssh-ed25519\n"
            f"    UpdateHostKeys no\n"
            f"    BatchMode yes\n"
            f"    ControlMaster no\n"
            f"    ControlPath none\n"
            f"    ConnectTimeout 10\n"
        )

    # use ----------------------------------------------------------------------------------------

    def ssh_argv(self, ssh: str = "ssh") -> list[str]:
        """`ssh -F CONFIG ALIAS`: append a command."""
        assert self.ssh_config is not None, "create() first"
        return [ssh, "-F", str(self.ssh_config), self.alias]

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
            "host_if": self.host_if,
            "user": self.user,
            "rate_mbit": self.rate_mbit,
            "ssh_config": str(self.ssh_config) if self.ssh_config else None,
        }
