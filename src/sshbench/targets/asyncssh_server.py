"""`--server asyncssh`: a private server written with AsyncSSH (`sshbench.targets.asyncssh_sshd`, a subprocess),
offering every algorithm the installed AsyncSSH and `cryptography` can still run, the ones OpenSSH removed
included (arcfour*, blowfish-cbc, cast128-cbc, 3des-cbc, hmac-md5*, ...).

Two clients talk to it: OpenSSH's (`openssh/asyncssh` rows, for what it still speaks) and AsyncSSH's own
(`asyncssh/asyncssh` rows, every cipher, so that the legacy ones are ranked beside modern references by
the same implementation). AsyncSSH is Python: its absolute rates are not comparable with OpenSSH's, its
relative ordering of ciphers is informative; the report says so.
"""

from __future__ import annotations

import sys

from sshbench.algorithms import ClientAlgorithms
from sshbench.algorithms.asyncssh_caps import AsyncsshAlgorithms, asyncssh_algorithms
from sshbench.errors import RunError
from sshbench.settings import TargetSpec
from sshbench.targets.private_server import PrivateServer, make_ssh_keypair

READY_PREFIX = "Server listening on 127.0.0.1 port "


class AsyncsshServer(PrivateServer):
    kind = "private-asyncssh"
    server_name = "private AsyncSSH server"

    @classmethod
    def from_spec(cls, spec: TargetSpec, env: dict[str, str] | None = None) -> AsyncsshServer:
        return cls(ssh=spec.ssh, env=env)

    def __init__(self, ssh: str = "ssh", env: dict[str, str] | None = None) -> None:
        self.algorithms: AsyncsshAlgorithms = asyncssh_algorithms()
        if self.algorithms.missing_reason:
            raise RunError(f"--server asyncssh: {self.algorithms.missing_reason}")
        super().__init__(ssh=ssh, env=env)

    def _prepare(self) -> None:
        assert self.dir is not None
        make_ssh_keypair(self.dir / "host_key", "sshbench-host_key")
        (self.dir / "authorized_keys").write_text((self.dir / "client_key.pub").read_text())
        (self.dir / "home").mkdir(mode=0o700)

    def _argv(self) -> list[str]:
        assert self.dir is not None
        # Port 0: the server binds a port the kernel picks and reports it (no free-port race).
        self.port = 0
        return [
            sys.executable,
            "-m",
            "sshbench.targets.asyncssh_sshd",
            "--host-key",
            str(self.dir / "host_key"),
            "--authorized-keys",
            str(self.dir / "authorized_keys"),
            "--home",
            str(self.dir / "home"),
        ]

    def _ready_line(self, line: str) -> bool:
        if line.startswith(READY_PREFIX):
            port = line[len(READY_PREFIX) :].rstrip(".")
            if port.isdigit():
                self.port = int(port)
                return True
        return False

    def _host_public_key(self) -> tuple[str, str]:
        assert self.dir is not None
        key_type, key_b64 = (self.dir / "host_key.pub").read_text().split()[:2]
        return key_type, key_b64

    def client_implementations(self) -> dict[str, ClientAlgorithms]:
        a = self.algorithms
        # Default kex: the one OpenSSH and AsyncSSH share first (curve25519-sha256), not AsyncSSH's own
        # first choice (mlkem768x25519, ~6x the CPU in Python), so both client rows of a sweep share a kex.
        shared_first = [k for k in ("curve25519-sha256",) if k in a.kex]
        own = ClientAlgorithms(
            ciphers=list(a.ciphers),
            macs=list(a.macs),
            kex=list(a.kex),
            aead_ciphers=set(a.aead_ciphers),
            default_ciphers=list(a.default_ciphers),
            default_macs=list(a.default_macs),
            default_kex=list(dict.fromkeys([*shared_first, *a.default_kex])),
        )
        return {"openssh": self.client_algorithms(), "asyncssh": own}

    def server_cpu_total(self) -> float | None:
        # One Python process serves every connection (and reaps the commands it runs).
        return self._proc_cpu(include_children=True)

    def describe(self) -> dict:
        return {
            **super().describe(),
            "asyncssh_version": self.algorithms.version,
            "unavailable": dict(self.algorithms.unavailable),
            "note": "AsyncSSH is Python: absolute rates are not comparable with OpenSSH's; "
            "the relative ordering of its ciphers is informative",
        }
