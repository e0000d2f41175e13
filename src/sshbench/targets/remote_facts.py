"""What a remote host is, read once per run over one ssh connection: its core count, machine id, CPU
model/flags, OpenSSL version and whether it has python3 (the raw TCP control's sink; else nc and dd
for its fallback), plus the round trip time of the path ssh uses (TCP connects to its sshd:
the `window` verdict's RTT).

The facts feed three things: CPU of the server side in cores of its own machine, the server-side
crypto ceiling (`openssl speed` on the remote, cached per machine id + OpenSSL version like the local
one: sshbench.baselines.crypto_server), and the raw TCP control (python3, nc or neither).
"""

from __future__ import annotations

import socket
import statistics
import time
from collections.abc import Callable

from sshbench.capabilities import RemoteFacts  # the record, below baselines, which read it

# One section per fact, each after a marker line; a missing tool leaves its section empty.
FACTS_SCRIPT = (
    "echo '@@machine'; uname -m; "
    "echo '@@machine_id'; cat /etc/machine-id 2>/dev/null || cat /var/lib/dbus/machine-id 2>/dev/null; "
    "echo '@@cpu'; grep -E '^(model name|flags|Features)' /proc/cpuinfo 2>/dev/null | head -n 2; "
    "echo '@@openssl'; openssl version 2>/dev/null; "
    "echo '@@cores'; getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null; "
    "echo '@@python3'; command -v python3 2>/dev/null; "
    # the raw TCP control's fallback sink without python3 (sshbench.baselines.raw_tcp_remote.nc_fallback)
    "echo '@@nc'; command -v dd >/dev/null 2>&1 && command -v nc 2>/dev/null; "
    "echo '@@end'"
)
RTT_PROBES = 5  # TCP connects to the sshd; the median is the path's RTT
RTT_TIMEOUT_S = 5.0


def parse_facts(output: str) -> RemoteFacts:
    """FACTS_SCRIPT's output -> RemoteFacts (a section it cannot read stays None)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        if line.startswith("@@"):
            current = sections.setdefault(line[2:].strip(), [])
        elif current is not None and line.strip():
            current.append(line.strip())

    def first(name: str) -> str | None:
        lines = sections.get(name) or []
        return lines[0] if lines else None

    cores = first("cores")
    return RemoteFacts(
        machine=first("machine"),
        machine_id=first("machine_id"),
        cpu_lines=(sections.get("cpu") or [])[:2],
        openssl_version=first("openssl"),
        cores=int(cores) if cores and cores.isdigit() and int(cores) > 0 else None,
        python3=first("python3"),
        nc=first("nc"),
    )


def read_facts(run_remote: Callable[[str, str | None, float], tuple[int, str]]) -> RemoteFacts:
    """One ssh connection running FACTS_SCRIPT."""
    status, out = run_remote(FACTS_SCRIPT, None, 30)
    return parse_facts(out) if status == 0 and "@@end" in out else RemoteFacts()


def measure_rtt(hostname: str | None, port: str | None, direct: bool) -> tuple[float | None, list[float]]:
    """Median time of RTT_PROBES TCP connects to the sshd (SYN to SYN-ACK: one round trip, idle path).
    Only where ssh itself connects directly (no ProxyCommand/ProxyJump: then the path is another one).
    sshd logs each as a connection closed before identification; that is the price of an RTT taken on
    the same path, to the same port, as the trials'."""
    if not direct or not hostname or not port or not port.isdigit():
        return None, []
    probes: list[float] = []
    for _ in range(RTT_PROBES):
        start = time.perf_counter()
        try:
            with socket.create_connection((hostname, int(port)), timeout=RTT_TIMEOUT_S):
                probes.append((time.perf_counter() - start) * 1000)
        except OSError:
            return None, probes
    return statistics.median(probes) / 1000, [round(p, 3) for p in probes]
