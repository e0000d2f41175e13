"""The server side of a trial: the POSIX shell script the pipe tool runs around its reader (`dd`), and the
parser of what it prints (the reader's clock and byte count, the sshd session's CPU, the socket's bytes)."""

from __future__ import annotations

import re
import shlex

from sshbench.tools.base import SinkReport

MARK = "SSHBENCH"

# `dd` prints its own elapsed time; GNU, BSD and busybox say it differently.
_DD_GNU = re.compile(r"^(\d+) bytes .*copied, ([\d.]+(?:e-?\d+)?) s", re.M)
_DD_BSD = re.compile(r"^(\d+) bytes transferred in ([\d.]+) secs", re.M)
_DD_BUSYBOX = re.compile(r"^(\d+) bytes \([^)]*\) copied, ([\d.]+) seconds", re.M)


def wrap_posix(script: str) -> str:
    """Run `script` with sh whatever the login shell is. `exec` keeps the sshd session process the
    script's parent, so $PPID is the process whose CPU is the server's cost."""
    return "exec sh -c " + shlex.quote(script)


# The server socket's TCP_INFO line (`ss -ti`), found by the ports in $SSH_CONNECTION, into $var.
_SS_SNAPSHOT = (
    '{var}=-; if [ -n "${{SSH_CONNECTION:-}}" ] && command -v ss >/dev/null 2>&1; then set -- $SSH_CONNECTION; '
    '{var}=$(ss -tinH state established "( sport = :$4 and dport = :$2 )" 2>/dev/null | tr "\\n\\t" "  "); fi; '
)


def gate_script(arrive: str, go: str, stream: int) -> str:
    """The start barrier (`run -P N`), run before anything else of the script: the session is open and the
    login shell has started, so all that is left is the data phase. Hold the stream's `go` FIFO open
    (read-write: the open never blocks), say so on `arrive`, wait for the release (one line on `go`).
    A FIFO that is gone (the run ended) makes `exec` fail and the script exit: nothing waits forever."""
    return f"exec 3<>{shlex.quote(go)} && echo {stream} >{shlex.quote(arrive)} && read -r g <&3; exec 3<&-; "


def stat_snapshot_script(reader: str, report_fd: int = 1) -> str:
    """Around `reader`: snapshot the sshd session process's /proc stat, then the shell's own (whose
    cutime/cstime is the reader's CPU), and the clock tick; print them marked. Exit with the reader's status."""
    # schedstat's first field is on-CPU nanoseconds: 10 ms stat ticks are too coarse for short trials.
    return (
        f's=/proc/$PPID/stat; n=/proc/$PPID/schedstat; a=-; [ -r "$s" ] && read -r a < "$s"; '
        f'x=-; [ -r "$n" ] && read -r x < "$n"; '
        # What already arrived before the reader's clock starts (while the login shell started): the
        # reader did not time it, so the trial scales its clock by total / (total - this).
        f"{_SS_SNAPSHOT.format(var='t0')}"
        # the shell's own counts after ss (a child): cutime/cstime deltas are then the reader's alone
        f"d=-; [ -r /proc/$$/stat ] && read -r d < /proc/$$/stat; "
        f"{reader}; rc=$?; "
        f'y=-; [ -r "$n" ] && read -r y < "$n"; b=-; [ -r "$s" ] && read -r b < "$s"; '
        # The reader's end on the server's wall clock: parallel streams (sshbench.measure.parallel) line up on it.
        f"e=$(date +%s.%N 2>/dev/null); "
        # The kernel's own count of TCP payload bytes this connection's server socket received (ss reads
        # the socket's TCP_INFO), found by the ports in $SSH_CONNECTION: bytes on the wire, not ssh's word.
        # Downloads: its bytes_acked, what the client had by then; f: when that was read (after e).
        f"{_SS_SNAPSHOT.format(var='t')}"
        f"f=$(date +%s.%N 2>/dev/null); "
        f"c=-; [ -r /proc/$$/stat ] && read -r c < /proc/$$/stat; "
        f'{{ echo "{MARK}-A $a"; echo "{MARK}-B $b"; echo "{MARK}-C $c"; echo "{MARK}-C0 $d"; '
        f'echo "{MARK}-NA $x"; echo "{MARK}-NB $y"; echo "{MARK}-HZ $(getconf CLK_TCK 2>/dev/null || echo 100)"; '
        f'echo "{MARK}-TCP $t"; echo "{MARK}-TCP0 $t0"; echo "{MARK}-END $e"; echo "{MARK}-TCPAT $f"; }} '
        f">&{report_fd}; exit $rc"
    )


def _stat_fields(line: str | None) -> list[str] | None:
    """Fields after the `(comm)` of a /proc/PID/stat line, so index 0 is field 3 (state)."""
    if not line or ")" not in line:
        return None
    fields = line.rsplit(")", 1)[1].split()
    return fields if len(fields) >= 15 else None


_TCP_RECEIVED = re.compile(r"\bbytes_received:(\d+)")
_TCP_ACKED = re.compile(r"\bbytes_acked:(\d+)")


def _schedstat_ns(line: str | None) -> int | None:
    """First field of /proc/PID/schedstat: nanoseconds the task spent on a CPU."""
    if not line:
        return None
    first = line.split()[0] if line.split() else ""
    return int(first) if first.isdigit() else None


def _unix_time(text: str | None) -> float | None:
    """GNU date's %s.%N; another date prints something else (no time: client clocks then)."""
    try:
        value = float(text or "")
    except ValueError:
        return None
    return value if 0 < value < float("inf") else None


def parse_marked(stdout: str) -> SinkReport:
    marks: dict[str, str] = {}
    for line in stdout.splitlines():
        if line.startswith(MARK + "-"):
            key, _, value = line.partition(" ")
            marks[key[len(MARK) + 1 :]] = value.strip()
    report = SinkReport()
    for pattern in (_DD_GNU, _DD_BUSYBOX, _DD_BSD):
        found = pattern.findall(stdout)
        if found:
            report.received_bytes = int(found[-1][0])
            try:
                report.reader_s = float(found[-1][1])
            except ValueError:
                report.reader_s = None
            break
    try:
        hz = float(marks.get("HZ") or 100) or 100.0
    except ValueError:
        hz = 100.0
    before, after, shell, shell_before = (_stat_fields(marks.get(k)) for k in ("A", "B", "C", "C0"))
    sched_before, sched_after = (_schedstat_ns(marks.get(k)) for k in ("NA", "NB"))
    tcp, tcp0 = (_TCP_RECEIVED.search(marks.get(k) or "") for k in ("TCP", "TCP0"))
    report.tcp_bytes_received = int(tcp.group(1)) if tcp else None
    report.tcp_bytes_before_reader = int(tcp0.group(1)) if tcp0 else None
    acked, acked0 = (_TCP_ACKED.search(marks.get(k) or "") for k in ("TCP", "TCP0"))
    if acked and acked0:
        report.tcp_bytes_acked_after_reader = int(acked.group(1))
        report.tcp_bytes_acked_before_reader = int(acked0.group(1))
    report.reader_ended_at = _unix_time(marks.get("END"))
    read_at = _unix_time(marks.get("TCPAT"))
    if read_at is not None and report.reader_ended_at is not None and read_at >= report.reader_ended_at:
        report.tcp_read_lag_s = read_at - report.reader_ended_at
    try:
        if sched_before is not None and sched_after is not None and sched_after >= sched_before:
            report.server_cpu_s = (sched_after - sched_before) / 1e9
        elif before and after:
            # utime, stime are fields 14 and 15 -> indexes 11 and 12
            ticks = int(after[11]) + int(after[12]) - int(before[11]) - int(before[12])
            report.server_cpu_s = max(ticks, 0) / hz
        if shell:
            # cutime, cstime (fields 16, 17): the reader, a waited-for child of this shell. `exec sh`
            # inherits the login shell's counts (its rc files' children), hence the difference.
            base = (int(shell_before[13]) + int(shell_before[14])) if shell_before else 0
            report.sink_cpu_s = max(int(shell[13]) + int(shell[14]) - base, 0) / hz
    except (ValueError, IndexError):
        pass
    return report
