"""Whether a trial's clock spans a pause: of sshbench (SIGSTOP/SIGCONT, a shell's Ctrl-Z and `fg`), of the machine
(a laptop's lid: suspended), or of the system clock (stepped by NTP or by hand). Such a trial's figures do not describe
the transfer, in either direction: sshbench stopped for 5 s in the middle of a 1 GiB chacha20-poly1305 upload recorded
it valid at 1049 MiB/s beside 403 and 399 (its ssh, in a session of its own, went on while the sampler that times it
did not), so it is marked invalid and measured again (docs/reliability.md).

Four signs, each cheap and read outside the timed part: a SIGCONT delivered to this process (a handler counts them);
CLOCK_BOOTTIME running ahead of CLOCK_MONOTONIC (the second does not count a suspended machine); CLOCK_REALTIME moving
apart from CLOCK_MONOTONIC (a step of the wall clock; NTP's slewing is a few ms a minute); and a gap between two of the
progress sampler's readings far longer than its interval (a paused process, or a VM whose host stopped it).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

# Every reason starts with this: the runner measures such a trial again (measure/rounds.paused_again).
PAUSED = "paused during the trial"
# A gap between two progress samples (taken every 20 ms) longer than this, 50 intervals, is no scheduling delay of the
# sampler's thread (whose wait is its only sleep) but a process that was not running.
SAMPLE_GAP_S = 1.0
# The machine's suspend and the wall clock's step: more than this apart from the monotonic clock over one trial.
CLOCK_SLACK_S = 0.5


class _Continued:
    """SIGCONTs received by this process since the handler was installed (signals arrive in the main thread)."""

    count = 0
    installed = False


def _on_sigcont(_signum: int, _frame: object) -> None:
    _Continued.count += 1


def watch_continues() -> None:
    """Count SIGCONTs from now on (the default action, continuing, still happens). Only from the main thread; a
    child process gets the default disposition back at exec."""
    if not _Continued.installed and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGCONT, _on_sigcont)
        _Continued.installed = True


@dataclass(frozen=True)
class PauseWatch:
    """The clocks and the SIGCONT count at a trial's start; `reason` compares them with the end."""

    monotonic: float
    boottime: float
    realtime: float
    continued: int

    @classmethod
    def start(cls) -> PauseWatch:
        return cls(time.monotonic(), time.clock_gettime(time.CLOCK_BOOTTIME), time.time(), _Continued.count)

    def reason(self, sample_times: Sequence[float] = ()) -> str | None:
        """Why the trial's clock spans a pause (a reason starting with PAUSED), or None. `sample_times`: the progress
        sampler's readings (seconds), in order."""
        elapsed = time.monotonic() - self.monotonic
        if _Continued.count != self.continued:
            return f"{PAUSED}: sshbench was stopped and continued (SIGSTOP/SIGCONT)"
        suspended = time.clock_gettime(time.CLOCK_BOOTTIME) - self.boottime - elapsed
        if suspended > CLOCK_SLACK_S:
            return f"{PAUSED}: the machine was suspended for {suspended:.1f} s"
        stepped = time.time() - self.realtime - elapsed
        if abs(stepped) > CLOCK_SLACK_S:
            return f"{PAUSED}: the system clock stepped by {stepped:+.1f} s"
        gap = max((b - a for a, b in zip(sample_times, sample_times[1:])), default=0.0)
        if gap > SAMPLE_GAP_S:
            return f"{PAUSED}: its progress samples stopped for {gap:.1f} s (sshbench was not running)"
        return None


def paused(reason: str | None) -> bool:
    """A trial made invalid by a pause (PauseWatch.reason): measured again, never ranked."""
    return bool(reason and reason.startswith(PAUSED))
