"""Run one trial: one ssh connection with fixed algorithms, timed, its CPU counted, its log checked."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from sshbench.results import IMPLICIT_MAC, NO_COMPRESSION, Combination, Negotiated, Trial
from sshbench.sshlog import explain_failure, parse_ssh_log
from sshbench.targets.base import Target
from sshbench.tools.base import TransferTool


def algorithm_options(combo: Combination) -> list[str]:
    """Pin every algorithm so that nothing is left to negotiation (and -v shows what was used)."""
    opts = ["-c", combo.cipher, "-o", f"KexAlgorithms={combo.kex}",
            "-o", "Compression=" + ("no" if combo.compression == NO_COMPRESSION else "yes")]
    if combo.mac != IMPLICIT_MAC:
        opts += ["-m", combo.mac]
    return opts


def ssh_argv(ssh: str, target: Target, combo: Combination, command: str) -> list[str]:
    return [ssh, *target.client_options(), *algorithm_options(combo), "-v", *target.destination(), command]


def check_negotiated(combo: Combination, negotiated: Negotiated) -> str | None:
    """Why the negotiated algorithms disqualify a trial, or None if they are what was asked."""
    expected_compression = combo.compression
    wanted = {"kex": combo.kex, "cipher": combo.cipher, "mac": combo.mac, "compression": expected_compression}
    got = {"kex": negotiated.kex, "cipher": negotiated.cipher, "mac": negotiated.mac,
           "compression": negotiated.compression}
    if all(v is None for v in got.values()):
        return "no negotiated algorithms in ssh -v output"
    for key, want in wanted.items():
        have = got[key]
        if key == "compression" and want != NO_COMPRESSION and have in ("zlib@openssh.com", "zlib"):
            continue
        if have != want:
            return f"negotiated {key} {have} but {want} was requested"
    return None


class RunningProcess:
    """The ssh child in flight, so that an interrupt can stop it."""

    current: subprocess.Popen[bytes] | None = None


def run_trial(*, ssh: str, target: Target, tool: TransferTool, combo: Combination, kind: str, repetition: int,
              warmup: bool, payload: Path | None, payload_bytes: int, workdir: Path, timeout_s: float) -> Trial:
    """One connection. `kind == "handshake"` sends nothing (stdin /dev/null) through the same command,
    so its wall time is the fixed cost a transfer's wall time also contains."""
    trial = Trial(combination=combo, kind=kind, repetition=repetition, warmup=warmup,
                  payload_bytes=payload_bytes if kind == "transfer" else 0, started_at=time.time())
    argv = ssh_argv(ssh, target, combo, tool.remote_command())
    out_path, err_path = workdir / "trial.out", workdir / "trial.err"
    stdin_path = payload if (kind == "transfer" and payload is not None) else Path(os.devnull)
    with open(stdin_path, "rb") as stdin, open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, start_new_session=True)
        RunningProcess.current = proc
        timed_out = threading.Event()

        def _kill() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout_s, _kill)
        timer.start()
        try:
            # wait4 gives the child's own rusage: the client's CPU for this connection alone.
            _, status, rusage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        trial.wall_s = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        RunningProcess.current = None
    trial.exit_status = proc.returncode
    trial.client_cpu_s = rusage.ru_utime + rusage.ru_stime
    stdout = out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    log = parse_ssh_log(stderr)
    trial.negotiated = Negotiated(cipher=log.negotiated.cipher, mac=log.negotiated.mac,
                                  kex=log.negotiated.kex, compression=log.negotiated.compression)
    trial.sent_bytes, trial.received_bytes = log.sent_bytes, log.received_bytes
    trial.ssh_reported_s = log.transferred_s
    trial.remote_version = log.remote_version
    sink = tool.parse_output(stdout)
    trial.received_bytes_at_sink = sink.received_bytes
    trial.server_cpu_s = sink.server_cpu_s
    trial.server_sink_cpu_s = sink.sink_cpu_s
    if kind == "transfer" and sink.reader_s is not None and sink.reader_s > 0:
        trial.data_s, trial.data_clock = sink.reader_s, "server-reader"
    trial.invalid_reason = _invalid_reason(trial, combo, timed_out.is_set(), timeout_s, stderr)
    trial.valid = trial.invalid_reason is None
    return trial


def _invalid_reason(trial: Trial, combo: Combination, timed_out: bool, timeout_s: float, stderr: str) -> str | None:
    if timed_out:
        return f"timed out after {timeout_s:.0f} s"
    if trial.exit_status != 0:
        why = explain_failure(stderr)
        if why is None:
            lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("debug")]
            why = lines[-1] if lines else "no message"
        return f"ssh exited with status {trial.exit_status}: {why}"
    mismatch = check_negotiated(combo, trial.negotiated)
    if mismatch:
        return mismatch
    if trial.kind == "transfer":
        if trial.received_bytes_at_sink != trial.payload_bytes:
            return f"server received {trial.received_bytes_at_sink} of {trial.payload_bytes} bytes"
        if combo.compression == NO_COMPRESSION and trial.sent_bytes is not None and trial.sent_bytes < trial.payload_bytes:
            return f"ssh sent {trial.sent_bytes} bytes, fewer than the {trial.payload_bytes}-byte payload"
    return None
