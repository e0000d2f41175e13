"""Network namespaces sshbench creates: requirements (CAP_NET_ADMIN, CAP_SYS_ADMIN, iproute2), running
`ip`/`tc`, entering a namespace from one thread, and removing the leftovers of a `kill -9`'d run (found by
name: `sshbench-<pid>-<start>-<index>{c,s}`)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator

from sshbench.errors import RunError, UsageError
from sshbench.host.cleanup import process_start_time
from sshbench.links.profiles import LinkProfile

PREFIX = "sshbench-"
_NAME = re.compile(r"^sshbench-(\d+)-(\d+)-(\d+)([cs])$")
NETNS_DIR = "/run/netns"
TC_TIMEOUT_S = 10.0
CLONE_NEWNET = 0x40000000
CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21


# --- requirements ---------------------------------------------------------------------------------


def _find_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for directory in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        if os.access(f"{directory}/{name}", os.X_OK):
            return f"{directory}/{name}"
    return None


def _has_capabilities(*caps: int) -> bool:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("CapEff:"):
                effective = int(line.split()[1], 16)
                return all(effective & (1 << cap) for cap in caps)
    except OSError:
        pass
    return False


def missing_requirement(links: list[LinkProfile]) -> str | None:
    """One line saying what an emulated link lacks here (None: it can run)."""
    names = ",".join(p.name for p in links if p.emulated)
    if not _has_capabilities(CAP_NET_ADMIN, CAP_SYS_ADMIN):  # root normally has both; a container may not
        who = "root" if os.geteuid() == 0 else "this user"
        return (
            f"--link {names} needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) to create network namespaces and "
            f"shape them with tc, and {who} lacks them; run as root or use --link loopback"
        )
    missing = [tool for tool in ("ip", "tc") if _find_tool(tool) is None]
    if missing:
        return f"--link {names} needs iproute2 ({' and '.join(missing)} not found): apt-get install iproute2"
    return None


def require_support(links: list[LinkProfile]) -> None:
    reason = missing_requirement(links)
    if reason:
        raise UsageError(reason)


# --- running commands -----------------------------------------------------------------------------


def _run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    tool = _find_tool(argv[0]) or argv[0]
    try:
        done = subprocess.run(
            [tool, *argv[1:]], capture_output=True, text=True, timeout=TC_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise RunError(f"{' '.join(argv)} did not finish within {TC_TIMEOUT_S:.0f} s") from None
    if check and done.returncode != 0:
        raise RunError(f"{' '.join(argv)} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:] or '?'}")
    return done


def list_namespaces() -> list[str]:
    """Every named network namespace (`ip netns list`), names only."""
    if _find_tool("ip") is None:
        return []
    done = _run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def own_namespaces() -> list[str]:
    """Namespaces sshbench created (any owner)."""
    return [n for n in list_namespaces() if _NAME.match(n)]


def _owner_alive(pid: int, start: int) -> bool:
    return process_start_time(pid) == start


def remove_stale_namespaces() -> list[str]:
    """The kill -9 step of leftovers.clean_leftovers: delete sshbench's namespaces whose owner is gone
    (dead, or its pid reused by another process). Their processes were killed from the run record
    already; deleting the namespace removes its veth end, and with it the peer and the qdiscs."""
    if not _has_capabilities(CAP_NET_ADMIN, CAP_SYS_ADMIN):
        return []
    removed = []
    for name in own_namespaces():
        m = _NAME.match(name)
        assert m is not None
        if not _owner_alive(int(m.group(1)), int(m.group(2))):
            _kill_processes_in(name)
            if _run(["ip", "netns", "delete", name], check=False).returncode == 0:
                removed.append(f"network namespace {name}")
    return removed


def _kill_processes_in(name: str) -> None:
    """Processes still inside a namespace keep it (and its veth) alive after `ip netns delete`."""
    done = _run(["ip", "netns", "pids", name], check=False)
    for pid in (int(p) for p in done.stdout.split() if p.isdigit()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# --- entering a namespace from this thread ----------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise RunError(f"setns failed: {os.strerror(err)}")


@contextlib.contextmanager
def inside(namespace: str | None) -> Iterator[None]:
    """Run the body with this thread in `namespace` (None: stay). Sockets created in the body belong
    to that namespace for their whole life, so a listener made here keeps serving after we return.
    Network namespaces are per thread: the rest of the process is unaffected."""
    if namespace is None:
        yield
        return
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"{NETNS_DIR}/{namespace}", os.O_RDONLY)
        try:
            _setns(target)
            try:
                yield
            finally:
                _setns(own)
        finally:
            os.close(target)
    finally:
        os.close(own)
