"""The namespace host's process helpers, requirements, owner record and the sweep after kill -9.

Split from nshost.py (the host itself): a `kill -9`'d owner leaves a namespace `sshbench-host-<pid>-<n>`
with sshd inside, a veth pair, a temp dir and the record `/run/sshbench-nshost/<name>.json`;
`sweep_stale_hosts()` (leftovers.py calls it at each run's start, `scripts/nshost sweep` by hand)
removes those whose owner pid + start time no longer match a live process.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from sshbench.host.osfiles import process_start_time
from sshbench.links.namespaces import _find_tool
from sshbench.links.nshost_config import NsHostError

NS_PREFIX = "sshbench-host-"
_NS_NAME = re.compile(r"^sshbench-host-(\d+)-(\d+)$")
NETNS_DIR = "/run/netns"
RECORD_DIR = Path("/run/sshbench-nshost")
CMD_TIMEOUT_S = 10.0
SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd", "/usr/bin/sshd")

_counter = 0  # per process: the <n> of the next namespace


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
    return recorded is None or recorded == process_start_time(pid)


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
