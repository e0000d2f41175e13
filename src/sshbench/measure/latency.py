"""The engine of `sshbench latency`: sshping's echo test and connect times.

Echo: one interactive session (`ssh -tt`, a pty on the server, as a user's shell has) whose remote
command puts the pty in raw mode without echo and runs `cat`:

    stty raw -echo; printf <ready marker>; exec cat

Raw mode matters twice: a cooked pty would hold every byte until a newline (line discipline), and
its echo would send each byte back a second time before `cat` does. In raw mode `cat`'s read()
returns each byte as it arrives and its write() sends it straight back, once. On the client side
ssh reads our pipe and, with a pty requested, marks the session interactive (TCP_NODELAY, its
interactive IP QoS), so a keystroke goes out in its own packet, as a typist's does.

We write one byte, wait (select on ssh's stdout, bounded by the deadline) until exactly that byte
comes back, and record the round trip in microseconds; then the next byte. Nothing is pipelined:
each RTT is one keystroke's full path, client ssh -> network -> sshd -> pty -> cat -> back.

Connect: the wall time of `ssh ... true` (key exchange, authentication, session, remote shell).
"""

from __future__ import annotations

import contextlib
import os
import select
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

READY = b"SSHBENCH-ECHO-READY"
REMOTE_COMMAND = f"stty raw -echo 2>/dev/null; printf '%s' '{READY.decode()}'; exec cat"
ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789"  # no control characters (raw mode passes them, but a
# server whose stty failed would act on ^C, ^D and friends)
CLOSE_TIMEOUT_S = 3.0


class EchoError(RuntimeError):
    """The echo session could not be started or broke (one line, with ssh's last words)."""


@dataclass
class EchoResult:
    rtts_us: list[float] = field(default_factory=list)  # one per echoed character, in order
    chars: int = 0  # requested
    setup_s: float = 0.0  # from starting ssh to the ready marker (connect + session + stty)
    error: str | None = None  # why the test stopped early (then rtts_us is what was measured before)

    @property
    def echoed(self) -> int:
        return len(self.rtts_us)

    @property
    def ok(self) -> bool:
        return self.error is None and self.echoed == self.chars

    def summary(self) -> dict:
        return summarise_echo(self.rtts_us)


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    if not sorted_values:
        raise ValueError("no values")
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def summarise_echo(rtts: list[float]) -> dict:
    """{median_us, p90_us, p99_us, max_us, n} of per-character round trips in microseconds
    (all None and n 0 for none)."""
    if not rtts:
        return {"median_us": None, "p90_us": None, "p99_us": None, "max_us": None, "n": 0}
    values = sorted(float(v) for v in rtts)
    return {
        "median_us": statistics.median(values),
        "p90_us": _percentile(values, 90),
        "p99_us": _percentile(values, 99),
        "max_us": values[-1],
        "n": len(values),
    }


def echo_argv(ssh_argv: list[str], prefix: list[str] | None = None) -> list[str]:
    """`[prefix] ssh -tt <options> <destination> <remote command>` from `ssh <options> <destination>`
    (`prefix`: a target's client_prefix(), e.g. `ip netns exec NS` for an emulated link)."""
    if not ssh_argv:
        raise ValueError("ssh_argv is empty")
    return [*(prefix or []), ssh_argv[0], "-tt", *ssh_argv[1:], REMOTE_COMMAND]


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _read_until(fd: int, needle: bytes, deadline: float, buffer: bytearray) -> bool:
    """Read from fd into buffer until it contains needle (True) or the deadline or EOF (False)."""
    while needle not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            return False
        chunk = os.read(fd, 4096)
        if not chunk:
            return False
        buffer += chunk
    return True


def measure_echo(
    ssh_argv: list[str],
    chars: int = 1000,
    timeout_s: float = 60.0,
    env: dict[str, str] | None = None,
    prefix: list[str] | None = None,
) -> EchoResult:
    """Echo `chars` single characters one at a time through `ssh -tt ... cat` and time each round
    trip (microseconds). `ssh_argv`: the ssh program, its options and the destination, no command
    (e.g. ["ssh", *target.client_options(), *target.destination()]). `timeout_s` bounds the whole
    test (set-up included); `prefix` goes before ssh (a target's client_prefix()). Raises EchoError when the session never becomes ready; a session that
    breaks later returns what was measured with `error` set."""
    if chars < 1:
        raise ValueError("chars must be at least 1")
    result = EchoResult(chars=chars)
    deadline = time.monotonic() + timeout_s
    stderr_file = tempfile.NamedTemporaryFile(prefix="sshbench-echo-", suffix=".log", delete=False)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            echo_argv(ssh_argv, prefix),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            env=env,
            bufsize=0,
            start_new_session=True,
        )
    except FileNotFoundError:
        stderr_file.close()
        os.unlink(stderr_file.name)
        raise EchoError(f"{ssh_argv[0]} not found") from None
    assert proc.stdin is not None and proc.stdout is not None
    out_fd, in_fd = proc.stdout.fileno(), proc.stdin.fileno()
    try:
        buffer = bytearray()
        if not _read_until(out_fd, READY, deadline, buffer):
            why = "ssh exited" if proc.poll() is not None else f"not ready within {timeout_s:.0f} s"
            raise EchoError(f"echo session did not start ({why}): {_tail(stderr_file.name) or 'no message'}")
        result.setup_s = time.monotonic() - started
        leftover = bytes(buffer[buffer.index(READY) + len(READY) :])
        if leftover:
            raise EchoError(f"unexpected output after the ready marker: {leftover[:40]!r}")
        for i in range(chars):
            byte = ALPHABET[i % len(ALPHABET)].to_bytes(1, "big")
            t0 = time.perf_counter_ns()
            os.write(in_fd, byte)
            got = b""
            while not got:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    result.error = f"timed out after {timeout_s:.0f} s at character {i + 1} of {chars}"
                    return result
                ready, _, _ = select.select([out_fd], [], [], remaining)
                if ready:
                    got = os.read(out_fd, 64)
                    if not got:
                        result.error = (
                            f"ssh closed the session at character {i + 1} of {chars}: "
                            f"{_tail(stderr_file.name) or 'no message'}"
                        )
                        return result
            t1 = time.perf_counter_ns()
            if got != byte:
                result.error = f"character {i + 1}: sent {byte!r}, got {got!r} back (is the pty in raw mode?)"
                return result
            result.rtts_us.append((t1 - t0) / 1000.0)
        return result
    finally:
        _close(proc)
        stderr_file.close()
        with contextlib.suppress(OSError):
            os.unlink(stderr_file.name)


def _close(proc: subprocess.Popen[bytes]) -> None:
    """End the session: the remote `cat` in raw mode never sees an end of file, so stop the client
    (sshd then hangs up the pty, which ends cat), bounded."""
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=CLOSE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=CLOSE_TIMEOUT_S)
    if proc.stdout is not None:
        proc.stdout.close()


def measure_connect(
    ssh_argv: list[str], n: int = 10, timeout_s: float = 30.0, env: dict[str, str] | None = None
) -> list[float]:
    """Wall times, in seconds, of `n` runs of `ssh ... true` (connect, key exchange, authentication,
    session, remote shell), one after the other. Raises EchoError when one fails or exceeds timeout_s."""
    times = []
    for i in range(n):
        started = time.monotonic()
        try:
            done = subprocess.run(
                [*ssh_argv, "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env=env,
                errors="replace",
            )
        except subprocess.TimeoutExpired:
            raise EchoError(f"connection {i + 1} of {n} took over {timeout_s:.0f} s") from None
        elapsed = time.monotonic() - started
        if done.returncode != 0:
            last = done.stderr.strip().splitlines()[-1:] or ["no message"]
            raise EchoError(f"connection {i + 1} of {n} failed ({done.returncode}): {last[0]}")
        times.append(elapsed)
    return times
