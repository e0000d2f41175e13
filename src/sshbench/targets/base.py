"""The one small interface every target implements (private OpenSSH, remote host; Dropbear and
a legacy-capable server later), in the manner of pre-commit's language back-ends."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from sshbench.algorithms import ClientAlgorithms, ServerAlgorithms
from sshbench.cleanup import Cleanup


class Target(ABC):
    kind: ClassVar[str]

    #: one line for headers and error messages, e.g. "private sshd 127.0.0.1:40211"
    label: str = ""
    #: the server's SSH software version, once known
    server_version: str | None = None

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

    def alive(self) -> bool:
        """False once a target we started has died (a remote host cannot be told apart from a network error)."""
        return True

    def death_reason(self) -> str | None:
        return None

    def describe(self) -> dict:
        return {"kind": self.kind, "label": self.label, "server_version": self.server_version}


def probe(ssh: str, options: list[str], destination: list[str], timeout_s: float = 20.0,
          command: str = "true") -> tuple[int, str]:
    """One real connection with `ssh -vv` (so the server's KEXINIT is printed): (exit status, log)."""
    import subprocess

    argv = [ssh, *options, "-vv", *destination, command]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout_s, errors="replace")
    except subprocess.TimeoutExpired:
        return 255, f"ssh: connection probe timed out after {timeout_s:.0f} s"
    except FileNotFoundError:
        return 127, f"ssh: {ssh} not found"
    return done.returncode, done.stderr
