"""`split`: one file in N byte ranges over N ssh connections at once, reassembled in place at the other end
(mscp's idea, with nothing but ssh and dd on both ends). N is the combination's stream count (`-P N`).

Upload: N pipelines `dd if=FILE skip=K count=C | ssh HOST 'dd of=SINK seek=K conv=notrunc'`, started together
by one `sh`, which waits for all of them (its wait4 covers every ssh and dd: the client's CPU). Download: the
mirror image. Ranges are whole MiB blocks (the last one shorter); a reader from a pipe may get short blocks,
which dd writes as they come, so each range lands at its offset whatever the pipe delivers. The sink is a
file (the pieces must be reassembled: a /dev/null sink becomes tmpfs, as for rsync), and its SHA-256 is
compared with the payload's after the timed phase (TrialPaths.check_received: on for file sinks).

Each connection's `ssh -v` log is kept apart and appended to stderr at the end, followed by one
`Transferred:` line summing the N connections' own counts (sshlog reads the last one). A range whose
pipeline fails makes the trial invalid, and the `SSHBENCH-SPLIT` line on stderr names it."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

from sshbench.tools.base import Invocation, TransferTool, TrialFiles

BLOCK = 1 << 20  # dd bs: ranges are whole blocks
_SIZED_NAME = re.compile(r"-(\d+)$")  # a remote copy of a payload: .../source-KIND-SIZE (trial_files)


def ranges(size: int, streams: int) -> list[tuple[int, int]]:
    """(first block, block count) of each of `streams` ranges covering `size` bytes; an empty file gives
    `streams` empty ranges (a handshake trial still opens N connections)."""
    blocks = -(-size // BLOCK)
    per = -(-blocks // max(streams, 1)) if blocks else 0
    return [(i * per, max(min(per, blocks - i * per), 0)) for i in range(max(streams, 1))]


def source_size(files: TrialFiles, direction: str) -> int:
    """The bytes to split: the local payload's size, or (downloads) the remote source's, which is either
    this machine's file (a private server) or a copy whose name ends with its size."""
    path = files.local_source if direction == "up" else files.remote_source or ""
    if os.path.isfile(path):
        return os.path.getsize(path)
    sized = _SIZED_NAME.search(path)
    return int(sized.group(1)) if sized else 0


class SplitTool(TransferTool):
    name = "split"
    program = "ssh"
    splits_streams = True
    needs_file_sink = True

    def missing(self) -> str | None:

        for program in ("ssh", "dd", "sh", "awk"):
            if shutil.which(program) is None:
                return f"{program} not found; install it (openssh-client, coreutils, dash, mawk)"
        return None

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        size = source_size(files, direction)
        ssh_cmd = shlex.join([ssh, *ssh_options, "-v", host])
        logs = workdir / "split-logs"
        logs.mkdir(exist_ok=True)
        lines = []
        parts = ranges(size, files.streams)
        for index, (skip, count) in enumerate(parts):
            err = shlex.quote(str(logs / f"ssh-{index + 1}.err"))
            # A pipeline's status is its last command's (and `set -o pipefail` is not POSIX): the ssh side's
            # own status goes to a file.
            status = shlex.quote(str(logs / f"rc-{index + 1}"))
            if direction == "down":
                assert files.remote_source is not None
                remote = f"dd if={shlex.quote(files.remote_source)} bs={BLOCK} skip={skip} count={count} 2>/dev/null"
                local = f"dd of={shlex.quote(files.local_sink)} bs={BLOCK} seek={skip} conv=notrunc 2>/dev/null"
                pipeline = f"{{ {ssh_cmd} {shlex.quote(remote)} </dev/null 2>{err}; echo $? >{status}; }} | {local}"
            else:
                local = f"dd if={shlex.quote(files.local_source)} bs={BLOCK} skip={skip} count={count} 2>/dev/null"
                remote = f"dd of={shlex.quote(files.remote_sink)} bs={BLOCK} seek={skip} conv=notrunc 2>/dev/null"
                pipeline = f"{local} | {ssh_cmd} {shlex.quote(remote)} 2>{err}; echo $? >{status}"
            lines.append(f"( {pipeline} ) &")
        quoted_logs = shlex.quote(str(logs))
        script = "\n".join(
            [
                *lines,
                "wait",
                f"cat {quoted_logs}/ssh-*.err >&2",
                # One Transferred line for the N connections: their own counts summed, the longest time.
                'awk \'/^Transferred: sent/ { gsub(",", ""); s += $3; r += $5; if ($8 > t) t = $8 } '
                'END { printf "Transferred: sent %d, received %d bytes, in %.1f seconds\\n", s, r, t }\' '
                f"{quoted_logs}/ssh-*.err >&2",
                "rc=0",
                f"for i in {' '.join(str(i + 1) for i in range(len(parts)))}; do",
                f"  s=$(cat {quoted_logs}/rc-$i 2>/dev/null || echo 255)",
                f'  if [ "$s" != 0 ]; then echo "split: range $i of {len(parts)} exited with status $s" >&2; rc=$s; fi',
                "done",
                f"rm -rf {quoted_logs}",
                "exit $rc",
            ]
        )
        return Invocation(argv=["sh", "-c", script])
