"""What the private non-OpenSSH servers (Dropbear, AsyncSSH) share with each other and, in spirit, with
the private sshd: a 0700 temp dir from the Cleanup stack, throwaway keys, 127.0.0.1 only, a daemon in
its own session tracked for Ctrl-C/SIGTERM/kill -9 recovery, readiness from a bounded wait on its own
log line and then a real `ssh -vv` login, and the server's lists read from its KEXINIT."""

from __future__ import annotations

import os
from abc import abstractmethod
from pathlib import Path

from sshbench.algorithms import (
    client_algorithms,
    kexinit,
)
from sshbench.errors import RunError
from sshbench.host.cleanup import Cleanup
from sshbench.openssh.sshlog import failure_reason, parse_ssh_log
from sshbench.targets.base import probe
from sshbench.targets.local import LocalServer, PortTaken, free_port, make_ssh_keypair


class PrivateServer(LocalServer):
    """A server sshbench starts on 127.0.0.1 and the OpenSSH client logs in to with a throwaway key."""

    def __init__(self, ssh: str = "ssh", env: dict[str, str] | None = None) -> None:
        super().__init__(ssh=ssh, env=env)

    # --- what each server does differently -------------------------------------------------------

    @abstractmethod
    def _prepare(self) -> None:
        """Host key and anything else in self.dir the daemon needs."""

    @abstractmethod
    def _argv(self) -> list[str]:
        """The daemon's command line for self.port (0 where the daemon picks and reports its port)."""

    @abstractmethod
    def _ready_line(self, line: str) -> bool:
        """True for the log line that says the daemon is listening (may set self.port)."""

    @abstractmethod
    def _host_public_key(self) -> tuple[str, str]:
        """(type, base64) of the host key, for known_hosts."""

    def _daemon_env(self) -> dict[str, str] | None:
        return self.env

    # --- set-up -----------------------------------------------------------------------------------

    def start(self, cleanup: Cleanup) -> None:
        self._client = client_algorithms(self.ssh, ["-F", "/dev/null"])
        self.dir = cleanup.make_temp_dir()
        make_ssh_keypair(self.dir / "client_key", "sshbench-client_key")
        self._prepare()
        last_error = ""
        for _attempt in range(5):
            try:
                self._launch(cleanup)
                break
            except PortTaken as err:
                last_error = str(err)
        else:
            raise RunError(f"{self.server_name} could not bind a port: {last_error}")
        self.label = f"{self.server_name} 127.0.0.1:{self.port}"
        key_type, key_b64 = self._host_public_key()
        (self.dir / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {key_type} {key_b64}\n")
        status, log = probe(self.ssh, self.client_options(), self.destination())
        if status != 0:
            reason = failure_reason(log)
            raise RunError(f"{self.server_name} started but a login failed: {reason}; it said: {self.last_log_line()}")
        self.server_version = parse_ssh_log(log).remote_version
        server = kexinit.server_algorithms_from_log(log)
        if server is None:
            raise RunError(f"{self.server_name}: its KEXINIT proposal was not in ssh -vv output")
        self._server = server
        self._client.strict_kex = kexinit.client_strict_kex_from_log(log)

    def _launch(self, cleanup: Cleanup) -> None:
        self.port = self.port or free_port()
        try:
            self._spawn(self._argv(), cleanup, self._daemon_env())
        except PortTaken:
            self.port = 0  # choose another next time
            raise

    # --- the interface ----------------------------------------------------------------------------

    def _proc_cpu(self, include_children: bool) -> float | None:
        if self.process is None:
            return None
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = int(fields[11]) + int(fields[12])  # utime, stime
            if include_children:
                ticks += int(fields[13]) + int(fields[14])  # cutime, cstime: reaped children
            return ticks / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return None

    def describe(self) -> dict:
        return {**super().describe(), "port": self.port, "user": self.user}
