"""The one small interface every transfer tool implements (pipe, scp, scp-legacy, sftp, rsync)."""

from __future__ import annotations

import shutil
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
    reader_ended_at: float | None = None  # the server's wall clock (unix s) when the reader ended
    # Downloads: the server socket's bytes the client had acknowledged when the reader started, and at
    # the snapshot read tcp_read_lag_s after it ended (what was still on its way is the data phase's tail).
    tcp_bytes_acked_before_reader: int | None = None
    tcp_bytes_acked_after_reader: int | None = None
    tcp_read_lag_s: float | None = None


@dataclass
class GateFiles:
    """One stream's place at the start barrier (`run -P N`, sshbench.measure.start_gate): FIFOs on the server."""

    arrive: str  # the stream's remote script writes its number here once it is about to move data
    go: str  # ... then waits for one line here (the release)
    stream: int  # 1-based


@dataclass
class TrialFiles:
    """Where one trial's data comes from and goes to. Paths on the server are strings (it may be
    another machine); for a handshake trial the sources are empty files."""

    local_source: str  # up: the payload file
    remote_source: str | None  # down: the payload on the server
    remote_sink: str  # up: "/dev/null" or a file on the server
    local_sink: str  # down: "/dev/null" or a local file
    streams: int = 1  # a tool that splits one file itself (splits_streams): its byte ranges / connections
    gate: GateFiles | None = None  # -P N: where this stream waits before its data phase (tools with start_gate)
    # up, tools with source_on_stdin: where in local_source the payload starts (the tail of a bigger payload file)
    local_source_offset: int = 0


@dataclass
class Invocation:
    argv: list[str]
    stdin: str = "/dev/null"  # the file fed to the client's stdin
    stdin_offset: int = 0  # where in that file the client's reads start (TrialFiles.local_source_offset)
    stdout: str | None = None  # where the client's stdout goes (None: captured for parse_output)


class TransferTool(ABC):
    """A way of moving a file over ssh. Every tool passes the same ssh options (so the algorithms are
    pinned and `-v` shows what was negotiated); they differ in how the options reach ssh."""

    name: ClassVar[str]
    program: ClassVar[str]  # the client binary it runs
    #: True when the server side reports its own clock, byte count and CPU (the pipe's dd script)
    reports_server_side: ClassVar[bool] = False
    #: True when its client reads an upload's payload from its stdin (Invocation.stdin, until EOF): it can start
    #: at an offset of a bigger payload file (TrialFiles.local_source_offset), and no size needs a file of its own
    source_on_stdin: ClassVar[bool] = False
    #: True when it cannot write to /dev/null (rsync renames a temp file into place)
    needs_file_sink: ClassVar[bool] = False
    #: True when it moves one file over `TrialFiles.streams` connections itself (split, rclone, lftp); other
    #: tools run -P N as N copies of themselves (sshbench.measure.parallel)
    splits_streams: ClassVar[bool] = False
    #: True when its server-side script can wait at the start barrier of `-P N` (sshbench.measure.start_gate) just
    #: before its data phase: the pipe's, which also times that phase
    start_gate: ClassVar[bool] = False
    #: the directions in which it moves one file over several connections (pget and rclone: downloads)
    stream_directions: ClassVar[tuple[str, ...]] = ("up", "down")
    #: a tool with an SSH client of its own (rclone: Go's): its rows are that client's, ranked on their own,
    #: and no `ssh -v` shows what it negotiated
    client_name: ClassVar[str | None] = None
    #: False when its SSH client cannot compress (rclone: Go's has no zlib): its --compression rows are left out
    compresses: ClassVar[bool] = True

    @property
    def pins(self) -> bool:
        """Whether the requested cipher/MAC/kex reach its SSH client (else its rows are "unpinned")."""
        return True

    def missing(self) -> str | None:
        """Why this tool cannot run here (one line with the fix), or None."""

        if shutil.which(self.program) is None:
            return f"{self.program} not found; install it: apt-get install {self.package}"
        return None

    package: ClassVar[str] = "openssh-client"

    @abstractmethod
    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        """The client command for one trial. `ssh_options` are -F/-i/-o options (never -p/-l)."""

    def parse_output(self, stdout: str, stderr: str) -> SinkReport:
        """The server side's report, where the tool has one."""
        return SinkReport()


# --- helpers for tools whose server side is a small POSIX shell script ---------------------------
