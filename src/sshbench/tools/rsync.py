"""rsync over ssh: `rsync --whole-file -e "ssh <same options> -v" SRC DEST`.

--whole-file: no delta algorithm, every byte crosses the link (there is no previous copy anyway).
rsync still checksums the whole file on both ends (MD5 or xxhash, by version): part of its cost.
It writes a temp file and renames it into place, so it cannot write to /dev/null: with sink null
sshbench gives it a tmpfs sink (reported as such)."""

from __future__ import annotations

import shlex
from pathlib import Path

from sshbench.tools.base import Invocation, TransferTool, TrialFiles


class RsyncTool(TransferTool):
    name = "rsync"
    program = "rsync"
    package = "rsync"
    needs_file_sink = True

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        remote_shell = shlex.join([ssh, *ssh_options, "-v"])
        base = ["rsync", "--whole-file", "--no-compress", "-e", remote_shell]
        if direction == "down":
            assert files.remote_source is not None
            return Invocation(argv=[*base, f"{host}:{files.remote_source}", files.local_sink])
        return Invocation(argv=[*base, files.local_source, f"{host}:{files.remote_sink}"])
