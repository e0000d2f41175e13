"""The pipe tool with AsyncSSH's client (`sshbench.tools.asyncssh_client`) in place of ssh: the same remote
script (dd between /proc snapshots), the same stdin/stdout plumbing and the same parser, so an
`asyncssh/asyncssh` row is measured exactly like an `openssh/openssh` one; only the client differs."""

from __future__ import annotations

import sys
from pathlib import Path

from sshbench.algorithms.asyncssh_caps import asyncssh_algorithms
from sshbench.tools.base import Invocation, SinkReport, TransferTool, TrialFiles
from sshbench.tools.pipe import PipeTool


class AsyncsshPipeTool(TransferTool):
    name = "pipe"
    program = "asyncssh"  # shown in "exited with status" reasons
    reports_server_side = True
    start_gate = True  # the pipe's remote script
    source_on_stdin = True
    package = "asyncssh (pip)"

    def __init__(self) -> None:
        self._pipe = PipeTool()

    def missing(self) -> str | None:
        return asyncssh_algorithms().missing_reason

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        # A subprocess, not a coroutine in sshbench's own process: os.wait4 then measures its CPU alone.
        argv = [
            sys.executable,
            "-m",
            "sshbench.tools.asyncssh_client",
            *ssh_options,
            "-v",
            host,
            self._pipe.remote_command(direction, files),
        ]
        if direction == "down":
            return Invocation(argv=argv, stdin="/dev/null", stdout=files.local_sink)
        return Invocation(argv=argv, stdin=files.local_source, stdin_offset=files.local_source_offset)

    def parse_output(self, stdout: str, stderr: str) -> SinkReport:
        return self._pipe.parse_output(stdout, stderr)
