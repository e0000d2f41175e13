"""scp, both protocols: `scp` (SFTP-based, OpenSSH 9.0+) and `scp -O` (the legacy SCP/RCP protocol),
reported as separate tools because they perform differently. scp passes -F/-i/-o/-v to ssh itself."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import ClassVar

from sshbench.tools.base import Invocation, TransferTool, TrialFiles


class ScpTool(TransferTool):
    name = "scp"
    program = "scp"
    protocol_flags: ClassVar[list[str]] = []

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        base = ["scp", *self.protocol_flags, "-q", *ssh_options, "-v"]
        if direction == "down":
            assert files.remote_source is not None
            return Invocation(argv=[*base, f"{host}:{files.remote_source}", files.local_sink])
        return Invocation(argv=[*base, files.local_source, f"{host}:{files.remote_sink}"])


class ScpLegacyTool(ScpTool):
    name = "scp-legacy"
    protocol_flags = ["-O"]

    def missing(self) -> str | None:
        reason = super().missing()
        if reason:
            return reason
        # scp before 8.7 has no -O (it only speaks the legacy protocol; plain `scp` is then legacy too)
        usage = subprocess.run(["scp"], capture_output=True, text=True, timeout=10).stderr
        if "O" not in usage.split("[", 1)[-1].split("]", 1)[0]:
            return "this scp has no -O option (it predates OpenSSH 8.7); its plain `scp` is the legacy protocol"
        return None
