"""What the stages beside the targets may ask a target, typed: its facts, how the raw TCP control runs
against it, its host, and set-up commands on its server.

It sits in the layer just below `targets`, `tools` and `baselines` (pyproject.toml's import-linter
contract forbids those three to import each other), so `baselines` reads a target through
`TargetCapabilities` rather than probing an `object` with `getattr`. Every `targets.base.Target`
satisfies the protocol (its base class has the defaults; mypy checks it where the runner hands a
`Target` to `baselines`, and tests/targets/test_registry.py checks every `targets.SERVERS` entry).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Protocol, runtime_checkable

# The note a run gets when the raw TCP control cannot run against its target and says nothing more.
REMOTE_SKIP_NOTE = (
    "raw TCP control skipped: it runs only against a private server on this machine for now "
    "(a remote target needs a listener started on the remote)"
)


class RawTcpMode(enum.Enum):
    """Where the raw TCP control (sshbench.baselines.raw_tcp) puts its sink and sender."""

    LOCAL = "local"  # both on this machine, 127.0.0.1
    LINK = "link"  # both on this machine, across an emulated link's namespaces (Target.raw_tcp_path())
    REMOTE = "remote"  # the sink started on the remote over ssh, the sender here (Target.raw_tcp_path())
    SKIPPED = "skipped"  # it cannot run: RawTcpControl.skip_reason says why


@dataclass(frozen=True)
class RawTcpControl:
    mode: RawTcpMode
    skip_reason: str | None = None  # with SKIPPED: the run's note

    @property
    def runs(self) -> bool:
        return self.mode is not RawTcpMode.SKIPPED

    @property
    def both_directions(self) -> bool:
        """A remote host's control runs in each direction measured (the server sends for "down"); a local
        one uploads only (both ends are this machine)."""
        return self.mode is RawTcpMode.REMOTE


@dataclass
class RemoteFacts:
    """What a remote host is, read once per run (sshbench.targets.remote_facts reads them)."""

    machine: str | None = None  # uname -m
    machine_id: str | None = None
    cpu_lines: list[str] = field(default_factory=list)  # model name and flags lines, as the local cache key reads them
    openssl_version: str | None = None
    cores: int | None = None  # online CPUs of the remote machine
    python3: str | None = None  # path of the remote's python3, None without one
    nc: str | None = None  # path of its nc where dd is there too (the control's fallback sink)
    rtt_s: float | None = None  # median TCP connect time to the sshd (None: not measurable directly)
    rtt_probes_ms: list[float] = field(default_factory=list)

    def to_json(self) -> dict:
        found = asdict(self)
        found.pop("cpu_lines")
        found["cpu_model"] = next((ln.split(":", 1)[1].strip() for ln in self.cpu_lines if ":" in ln), None)
        return found


@runtime_checkable
class TargetCapabilities(Protocol):
    """The part of a target the baselines and experiments read (targets.base.Target has it all)."""

    #: one line for headers and error messages
    label: str
    #: the host a remote target was given (`user@host` or an ssh_config alias); None for a server started here
    host: str | None
    #: a remote host's cores, machine, OpenSSL, python3 and RTT; None for a server started here
    facts: RemoteFacts | None

    @property
    def shares_local_filesystem(self) -> bool:
        """The server runs on this machine and sees its files."""
        ...

    def raw_tcp(self) -> RawTcpControl:
        """How the raw TCP control runs against this target, or why it cannot."""
        ...

    def raw_tcp_path(self) -> dict | None:
        """Where the control's sink and sender run when not both on 127.0.0.1; None: there."""
        ...

    def run_remote(self, command: str, stdin_path: str | None = None, timeout_s: float = 600) -> tuple[int, str]:
        """Run a set-up command on the server (never timed): (exit status, stdout)."""
        ...

    def server_pid(self) -> int | None:
        """The pid of the server process sshbench started (its listener); None for one it did not start."""
        ...
