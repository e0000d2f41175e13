"""The environment header: what a number depends on (CPU, crypto hardware, versions, target)."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from pathlib import Path

from sshbench.openssh.sshlog import client_version_banner

# CPU flags that decide SSH crypto speed; /proc/cpuinfo names on x86 and ARM.
X86_CRYPTO_FLAGS = ("aes", "vaes", "pclmulqdq", "vpclmulqdq", "avx2", "avx512f", "sha_ni")
ARM_CRYPTO_FEATURES = ("aes", "pmull", "sha1", "sha2", "sha512")


def cpu_info(cpuinfo_text: str | None = None) -> dict:
    """CPU model and crypto-relevant flags from /proc/cpuinfo text."""
    if cpuinfo_text is None:
        try:
            cpuinfo_text = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo_text = ""
    model: str | None = None
    flags: set[str] = set()
    for line in cpuinfo_text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Hardware", "cpu model") and model is None:
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    machine = platform.machine()
    wanted = ARM_CRYPTO_FEATURES if machine.startswith(("arm", "aarch64")) else X86_CRYPTO_FLAGS
    return {
        "cpu_model": model or platform.processor() or machine,
        "machine": machine,
        "cores": os.cpu_count(),
        "crypto_flags": {f: (f in flags) for f in wanted},
        "aes_ni": "aes" in flags,
    }


def _first_line(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout + done.stderr).strip()
    return text.splitlines()[0] if text else None


def collect(ssh: str = "ssh") -> dict:
    banner = _first_line([ssh, "-V"])
    ssh_version, ssh_crypto = client_version_banner(banner or "")
    return {
        "hostname": socket.gethostname(),
        **cpu_info(),
        "kernel": platform.release(),
        "os": _os_release(),
        "python": platform.python_version(),
        "client_ssh_version": ssh_version or banner,
        "client_crypto_library": ssh_crypto,
        "openssl_version": _first_line(["openssl", "version"]),
    }


def _os_release() -> str | None:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.platform()


def cpu_ticks(stat_text: str | None = None) -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs together since boot, from /proc/stat's `cpu` line: busy is
    user + nice + system + irq + softirq + steal (a VM's stolen time is time this machine did not have),
    total adds idle and iowait. None where there is no /proc/stat."""
    if stat_text is None:
        try:
            stat_text = Path("/proc/stat").read_text()
        except OSError:
            return None
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu" and len(fields) >= 8 and all(f.isdigit() for f in fields[1:9]):
            user, nice, system, idle, iowait, irq, softirq = (int(f) for f in fields[1:8])
            steal = int(fields[8]) if len(fields) > 8 else 0
            busy = user + nice + system + irq + softirq + steal
            return busy, busy + idle + iowait
    return None


def busy_cores(before: tuple[int, int] | None, after: tuple[int, int] | None, cores: int | None) -> float | None:
    """How many of the machine's `cores` were busy between two cpu_ticks() snapshots, every process counted
    (ours and anyone else's): the share of busy ticks times the cores."""
    if before is None or after is None or not cores or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1]) * cores
