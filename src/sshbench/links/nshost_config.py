"""The namespace host's files and shaping: its keys, sshd_config and the client's ssh_config alias,
and the tc arguments for its veth (a rate, or a link profile of sshbench.links). Split from
nshost.py, which sets up the namespace, the veth pair and sshd, and removes them again.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from sshbench.links.profiles import LINKS, LinkProfile
from sshbench.links.shaping import netem_args
from sshbench.links.shaping import tbf_args as profile_tbf_args
from sshbench.openssh import sshd_options

KEYGEN_TIMEOUT_S = 30.0


class NsHostError(RuntimeError):
    """A namespace host could not be created (one line saying why)."""


# --- shaping -----------------------------------------------------------------------------------------


def tbf_args(rate_mbit: float) -> list[str]:
    """tbf qdisc arguments for `rate_mbit` Mbit/s, sized as sshbench's link profiles are (shaping.tbf_args):
    a burst of ~1 ms of the rate (at least 32 KiB: veth hands over GSO super-packets) and ~100 ms of queue."""
    return profile_tbf_args(int(rate_mbit * 1_000_000))


def parse_rate_mbit(text: str) -> float:
    """'100mbit', '1gbit', '500kbit' or a bare number of Mbit/s -> Mbit/s. tc's 'mbps' (megabytes) is refused."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(kbit|mbit|gbit)?\s*", text.lower())
    if not m:
        raise ValueError(f"rate {text!r}: write e.g. 100mbit, 1gbit or 500kbit")
    value = float(m.group(1)) * {"kbit": 0.001, "mbit": 1.0, "gbit": 1000.0, None: 1.0}[m.group(2)]
    if value <= 0:
        raise ValueError(f"rate {text!r} must be above 0")
    return value


def profile_named(name: str) -> LinkProfile:
    """A named link profile (sshbench.links.LINKS), or NsHostError naming the known ones."""
    profile = LINKS.get(name)
    if profile is None:
        raise NsHostError(f"unknown link profile {name!r}; known: {', '.join(LINKS)}")
    return profile


def link_qdisc_args(profile: LinkProfile, netem: bool) -> list[str] | None:
    """The qdisc for each veth end (its egress) under `profile`: tbf for a rate alone, netem for delay,
    jitter or loss (each end gets half the round trip: the profile's one-way delay). None: unshaped.
    Without netem (this development kernel has no sch_netem) a delay cannot be emulated here: the
    private target's userspace delay relay would have to sit in the data path as a ProxyCommand,
    which the namespace host avoids (real TCP, no relay), so such a profile is refused."""
    if profile.delay_ms or profile.jitter_ms or profile.loss_pct:
        if not netem:
            raise NsHostError(
                f"link {profile.name}: delay, jitter and loss need tc netem (sch_netem), which this kernel lacks; "
                "rate-only profiles (lan10g, lan1g, lan100m) work on a namespace host, and "
                f"`sshbench run --link {profile.name}` emulates the delay against the private sshd"
            )
        return netem_args(profile)
    return profile_tbf_args(profile.rate_bit_s) if profile.rate_bit_s else None


# --- keys and configuration --------------------------------------------------------------------------


def make_keys(directory: Path, address: str) -> tuple[Path, Path]:
    """A fresh host key and client key (ed25519) in `directory`, the client's authorized; (identity, known_hosts)."""
    for key in ("host_key", "client_key"):
        argv = [
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            f"sshbench-nshost-{key}",
            "-f",
            str(directory / key),
        ]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=KEYGEN_TIMEOUT_S, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            raise NsHostError(f"ssh-keygen failed: {err}") from None
        if done.returncode != 0:
            raise NsHostError(f"ssh-keygen failed: {(done.stderr or done.stdout).strip() or done.returncode}")
    shutil.copy(directory / "client_key.pub", directory / "authorized_keys")
    os.chmod(directory / "authorized_keys", 0o600)
    host_key = (directory / "host_key.pub").read_text().split()
    known_hosts = directory / "known_hosts"
    # port 22: known_hosts names the bare address (no [host]:port form)
    known_hosts.write_text(f"{address} {host_key[0]} {host_key[1]}\n")
    return directory / "client_key", known_hosts


def sshd_config(
    directory: Path, addresses: list[str], port: int, user: str, overrides: dict[str, str], session_env: bool = True
) -> str:
    """sshd_config listening on each of `addresses` (the host's own, and its LAN address when it has one).
    `session_env`: the SetEnv line (sshd_options.session_env), which a system sshd before 8.7 refuses."""
    lines = {
        "Port": str(port),
        **sshd_options.base_options(str(directory / "host_key"), str(directory / "authorized_keys"), user),
        "PermitUserRC": sshd_options.OPTIONAL["PermitUserRC"],  # the system's sshd (9.2 here) knows it
    }
    if session_env:
        lines["SetEnv"] = sshd_options.session_env(os.environ.get("PATH"))
    lines.update(overrides)
    listen = "".join(f"ListenAddress {address}\n" for address in addresses)
    return listen + "".join(f"{k} {v}\n" for k, v in lines.items())


def write_ssh_config(
    directory: Path, name: str, alias: str, address: str, port: int, user: str, identity: Path, known_hosts: Path
) -> Path:
    """The client's ssh_config: `Host ALIAS` pinned to this host's key, non-interactive, no sharing."""
    path = directory / "ssh_config"
    path.write_text(
        f"# sshbench namespace host {name} (removed with it)\n"
        f"Host {alias}\n"
        f"    HostName {address}\n"
        f"    Port {port}\n"
        f"    User {user}\n"
        f"    IdentityFile {identity}\n"
        f"    IdentitiesOnly yes\n"
        f"    IdentityAgent none\n"
        f"    UserKnownHostsFile {known_hosts}\n"
        f"    GlobalKnownHostsFile /dev/null\n"
        f"    StrictHostKeyChecking yes\n"
        f"    HostKeyAlgorithms ssh-ed25519\n"
        f"    UpdateHostKeys no\n"
        f"    BatchMode yes\n"
        f"    ControlMaster no\n"
        f"    ControlPath none\n"
        f"    ConnectTimeout 10\n"
    )
    return path


# --- a host as people have it (the fleet tests' inventory) -------------------------------------------

# sshd's own PATH for sessions (Debian's default) behind the shim directory
SESSION_PATH = "/usr/local/bin:/usr/bin:/bin"


def broken_shim(directory: Path, program: str = "python3.13") -> dict[str, str]:
    """A pyenv-style shim in `directory` for a Python that is installed but not selected: it exits 127
    with pyenv's message, as `~/.pyenv/shims/python3.13` does. Returns the sshd_config lines that put
    `directory` first on the sessions' PATH (sshd's SetEnv, OpenSSH 7.8+), before a working python3."""
    shim = directory / program
    shim.write_text(f'#!/bin/sh\necho "pyenv: {program}: command not found" >&2\nexit 127\n')
    shim.chmod(0o755)
    return {"SetEnv": f"PATH={directory}:{SESSION_PATH}"}


def inventory_line(name: str, address: str, user: str, identity: Path, **host_vars: object) -> str:
    """One host of an INI inventory as a user writes it: address, user and key file; no
    ansible_python_interpreter and no ssh options (its host key is in the known_hosts ssh reads)."""
    extra = "".join(f" {key}={value}" for key, value in host_vars.items())
    return f"{name} ansible_host={address} ansible_user={user} ansible_ssh_private_key_file={identity}{extra}\n"
