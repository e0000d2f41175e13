"""The runner's two calls into the baselines: `before_trials` (the AES-NI mask checked, the crypto ceilings of
this machine and of a remote host, whether the raw TCP control runs) and `after_trials` (the disk baseline)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from sshbench.baselines import aesni, crypto_ceiling, crypto_server, disk, raw_tcp
from sshbench.capabilities import RemoteFacts, TargetCapabilities
from sshbench.host.cleanup import disk_dir
from sshbench.links.shaping import OPENSSH_CHANNEL_WINDOW
from sshbench.results import IMPLICIT_MAC, Combination


def before_trials(
    *,
    combos: list[Combination],
    target: TargetCapabilities,
    enabled: bool,
    aesni_env: dict[str, str] | None,
    client_crypto_library: str | None = None,
) -> tuple[dict, Combination | None]:
    """Verify the AES-NI mask (when asked), take the crypto ceilings (cached), and decide whether the
    raw TCP control can run. Returns (result.baselines, the raw TCP pseudo-combination or None)."""
    baselines: dict = {
        "enabled": enabled,
        "crypto": {},
        "crypto_server": None,  # a remote host's own ceiling (same shape as crypto)
        "disk": None,
        "aesni_masked": aesni_env is not None,
        "aesni_check": None,
        "notes": [],
    }
    if aesni_env is not None:
        aesni.refuse_unless_applicable(None, {"machine": "x86_64", "aes_ni": True}, client_crypto_library)
        plain, masked = aesni.verify(aesni_env)
        baselines["aesni_check"] = {
            "env": f"{aesni.ENV_VAR}={aesni.MASK}",
            "primitive": "AES-128-GCM",
            "unmasked_mib_s": plain,
            "masked_mib_s": masked,
            "cpu_settings_unmasked": aesni.cpu_settings(),
            "cpu_settings_masked": aesni.cpu_settings(aesni_env),
        }
    if not enabled:
        return baselines, None
    baselines["crypto"] = crypto_ceiling.ceilings(crypto_ceiling.primitives_needed(combos), env=aesni_env)
    failed = [name for name, entry in baselines["crypto"].items() if entry.get("mib_s") is None]
    if failed:
        baselines["notes"].append(f"openssl speed could not measure {', '.join(failed)}")
    if target.facts is not None:  # a remote host (targets/remote_facts.py)
        _server_side(baselines, combos, target, target.facts)
    for kind, names in (("cipher", {c.cipher for c in combos}), ("mac", {c.mac for c in combos})):
        for name in sorted(names):
            reason = crypto_ceiling.unmapped_reason(kind, name) if name != IMPLICIT_MAC else None
            if reason:
                baselines["notes"].append(f"crypto ceiling: {reason}")
    control = target.raw_tcp()
    if control.runs:
        return baselines, raw_tcp.RAW_TCP
    baselines["notes"].append(control.skip_reason or raw_tcp.REMOTE_SKIP_NOTE)
    return baselines, None


def _server_side(baselines: dict, combos: list[Combination], target: TargetCapabilities, facts: RemoteFacts) -> None:
    """A remote host: its crypto ceiling (openssl speed there, cached per machine + OpenSSL) and the
    path's RTT for the window verdict (OpenSSH's default channel window assumed for its sshd)."""
    name = target.host or "the remote"
    if facts.openssl_version is None:
        baselines["notes"].append(f"server crypto ceiling not measured: {name} has no openssl command")
    else:
        found = crypto_server.server_ceilings(crypto_ceiling.primitives_needed(combos), facts, target.run_remote)
        baselines["crypto_server"] = found
        failed = [p for p, entry in found.items() if entry.get("mib_s") is None]
        if failed:
            baselines["notes"].append(f"openssl speed on {name} could not measure {', '.join(failed)}")
    rtt_s = facts.rtt_s
    if rtt_s:
        baselines["link"] = {
            "window_bytes": OPENSSH_CHANNEL_WINDOW,
            "rtt_s": rtt_s,
            "rtt_method": "median TCP connect time to the remote's sshd",
        }


def after_trials(
    baselines: dict,
    workdir: Path,
    *,
    source_file: str | None = None,
    combos: list[Combination] | tuple = (),
    target: TargetCapabilities | None = None,
) -> None:
    """The disk baseline: read speed of the payload's source (the user's --file, else the largest
    generated payload; a note only when it lives in memory) and, when a combination wrote to a disk
    sink on this machine, the write speed of that disk."""
    if not baselines.get("enabled"):
        return
    if source_file:
        source: Path | None = Path(source_file)
    else:
        payloads = sorted((p for p in workdir.glob("payload-*") if p.is_file()), key=lambda p: p.stat().st_size)
        source = payloads[-1] if payloads else None
    if source is None:
        return
    found = disk.source_baseline(source)
    if any(c.sink == "disk" for c in combos):
        if target is not None and target.shares_local_filesystem:
            sink_dir = Path(disk_dir() or tempfile.gettempdir())
            found.sink_dir, found.sink_filesystem = str(sink_dir), disk.filesystem_of(sink_dir)
            try:
                found.write_mib_s = disk.measure_write(sink_dir)
            except OSError as err:
                baselines["notes"].append(f"disk sink write speed not measured: {err.strerror}")
        else:
            baselines["notes"].append("disk sink on a remote server: its write speed is not measured")
    baselines["disk"] = found.to_json()
