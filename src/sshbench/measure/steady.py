"""The steady-state rate of one transfer from its progress samples (pure; tests/test_steady.py).

A connection's first fraction of a second runs slower than the rest for every cipher (docs/clock.md:
the remote reader starting after ssh has pushed its first channel window, then a ramp while the
pipeline's buffers and the scheduler settle), so a rate over the whole transfer measures the trial's
length as much as the cipher. Like iperf3's `--omit`, the start is left out:

1. The data phase starts where the byte counter moves for good: after the last pause (no growth for
   `PAUSE_S`, or for twice the flow's own gaps where it moves in steps: `pause_s`) while the first channel
   window is still all that has moved, else at the first sample.
2. A fixed `OMIT_S` after that start is left out. Fixed, not detected: on this shared 2-core machine the
   per-50 ms rate swings by 30-50% in the steady part too (other processes), so a detector tuned to find
   the end of the ramp finds those swings instead, and a fixed length is the same for every cipher.
   docs/clock.md has the measured transients it covers and why it is 0.3 s.
3. The steady window runs from there to the last sample before the counter reached its final value, so
   both ends are real readings (no sampling-interval rounding). Its least-squares slope, scaled from wire
   bytes to payload bytes (SSH framing, compression), is the steady rate.

A transfer whose steady window is shorter than `MIN_STEADY_S` or holds under a quarter of its bytes has no steady part: it says so and gives
no rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sshbench.results import NO_STEADY_PART
from sshbench.units import MIB

# 0.3 s, not 0.2: with the client and the server pinned (the default) the ramp runs on past 0.2 s. The clock
# given only the first part of a 4 GiB upload, as long as a default trial's data phase (bench/fidelity.py
# --inside, 4 ciphers, pooled clock / the same transfer timed from outside, 3 runs of 40-80 transfers): 0.2 s
# omitted of 0.45 read 0.913-0.951x; 0.3 of 0.55 1.005x (0.957-1.056); 0.4 of 0.65 1.012-1.041x (the rest of
# the transfer reads ~1.03x: the outside clock has the start-up in it). 512 MiB trials (0.45 s data phase, 0.2
# omitted) read aes128-gcm at 0.89x and aes128-ctr at 0.92x of 4 GiB trials interleaved with them. 0.4 cost the
# default run its 4th and 5th rounds in 57 s (3 runs: the fastest group ordered in 0 of 3); 0.3 kept 4-5.
OMIT_S = 0.3
MIN_STEADY_S = 0.1
MIN_STEADY_SAMPLES = 3
# ... and at least this share of the bytes: a window over a stall at the end of a short transfer is no rate.
MIN_STEADY_FRACTION = 0.25
PAUSE_S = 0.04
STALL_BYTES = 64 * 1024  # less than this moved: no growth
# The end: the counter within this of its final value (SSH's channel close and exit status are < 1 KiB).
END_SLACK_BYTES = 64 * 1024
# A start-up pause only counts while at most this much has moved (OpenSSH's first channel window is 2 MiB;
# Dropbear's -W and AsyncSSH's windows are at most 8 MiB here).
FIRST_WINDOW_MAX_BYTES = 9 * MIB

TOO_SHORT = NO_STEADY_PART
NO_SAMPLES = "no progress samples"


@dataclass(frozen=True)
class SteadyEstimate:
    """What the samples say. `rate_bytes_s` is on the wire (the counter's bytes); `mib_s` in payload bytes."""

    start_s: float | None = None  # where the data phase started (s since the client started)
    window_start_s: float | None = None  # start + omit
    window_end_s: float | None = None
    wire_rate_bytes_s: float | None = None
    mib_s: float | None = None  # payload MiB/s over the steady window
    note: str | None = None  # why there is no rate (TOO_SHORT, NO_SAMPLES)
    # TOO_SHORT: the rate over the second half of the data phase, closer to the steady rate than the whole
    # transfer's (which the start-up drags down 2-3x): enough to size the next trial, never a headline
    late_mib_s: float | None = None

    @property
    def window_s(self) -> float | None:
        if self.window_start_s is None or self.window_end_s is None:
            return None
        return self.window_end_s - self.window_start_s


def _before_tail(counts: Sequence[int], default: int) -> int:
    """The last sample before the counter came within END_SLACK_BYTES of its final value (the channel's close)."""
    final = max(counts)
    return max((i for i, c in enumerate(counts) if c < final - END_SLACK_BYTES), default=default)


def _stall_s(times: Sequence[float], counts: Sequence[int], i: int) -> float:
    """How long the counter stays within STALL_BYTES of its reading at sample `i` (0 when the next sample moved)."""
    j = i
    while j + 1 < len(times) and counts[j + 1] - counts[i] < STALL_BYTES:
        j += 1
    return times[j] - times[i]


def pause_s(times: Sequence[float], counts: Sequence[int]) -> float:
    """How long a stall must last to be the start-up's pause: `PAUSE_S`, or twice the stalls the flow itself makes
    in the second half of the transfer (their 90th percentile) where it moves in steps. Behind `wan24m` the
    counter grows by 128 KiB every 40-60 ms (two 20 ms samples without growth in a row, again and again), so
    every step counted as a pause: the data phase started after the first 9 MiB, and a 4 MiB trial never had a
    steady part (a default run took 204 s). On loopback and on faster links every sample moves: `PAUSE_S`."""
    end = _before_tail(counts, 0)
    middle = (times[0] + times[end]) / 2
    stalls = sorted(_stall_s(times, counts, i) for i in range(end) if times[i] >= middle)
    if not stalls:
        return PAUSE_S
    return max(PAUSE_S, 2 * stalls[min(len(stalls) - 1, int(0.9 * len(stalls)))])


def data_start(times: Sequence[float], counts: Sequence[int]) -> int:
    """Index of the sample where the data phase starts: just after the last pause while no more than a
    first window has moved, else the first sample."""
    base = counts[0]
    start = 0
    i = 0
    n = len(times)
    pause = pause_s(times, counts) if n > 1 else PAUSE_S
    while i < n - 1 and counts[i] - base <= FIRST_WINDOW_MAX_BYTES:
        j = i
        while j + 1 < n and counts[j + 1] - counts[i] < STALL_BYTES:
            j += 1
        if j > i and times[j] - times[i] >= pause and j + 1 < n:
            start = j
        i = j + 1 if j > i else i + 1
    return start


def estimate(
    times: Sequence[float],
    counts: Sequence[int],
    payload_bytes: int,
    omit_s: float = OMIT_S,
    max_window_s: float | None = None,
) -> SteadyEstimate:
    """The steady-state rate from cumulative byte counts sampled at `times` (seconds, increasing). With
    `max_window_s`, the window ends at the last sample within that of its start (calibration.steady_window_cap:
    the same stretch of every trial's connection), once the whole window has passed the checks for a steady
    part."""
    if len(times) < MIN_STEADY_SAMPLES or len(times) != len(counts) or payload_bytes <= 0:
        return SteadyEstimate(note=NO_SAMPLES)
    first = data_start(times, counts)
    final = max(counts)
    end = _before_tail(counts, first)
    wire_payload = final - counts[0]
    start_t = times[first]
    begin = next((i for i in range(first, len(times)) if times[i] >= start_t + omit_s), len(times))
    late_mib_s = None
    middle = next((i for i in range(first, end + 1) if times[i] >= (start_t + times[end]) / 2), end)
    if end > middle and counts[end] > counts[middle] and wire_payload > 0:
        late_mib_s = (counts[end] - counts[middle]) / (times[end] - times[middle]) * payload_bytes / wire_payload / MIB
    if (
        begin >= end
        or end - begin + 1 < MIN_STEADY_SAMPLES
        or times[end] - times[begin] < MIN_STEADY_S
        or wire_payload <= 0
        or counts[end] - counts[begin] < MIN_STEADY_FRACTION * wire_payload
    ):
        return SteadyEstimate(start_s=start_t, note=TOO_SHORT, late_mib_s=late_mib_s)
    if max_window_s is not None:
        within = max(i for i in range(begin, end + 1) if times[i] <= times[begin] + max_window_s)
        end = max(within, begin + MIN_STEADY_SAMPLES - 1)  # (the checks above kept end at least that far)
    # Least-squares slope over every reading of the window, not its two ends: one late wake-up of the
    # sampling thread (~10 ms under load) moved a two-point rate of a 0.5 s window by 2% (a 100 Mbit/s
    # link read 11.67 MiB/s, above the 11.4 it carries).
    xs, ys = times[begin : end + 1], counts[begin : end + 1]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    wire_rate = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread if spread > 0 else 0.0
    if wire_rate <= 0:
        return SteadyEstimate(start_s=start_t, note=TOO_SHORT, late_mib_s=late_mib_s)
    return SteadyEstimate(
        start_s=start_t,
        window_start_s=times[begin],
        window_end_s=times[end],
        wire_rate_bytes_s=wire_rate,
        mib_s=wire_rate * payload_bytes / wire_payload / MIB,
    )
