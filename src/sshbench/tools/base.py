"""The one small interface every transfer tool implements (ssh pipe now; scp, sftp, rsync later)."""

from __future__ import annotations

import re
import shlex
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar


@dataclass
class SinkReport:
    """What the server side says about a trial (all None where it could not tell)."""

    received_bytes: int | None = None
    reader_s: float | None = None  # the server-side reader's own clock: the data phase
    server_cpu_s: float | None = None  # sshd session process, user+sys, during the data phase
    sink_cpu_s: float | None = None  # the reader process itself


class TransferTool(ABC):
    name: ClassVar[str]

    @abstractmethod
    def remote_command(self) -> str:
        """The command the server runs for an upload trial (its stdin is the payload)."""

    @abstractmethod
    def parse_output(self, stdout: str) -> SinkReport:
        """Read the server side's report from what the remote command printed."""


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


def stat_snapshot_script(reader: str) -> str:
    """Around `reader`: snapshot the sshd session process's /proc stat, then the shell's own (whose
    cutime/cstime is the reader's CPU), and the clock tick; print them marked. Exit with the reader's status."""
    return (
        f's=/proc/$PPID/stat; a=-; [ -r "$s" ] && read -r a < "$s"; '
        f"{reader}; rc=$?; "
        f'b=-; [ -r "$s" ] && read -r b < "$s"; c=-; [ -r /proc/$$/stat ] && read -r c < /proc/$$/stat; '
        f'echo "{MARK}-A $a"; echo "{MARK}-B $b"; echo "{MARK}-C $c"; '
        f'echo "{MARK}-HZ $(getconf CLK_TCK 2>/dev/null || echo 100)"; exit $rc'
    )


def _stat_fields(line: str | None) -> list[str] | None:
    """Fields after the `(comm)` of a /proc/PID/stat line, so index 0 is field 3 (state)."""
    if not line or ")" not in line:
        return None
    fields = line.rsplit(")", 1)[1].split()
    return fields if len(fields) >= 15 else None


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
    before, after, shell = (_stat_fields(marks.get(k)) for k in ("A", "B", "C"))
    try:
        if before and after:
            # utime, stime are fields 14 and 15 -> indexes 11 and 12
            ticks = int(after[11]) + int(after[12]) - int(before[11]) - int(before[12])
            report.server_cpu_s = max(ticks, 0) / hz
        if shell:
            # cutime, cstime (fields 16, 17): the reader, a waited-for child of this shell
            report.sink_cpu_s = (int(shell[13]) + int(shell[14])) / hz
    except (ValueError, IndexError):
        pass
    return report
