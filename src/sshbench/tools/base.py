"""The one small interface every transfer tool implements (pipe, scp, scp-legacy, sftp, rsync)."""

from __future__ import annotations

import re
import shlex
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass
class SinkReport:
    """What the server side says about a trial (all None where it could not tell)."""

    received_bytes: int | None = None
    reader_s: float | None = None  # the server-side reader's own clock: the data phase
    server_cpu_s: float | None = None  # sshd session process, user+sys, during the data phase
    sink_cpu_s: float | None = None  # the reader process itself
    tcp_bytes_received: int | None = None  # the server socket's TCP payload bytes received (kernel's count)
    tcp_bytes_before_reader: int | None = None  # ... of which had arrived before the reader's clock started


@dataclass
class TrialFiles:
    """Where one trial's data comes from and goes to. Paths on the server are strings (it may be
    another machine); for a handshake trial the sources are empty files."""

    local_source: str  # up: the payload file
    remote_source: str | None  # down: the payload on the server
    remote_sink: str  # up: "/dev/null" or a file on the server
    local_sink: str  # down: "/dev/null" or a local file


@dataclass
class Invocation:
    argv: list[str]
    stdin: str = "/dev/null"  # the file fed to the client's stdin
    stdout: str | None = None  # where the client's stdout goes (None: captured for parse_output)


class TransferTool(ABC):
    """A way of moving a file over ssh. Every tool passes the same ssh options (so the algorithms are
    pinned and `-v` shows what was negotiated); they differ in how the options reach ssh."""

    name: ClassVar[str]
    program: ClassVar[str]  # the client binary it runs
    #: True when the server side reports its own clock, byte count and CPU (the pipe's dd script)
    reports_server_side: ClassVar[bool] = False
    #: True when it cannot write to /dev/null (rsync renames a temp file into place)
    needs_file_sink: ClassVar[bool] = False

    def missing(self) -> str | None:
        """Why this tool cannot run here (one line with the fix), or None."""
        import shutil

        if shutil.which(self.program) is None:
            return f"{self.program} not found; install it: apt-get install {self.package}"
        return None

    package: ClassVar[str] = "openssh-client"

    @abstractmethod
    def invocation(self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles,
                   workdir: Path) -> Invocation:
        """The client command for one trial. `ssh_options` are -F/-i/-o options (never -p/-l)."""

    def parse_output(self, stdout: str, stderr: str) -> SinkReport:
        """The server side's report, where the tool has one."""
        return SinkReport()


# --- helpers for tools whose server side is a small POSIX shell script ---------------------------

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


def stat_snapshot_script(reader: str, report_fd: int = 1) -> str:
    """Around `reader`: snapshot the sshd session process's /proc stat, then the shell's own (whose
    cutime/cstime is the reader's CPU), and the clock tick; print them marked. Exit with the reader's status."""
    # schedstat's first field is on-CPU nanoseconds: 10 ms stat ticks are too coarse for short trials.
    return (
        f's=/proc/$PPID/stat; n=/proc/$PPID/schedstat; a=-; [ -r "$s" ] && read -r a < "$s"; '
        f'x=-; [ -r "$n" ] && read -r x < "$n"; '
        # What already arrived before the reader's clock starts (while the login shell started): the
        # reader did not time it, so the trial scales its clock by total / (total - this).
        f'{_SS_SNAPSHOT.format(var="t0")}'
        # the shell's own counts after ss (a child): cutime/cstime deltas are then the reader's alone
        f'd=-; [ -r /proc/$$/stat ] && read -r d < /proc/$$/stat; '
        f"{reader}; rc=$?; "
        f'y=-; [ -r "$n" ] && read -r y < "$n"; '
        f'b=-; [ -r "$s" ] && read -r b < "$s"; c=-; [ -r /proc/$$/stat ] && read -r c < /proc/$$/stat; '
        # The kernel's own count of TCP payload bytes this connection's server socket received (ss reads
        # the socket's TCP_INFO), found by the ports in $SSH_CONNECTION: bytes on the wire, not ssh's word.
        f'{_SS_SNAPSHOT.format(var="t")}'
        f'{{ echo "{MARK}-A $a"; echo "{MARK}-B $b"; echo "{MARK}-C $c"; echo "{MARK}-C0 $d"; '
        f'echo "{MARK}-NA $x"; echo "{MARK}-NB $y"; echo "{MARK}-HZ $(getconf CLK_TCK 2>/dev/null || echo 100)"; '
        f'echo "{MARK}-TCP $t"; echo "{MARK}-TCP0 $t0"; }} >&{report_fd}; exit $rc'
    )


def _stat_fields(line: str | None) -> list[str] | None:
    """Fields after the `(comm)` of a /proc/PID/stat line, so index 0 is field 3 (state)."""
    if not line or ")" not in line:
        return None
    fields = line.rsplit(")", 1)[1].split()
    return fields if len(fields) >= 15 else None


_TCP_RECEIVED = re.compile(r"\bbytes_received:(\d+)")


def _schedstat_ns(line: str | None) -> int | None:
    """First field of /proc/PID/schedstat: nanoseconds the task spent on a CPU."""
    if not line:
        return None
    first = line.split()[0] if line.split() else ""
    return int(first) if first.isdigit() else None


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
