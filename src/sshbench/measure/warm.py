"""Warm sessions (`run`, unless --no-warm; issue 23, point 6; docs/clock.md "Warm sessions"): one ordinary ssh
connection per combination, kept open across the rounds, each round's transfer timed as a burst in it.

Why: a trial is one connection, and in a default run ~0.5 of its ~0.85 s went to what comes before the steady
window (set-up, the shell, the start-up the clock omits), the same for every cipher. bench/warm.py measured bursts
against fresh connections and 4 GiB transfers: warm / 4 GiB 1.021 (0.972-1.073), plain / 4 GiB 0.996 (0.950-1.045)
in the same 8 rounds, so a burst reads what a bulk transfer gets as closely as a trial does, in about half its time.

How a burst runs, with no writer of ours: ssh reads its stdin from the payload file itself, as a trial's ssh does,
and the remote `dd` reads to the end. Between bursts the client is stopped (SIGSTOP): its socket drains, the server
waits on its read, nothing moves. A burst is SIGCONT, the steady clock's stretch (OMIT_S: a continued connection has
no start-up to leave out; then the run's steady window), SIGSTOP, and the wait until the socket has drained. The
file offset ssh reads from is ours too (one open file description), so each burst starts again at the file's start,
and the bytes ssh read in a burst are the offset when it ends. A burst's trial has the same clock as a trial's
(steady.estimate over the client connection's TCP counters, sshbench.measure.progress), the client's CPU over the burst and
its window, and the server's over the burst (its sessions' processes; the other sessions are stopped).

What a trial checks at its end is checked per session: what `ssh -v` says was negotiated, once connected (before
the first burst counts); at the session's end, that the remote `dd` counted every byte ssh read over all its
bursts, else every burst of the session is invalid (WarmSessions.close_all)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sshbench.host import neighbours
from sshbench.host.cleanup import held_stop, kill_tree
from sshbench.host.pauses import PauseWatch
from sshbench.measure import clock, steady
from sshbench.measure.progress import Sampler, process_tree, tree_cpu_ns
from sshbench.measure.trial import RunningProcess, check_negotiated, note_neighbours
from sshbench.openssh.sshlog import explain_failure, parse_ssh_log
from sshbench.results import Combination, Negotiated, Trial, TrialKind
from sshbench.units import MIB

READER = "dd of=/dev/null bs=1M"  # the remote end of every session: reads to EOF, then says how many bytes
MOVING_BYTES = 2 * MIB  # acknowledged after SIGCONT: the burst's data is moving again
# A burst's clock omits 0.1 s after its data moves again, not a fresh connection's steady.OMIT_S: a continued
# connection has no start-up transient (bench/warm.py, the same bursts timed with either omit over the same window
# length: 1.015 (0.984-1.047) and 0.982 (0.942-1.024) of 48 and 32, where a fresh connection's read 0.744 and 0.846).
OMIT_S = 0.1
# The session's first burst, never counted: past a new connection's start-up (its transient lasts 0.15-0.17 s after
# the remote reader starts, pinned: docs/clock.md "What the start costs"; data moving means the reader started).
COLD_S = steady.OMIT_S
QUIET_S = 0.05  # no acknowledgement for this long after SIGSTOP (2-3 samples): the socket has drained
MARGIN_S = 0.05  # the burst runs this long past its window's end: the clock's window ends at a sample inside it
WAIT_S = 15.0  # the longest any step of a burst waits (a stalled session: the burst is invalid, not a hang)
POLL_S = 0.01
# Sessions opened at once (open_all): sshd drops new connections at random past 10 unauthenticated ones (its
# MaxStartups 10:30:100), and all of these authenticate at the same moment.
OPEN_AT_ONCE = 8
FILE_HEADROOM = 64 * MIB  # a burst stops early once ssh has read to this near the payload file's end (never EOF)
_DD_COUNT = re.compile(r"^(\d+) bytes .*copied", re.M)


def _proc_cpu_s(pid: int) -> float | None:
    """user+sys seconds of one live process (/proc/PID/stat), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return True  # gone: nothing moves either


def _wait(condition: Callable[[], bool], limit_s: float = WAIT_S) -> bool:
    """Poll `condition` until true (True) or `limit_s` passed (False): every wait of a burst is bounded."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


@dataclass
class _Readings:
    client_cpu_s: float | None
    server_pids: list[int]
    server_cpu_ns: int | None


class WarmSession:
    """One connection of `combo`, stopped between its bursts. `argv`: the whole client command (prefix, ssh, its
    options, the destination, READER); `server_pid`: the listener whose descendants serve it (its CPU)."""

    def __init__(
        self,
        *,
        argv: list[str],
        combo: Combination,
        payload: Path,
        workdir: Path,
        index: int,
        env: dict[str, str] | None,
        server_pid: int | None,
        setup_kex: str | None,
        max_window_s: float | None,
    ) -> None:
        self.combo, self.setup_kex, self.server_pid = combo, setup_kex, server_pid
        self.max_window_s = max_window_s
        self.file = open(payload, "rb")  # held for the session's life, closed in close()
        self.size = os.path.getsize(payload)
        self.err_path = workdir / f"warm-{index}.err"
        self.read_before = 0  # bytes ssh read in the bursts before the current one
        self.bursts = 0
        self.broken: str | None = None  # why no burst of this session can count
        self.negotiated = Negotiated()
        with open(self.err_path, "wb") as err, held_stop():  # started and known to the cleanup as one step
            self.proc = subprocess.Popen(
                argv, stdin=self.file, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, env=env
            )
            RunningProcess.running.add(self.proc)
        cold = self.burst(repetition=-1)  # the connection's set-up and start-up: never counted
        if self.broken is None:
            log = parse_ssh_log(self.err_path.read_text(errors="replace"))
            self.negotiated = Negotiated(
                cipher=log.negotiated.cipher,
                mac=log.negotiated.mac,
                kex=log.negotiated.kex,
                compression=log.negotiated.compression,
            )
            self.broken = check_negotiated(combo, self.negotiated, setup_kex) or (
                None if cold.valid else cold.invalid_reason
            )

    # -- readings

    def _acked(self, sampler: Sampler) -> int | None:
        samples = sampler.progress.samples
        return samples[-1].acked if samples else None

    def _readings(self, server_pids: list[int] | None = None) -> _Readings:
        pids = server_pids if server_pids is not None else (process_tree(self.server_pid) if self.server_pid else [])
        return _Readings(_proc_cpu_s(self.proc.pid), pids, tree_cpu_ns(pids) if pids else None)

    def _exited(self) -> str | None:
        if self.proc.poll() is None:
            return None
        stderr = self.err_path.read_text(errors="replace")
        why = explain_failure(stderr) or next(
            (ln for ln in reversed(stderr.splitlines()) if ln.strip() and not ln.startswith("debug")), "no message"
        )
        return f"the warm session's ssh exited with status {self.proc.returncode}: {why}"

    # -- one burst

    def burst(self, repetition: int) -> Trial:
        """One timed burst: a Trial like a fresh connection's (its steady clock, CPU, negotiated algorithms), with
        `warm_burst` its place in the session (0: the first that counts)."""
        trial = Trial(
            combination=self.combo,
            kind=TrialKind.TRANSFER,
            repetition=max(repetition, 0),
            warmup=False,
            payload_bytes=0,
            started_at=time.time(),
            setup_kex=self.setup_kex if self.setup_kex != self.combo.kex else None,
            warm_burst=self.bursts - 1 if repetition >= 0 else None,
        )
        trial.negotiated = self.negotiated
        if self.broken is None:
            self.broken = self._exited()
        if self.broken is not None:
            trial.invalid_reason = self.broken
            return trial
        fd = self.file.fileno()
        self.read_before += os.lseek(fd, 0, os.SEEK_CUR)
        os.lseek(fd, 0, os.SEEK_SET)  # ssh's offset too: the burst reads the file from its start
        around = neighbours.snapshot(time.monotonic())  # who else uses the CPU meanwhile (read outside the clock)
        start = time.perf_counter()
        watch = PauseWatch.start()  # a stop, a suspend or a clock step during the burst makes it invalid
        sampler = Sampler(self.proc.pid, start).start()
        try:
            trial.invalid_reason = self._run_burst(trial, sampler, start, cold=repetition < 0)
        finally:
            samples = sampler.stop().samples
        self.bursts += 1
        note_neighbours(trial, around)
        trial.invalid_reason = trial.invalid_reason or watch.reason([s.t for s in samples])
        trial.valid = trial.invalid_reason is None
        if trial.valid:
            self._clock(trial, samples)
        return trial

    def _run_burst(self, trial: Trial, sampler: Sampler, start: float, cold: bool) -> str | None:
        """SIGCONT .. SIGSTOP .. drained, the CPU read around it; why the burst cannot count, or None."""
        fd = self.file.fileno()
        if not cold and not _wait(lambda: sampler.progress.samples != [] or sampler.progress.error is not None, 5):
            return "the warm session's connection was not found to sample"
        before = self._readings()
        base = self._acked(sampler) or 0
        os.kill(self.proc.pid, signal.SIGCONT)
        moving = _wait(lambda: (self._acked(sampler) or 0) > base + MOVING_BYTES or self.proc.poll() is not None)
        if not moving or self.proc.poll() is not None:
            if self.proc.poll() is None:
                os.kill(self.proc.pid, signal.SIGSTOP)
            self.broken = self._exited() or "the warm session's data did not move within 15 s"
            return self.broken
        data_at = sampler.progress.samples[-1].t if sampler.progress.samples else time.perf_counter() - start
        # the clock's stretch (omit + window; a cold burst: past the connection's start-up), or the file's end
        length = COLD_S if cold else OMIT_S + (self.max_window_s or 0.25) + MARGIN_S
        _wait(
            lambda: (
                (time.perf_counter() - start) - data_at >= length
                or os.lseek(fd, 0, os.SEEK_CUR) > self.size - FILE_HEADROOM
                or self.proc.poll() is not None
            ),
            length + WAIT_S,
        )
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGSTOP)
        last_count: list[int | None] = [self._acked(sampler)]
        last_change = [time.perf_counter()]

        def drained() -> bool:
            now = self._acked(sampler)
            if now != last_count[0]:
                last_count[0], last_change[0] = now, time.perf_counter()
            return time.perf_counter() - last_change[0] >= QUIET_S and _stopped(self.proc.pid)

        _wait(drained, 5)
        trial.wall_s = time.perf_counter() - start
        after = self._readings(before.server_pids)
        if self.proc.poll() is not None:
            self.broken = self._exited()
            return self.broken
        trial.payload_bytes = os.lseek(fd, 0, os.SEEK_CUR)
        if before.client_cpu_s is not None and after.client_cpu_s is not None:
            trial.client_cpu_s = after.client_cpu_s - before.client_cpu_s
        if before.server_cpu_ns is not None and after.server_cpu_ns is not None:
            trial.server_cpu_s, trial.server_cpu_scope = (
                (after.server_cpu_ns - before.server_cpu_ns) / 1e9,
                "data-phase",
            )
        return None

    def _clock(self, trial: Trial, samples: list) -> None:
        """The steady-state clock over the burst's samples, as a trial's (sshbench.measure.trial.run_trial)."""
        times, counts = [s.t for s in samples], [s.acked for s in samples]
        if counts:
            trial.tcp_wire_bytes = counts[-1] - counts[0]
        estimate = steady.estimate(times, counts, trial.payload_bytes, OMIT_S, max_window_s=self.max_window_s)
        clock.apply_steady(trial, estimate)
        trial.client_steady_cpu_s = clock.window_cpu_s(times, [s.client_cpu_ns for s in samples], estimate)
        if trial.steady_note == steady.NO_SAMPLES:
            trial.steady_note = f"{steady.NO_SAMPLES} (warm burst)"

    # -- the end

    def close(self) -> str | None:
        """End the session: ssh reads EOF, the remote `dd` says how many bytes it read. Why the session's bursts are
        invalid (the count differs, or ssh failed), or None."""
        if self.proc.poll() is None:
            fd = self.file.fileno()
            read = self.read_before + os.lseek(fd, 0, os.SEEK_CUR)
            os.lseek(fd, 0, os.SEEK_END)  # ssh's next read is EOF: the channel closes, dd ends
            os.kill(self.proc.pid, signal.SIGCONT)
            try:
                self.proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self._kill()
                return self.broken or "the warm session did not end within 15 s of its input's end"
            finally:
                RunningProcess.running.discard(self.proc)
                self.file.close()
            if self.broken:
                return self.broken
            if self.proc.returncode != 0:
                return self._exited()
            counted = _DD_COUNT.findall(self.err_path.read_text(errors="replace"))
            if not counted:
                return "the warm session's reader did not say how many bytes it read"
            if int(counted[-1]) != read:
                return f"the warm session's reader counted {int(counted[-1])} of the {read} bytes ssh read"
            return None
        RunningProcess.running.discard(self.proc)
        self.file.close()
        return self.broken or self._exited()

    def _kill(self) -> None:
        kill_tree(self.proc.pid)
        self.proc.wait(timeout=WAIT_S)
        RunningProcess.running.discard(self.proc)
        if not self.file.closed:
            self.file.close()


class WarmSessions:
    """The run's warm sessions, one per combination, opened together before the first burst (open_all), all closed
    at the end of the rounds; a session whose end check fails makes every burst of it invalid."""

    def __init__(self) -> None:
        self.sessions: dict[Combination, WarmSession] = {}
        self.trials: dict[Combination, list[Trial]] = {}

    def open_all(
        self,
        combos: list[Combination],
        open_session: Callable[[Combination, int], WarmSession],
        track: Callable[[int], None] | None = None,
    ) -> None:
        """Open the sessions of `combos` not open yet, OPEN_AT_ONCE at a time on threads. One after the other, a
        session took ~0.75 s to open (set-up, the cold burst, the drain): a round of its own for six rows, and
        ~90 s for `--full`'s 115. Nothing is timed while they open, so they may share the cores. `track`: each
        session's client pid as it opens (the run record: the next run stops them after a kill -9)."""
        todo = [c for c in dict.fromkeys(combos) if c not in self.sessions]
        for first in range(0, len(todo), OPEN_AT_ONCE):
            batch = todo[first : first + OPEN_AT_ONCE]
            with ThreadPoolExecutor(max_workers=len(batch), thread_name_prefix="warm-open") as pool:
                opened = {c: pool.submit(open_session, c, len(self.sessions) + i) for i, c in enumerate(batch)}
            for combo, future in opened.items():
                self.sessions[combo] = future.result()
                if track is not None:
                    track(self.sessions[combo].proc.pid)

    def broken(self, combo: Combination) -> str | None:
        """Why `combo`'s session can take no more bursts (its ssh exited), or None while it can."""
        session = self.sessions[combo]
        if session.broken is None:
            session.broken = session._exited()
        return session.broken

    def burst(self, combo: Combination, repetition: int) -> Trial:
        """The next burst of `combo`'s session (open_all opened it)."""
        trial = self.sessions[combo].burst(repetition)
        self.trials.setdefault(combo, []).append(trial)
        return trial

    def close_all(self) -> list[str]:
        """Close every session; one line per session whose bursts were made invalid."""
        lines = []
        for combo, session in self.sessions.items():
            why = session.close()
            if why is None:
                continue
            counted = [t for t in self.trials.get(combo, []) if t.valid]
            for trial in counted:
                trial.valid, trial.invalid_reason = False, why
            lines.append(f"warm session {combo.label}: {why} ({len(counted)} burst(s) not counted)")
        self.sessions.clear()
        return lines

    def kill_all(self) -> None:
        """An interrupt: every session's ssh killed, nothing checked (their bursts are kept as measured)."""
        for session in self.sessions.values():
            if session.proc.poll() is None:
                session._kill()
        self.sessions.clear()


__all__ = ["READER", "WarmSession", "WarmSessions"]
