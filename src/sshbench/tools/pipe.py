"""`ssh host 'cat > /dev/null' < payload`, the seeds' `cat file | ssh host wc -c`, with a clock.

The reader is `dd`, which prints its own elapsed time: it starts after session set-up and the
remote shell's rc files, and stops at end of data, so it is the data phase (see README)."""

from __future__ import annotations

from sshbench.tools.base import SinkReport, TransferTool, parse_marked, stat_snapshot_script, wrap_posix

READER = "LC_ALL=C dd of=/dev/null bs=1048576 2>&1"


class PipeTool(TransferTool):
    name = "pipe"

    def remote_command(self) -> str:
        return wrap_posix(stat_snapshot_script(READER))

    def parse_output(self, stdout: str) -> SinkReport:
        return parse_marked(stdout)
