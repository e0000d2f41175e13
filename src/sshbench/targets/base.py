"""The one small interface every target implements (private OpenSSH, remote host; Dropbear and
a legacy-capable server later), in the manner of pre-commit's language back-ends."""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms, client_algorithms
from sshbench.capabilities import RawTcpControl, RawTcpMode, RemoteFacts
from sshbench.errors import RunError
from sshbench.host.cleanup import Cleanup

if TYPE_CHECKING:
    from sshbench.settings import TargetSpec
    from sshbench.targets.cpu_quota import CpuQuota


# Every client's options on every target: never a prompt (a run is unattended), and no connection sharing
# (a ControlMaster connection's rates were shown to differ from a connection of its own: docs/clock.md).
UNATTENDED_CLIENT_OPTIONS: tuple[str, ...] = ("-o", "BatchMode=yes", "-o", "ControlMaster=no", "-o", "ControlPath=none")


class Target(ABC):
    """A target; what the stages beside it (baselines) read is sshbench.capabilities.TargetCapabilities,
    which every Target satisfies through the defaults below."""

    kind: ClassVar[str]

    #: one line for headers and error messages, e.g. "private sshd 127.0.0.1:40211"
    label: str = ""
    #: the server's SSH software version, once known
    server_version: str | None = None
    #: a build sweep (--sshd A,B; sshbench.openssh.builds): this server's build label, "" otherwise
    sshd_build: str = ""
    #: the server runs on this machine and sees its files (no copying of download sources)
    shares_local_filesystem: ClassVar[bool] = False
    #: the ssh client program the target's own connections use (set-up commands, the login probe)
    ssh: str = "ssh"
    #: a remote target's host as given (`user@host` or an ssh_config alias); None: a server started here
    host: str | None = None
    #: a remote host's facts, read once at start (targets/remote_facts.py); None: a server started here
    facts: RemoteFacts | None = None
    #: what a kill -9'd earlier run left on a remote host and start() removed (for a notice)
    removed_leftovers: Sequence[str] = ()
    #: --server-cpu: the cgroup the server runs in (targets/cpu_quota.py); None: no quota of ours
    quota: CpuQuota | None = None

    # --- building one from a run's TargetSpec (the registry, sshbench.targets.SERVERS, calls these) ---

    @classmethod
    def check_spec(cls, spec: TargetSpec) -> None:
        """Refuse (UsageError, one line) this back-end's own options when they cannot work, before anything
        starts. Default: nothing to check."""

    @classmethod
    def from_spec(cls, spec: TargetSpec, env: dict[str, str] | None = None) -> Target:
        """The target for a run: `env` is the private server's environment (--no-aesni)."""
        raise NotImplementedError(f"{cls.__name__} is not built from a TargetSpec")

    @abstractmethod
    def start(self, cleanup: Cleanup) -> None:
        """Make the target reachable (start a daemon, probe a host); register everything to undo."""

    @abstractmethod
    def client_options(self) -> list[str]:
        """ssh options that pick the configuration, identity and host-key handling (no algorithms)."""

    @abstractmethod
    def destination(self) -> list[str]:
        """The trailing ssh arguments naming the host (and user)."""

    @abstractmethod
    def client_algorithms(self) -> ClientAlgorithms:
        """What the ssh client supports, with the defaults that apply to this target."""

    @abstractmethod
    def server_algorithms(self) -> ServerAlgorithms:
        """What the server offers."""

    def host_arg(self) -> str:
        """The host argument for ssh, scp (`host:path`), sftp and rsync."""
        return self.destination()[-1]

    # --- the server's filesystem (sinks, download sources); untimed helpers ---------------------

    def make_scratch_dir(self, where: str, cleanup: Cleanup) -> str:
        """A private dir on the server for sink files and download sources: `where` is "tmpfs"
        (/dev/shm) or "disk" (/var/tmp). Removed by `cleanup`."""
        base = "/dev/shm" if where == "tmpfs" else "/var/tmp"
        status, out = self.run_remote(
            f'd=$(mktemp -d {base}/sshbench-XXXXXX 2>/dev/null || mktemp -d /tmp/sshbench-XXXXXX) && echo "$d"'
        )
        path = out.strip().splitlines()[-1] if status == 0 and out.strip() else ""
        if not path.startswith("/"):
            raise RunError(f"cannot make a scratch dir on {self.label}: {out.strip() or 'no output'}")
        cleanup.push(lambda: None if self.run_remote(f"rm -rf '{path}'") else None)
        return path

    def run_remote(self, command: str, stdin_path: str | None = None, timeout_s: float = 600) -> tuple[int, str]:
        """Run a set-up command on the server (never timed): (exit status, stdout)."""

        argv = [
            *self.client_prefix(),
            self.ssh,
            *self.client_options(),
            *self.destination(),
            command,
        ]
        try:
            with open(stdin_path or "/dev/null", "rb") as stdin:
                done = subprocess.run(
                    argv,
                    stdin=stdin,
                    capture_output=True,
                    text=True,
                    timeout=timeout_s,
                    env=self.client_env(),
                    errors="replace",
                )
        except subprocess.TimeoutExpired:
            return 255, "timed out"
        return done.returncode, done.stdout if done.returncode == 0 else done.stderr

    def put_file(self, local: str, remote: str) -> None:
        """Copy a file to the server (for download sources)."""
        status, out = self.run_remote(f"cat > '{remote}'", stdin_path=local)
        if status != 0:
            raise RunError(f"cannot copy the payload to {self.label}:{remote}: {out.strip()}")

    def file_digest(self, path: str) -> tuple[int, str] | None:
        """(size, sha256) of a file on the server, or None where it cannot tell."""
        status, out = self.run_remote(f"wc -c < '{path}' && (sha256sum '{path}' 2>/dev/null || shasum -a 256 '{path}')")
        fields = out.split()
        if status != 0 or len(fields) < 2 or not fields[0].isdigit():
            return None
        return int(fields[0]), fields[1]

    def remove_file(self, path: str) -> None:
        self.run_remote(f"rm -f '{path}'")

    def server_cpu_total(self) -> float | None:
        """Cumulative CPU seconds of finished server sessions, for tools whose server side cannot
        report its own CPU (scp, sftp, rsync); None where unknowable (a remote host)."""
        return None

    def client_env(self) -> dict[str, str] | None:
        """The environment for client programs (None: ours)."""
        return None

    def client_prefix(self) -> list[str]:
        """argv prefix for every client program of a trial (e.g. `ip netns exec NS` for emulated links)."""
        return []

    def before_trial(self, combo) -> None:
        """Called right before each trial of `combo` on this target (e.g. to shape its link)."""

    def raw_tcp(self) -> RawTcpControl:
        """How the raw TCP control runs against this target: both ends here for a server on this machine;
        a remote target says otherwise."""
        if self.shares_local_filesystem:
            return RawTcpControl(RawTcpMode.LOCAL)
        return RawTcpControl(RawTcpMode.SKIPPED)

    def raw_tcp_path(self) -> dict | None:
        """Where the raw TCP control's sink and sender run when not on 127.0.0.1 (an emulated link); None: there."""
        return None

    def offer_client_builds(self, ssh_paths: list[str]) -> None:
        """A build sweep (--ssh A,B): the other client builds, whose algorithms a server started here may
        offer too. Default: nothing to do (a server whose lists are its own)."""

    def server_pid(self) -> int | None:
        """The server process sshbench started (its listener); None for one it did not start."""
        return None

    def link_details(self) -> dict[str, dict] | None:
        """Per emulated link: method, RTT, shaper counters (for `result.baselines["links"]`); None: no links."""
        return None

    def client_build_algorithms(self, ssh: str) -> ClientAlgorithms:
        """What another ssh build (--ssh A,B) speaks and defaults to against this target."""
        return client_algorithms(ssh, ["-F", "/dev/null"])

    def client_implementations(self) -> dict[str, ClientAlgorithms]:
        """The client implementations that can talk to this server, with what each supports
        (an AsyncSSH server adds its own client for the ciphers OpenSSH removed)."""
        return {"openssh": self.client_algorithms()}

    def alive(self) -> bool:
        """False once a target we started has died (a remote host cannot be told apart from a network error)."""
        return True

    def death_reason(self) -> str | None:
        return None

    def describe(self) -> dict:
        return {"kind": self.kind, "label": self.label, "server_version": self.server_version}


def probe(
    ssh: str,
    options: list[str],
    destination: list[str],
    timeout_s: float = 20.0,
    command: str = "true",
    prefix: list[str] | None = None,
) -> tuple[int, str]:
    """One real connection with `ssh -vv` (so the server's KEXINIT is printed): (exit status, log).
    `prefix`: the target's client_prefix() (e.g. `ip netns exec NS` for an emulated link)."""

    argv = [*(prefix or []), ssh, *options, "-vv", *destination, command]
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s, errors="replace"
        )
    except subprocess.TimeoutExpired:
        return 255, f"ssh: connection probe timed out after {timeout_s:.0f} s"
    except FileNotFoundError:
        return 127, f"ssh: {ssh} not found"
    return done.returncode, done.stderr
