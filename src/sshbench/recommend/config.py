"""`sshbench recommend`: a paste-ready Ciphers/MACs/KexAlgorithms snippet from a measured run, fastest
first among what a policy allows (security/policy.py), checked by one real connection before it is printed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from sshbench import store
from sshbench.errors import RunError
from sshbench.host.cleanup import Cleanup, signals_raise
from sshbench.openssh.sshlog import failure_reason, parse_negotiated
from sshbench.results import IMPLICIT_MAC, RunResult, short_name
from sshbench.security.policy import NothingAllowed, build  # re-exported: the command and its tests use them from here
from sshbench.security.recommendation import (  # re-exported likewise
    FOR_CHOICES,
    OPTION_NAMES,
    POLICIES,
    POLICY_ORDER,
    Choice,
    LeftOut,
    Recommendation,
)
from sshbench.settings import TargetSpec
from sshbench.targets import make_target
from sshbench.targets.base import Target, probe
from sshbench.targets.local import LocalServer
from sshbench.targets.private_openssh import PrivateOpenSSH, find_sshd

__all__ = [
    "FOR_CHOICES",
    "OPTION_NAMES",
    "POLICIES",
    "POLICY_ORDER",
    "Choice",
    "LeftOut",
    "NothingAllowed",
    "Recommendation",
    "build",
    "load_run",
    "verify",
]

VERIFY_TIMEOUT_S = 30.0


# --- verification: one real connection with exactly these settings --------------------------------


def sshd_syntax_check(rec: Recommendation, sshd: str | None = None) -> None:
    """`sshd -t -f` on the sshd_config lines (with a throwaway host key, which sshd -t insists on)."""
    sshd_path = find_sshd(sshd)
    with tempfile.TemporaryDirectory(prefix="sshbench-recommend-") as tmp:
        key = Path(tmp) / "host_key"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, capture_output=True, timeout=30
        )
        config = Path(tmp) / "sshd_config"
        config.write_text(f"HostKey {key}\n" + rec.render())
        done = subprocess.run(
            [sshd_path, "-t", "-f", str(config)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    if done.returncode != 0:
        raise RunError(
            f"sshd -t rejects the recommended sshd_config lines: "
            f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}; not printing them"
        )


def verify(rec: Recommendation, result: RunResult, sshd: str | None = None, ssh: str = "ssh") -> str:
    """Connect once to the run's target with exactly the recommended settings; one line saying what was
    negotiated. Raises RunError (the config is then not printed) when it does not connect."""
    if rec.target == "server":
        sshd_syntax_check(rec, sshd)
    settings = rec.settings()
    host = result.settings.host
    cleanup = Cleanup()
    try:
        with signals_raise():
            target: Target
            servers = [name for name in (result.settings.server or "openssh").split(",") if name]
            if host is None and rec.target == "client" and "openssh" not in servers:
                # A run against Dropbear or AsyncSSH alone: its kind of server again, not an OpenSSH sshd that
                # speaks every algorithm (its rows' kex is curve25519 where Dropbear 2022 has no sntrup761)
                spec = TargetSpec.from_options(
                    ssh=ssh, server=servers[0], dropbear_window=result.settings.dropbear_window
                )
                target = make_target(spec, server=servers[0])
            elif host is None:
                # The private sshd: with these lines in its sshd_config for --for server.
                extra = settings if rec.target == "server" else {}
                target = PrivateOpenSSH(sshd=sshd, ssh=ssh, extra_config=extra, login_probe=False)
            elif rec.target == "server":
                # A remote server's sshd_config is not ours to change: check that it accepts these algorithms.
                target = make_target(TargetSpec.from_options(host=host, ssh=ssh, ssh_config=result.settings.ssh_config))
            else:
                target = make_target(TargetSpec.from_options(host=host, ssh=ssh, ssh_config=result.settings.ssh_config))
            target.start(cleanup)
            options = target.client_options()
            if rec.target == "client" or host is not None:
                options = _with_client_settings(options, rec, cleanup)
            status, log = probe(ssh, options, target.destination(), timeout_s=VERIFY_TIMEOUT_S)
    finally:
        cleanup.close()
    if status != 0:
        reason = failure_reason(log)
        raise RunError(f"the recommended settings did not connect to {target.label}: {reason}; not printing them")
    negotiated = parse_negotiated(log)
    lists = {"Ciphers": negotiated.cipher, "MACs": negotiated.mac, "KexAlgorithms": negotiated.kex}
    for option, got in lists.items():
        offered = rec.offered(option)  # a prefix line offers the defaults too; None: defaults unrecorded
        if offered is not None and got not in offered and not (option == "MACs" and got == IMPLICIT_MAC):
            raise RunError(
                f"the test connection to {target.label} negotiated {option} {got}, which is not on the "
                f"recommended line; not printing it"
            )
    # The kex only when a line sets it: the block's lines fit 100 columns.
    kex_set = any(line.option == "KexAlgorithms" for line in rec.option_lines())
    # A server of our own is a new one, started for this check after the run's was stopped: its port is not the one
    # the report's Target line names, and the line says so rather than show a second port (issue 55).
    if isinstance(target, LocalServer):
        checked = f"checked: a new {target.server_name} like the run's took these lines"
    else:
        checked = f"checked: connected to {target.label} with these lines"
    return (
        f"{checked} (got {short_name(str(negotiated.cipher))}"
        f"{'' if negotiated.mac == IMPLICIT_MAC else ' + ' + short_name(str(negotiated.mac))}"
        f"{', ' + str(negotiated.kex) if kex_set else ''})"
    )


def _with_client_settings(options: list[str], rec: Recommendation, cleanup) -> list[str]:
    """The target's ssh options, plus the recommended lines from a config file (`-F`) for the private sshd,
    or as `-o` options on top of the user's own config for a remote host."""
    if "-F" in options and options[options.index("-F") + 1] == "/dev/null":
        path = cleanup.make_temp_dir() / "ssh_config"
        # The same lines as the printed block, applying to any host (the Host pattern is the user's choice).
        path.write_text("".join(f"{k} {v}\n" for k, v in rec.settings().items()))
        index = options.index("-F")
        return [*options[:index], "-F", str(path), *options[index + 2 :]]
    extra: list[str] = []
    for option, value in rec.settings().items():
        extra += ["-o", f"{option}={value}"]
    return [*options, *extra]


def load_run(run_ref: str | None, from_json: str | None, db: str | None) -> tuple[RunResult, str]:
    """The run to recommend from: a `run --json`/export file, or a stored run (id or 'latest')."""
    if from_json:
        doc, source = store.read_document(from_json)
        return store.result_from_document(doc, source), os.path.basename(from_json)
    ref = run_ref or "latest"
    with store.open_store(db, read_only=True) as opened:
        result = opened.load_result(ref)
    return result, f"run {result.run_id}" if result.run_id is not None else f"run {ref}"
