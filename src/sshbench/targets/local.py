"""What every server sshbench starts on this machine shares (the private sshd, Dropbear, AsyncSSH):
throwaway keys, a free port, the isolated OpenSSH client options, the daemon's life and death, and a
filesystem the client also sees (sink files and download sources are local files)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms
from sshbench.errors import RunError
from sshbench.host.cleanup import Cleanup, disk_dir, held_stop
from sshbench.host.placement import Placement
from sshbench.measure.payload import sha256_of
from sshbench.targets.base import UNATTENDED_CLIENT_OPTIONS, Target

READY_TIMEOUT_S = 15.0  # a daemon that has not said it listens by then is reported, not waited for


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PortTaken(Exception):
    """Another process bound the port between our choice and the daemon's bind: try another."""


def make_ssh_keypair(path: Path, comment: str) -> None:
    try:
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
            check=True,
            capture_output=True,
            timeout=30,
        )
    except FileNotFoundError:
        raise RunError("ssh-keygen not found; install it: apt-get install openssh-client") from None
    except subprocess.CalledProcessError as err:
        raise RunError(f"ssh-keygen failed: {err.stderr.decode(errors='replace').strip()}") from None


class LocalServer(Target):
    """A daemon sshbench started here (`self.process`), reached by an OpenSSH client that reads
    nothing of the user's: keys and known_hosts live in the private dir `self.dir`."""

    shares_local_filesystem = True
    #: the daemon's name in messages ("private sshd", "private dropbear")
    server_name: str = "private server"
    #: the CPUs of the client and of the daemon (sshbench.host.placement, --pin); None: wherever the scheduler puts them
    placement: Placement | None = None

    def __init__(self, ssh: str = "ssh", env: dict[str, str] | None = None) -> None:
        self.ssh = ssh
        self.env = env  # the daemon's and the clients' environment (--no-aesni), None: ours
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.port = 0
        self.dir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.log: deque[str] = deque(maxlen=200)  # the daemon's recent log lines, for error messages
        self._ready = threading.Event()
        self._drain_done = threading.Event()
        self._client: ClientAlgorithms | None = None
        self._server: ServerAlgorithms | None = None
        self.label = f"{self.server_name} on 127.0.0.1"

    def server_pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def client_prefix(self) -> list[str]:
        return self.placement.client_prefix() if self.placement is not None else []

    def describe(self) -> dict:
        described = super().describe()
        if self.placement is not None:
            described["placement"] = self.placement.describe()
        return described

    # --- the daemon ---------------------------------------------------------------------------------

    def _ready_line(self, line: str) -> bool:
        """True for the log line the daemon prints once it listens (each server says it its own way)."""
        raise NotImplementedError

    def _spawn(self, argv: list[str], cleanup: Cleanup, env: dict[str, str] | None) -> None:
        """Start the daemon in its own session (our signal handling stops it, in order, not the
        terminal's), track it for cleanup, drain its stderr into self.log, and wait (bounded) for its
        ready line. Raises PortTaken when another process got the port first."""
        self._ready.clear()
        self._drain_done = threading.Event()
        if self.placement is not None:
            argv = [*self.placement.server_prefix(), *argv]
        with held_stop():  # started and recorded for its cleanup as one step
            try:
                self.process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    env=env,
                )
            except FileNotFoundError as err:
                raise RunError(f"{self.server_name}: cannot run {argv[0]}: {err.strerror}") from None
            cleanup.track_process(self.process.pid)
        threading.Thread(target=self._drain_log, args=(self.process,), daemon=True).start()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self._ready.wait(timeout=0.05):
            if self.process.poll() is not None:
                self._drain_done.wait(timeout=2)
                text = " ".join(self.log)
                if "Address already in use" in text:
                    raise PortTaken(text)
                raise RunError(
                    f"{self.server_name} exited at start ({self.process.returncode}): {self.last_log_line()}"
                )
            if time.monotonic() > deadline:
                raise RunError(
                    f"{self.server_name} did not start listening within {READY_TIMEOUT_S:.0f} s: {self.last_log_line()}"
                )

    def _drain_log(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.log.append(line)
            if not self._ready.is_set() and self._ready_line(line):
                self._ready.set()
        self._drain_done.set()

    # --- the interface ----------------------------------------------------------------------------

    def client_options(self) -> list[str]:
        # Only -F, -i and -o: ssh, scp, sftp, rsync's `-e ssh` and sshbench.tools.asyncssh_client take them alike.
        assert self.dir is not None
        return [
            "-F",
            "/dev/null",  # never the user's ssh_config
            "-i",
            str(self.dir / "client_key"),
            "-o",
            f"Port={self.port}",
            "-o",
            f"User={self.user}",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "IdentityAgent=none",
            "-o",
            f"UserKnownHostsFile={self.dir / 'known_hosts'}",
            "-o",
            "GlobalKnownHostsFile=/dev/null",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "HostKeyAlgorithms=ssh-ed25519",
            "-o",
            "UpdateHostKeys=no",
            *UNATTENDED_CLIENT_OPTIONS,
            "-o",
            "ForwardAgent=no",
            "-o",
            "ForwardX11=no",
            "-o",
            "ConnectTimeout=10",
        ]

    def destination(self) -> list[str]:
        return ["127.0.0.1"]

    def client_algorithms(self) -> ClientAlgorithms:
        assert self._client is not None, "start() first"
        return self._client

    def server_algorithms(self) -> ServerAlgorithms:
        assert self._server is not None, "start() first"
        return self._server

    def last_log_line(self) -> str:
        """The daemon's last log line, for error messages."""
        return self.log[-1] if self.log else "(no output)"

    def client_env(self) -> dict[str, str] | None:
        return self.env

    # The server shares this machine's filesystem: its scratch dirs and files are local.

    def make_scratch_dir(self, where: str, cleanup: Cleanup) -> str:
        if where == "tmpfs":
            return str(cleanup.make_temp_dir(prefer_shm=True))
        return str(cleanup.make_temp_dir(base_dir=disk_dir()))

    def put_file(self, local: str, remote: str) -> None:
        shutil.copyfile(local, remote)

    def file_digest(self, path: str) -> tuple[int, str] | None:
        try:
            return os.path.getsize(path), sha256_of(Path(path))
        except OSError:
            return None

    def remove_file(self, path: str) -> None:
        Path(path).unlink(missing_ok=True)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def death_reason(self) -> str | None:
        if self.process is None or self.process.poll() is None:
            return None
        code = self.process.returncode
        how = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
        return f"the {self.server_name} {how}"
