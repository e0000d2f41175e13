"""The tools users already run for parallel transfers over SSH, as transfer tools (where installed):

- `lftp` (`pget -n N` over sftp): N connections, each an OpenSSH `ssh` that lftp starts through
  `sftp:connect-program`, so the algorithms are pinned with the same -o options as every other tool and
  checked in `ssh -v` (written with `-E` to a log, appended to stderr at the end with one `Transferred:`
  line summing the connections). pget is a download: uploads run one connection (`put`).
- `rclone` (SFTP backend, `--multi-thread-streams N --multi-thread-cutoff 0`): Go's own SSH client. Its
  algorithms are pinned through `--sftp-ciphers/--sftp-macs/--sftp-key-exchange` where this rclone has them
  (1.64+); otherwise they cannot be pinned: its rows are the `rclone` client's own ("unpinned" cipher), said
  so in the report and never ranked with OpenSSH's. rclone's multi-thread copy writes to local files, so
  it too streams downloads only.
Both need a file sink (they write at offsets), verified by SHA-256 like every file sink.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import ClassVar

from sshbench.tools.base import Invocation, TransferTool, TrialFiles

_SUM_TRANSFERRED = (
    'awk \'/^Transferred: sent/ { gsub(",", ""); s += $3; r += $5; if ($8 > t) t = $8 } '
    'END { if (s + r) printf "Transferred: sent %d, received %d bytes, in %.1f seconds\\n", s, r, t }\''
)


def _option(ssh_options: list[str], name: str) -> str | None:
    """The value of `-o Name=value` in ssh options."""
    for flag, value in zip(ssh_options, ssh_options[1:]):
        if flag == "-o" and value.lower().startswith(name.lower() + "="):
            return value.split("=", 1)[1]
    return None


def rclone_known_hosts(ssh_options: list[str], host: str, workdir: Path) -> str:
    """The known_hosts file for rclone. Go's client has no HostKeyAlias (the emulated-link target's one
    entry for every path, direct or through a relay): the alias's entries are written under the address
    and port rclone connects to, in a file of the trial's own, so the host key is still checked."""
    known = _option(ssh_options, "UserKnownHostsFile") or ""
    alias = _option(ssh_options, "HostKeyAlias")
    if not alias or not known or not Path(known).is_file():
        return known
    port = _option(ssh_options, "Port") or "22"
    name = host if port == "22" else f"[{host}]:{port}"
    lines = [
        f"{name} {rest}"
        for line in Path(known).read_text().splitlines()
        if len(fields := line.split(maxsplit=1)) == 2
        for patterns, rest in [fields]
        if alias in patterns.split(",")
    ]
    own = workdir / "rclone_known_hosts"
    own.write_text("".join(f"{line}\n" for line in lines))
    return str(own)


def _identity(ssh_options: list[str]) -> str | None:
    return next((value for flag, value in zip(ssh_options, ssh_options[1:]) if flag == "-i"), None)


class LftpTool(TransferTool):
    name = "lftp"
    program = "lftp"
    package = "lftp"
    splits_streams = True
    needs_file_sink = True
    stream_directions: ClassVar[tuple[str, ...]] = ("down",)

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        log = workdir / "lftp-ssh.log"
        log.unlink(missing_ok=True)
        # lftp adds [-l USER] [-p PORT] HOST -s sftp; ssh -E keeps -v out of lftp's way.
        connect = shlex.join([ssh, "-a", "-x", *ssh_options, "-v", "-E", str(log)])
        user = _option(ssh_options, "User") or ""
        port = _option(ssh_options, "Port")
        url = f"sftp://{shlex.quote(user)}:@{host.rsplit('@', 1)[-1]}" + (f":{port}" if port else "")
        if direction == "down":
            assert files.remote_source is not None
            transfer = f"pget -n {files.streams} {shlex.quote(files.remote_source)} -o {shlex.quote(files.local_sink)}"
        else:
            transfer = f"put {shlex.quote(files.local_source)} -o {shlex.quote(files.remote_sink)}"
        commands = "; ".join(
            [
                "set sftp:connect-program " + '"' + connect.replace('"', '\\"') + '"',
                "set net:max-retries 1",
                "set net:reconnect-interval-base 1",
                "set cmd:fail-exit yes",
                "set xfer:clobber on",
                "set pget:min-chunk-size 1",
                f"open {url}",
                transfer,
            ]
        )
        script = f"lftp -c {shlex.quote(commands)}; rc=$?; cat {shlex.quote(str(log))} >&2 2>/dev/null; "
        script += f"{_SUM_TRANSFERRED} {shlex.quote(str(log))} >&2; exit $rc"
        return Invocation(argv=["sh", "-c", script])


@cache
def rclone_pins_algorithms(program: str = "rclone") -> bool:
    """rclone 1.64+ has --sftp-ciphers, --sftp-macs and --sftp-key-exchange."""
    try:
        flags = subprocess.run([program, "help", "flags", "sftp"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--sftp-ciphers" in flags and "--sftp-key-exchange" in flags


class RcloneTool(TransferTool):
    name = "rclone"
    program = "rclone"
    package = "rclone"
    splits_streams = True
    needs_file_sink = True
    stream_directions: ClassVar[tuple[str, ...]] = ("down",)
    client_name: ClassVar[str | None] = "rclone"  # Go's SSH client: ranked on its own
    compresses: ClassVar[bool] = False  # Go's SSH client has no zlib: Compression=yes would be ignored silently

    @property
    def pins(self) -> bool:
        return shutil.which(self.program) is not None and rclone_pins_algorithms(self.program)

    def invocation(
        self, ssh: str, ssh_options: list[str], host: str, direction: str, files: TrialFiles, workdir: Path
    ) -> Invocation:
        config = workdir / "rclone.conf"
        config.touch()
        remote = [
            "--config",
            str(config),
            "--sftp-host",
            host.rsplit("@", 1)[-1],
            "--sftp-user",
            _option(ssh_options, "User") or "",
            "--sftp-port",
            _option(ssh_options, "Port") or "22",
            "--sftp-key-file",
            _identity(ssh_options) or "",
            "--sftp-known-hosts-file",
            rclone_known_hosts(ssh_options, host.rsplit("@", 1)[-1], workdir),
            "--multi-thread-streams",
            str(files.streams),
            # every size is split (0 divides by zero in rclone 1.60: operations.go:448); 1 KiB is below MIN_SIZE
            "--multi-thread-cutoff",
            "1Ki",
            "--retries",
            "1",
            "--low-level-retries",
            "1",
            "--stats",
            "0",
        ]
        if self.pins:
            for name, flag in (
                ("Ciphers", "--sftp-ciphers"),
                ("MACs", "--sftp-macs"),
                ("KexAlgorithms", "--sftp-key-exchange"),
            ):
                if (value := _option(ssh_options, name)) is not None:
                    remote += [flag, value]
        if direction == "down":
            assert files.remote_source is not None
            return Invocation(argv=["rclone", "copyto", f":sftp:{files.remote_source}", files.local_sink, *remote])
        return Invocation(argv=["rclone", "copyto", files.local_source, f":sftp:{files.remote_sink}", *remote])
