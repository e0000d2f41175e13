"""sftp in batch mode: one `put` (upload) or `get` (download) from a batch file."""

from __future__ import annotations

from pathlib import Path

from sshbench.tools.base import Invocation, TransferTool, TrialFiles


def _quote(path: str) -> str:
    # sftp batch commands take double-quoted paths with backslash escapes
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


class SftpTool(TransferTool):
    name = "sftp"
    program = "sftp"

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        batch = workdir / f"sftp-batch-{direction}"
        if direction == "down":
            assert files.remote_source is not None
            batch.write_text(f"get {_quote(files.remote_source)} {_quote(files.local_sink)}\n")
        else:
            batch.write_text(f"put {_quote(files.local_source)} {_quote(files.remote_sink)}\n")
        return Invocation(argv=["sftp", "-q", *ssh_options, "-v", "-b", str(batch), host])
