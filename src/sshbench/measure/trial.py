"""Run one trial: one connection of a transfer tool with fixed algorithms, timed, its CPU counted,
its log checked."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench.compression import NO_COMPRESSION
from sshbench.host import neighbours
from sshbench.host.cleanup import held_stop, kill_tree
from sshbench.host.pauses import PauseWatch
from sshbench.measure import clock, rekey, steady
from sshbench.measure.progress import DEFAULT_INTERVAL_S, Sampler
from sshbench.openssh.sshlog import explain_failure, parse_ssh_log
from sshbench.results import (
    IMPLICIT_MAC,
    Combination,
    Negotiated,
    Trial,
    TrialKind,
)
from sshbench.targets.base import Target
from sshbench.tools.base import TransferTool, TrialFiles


def algorithm_options(combo: Combination, setup_kex: str | None = None) -> list[str]:
    """Pin every algorithm so that nothing is left to negotiation (and -v shows what was used).
    As -o options, which ssh, scp, sftp and rsync's `-e ssh` all accept (scp and sftp have no -m);
    command-line -o options take precedence over any ssh_config. `setup_kex`: the kex to connect with
    instead of the combination's (sshbench.measure.plan.setup_kex)."""
    opts = [
        "-o",
        f"Ciphers={combo.cipher}",
        "-o",
        f"KexAlgorithms={setup_kex or combo.kex}",
        "-o",
        "Compression=" + ("no" if combo.compression == NO_COMPRESSION else "yes"),
    ]
    if combo.mac != IMPLICIT_MAC:
        opts += ["-o", f"MACs={combo.mac}"]
    return opts


def ssh_argv(ssh: str, target: Target, combo: Combination, command: str) -> list[str]:
    return [ssh, *target.client_options(), *algorithm_options(combo), "-v", *target.destination(), command]


def check_negotiated(combo: Combination, negotiated: Negotiated, setup_kex: str | None = None) -> str | None:
    """Why the negotiated algorithms disqualify a trial, or None if they are what was asked (the kex: `setup_kex`
    where the trial was set up with another than the combination's)."""
    expected_compression = combo.compression
    wanted = {
        "kex": setup_kex or combo.kex,
        "cipher": combo.cipher,
        "mac": combo.mac,
        "compression": expected_compression,
    }
    got = {
        "kex": negotiated.kex,
        "cipher": negotiated.cipher,
        "mac": negotiated.mac,
        "compression": negotiated.compression,
    }
    if all(v is None for v in got.values()):
        return "no negotiated algorithms in ssh -v output"
    for key, want in wanted.items():
        have = got[key]
        if key == "compression" and want != NO_COMPRESSION and have in ("zlib@openssh.com", "zlib"):
            continue
        if have != want:
            return f"negotiated {key} {have} but {want} was requested"
    return None


def note_neighbours(trial: Trial, before: neighbours.CpuSnapshot) -> None:
    """The CPU other processes than ours used since `before` (sshbench.host.neighbours), on the trial."""
    found = neighbours.between(before, neighbours.snapshot(time.monotonic()))
    if found is not None:
        trial.others_cores, trial.others_busiest = found.cores, found.busiest


class RunningProcess:
    """The clients in flight (several with -P N: sshbench.measure.parallel), so that an interrupt can stop them."""

    current: subprocess.Popen[bytes] | None = None
    running: set[subprocess.Popen[bytes]] = set()

    @classmethod
    def kill_all(cls) -> None:
        """Kill every client still running and its children (each runs in its own session)."""
        for proc in list(cls.running | ({cls.current} if cls.current is not None else set())):
            if proc.returncode is None:
                kill_tree(proc.pid)


@dataclass(frozen=True)
class TrialOverlay:
    """What an experiment (sshbench.why) adds to a trial without changing its target: programs in front of
    the client's (its cgroup) and a step after the target's before_trial() (a throttle of one resource)."""

    client_prefix: tuple[str, ...] = ()
    throttle: Callable[[Target, Combination], None] | None = None

    def prepare(self, target: Target, combo: Combination) -> None:
        """Right before the trial: the target's own step (an emulated link switched), then the throttle."""
        target.before_trial(combo)
        if self.throttle is not None:
            self.throttle(target, combo)


def run_trial(
    *,
    ssh: str,
    target: Target,
    tool: TransferTool,
    combo: Combination,
    kind: TrialKind,
    repetition: int,
    warmup: bool,
    payload: Path | None,
    payload_bytes: int,
    workdir: Path,
    timeout_s: float,
    env: dict[str, str] | None = None,
    files: TrialFiles | None = None,
    steady_clock: bool = True,
    client_prefix: Sequence[str] = (),
    max_steady_window_s: float | None = None,
    extra_options: Sequence[str] = (),
    sample_interval_s: float | None = None,
    setup_kex: str | None = None,
) -> Trial:
    """One connection. `kind == TrialKind.HANDSHAKE` moves an empty file through the same command, so its wall
    time is the fixed cost a transfer's wall time also contains. `files` says where the data comes
    from and goes to (default: an upload of `payload` to /dev/null). `env`: the client's environment
    where it must differ from ours (--no-aesni sets OPENSSL_ia32cap). `client_prefix`: programs in front of
    the target's own client prefix (TrialOverlay). `steady_clock` False (and any server under
    a CPU quota of ours, --server-cpu): the earlier clock, see clock.QUOTA_NOTE. `max_steady_window_s`: the
    steady window's longest stretch (steady.estimate; the runner's calibration.steady_window_cap). `extra_options`:
    ssh options after the combination's (the rekey probe's RekeyLimit); `sample_interval_s`: the progress sampler's
    (default progress.DEFAULT_INTERVAL_S). `setup_kex`: the kex to connect with instead of the combination's
    (sshbench.measure.plan.setup_kex; recorded as Trial.setup_kex and checked against what was negotiated)."""
    trial = Trial(
        combination=combo,
        kind=kind,
        repetition=repetition,
        warmup=warmup,
        payload_bytes=payload_bytes if kind == TrialKind.TRANSFER else 0,
        started_at=time.time(),
        setup_kex=setup_kex if setup_kex != combo.kex else None,
    )
    if files is None:
        source = payload if (kind == TrialKind.TRANSFER and payload is not None) else Path(os.devnull)
        files = TrialFiles(
            local_source=str(source), remote_source=None, remote_sink="/dev/null", local_sink="/dev/null"
        )
    options = [*target.client_options(), *algorithm_options(combo, setup_kex), *extra_options]
    invocation = tool.invocation(ssh, options, target.host_arg(), combo.direction, files, workdir)
    out_path, err_path = workdir / "trial.out", workdir / "trial.err"
    server_cpu_before = None if tool.reports_server_side else target.server_cpu_total()
    with (
        open(invocation.stdin, "rb") as stdin,
        open(invocation.stdout or out_path, "wb") as out,
        open(err_path, "wb") as err,
    ):
        if invocation.stdin_offset:
            stdin.seek(invocation.stdin_offset)  # the client reads the tail of a bigger payload file, to its end
        around = neighbours.snapshot(time.monotonic())  # who else uses the CPU meanwhile (read outside the clock)
        start = time.perf_counter()
        watch = PauseWatch.start()  # a stop, a suspend or a clock step during the trial makes it invalid
        with held_stop():  # started and known to the interrupt's cleanup as one step
            proc = subprocess.Popen(
                [*client_prefix, *target.client_prefix(), *invocation.argv],
                stdin=stdin,
                stdout=out,
                stderr=err,
                start_new_session=True,
                env=env if env is not None else target.client_env(),
            )
            RunningProcess.current = proc
            RunningProcess.running.add(proc)
        # The steady-state clock's samples: the client connection's TCP counters (sshbench.measure.progress)
        interval = sample_interval_s or DEFAULT_INTERVAL_S
        sampler = Sampler(proc.pid, start, interval_s=interval).start() if kind == TrialKind.TRANSFER else None
        timed_out = threading.Event()

        def _kill() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout_s, _kill)
        # Daemon: a signal that interrupts start() itself (before the try below) leaves the timer running;
        # a non-daemon one would then hold the exiting process for up to timeout_s.
        timer.daemon = True
        timer.start()
        try:
            # wait4 gives the child's own rusage (with its reaped children: scp's and rsync's ssh): the
            # client's CPU for this connection alone.
            _, status, rusage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        trial.wall_s = time.perf_counter() - start
        progress = sampler.stop() if sampler is not None else None
        note_neighbours(trial, around)
        proc.returncode = os.waitstatus_to_exitcode(status)
        RunningProcess.running.discard(proc)
        if RunningProcess.current is proc:
            RunningProcess.current = None
    trial.exit_status = proc.returncode
    trial.client_cpu_s = rusage.ru_utime + rusage.ru_stime
    stdout = "" if invocation.stdout else out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    log = parse_ssh_log(stderr)
    trial.negotiated = Negotiated(
        cipher=log.negotiated.cipher,
        mac=log.negotiated.mac,
        kex=log.negotiated.kex,
        compression=log.negotiated.compression,
    )
    trial.sent_bytes, trial.received_bytes = log.sent_bytes, log.received_bytes
    trial.ssh_reported_s = log.transferred_s
    trial.remote_version = log.remote_version
    trial.rekeys = log.rekeys
    trial.compressed_raw_bytes, trial.compressed_wire_bytes = log.compress_raw_bytes, log.compress_out_bytes
    if tool.reports_server_side:
        sink = tool.parse_output(stdout, stderr)
        trial.received_bytes_at_sink = sink.received_bytes
        trial.server_cpu_s = sink.server_cpu_s
        trial.server_cpu_scope = "data-phase" if sink.server_cpu_s is not None else None
        trial.server_sink_cpu_s = sink.sink_cpu_s
        trial.reader_ended_at = sink.reader_ended_at
        if combo.direction == "up":  # for downloads the server socket still holds data when dd ends
            trial.tcp_wire_bytes = sink.tcp_bytes_received
            trial.tcp_bytes_before_clock = sink.tcp_bytes_before_reader
        elif kind == TrialKind.TRANSFER and sink.reader_s:
            trial.tcp_bytes_unacked_at_clock_end = clock.download_tail_bytes(
                sink.reader_s,
                trial.received_bytes,
                sink.tcp_bytes_acked_before_reader,
                sink.tcp_bytes_acked_after_reader,
                sink.tcp_read_lag_s,
            )
        if kind == TrialKind.TRANSFER and sink.reader_s is not None and sink.reader_s > 0:
            clock.set_reader_clock(trial, sink.reader_s)
            if trial.reader_ended_at is not None and trial.data_s and combo.direction == "down":
                # the data phase ends when the client has the tail: parallel streams line up on that end
                trial.reader_ended_at += trial.data_s - sink.reader_s
    if progress is not None:
        samples = progress.samples
        counts = [s.acked if combo.direction == "up" else s.received for s in samples]
        if trial.rekeys:  # the connection rekeyed (a long payload, or the rekey probe): each rekey's stall, measured
            trial.rekey_stall_s = rekey.stall_per_rekey(rekey.stalled_s([s.t for s in samples], counts), trial.rekeys)
        if steady_clock and target.quota is None:
            times = [s.t for s in samples]
            estimate = steady.estimate(times, counts, trial.payload_bytes, max_window_s=max_steady_window_s)
            clock.apply_steady(trial, estimate)
            trial.client_steady_cpu_s = clock.window_cpu_s(times, [s.client_cpu_ns for s in samples], estimate)
            if trial.steady_note == steady.NO_SAMPLES and progress.error:  # why, for whoever reads the JSON
                trial.steady_note = f"{steady.NO_SAMPLES} ({progress.error})"
        elif kind == TrialKind.TRANSFER:
            trial.steady_note = clock.QUOTA_NOTE
    if not tool.reports_server_side and server_cpu_before is not None:
        after = target.server_cpu_total()
        if after is not None:
            trial.server_cpu_s, trial.server_cpu_scope = max(after - server_cpu_before, 0.0), "connection"
    paused = watch.reason([s.t for s in progress.samples] if progress is not None else ())
    trial.invalid_reason = paused or _invalid_reason(trial, combo, tool, timed_out.is_set(), timeout_s, stderr, stdout)
    trial.valid = trial.invalid_reason is None
    return trial


# A write error at the sink (a full disk) names the file; the tool's own words say which.
_SINK_ERROR = re.compile(
    r"^(?:dd: |scp: |remote |)(?:error writing |writing to |)'?([^':\"]*)'?: "
    r"(No space left on device|Disk quota exceeded|Read-only file system|Permission denied)"
    r"|write failed on \"([^\"]+)\": (No space left on device|Disk quota exceeded)",
    re.M,
)


def _invalid_reason(
    trial: Trial,
    combo: Combination,
    tool: TransferTool,
    timed_out: bool,
    timeout_s: float,
    stderr: str,
    stdout: str = "",
) -> str | None:
    if timed_out:
        return f"timed out after {timeout_s:.0f} s"
    if trial.exit_status != 0:
        sink_error = _SINK_ERROR.search(stdout) or _SINK_ERROR.search(stderr)
        if sink_error:
            path = (sink_error.group(1) or sink_error.group(3) or "").strip() or "(sink)"
            return f"cannot write the sink {path}: {sink_error.group(2) or sink_error.group(4)}"
        if "No space left on device" in stdout + stderr:
            return "the sink is full (No space left on device)"
        why = explain_failure(stderr)
        if why is None:
            lines = [
                ln
                for ln in stderr.splitlines()
                if ln.strip()
                and not ln.startswith(("debug", "SSHBENCH-"))
                and not ln.startswith(("Transferred:", "Bytes per second:"))
            ]
            why = lines[-1] if lines else "no message"
        return f"{tool.program} exited with status {trial.exit_status}: {why}"
    # A tool with its own SSH client (rclone) prints no ssh -v: what it negotiated cannot be checked.
    mismatch = check_negotiated(combo, trial.negotiated, trial.setup_kex) if tool.client_name is None else None
    if mismatch:
        return mismatch
    if trial.kind == TrialKind.TRANSFER:
        if tool.reports_server_side and trial.received_bytes_at_sink != trial.payload_bytes:
            return f"server received {trial.received_bytes_at_sink} of {trial.payload_bytes} bytes"
        if combo.compression == NO_COMPRESSION:
            # SSH packet bytes can only be more than the payload (headers, padding), never fewer.
            wire = trial.sent_bytes if combo.direction == "up" else trial.received_bytes
            if wire is not None and wire < trial.payload_bytes:
                return f"ssh moved {wire} bytes, fewer than the {trial.payload_bytes}-byte payload"
    return None
