"""`ssh host 'cat > SINK' < payload` (and `ssh host 'cat SRC' > SINK`), the seeds' `cat file | ssh host wc -c`,
with a clock.

The server side is `dd`, which prints its own elapsed time: it starts after session set-up and the
remote shell's rc files, and stops at end of data, so it is the data phase (see docs/measurement.md). Downloads:
dd's clock stops when the last byte enters sshd, up to one channel window (2 MiB) before the client
has it all (3% of 64 MiB); the bytes the client had not yet acknowledged then extend it
(clock.download_tail_bytes)."""

from __future__ import annotations

import shlex
from pathlib import Path

from sshbench.tools.base import Invocation, SinkReport, TransferTool, TrialFiles
from sshbench.tools.remote_report import gate_script, parse_marked, stat_snapshot_script, wrap_posix


class PipeTool(TransferTool):
    name = "pipe"
    program = "ssh"
    reports_server_side = True
    start_gate = True
    source_on_stdin = True

    def remote_command(self, direction: str = "up", files: TrialFiles | None = None) -> str:
        gate = files.gate if files is not None else None
        # -P N: wait at the start barrier first (its data phase then starts with every other stream's)
        wait = gate_script(gate.arrive, gate.go, gate.stream) if gate is not None else ""
        if direction == "down":
            assert files is not None and files.remote_source is not None
            # data on stdout; dd's summary and our report on stderr
            reader = f"LC_ALL=C dd if={shlex.quote(files.remote_source)} bs=1048576"
            return wrap_posix(wait + stat_snapshot_script(reader, report_fd=2))
        sink = files.remote_sink if files else "/dev/null"
        return wrap_posix(wait + stat_snapshot_script(f"LC_ALL=C dd of={shlex.quote(sink)} bs=1048576 2>&1"))

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        argv = [ssh, *ssh_options, "-v", host, self.remote_command(direction, files)]
        if direction == "down":
            return Invocation(argv=argv, stdin="/dev/null", stdout=files.local_sink)
        return Invocation(argv=argv, stdin=files.local_source, stdin_offset=files.local_source_offset)

    def parse_output(self, stdout: str, stderr: str) -> SinkReport:
        # up: the report is on stdout; down: on stderr (stdout was the data)
        return parse_marked(stdout if "SSHBENCH-" in stdout else stderr)
