"""A remote host, reached with the user's own ssh configuration (`user@host` or an ssh_config alias)."""

from __future__ import annotations

import subprocess

from sshbench.algorithms import (
    ClientAlgorithms,
    ServerAlgorithms,
    client_algorithms,
    kexinit,
    parse_ssh_G,
)
from sshbench.cleanup import Cleanup
from sshbench.errors import RunError, UsageError
from sshbench.settings import RunSettings
from sshbench.sshlog import failure_reason, parse_ssh_log
from sshbench.targets.base import Target, probe


class RemoteHost(Target):
    kind = "remote"

    @classmethod
    def from_settings(cls, settings: RunSettings, env: dict[str, str] | None = None) -> RemoteHost:
        assert settings.host is not None
        return cls(settings.host, ssh=settings.ssh, ssh_config=settings.ssh_config)

    def __init__(self, host: str, ssh: str = "ssh", ssh_config: str | None = None) -> None:
        if not host or host.startswith("-"):
            raise UsageError(f"not a host: {host!r}")
        self.host = host
        self.ssh = ssh
        self.ssh_config = ssh_config
        self.effective: dict[str, str] = {}
        self._client: ClientAlgorithms | None = None
        self._server: ServerAlgorithms | None = None
        self.label = host

    def _config_args(self) -> list[str]:
        return ["-F", self.ssh_config] if self.ssh_config else []

    def start(self, cleanup: Cleanup) -> None:
        try:
            out = subprocess.run(
                [self.ssh, *self._config_args(), "-G", self.host],
                capture_output=True,
                text=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise RunError(f"ssh client not found ({self.ssh}); install it: apt-get install openssh-client") from None
        if out.returncode != 0:
            raise UsageError(f"ssh -G {self.host} failed: {out.stderr.strip() or 'no output'}")
        self.effective = parse_ssh_G(out.stdout)
        user, hostname, port = self.effective.get("user"), self.effective.get("hostname"), self.effective.get("port")
        self.label = f"{self.host} ({user}@{hostname}:{port})"
        self._client = client_algorithms(self.ssh, self._config_args(), self.host)
        status, log = probe(self.ssh, self.client_options(), self.destination())
        server = kexinit.server_algorithms_from_log(log)
        if status != 0:
            raise RunError(f"cannot use {self.host}: {failure_reason(log)}")
        if server is None:
            raise RunError(f"{self.host}: the server's KEXINIT proposal was not in ssh -vv output")
        self.server_version = parse_ssh_log(log).remote_version
        self._client.strict_kex = kexinit.client_strict_kex_from_log(log)
        self._server = server

    def client_options(self) -> list[str]:
        # The user's own configuration decides identity, port, proxy, known hosts; we only make it
        # non-interactive and keep connection sharing out of the measurement.
        return [
            *self._config_args(),
            "-o",
            "BatchMode=yes",
            "-o",
            "ControlMaster=no",
            "-o",
            "ControlPath=none",
            "-o",
            "ConnectTimeout=10",
        ]

    def destination(self) -> list[str]:
        return [self.host]

    def client_algorithms(self) -> ClientAlgorithms:
        assert self._client is not None
        return self._client

    def server_algorithms(self) -> ServerAlgorithms:
        assert self._server is not None
        return self._server

    def describe(self) -> dict:
        return {
            **super().describe(),
            "host": self.host,
            "hostname": self.effective.get("hostname"),
            "port": self.effective.get("port"),
            "user": self.effective.get("user"),
        }
