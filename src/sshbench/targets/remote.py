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
from sshbench.capabilities import REMOTE_SKIP_NOTE, RawTcpControl, RawTcpMode, RemoteFacts
from sshbench.errors import RunError, UsageError
from sshbench.host.cleanup import Cleanup
from sshbench.openssh.sshlog import failure_reason, parse_ssh_log
from sshbench.settings import TargetSpec
from sshbench.targets.base import UNATTENDED_CLIENT_OPTIONS, Target, probe
from sshbench.targets.remote_facts import measure_rtt, read_facts
from sshbench.targets.remote_scratch import RemoteRecord, new_name, remove_stale


class RemoteHost(Target):
    kind = "remote"
    #: the raw TCP control runs with its sink on the remote (sshbench.baselines.raw_tcp_remote.RemoteTcpSink);
    #: start() sets it False when the remote has neither python3 nor nc and dd
    remote_raw_tcp = True

    @classmethod
    def from_spec(cls, spec: TargetSpec, env: dict[str, str] | None = None) -> RemoteHost:
        assert spec.host is not None
        host = cls(spec.host, ssh=spec.ssh, ssh_config=spec.ssh_config)
        host.raw_tcp_port = spec.raw_tcp_port
        return host

    def __init__(self, host: str, ssh: str = "ssh", ssh_config: str | None = None) -> None:
        if not host or host.startswith("-"):
            raise UsageError(f"not a host: {host!r}")
        self.host: str = host
        self.ssh = ssh
        self.ssh_config = ssh_config
        self.effective: dict[str, str] = {}
        self._client: ClientAlgorithms | None = None
        self._server: ServerAlgorithms | None = None
        self.label = host
        self.record: RemoteRecord | None = None
        self.raw_tcp_skip_reason: str | None = None
        #: what a kill -9'd earlier run left on this host and start() removed (for a notice)
        self.removed_leftovers: list[str] = []
        #: cores, machine id, OpenSSL version, python3 and the path's RTT, read once in start()
        self.facts: RemoteFacts = RemoteFacts()
        self.raw_tcp_port: int | None = None  # --raw-tcp-port: the control's port on the remote (None: any)

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
        identity = f"{user}@{hostname}:{port}"
        self.removed_leftovers = remove_stale(identity, lambda command: self.run_remote(command, None, 60))
        self.record = RemoteRecord(identity)
        # Read once: cores (CPU in cores of its own machine), machine id + OpenSSL (the server crypto
        # ceiling's cache key), python3 (the raw TCP control's sink), and the RTT of the direct path.
        self.facts = read_facts(self.run_remote)
        direct = (
            self.effective.get("proxycommand", "none") == "none" and self.effective.get("proxyjump", "none") == "none"
        )
        self.facts.rtt_s, self.facts.rtt_probes_ms = measure_rtt(hostname, port, direct)
        self.remote_raw_tcp = bool(self.facts.python3 or self.facts.nc)
        if not self.remote_raw_tcp:
            self.raw_tcp_skip_reason = (
                f"raw TCP control skipped: {self.host} has no python3 to run its sink, nor nc and dd"
            )

    def raw_tcp(self) -> RawTcpControl:
        if self.remote_raw_tcp:
            return RawTcpControl(RawTcpMode.REMOTE)
        return RawTcpControl(RawTcpMode.SKIPPED, self.raw_tcp_skip_reason or REMOTE_SKIP_NOTE)

    def raw_tcp_path(self) -> dict:
        """The raw TCP control: its sink started on the remote over ssh, the sender connecting to it directly."""
        return {
            "remote_ssh": [self.ssh, *self.client_options(), *self.destination()],
            "env": self.client_env(),
            "port": self.raw_tcp_port or 0,
            "host": self.host,
        }

    def make_scratch_dir(self, where: str, cleanup: Cleanup) -> str:
        """As Target's, but the path is recorded here before it is made there (remote_scratch), so that a
        kill -9'd run's dir is removed by the next run against this host."""
        if self.record is None:
            return super().make_scratch_dir(where, cleanup)
        record = self.record
        name = new_name()
        first = "/dev/shm" if where == "tmpfs" else "/var/tmp"
        candidates = [f"{base}/{name}" for base in (first, "/tmp")]
        record.add(candidates)
        status, out = self.run_remote(
            f'for d in {" ".join(candidates)}; do mkdir -m 700 "$d" 2>/dev/null && echo "$d" && exit 0; done; '
            "echo 'mkdir failed'; exit 1"
        )
        path = out.strip().splitlines()[-1] if status == 0 and out.strip() else ""
        if path not in candidates:
            record.discard(candidates)
            raise RunError(f"cannot make a scratch dir on {self.label}: {out.strip() or 'no output'}")

        def remove() -> None:
            if self.run_remote(f"rm -rf '{path}'")[0] == 0:
                record.discard(candidates)

        cleanup.push(remove)
        return path

    def client_options(self) -> list[str]:
        # The user's own configuration decides identity, port, proxy, known hosts; we only make it
        # non-interactive and keep connection sharing out of the measurement.
        return [
            *self._config_args(),
            *UNATTENDED_CLIENT_OPTIONS,
            "-o",
            "ConnectTimeout=10",
        ]

    def destination(self) -> list[str]:
        return [self.host]

    def client_build_algorithms(self, ssh: str) -> ClientAlgorithms:
        return client_algorithms(ssh, self._config_args(), self.host)  # the user's ssh_config's defaults

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
            "machine": self.facts.to_json(),
        }
