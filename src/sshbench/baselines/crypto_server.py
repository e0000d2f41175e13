"""The server side's crypto ceiling: `openssl speed` run on a remote host over the ssh connection.

The same primitives, arguments and parser as the local ceiling (crypto_ceiling.py), run by the
remote's own `openssl` in one ssh session (one marked section per primitive), and cached in the same
file under the same kind of key: the remote's machine id, CPU model/flags, architecture and OpenSSL
version (read once by the target: targets/remote_facts.py). A namespace host on this machine thus
shares the local figures, as it should: same machine, same OpenSSL.

A remote without openssl (or without a primitive) gives entries with `mib_s` None and a note; the
summaries then use the client's ceiling alone.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable

from sshbench.baselines import crypto_ceiling
from sshbench.baselines.crypto_ceiling import CeilingCache, Primitive
from sshbench.capabilities import RemoteFacts
from sshbench.units import MIB

RunRemote = Callable[[str, str | None, float], tuple[int, str]]
MARK = "@@sshbench-speed "


def speed_script(primitives: list[Primitive]) -> str:
    """One remote shell command: for each primitive a marker line, then `openssl speed -mr` on it."""
    steps = []
    for p in primitives:
        argv = " ".join(shlex.quote(a) for a in crypto_ceiling.speed_argv(p))
        steps.append(f"echo {shlex.quote(MARK + p.name)}; {argv} 2>/dev/null </dev/null")
    return "; ".join(steps)


def parse_sections(output: str) -> dict[str, float | None]:
    """{primitive name: MiB/s or None} from speed_script's output."""
    found: dict[str, float | None] = {}
    name: str | None = None
    lines: list[str] = []
    for line in [*output.splitlines(), MARK]:
        if line.startswith(MARK):
            if name is not None:
                rate = crypto_ceiling.parse_speed_mr("\n".join(lines))
                found[name] = rate / MIB if rate else None
            name, lines = line[len(MARK) :].strip() or None, []
        else:
            lines.append(line)
    return found


def server_ceilings(
    primitives: list[Primitive], facts: RemoteFacts, run_remote: RunRemote, cache: CeilingCache | None = None
) -> dict[str, dict]:
    """{primitive name: {"mib_s", "openssl_args", "measured_at", "openssl_version", "cached"}}, the shape
    of crypto_ceiling.ceilings(): from the cache where this remote machine + OpenSSL has the figure,
    else measured there now (and stored)."""
    cache = cache or CeilingCache()
    version = facts.openssl_version
    key = crypto_ceiling.key_of(
        facts.machine,
        facts.machine_id,
        list(facts.cpu_lines),
        version,
        None,  # the remote's sshd runs without sshbench's OPENSSL_ia32cap mask
    )
    data = cache.load()
    entries = data.setdefault(key, {})
    wanted = list(dict.fromkeys(primitives))
    missing = [
        p
        for p in wanted
        if not (isinstance(entries.get(p.name), dict) and isinstance(entries[p.name].get("mib_s"), (int, float)))
    ]
    measured: dict[str, float | None] = {}
    if missing and version:
        timeout = crypto_ceiling.SPEED_TIMEOUT_S * len(missing)
        status, out = run_remote(speed_script(missing), None, timeout)
        measured = parse_sections(out) if status == 0 else {}
    out_entries: dict[str, dict] = {}
    changed = False
    for p in wanted:
        if p not in missing:
            out_entries[p.name] = {**entries[p.name], "cached": True}
            continue
        entry = {
            "mib_s": measured.get(p.name),
            "openssl_args": " ".join(p.speed_args),
            "measured_at": time.time(),
            "openssl_version": version,
        }
        if entry["mib_s"] is not None:
            entries[p.name] = entry
            changed = True
        out_entries[p.name] = {**entry, "cached": False}
    if changed:
        cache.save(data)
    return out_entries
