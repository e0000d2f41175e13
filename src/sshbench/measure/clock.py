"""Every rule that decides a trial's data phase (`Trial.data_s`, `Trial.data_clock`), in one place.

The headline clock is `steady-state` (docs/clock.md): the client connection's TCP byte counters sampled
while the trial runs (sshbench.measure.progress), the start-up left out (sshbench.measure.steady); `data_s` is then the
payload over that rate, and the data phase one of the two earlier clocks measured (start-up included)
is kept as `whole_data_s` / `whole_data_clock`. A trial without a steady part keeps the earlier clock
and says why (`steady_note`); summaries do not mix it with steady trials.

The earlier clocks (docs/measurement.md, "How throughput is measured"):
- `server-reader`: the server-side reader's own elapsed time (the pipe tool's `dd`), scaled by the bytes
  that arrived before it started (kernel count).
- `wall-minus-handshake`: the trial's wall time minus the median wall time of a same-shape connection
  that moves no data. The data clock of tools without a server-side report (scp, sftp, rsync), and the
  cross-check of the reader everywhere else.
"""

from __future__ import annotations

import statistics

from sshbench.links import profile_named
from sshbench.measure.steady import SteadyEstimate
from sshbench.model.handshake_summary import handshake_costs
from sshbench.results import STEADY_STATE, Trial, TrialKind
from sshbench.units import MIB

SERVER_READER = "server-reader"
WALL_MINUS_HANDSHAKE = "wall-minus-handshake"

# Below this data phase, handshake jitter (tens of ms) swamps the wall-minus-handshake clock.
AGREEMENT_MIN_DATA_S = 0.25


def reader_data_phase(reader_s: float, total_bytes: int | None, bytes_before: int | None) -> float:
    """The data phase from the server-side reader's clock. The client starts sending as soon as the
    session opens, while the remote login shell is still starting: what arrived before the reader's
    clock started (one channel window at most: ~0.4% of 512 MiB on loopback, but ~7% of a short
    transfer on a 24 Mbit/s link) moved at the same rate, so scale by total / (total - before).

    Only when the reader timed at least half of the bytes (reader_timed_too_little): a 2 MiB upload is one channel
    window, which can arrive whole while the remote shell starts, and a reader that started with 95% of it
    buffered read it in ~50 ms, which the factor (x20) made a 0.94 s data phase in a 0.25 s trial. Such a trial
    keeps its reader's own time (a buffer's read, said by its missing steady part; under --server-cpu it gives way
    to wall minus handshake)."""
    if total_bytes and bytes_before is not None and 0 <= 2 * bytes_before <= total_bytes:
        return reader_s * total_bytes / (total_bytes - bytes_before)
    return reader_s


def download_tail_bytes(
    reader_s: float, wire_bytes: int | None, acked_before: int | None, acked_after: int | None, lag_s: float | None
) -> int | None:
    """Downloads: the bytes the client had not yet acknowledged when the server's reader ended. The
    reader (dd) stops as its last byte enters sshd, while up to one channel window (2 MiB) is still in
    sshd, the socket and the link's queue: on a 1 Gbit/s veth a 64 MiB download read 114.5-116.3
    MiB/s, above what the link carries (114.0). `wire_bytes`: the SSH bytes the client received over
    the connection (ssh -v); `acked_before` / `acked_after`: the server socket's bytes_acked when the
    reader started and `lag_s` after it ended (the snapshot's own delay, taken off at the rate of the
    bytes acked meanwhile). None where a figure is missing or inconsistent."""
    if None in (wire_bytes, acked_before, acked_after, lag_s) or reader_s <= 0:
        return None
    assert wire_bytes is not None and acked_before is not None and acked_after is not None and lag_s is not None
    total, acked = wire_bytes - acked_before, acked_after - acked_before
    if total <= 0 or acked <= 0:
        return None
    # acked grew at the same rate during the reader's time and the lag: the part acked by its end
    at_end = acked * reader_s / (reader_s + lag_s)
    tail = total - at_end
    return round(tail) if 0 <= tail < total / 2 else None


def set_reader_clock(trial: Trial, reader_s: float) -> None:
    """A transfer whose server side timed its reader: that clock, scaled (reader_data_phase) by what
    arrived before it started (uploads) or was still to reach the client when it ended (downloads)."""
    trial.reader_s = reader_s
    if trial.tcp_bytes_unacked_at_clock_end is not None and trial.received_bytes:
        total = trial.received_bytes
        trial.data_s = reader_s * total / (total - trial.tcp_bytes_unacked_at_clock_end)
    else:
        trial.data_s = reader_data_phase(reader_s, trial.tcp_wire_bytes, trial.tcp_bytes_before_clock)
    trial.data_clock = SERVER_READER


# Trial.steady_note where the steady-state clock is not used: a server under a CPU quota (--server-cpu, and
# --why's throttles) takes data in bursts of its CFS period while the kernel keeps acknowledging into the socket
# buffer, so the connection's counters read the buffer filling, not sshd: at 0.25 -> 0.125 core a why run read
# the throttled trials faster than the unthrottled ones (69-85 vs 36-101 MiB/s). The server's reader times what
# sshd delivered (the clock --server-cpu was tuned on: clock.reader_timed_too_little).
QUOTA_NOTE = "not used: a CPU quota on the server (timed by its reader)"


def apply_steady(trial: Trial, estimate: SteadyEstimate) -> None:
    """Make the steady-state rate the trial's clock where the samples had a steady part; keep the earlier
    clock's data phase (start-up included; None until cross_check for tools without a reader) beside it."""
    trial.steady_note = estimate.note
    trial.late_mib_s = estimate.late_mib_s
    if estimate.mib_s is None or trial.kind != TrialKind.TRANSFER or trial.payload_bytes <= 0:
        return
    trial.steady_window_s = estimate.window_s
    trial.whole_data_s, trial.whole_data_clock = trial.data_s, trial.data_clock
    trial.data_s = trial.payload_bytes / MIB / estimate.mib_s
    trial.data_clock = STEADY_STATE


def window_cpu_s(times: list[float], cpu_ns: list[int | None], estimate: SteadyEstimate) -> float | None:
    """The client's CPU seconds over the steady window: its on-CPU readings (`cpu_ns`, taken with the samples
    at `times`) at the window's two ends, which are samples; None without a window or a reading at either end."""
    if estimate.mib_s is None or estimate.window_start_s is None or estimate.window_end_s is None:
        return None
    at = dict(zip(times, cpu_ns))
    begin, end = at.get(estimate.window_start_s), at.get(estimate.window_end_s)
    if begin is None or end is None or end < begin:
        return None
    return (end - begin) / 1e9


def reader_timed_too_little(trial: Trial) -> bool:
    """The reader's clock started after more than half of the bytes had arrived, so its scaling
    (reader_data_phase) rests on the few it timed. Under a CPU quota on the server (--server-cpu) that
    is the rule for small payloads, not a rare case: the remote shell's start-up takes ~1 s at 0.1 core
    while sshd takes in a whole channel window (2 MiB); a 2 MiB 3des-cbc upload read 1.6 ms."""
    total, before = trial.tcp_wire_bytes, trial.tcp_bytes_before_clock
    return bool(trial.data_clock == SERVER_READER and total and before is not None and 2 * before > total)


def provisional_wall_clock(trial: Trial, trials_so_far: list[Trial], slow_server: bool = False) -> None:
    """No server-side clock (scp, sftp, rsync): wall minus the same-shape handshake measured so far, so a
    trial has a rate as soon as it ends; cross_check() recomputes it from the final medians.
    `slow_server` (a CPU quota on the server): the same for a reader that timed too little of the
    payload (reader_timed_too_little), so that calibration sizes from a real rate."""
    if slow_server and trial.valid and reader_timed_too_little(trial):
        trial.data_s, trial.data_clock = None, None
    if trial.data_s is not None or not trial.valid or trial.wall_s is None:
        return
    wall, _, _ = handshake_costs(trials_so_far).get(trial.setup_shape, (None, None, None))
    if wall is not None and trial.wall_s > wall:
        trial.data_s, trial.data_clock = trial.wall_s - wall, WALL_MINUS_HANDSHAKE


def cross_check(trials: list[Trial], slow_server: bool = False) -> None:
    """At the end of a run: wall - (median wall of a no-data connection of the same shape) for every
    transfer, the second data-phase clock, and the data clock itself for tools whose server side has none.
    `slow_server`: a CPU quota on the server (--server-cpu); a reader that timed under half of the
    payload gives way to wall minus handshake (reader_timed_too_little)."""
    costs = handshake_costs(trials)
    for t in trials:
        if t.kind != TrialKind.TRANSFER or t.wall_s is None or t.warm_burst is not None:
            continue  # a warm burst (sshbench.measure.warm) has no set-up in its wall time: only its steady clock
        base = costs.get(t.setup_shape, (None, None, None))[0]  # the kex it connected with
        if base is None:
            continue
        t.wall_minus_handshake_s = max(t.wall_s - base, 0.0)
        if t.data_clock == STEADY_STATE:
            # the rate is the steady clock's; the whole data phase (for the start-up figure) is the earlier
            # clock's, by the same rules as below
            reader = t.whole_data_clock == SERVER_READER and t.whole_data_s
            if not reader or (slow_link(t.combination.link) and t.wall_minus_handshake_s > (t.whole_data_s or 0)):
                t.whole_data_s, t.whole_data_clock = t.wall_minus_handshake_s, WALL_MINUS_HANDSHAKE
            continue
        if slow_server and t.valid and reader_timed_too_little(t):
            if t.wall_minus_handshake_s > 0:
                t.data_s, t.data_clock = t.wall_minus_handshake_s, WALL_MINUS_HANDSHAKE
            else:
                t.data_s, t.data_clock = None, None
            continue
        if t.data_clock == SERVER_READER and t.valid and t.data_s and slow_link(t.combination.link):
            # On a shaped or delayed link the server-side reader misses what arrived before it started
            # (the remote shell's start-up at link rate, up to one channel window): it under-reads the
            # data phase, never over-reads it. The longer of the two clocks is the data phase, so
            # that handshake jitter cannot make a trial faster than the reader allows.
            if t.wall_minus_handshake_s > t.data_s:
                t.data_s, t.data_clock = t.wall_minus_handshake_s, WALL_MINUS_HANDSHAKE
            continue
        if t.data_clock != SERVER_READER and t.valid:
            if t.wall_minus_handshake_s > 0:
                t.data_s, t.data_clock = t.wall_minus_handshake_s, WALL_MINUS_HANDSHAKE
            else:
                t.data_s, t.data_clock = None, None


def slow_link(name: str) -> bool:
    """An emulated link with a rate or a delay (sshbench.links), where the reader's own clock under-reads."""
    profile = profile_named(name)
    return profile is not None and (profile.rate_bit_s is not None or profile.delay_ms > 0)


def clock_agreement(trials: list[Trial]) -> float | None:
    """Median of data_s / wall_minus_handshake_s over valid measured transfers long enough to compare:
    how well the two clocks agree (None when no trial qualifies)."""
    # Not on shaped or delayed links: there data flows while the remote shell starts, which the same-shape
    # handshake also contains, so wall minus handshake under-reads by design (the reader's clock, scaled
    # by the bytes that arrived before it started, does not).
    # Steady-state trials: their whole data phase is the reader's (the clock compared here).
    ratios = [
        whole / t.wall_minus_handshake_s
        for t in trials
        if t.kind == TrialKind.TRANSFER
        and t.valid
        and not t.warmup
        and (t.whole_data_clock if t.data_clock == STEADY_STATE else t.data_clock) == SERVER_READER
        and (whole := t.whole_data_s if t.data_clock == STEADY_STATE else t.data_s)
        and whole >= AGREEMENT_MIN_DATA_S
        and t.wall_minus_handshake_s
        and not slow_link(t.combination.link)
        # -P N: wall minus an N-stream handshake is no clock for staggered streams (sshbench.measure.streams)
        and t.combination.streams == 1
    ]
    return statistics.median(ratios) if ratios else None
