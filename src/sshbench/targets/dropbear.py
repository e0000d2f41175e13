"""`--server dropbear`: a private Dropbear server (Debian's `dropbear-bin`) on 127.0.0.1, for the routers,
NAS boxes and boards (seed 003's Bifferboard) that run Dropbear rather than OpenSSH.

Dropbear 2022.83 has no option for the authorized_keys path: it reads ~/.ssh/authorized_keys of the
login user, from the home directory the passwd database gives. Rather than touch the real one, the
daemon runs in a private mount namespace (`unshare --mount --propagation private`) where a copy of
/etc/passwd, with the login user's home pointing at sshbench's temp dir, is bind-mounted over the real
file. Nothing outside the namespace sees it and it disappears with the daemon, whatever kills it; the
user's real home (and its rc files) stays untouched and visible. Creating a mount namespace needs root:
as another user sshbench says so in one line.

Throughput: Dropbear's receive window (`-W`, default 24576 bytes, at most 10 MiB) caps uploads on
fast links; `--dropbear-window` sets it (chacha20-poly1305 went from 113 to 154 MiB/s with 8 MiB in the
research notes). Downloads are bounded by the OpenSSH client's own window instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from sshbench.errors import RunError, UsageError
from sshbench.host.cleanup import descendants
from sshbench.settings import TargetSpec
from sshbench.targets.private_server import PrivateServer

DROPBEAR_CANDIDATES = ("/usr/sbin/dropbear", "/usr/local/sbin/dropbear", "/usr/bin/dropbear")
INSTALL_HINT = "install it: apt-get install dropbear-bin"
DEFAULT_WINDOW = 24576  # Dropbear's own default receive window (bytes)
MAX_WINDOW = 10 * 1024 * 1024  # Dropbear refuses larger (MAX_RECV_WINDOW)


def find_dropbear() -> tuple[str, str]:
    """(dropbear, dropbearkey) paths, or RunError with the install command. $SSHBENCH_DROPBEAR names the
    daemon explicitly (a build of one's own; dropbearkey is looked for beside it first)."""
    explicit = os.environ.get("SSHBENCH_DROPBEAR")
    if explicit:
        beside = os.path.join(os.path.dirname(explicit), "dropbearkey")
        keygen = beside if os.access(beside, os.X_OK) else shutil.which("dropbearkey")
        if not os.access(explicit, os.X_OK) or not keygen:
            raise RunError(
                f"--server dropbear: Dropbear is not installed (SSHBENCH_DROPBEAR={explicit} "
                f"{'is not executable' if not os.access(explicit, os.X_OK) else 'has no dropbearkey'}); "
                f"{INSTALL_HINT}"
            )
        return explicit, keygen
    daemon = next((c for c in DROPBEAR_CANDIDATES if os.access(c, os.X_OK)), None) or shutil.which("dropbear")
    keygen = shutil.which("dropbearkey") or next(
        (c for c in ("/usr/bin/dropbearkey", "/usr/local/bin/dropbearkey") if os.access(c, os.X_OK)), None
    )
    if not daemon or not keygen:
        raise RunError(
            f"--server dropbear: Dropbear is not installed ({'dropbear' if not daemon else 'dropbearkey'} "
            f"not found); {INSTALL_HINT}"
        )
    return daemon, keygen


def check_window(window: int | None) -> None:
    if window is not None and not 1 <= window <= MAX_WINDOW:
        raise UsageError(f"--dropbear-window must be between 1 byte and 10M (Dropbear's maximum), got {window}")


class DropbearServer(PrivateServer):
    kind = "private-dropbear"
    server_name = "private dropbear"

    @classmethod
    def check_spec(cls, spec: TargetSpec) -> None:
        check_window(spec.dropbear_window)

    @classmethod
    def from_spec(cls, spec: TargetSpec, env: dict[str, str] | None = None) -> DropbearServer:
        return cls(ssh=spec.ssh, env=env, window=spec.dropbear_window)

    def __init__(self, ssh: str = "ssh", env: dict[str, str] | None = None, window: int | None = None) -> None:
        check_window(window)
        self.dropbear, self.dropbearkey = find_dropbear()
        if os.geteuid() != 0:
            raise RunError(
                "--server dropbear needs root here: Dropbear reads authorized_keys only from the login "
                "user's home, and sshbench gives it a private one in a mount namespace, which only root "
                "can create (use --server asyncssh as a normal user)"
            )
        self.unshare: str = shutil.which("unshare") or ""
        if not self.unshare:
            raise RunError("--server dropbear: unshare not found; install it: apt-get install util-linux")
        super().__init__(ssh=ssh, env=env)
        self.window = window  # None: Dropbear's default

    def _prepare(self) -> None:
        assert self.dir is not None
        try:
            subprocess.run(
                [self.dropbearkey, "-t", "ed25519", "-f", str(self.dir / "host_key")],
                check=True,
                capture_output=True,
                timeout=30,
            )
            shown = subprocess.run(
                [self.dropbearkey, "-y", "-f", str(self.dir / "host_key")],
                check=True,
                capture_output=True,
                text=True,
                timeout=30,
            )
        except subprocess.CalledProcessError as err:
            said = err.stderr.decode(errors="replace") if isinstance(err.stderr, bytes) else str(err.stderr)
            raise RunError(f"dropbearkey failed: {said.strip()}") from None
        line = next((ln for ln in shown.stdout.splitlines() if ln.startswith("ssh-ed25519 ")), "")
        if not line:
            raise RunError("dropbearkey -y printed no ssh-ed25519 public key")
        self._host_key = tuple(line.split()[:2])
        home = self.dir / "home"
        (home / ".ssh").mkdir(mode=0o700, parents=True)
        os.chmod(home, 0o700)
        authorized = home / ".ssh" / "authorized_keys"
        shutil.copy(self.dir / "client_key.pub", authorized)
        os.chmod(authorized, 0o600)
        (self.dir / "passwd").write_text(self._passwd_with_home(Path("/etc/passwd").read_text(), str(home)))

    def _passwd_with_home(self, passwd: str, home: str) -> str:
        """/etc/passwd with the login user's home directory (field 6) replaced."""
        out, found = [], False
        for line in passwd.splitlines():
            fields = line.split(":")
            if len(fields) == 7 and fields[0] == self.user:
                fields[5], found = home, True
            out.append(":".join(fields))
        if not found:
            raise RunError(
                f"--server dropbear: user {self.user} is not in /etc/passwd, so its home cannot be "
                "redirected to a private authorized_keys"
            )
        return "\n".join(out) + "\n"

    def _argv(self) -> list[str]:
        assert self.dir is not None
        daemon = [
            self.dropbear,
            "-F",
            "-E",  # foreground, log to stderr
            "-s",
            "-m",
            "-j",
            "-k",  # key-only login, no motd, no port forwarding
            "-P",
            str(self.dir / "dropbear.pid"),  # the default would clobber /var/run/dropbear.pid
            "-r",
            str(self.dir / "host_key"),
            "-p",
            f"127.0.0.1:{self.port}",
        ]
        if self.window is not None:
            daemon += ["-W", str(self.window)]
        # The bind mount lives and dies with the namespace; `exec` makes the daemon the process we track.
        script = 'mount --bind "$1" /etc/passwd && shift && exec "$@"'
        return [
            self.unshare,
            "--mount",
            "--propagation",
            "private",
            "--",
            "/bin/sh",
            "-c",
            script,
            "sh",
            str(self.dir / "passwd"),
            *daemon,
        ]

    def start(self, cleanup) -> None:
        super().start(cleanup)
        self.label += f" (receive window -W {self.window if self.window is not None else DEFAULT_WINDOW})"

    def _ready_line(self, line: str) -> bool:
        # Dropbear binds its listening sockets first, then says it stays in the foreground.
        return "Not backgrounding" in line

    def _host_public_key(self) -> tuple[str, str]:
        return self._host_key  # type: ignore[return-value]

    def server_cpu_total(self) -> float | None:
        # Dropbear forks one process per connection and reaps it itself: the listener's cutime+cstime,
        # read once the last connection's process is gone (bounded: it exits right after the client).
        if self.process is None:
            return None
        deadline = time.monotonic() + 5.0
        while descendants(self.process.pid) and time.monotonic() < deadline:
            time.sleep(0.005)  # bounded poll of the process table, not a synchronisation sleep
        return self._proc_cpu(include_children=True)

    def describe(self) -> dict:
        return {
            **super().describe(),
            "dropbear": self.dropbear,
            "receive_window": self.window if self.window is not None else DEFAULT_WINDOW,
            "receive_window_set": self.window is not None,
        }
