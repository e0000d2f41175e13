#!/usr/bin/env python3
"""Would a warm session per combination measure what a bulk transfer gets? (issue 23, point 6; docs/clock.md)

A trial is one ssh connection: ~0.25-0.33 s of set-up before its data (kex, auth, the session's shell), ~30%
of a `--full` run's measured time. A warm session keeps one ordinary connection per combination open across
the rounds and times several bursts in it. The first try (bench/startup.py `warm`) fed ssh's stdin from a
Python thread, which competed for this 2-core VM's cores: 0.7-0.85x of a plain transfer's rate.

This one has no writer. ssh reads its stdin from the payload file itself, as a trial's ssh does, and the remote
reads to the end (`dd of=/dev/null bs=1M`). Between bursts the client is stopped (SIGSTOP): its socket drains,
the server waits on its read, nothing moves. A burst is SIGCONT, then the steady-state clock's own stretch (the
start found after the pause, steady.OMIT_S omitted, a 0.25 s window: sshbench.measure.steady), then SIGSTOP. The file
offset ssh reads from is shared with this process (one open file description), so each burst starts again at 0
and a 2 GiB file serves every burst. The client's TCP counters are sampled as a trial samples them
(sshbench.measure.progress, every 20 ms).

Interleaved round by round, in a rotating order, for each cipher:
  plain  a fresh connection moving a payload sized for a default trial's data phase (~0.8 s), its rate by the
         same clock and window: what a default run measures;
  warm   one burst in the cipher's own connection, opened before the first round (its first, cold burst is
         left out);
  bulk   (with --bulk) a 4 GiB upload timed from outside, minus a same-shape `ssh host true` (median of 3).

Printed: per cipher the medians and the paired ratios warm/plain and warm/bulk, plain/bulk, geometric means
with 95% t intervals over the rounds (issue 23 asks warm sessions to agree with the bulk transfers within 2%).

Usage: .venv/bin/python bench/warm.py [--rounds 6] [--ciphers a,b] [--bulk 4G | --no-bulk] [--no-pin]
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from sshbench.host import placement
from sshbench.host.cleanup import Cleanup
from sshbench.measure import steady
from sshbench.measure.payload import PayloadStore
from sshbench.measure.progress import Sampler
from sshbench.measure.trial import algorithm_options
from sshbench.model.intervals import t_critical
from sshbench.results import IMPLICIT_MAC, Combination
from sshbench.targets import PrivateOpenSSH
from sshbench.units import MIB, parse_size

DEFAULT_CIPHERS = "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr"
WINDOW_S = 0.25  # a default run's steady window (calibration.steady_window_cap at the 0.25 s floor)
BURST_S = steady.OMIT_S + WINDOW_S + 0.1  # data time a burst runs before the client is stopped
FILE_SIZE = 2048 * MIB
PLAIN_WALL_S: list[float] = []  # each plain transfer's wall time, spawn to exit
READER = "dd of=/dev/null bs=1M 2>/dev/null"


def mac_for(cipher: str) -> str:
    return IMPLICIT_MAC if ("gcm" in cipher or "chacha" in cipher) else "hmac-sha2-256-etm@openssh.com"


OMITS = (0.1, 0.2, steady.OMIT_S)  # the start left out: the headline's 0.3 s, and shorter ones on the same transfers


def rate(times: list[float], counts: list[int], omit_s: float = steady.OMIT_S) -> float | None:
    """Wire MiB/s by the headline's clock over the samples (their own bytes as the payload: wire rate)."""
    moved = counts[-1] - counts[0] if counts else 0
    return steady.estimate(times, counts, moved, omit_s, max_window_s=WINDOW_S).mib_s if moved > 0 else None


def rates(times: list[float], counts: list[int]) -> dict[float, float | None]:
    return {omit: rate(times, counts, omit) for omit in OMITS}


def wait_for(condition: Callable[[], bool], limit_s: float) -> bool:
    deadline = time.perf_counter() + limit_s
    while not condition():
        if time.perf_counter() > deadline:
            return False
        time.sleep(0.01)
    return True


class WarmSession:
    """One connection per cipher, stopped between its bursts."""

    def __init__(self, argv: list[str], payload: str) -> None:
        self.file = open(payload, "rb")  # held for the session's life, closed in close()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=self.file, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.sampler = Sampler(self.proc.pid, self.started).start()
        self.resume_s: list[float] = []  # SIGCONT to 2 MiB moved: what a burst costs before its data
        self.burst()  # the cold first burst: the connection's set-up and start-up; left out

    def _acked(self) -> int:
        samples = self.sampler.progress.samples
        return samples[-1].acked if samples else 0

    def burst(self) -> dict[float, float | None]:
        os.lseek(self.file.fileno(), 0, os.SEEK_SET)  # ssh's offset too: one open file description
        before = len(self.sampler.progress.samples)
        base = self._acked()
        resumed = time.perf_counter()
        self.proc.send_signal(signal.SIGCONT)
        if not wait_for(lambda: self._acked() > base + 2 * MIB, 15):
            raise SystemExit("warm: a burst did not start within 15 s")
        moving = time.perf_counter()
        self.resume_s.append(moving - resumed)
        time.sleep(BURST_S)  # the burst's length: the clock's stretch and a margin (not a synchronisation)
        self.proc.send_signal(signal.SIGSTOP)
        stopped = time.perf_counter()
        last = [self._acked(), time.perf_counter()]

        def drained() -> bool:  # no growth for 100 ms: the socket and the server's window are empty
            now = self._acked()
            if now != last[0]:
                last[:] = [now, time.perf_counter()]
            return time.perf_counter() - last[1] > 0.1

        wait_for(drained, 5)
        if stopped - moving < BURST_S:
            return dict.fromkeys(OMITS)
        samples = self.sampler.progress.samples[max(0, before - 5) :]  # the pause before it: where its data starts
        return rates([s.t for s in samples], [s.acked for s in samples])

    def close(self) -> None:
        self.proc.send_signal(signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.sampler.stop()
        self.file.close()


def plain(argv: list[str], path: str, offset: int) -> tuple[dict[float, float | None], float]:
    """A fresh connection's upload from `offset` to the file's end: its clock rate (wire MiB/s), payload per wire."""
    with open(path, "rb") as stdin:
        os.lseek(stdin.fileno(), offset, os.SEEK_SET)
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sampler = Sampler(proc.pid, start).start()
        try:
            proc.wait(timeout=300)
        finally:
            samples = sampler.stop().samples
    if proc.returncode != 0 or not samples:
        raise SystemExit(f"warm: a plain transfer exited {proc.returncode}")
    payload = os.path.getsize(path) - offset
    per_wire = payload / (samples[-1].acked - samples[0].acked)
    PLAIN_WALL_S.append(time.perf_counter() - start)
    return rates([s.t for s in samples], [s.acked for s in samples]), per_wire


def timed(argv: list[str], path: str | None) -> float:
    with open(path or os.devnull, "rb") as stdin:
        start = time.perf_counter()
        subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=900)
        return time.perf_counter() - start


def geo(ratios: list[float]) -> str:
    if len(ratios) < 2:
        return "  n/a"
    logs = [math.log(r) for r in ratios]
    centre = statistics.fmean(logs)
    half = t_critical(0.95, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return f"{math.exp(centre):.3f} ({math.exp(centre - half):.3f}-{math.exp(centre + half):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--ciphers", default=DEFAULT_CIPHERS)
    parser.add_argument("--bulk", type=parse_size, default=parse_size("4G"))
    parser.add_argument("--no-bulk", action="store_true")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    ciphers = args.ciphers.split(",")
    cleanup = Cleanup()
    sessions: dict[str, WarmSession] = {}
    figures: dict[tuple[str, str], dict[int, float]] = {}
    try:
        target = PrivateOpenSSH()
        target.placement = placement.choose(not args.no_pin, 1)[0]
        target.start(cleanup)
        kex = target.client_algorithms().default_kex[0]
        workdir = cleanup.make_temp_dir(prefer_shm=True, min_free_bytes=FILE_SIZE + args.bulk + 64 * MIB)
        store = PayloadStore(workdir)
        payload = str(store.path_for(FILE_SIZE))
        bulk = None if args.no_bulk else str(store.path_for(args.bulk))
        print(
            f"placement: {target.placement.text() if target.placement else 'not pinned'}; load {os.getloadavg()[0]:.2f}"
        )

        def command(cipher: str, remote: str) -> list[str]:
            combo = Combination(cipher, mac_for(cipher), kex)
            opts = [*target.client_options(), *algorithm_options(combo), *target.destination()]
            return [*target.client_prefix(), "ssh", *opts, remote]

        setup: dict[str, float] = {}
        sizing: dict[str, float] = {}  # the last rate (wire MiB/s): the plain trial's payload for ~BURST_S + 0.1 s
        omitted: dict[tuple[str, float], list[float]] = {}  # (variant, omit): its rate / the 0.3 s omit's
        for cipher in ciphers:
            sessions[cipher] = WarmSession(command(cipher, READER), payload)
            setup[cipher] = statistics.median(timed(command(cipher, "true"), None) for _ in range(3))
        for rnd in range(args.rounds):
            order = ciphers[rnd % len(ciphers) :] + ciphers[: rnd % len(ciphers)]
            for cipher in order:
                got: dict[str, float | None] = {}
                swept: dict[str, dict[float, float | None]] = {}
                size = min(FILE_SIZE, max(64 * MIB, int(sizing.get(cipher, 500.0) * (BURST_S + 0.1)) * MIB))
                if rnd % 2:  # every other round the plain trial first: neither goes first every time
                    swept["plain"], per_wire = plain(command(cipher, READER), payload, FILE_SIZE - size)
                    swept["warm"] = sessions[cipher].burst()
                else:
                    swept["warm"] = sessions[cipher].burst()
                    swept["plain"], per_wire = plain(command(cipher, READER), payload, FILE_SIZE - size)
                for key in ("warm", "plain"):
                    got[key] = swept[key][steady.OMIT_S]
                    for omit in OMITS[:-1]:  # a shorter omit over the same transfer, against the headline's
                        short, full = swept[key][omit], swept[key][steady.OMIT_S]
                        if short and full:
                            omitted.setdefault((key, omit), []).append(short / full)
                sizing[cipher] = got["plain"] or got["warm"] or 500.0
                got["warm0.1"] = swept["warm"][0.1]
                for key in ("warm", "plain", "warm0.1"):
                    if got[key] is not None:
                        got[key] = got[key] * per_wire  # type: ignore[operator]
                if bulk is not None:
                    wall = timed(command(cipher, READER), bulk)
                    got["bulk"] = args.bulk / MIB / (wall - setup[cipher])
                line = "  ".join(f"{k} {v:6.0f}" if v else f"{k}   none" for k, v in got.items())
                print(f"round {rnd + 1} {cipher:<30} {line}  (load {os.getloadavg()[0]:.2f})", flush=True)
                for key, value in got.items():
                    if value:
                        figures.setdefault((cipher, key), {})[rnd] = value
        print(
            "\nset-up (ssh true, median of 3): "
            + ", ".join(f"{c.split('@')[0]} {s * 1000:.0f} ms" for c, s in setup.items())
        )
        keys = ("plain", "warm", "warm0.1", "bulk")
        print(
            f"medians, payload MiB/s (warm0.1: the warm bursts with a 0.1 s omit)\n{'cipher':<30}",
            *(f"{k:>7}" for k in keys),
        )
        for cipher in ciphers:
            meds = [statistics.median(figures.get((cipher, k), {0: math.nan}).values()) for k in keys]
            print(f"{cipher:<30}", *(f"{m:7.0f}" for m in meds))
        print("paired ratios, geometric mean (95% t interval) per cipher, then pooled:")
        for a, b in (("warm", "plain"), ("warm0.1", "plain"), ("warm", "bulk"), ("warm0.1", "bulk"), ("plain", "bulk")):
            every: list[float] = []
            cells = []
            for cipher in ciphers:
                fa, fb = figures.get((cipher, a), {}), figures.get((cipher, b), {})
                ratios = [fa[r] / fb[r] for r in fa if r in fb]
                every += ratios
                cells.append(f"{cipher.split('@')[0]} {geo(ratios)}")
            if every:
                print(f"  {a + '/' + b:<14} pooled {geo(every)} of {len(every)}")
                print("      " + "; ".join(cells))
        burst_s = [s for session in sessions.values() for s in session.resume_s[1:]]
        print(
            f"cost before the data: plain transfer's wall {statistics.median(PLAIN_WALL_S):.2f} s median (set-up,"
            f" omit, window, end); a warm burst's SIGCONT to 2 MiB moved {statistics.median(burst_s) * 1000:.0f} ms"
        )
        print("a shorter omit over the same transfers, its rate / the 0.3 s omit's (same 0.25 s window length):")
        for (key, omit), ratios in sorted(omitted.items()):
            print(f"  {key:<5} omit {omit:.1f} s: {geo(ratios)} of {len(ratios)}")
    finally:
        for session in sessions.values():
            session.close()
        cleanup.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
