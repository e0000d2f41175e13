"""The default target: a private OpenSSH sshd on 127.0.0.1 that sshbench starts and stops itself.

No root needed, no user accounts, nothing in ~/.ssh read or written: throwaway ed25519 keys, an
authorized_keys and a known_hosts in a private 0700 temp dir, and an `ssh -F /dev/null` client.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from sshbench.algorithms import (
    ClientAlgorithms,
    ServerAlgorithms,
    client_algorithms,
    kexinit,
    parse_ssh_G,
)
from sshbench.errors import RunError, UsageError
from sshbench.host.cleanup import Cleanup, descendants
from sshbench.openssh import builds, sshd_options
from sshbench.openssh.sshlog import failure_reason, parse_ssh_log
from sshbench.settings import TargetSpec
from sshbench.targets.base import probe
from sshbench.targets.cpu_quota import CpuQuota, CpuQuotaError
from sshbench.targets.local import LocalServer, PortTaken, free_port, make_ssh_keypair

SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd", "/usr/bin/sshd")
INSTALL_HINT = "install it: apt-get install openssh-server (or pass --sshd PATH)"

# Options that only some sshd versions know: dropped when `sshd -t` rejects them.
OPTIONAL_OPTIONS = sshd_options.OPTIONAL


def find_sshd(explicit: str | None) -> str:
    if explicit:
        path = shutil.which(explicit) if "/" not in explicit else explicit
        if path and os.path.exists(path) and not os.path.isfile(path):
            raise UsageError(f"--sshd {explicit} is not a program (a directory?); give the sshd binary")
        if not path or not os.access(path, os.X_OK):
            raise RunError(f"sshd not found at {explicit}; {INSTALL_HINT}")
        path = os.path.abspath(path)  # sshd re-exec needs an absolute path
        _check_openssh(path, explicit)
        return path
    for candidate in SSHD_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("sshd")
    if found:
        return os.path.abspath(found)
    raise RunError(f"sshd not found; {INSTALL_HINT}")


def _check_openssh(path: str, given: str) -> None:
    """An explicit --sshd must be OpenSSH's sshd (`sshd -V` names it; older ones print it with the usage)."""
    try:
        done = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as err:
        raise UsageError(f"--sshd {given} cannot be run: {err}") from None
    text = (done.stdout + done.stderr).strip()
    if "OpenSSH" not in text:
        first = text.splitlines()[0] if text else "no version output"
        raise UsageError(f"--sshd {given} is not OpenSSH's sshd (it says: {first[:80]}); give OpenSSH's sshd")


class PrivateOpenSSH(LocalServer):
    kind = "private-openssh"
    server_name = "private sshd"

    def __init__(
        self,
        sshd: str | None = None,
        ssh: str = "ssh",
        env: dict[str, str] | None = None,
        extra_config: dict[str, str] | None = None,
        server_cpu: float | None = None,
        sshd_session: str | None = None,
        login_probe: bool = True,
    ) -> None:
        self.sshd_path = find_sshd(sshd)
        # OpenSSH 9.8+ from an extracted or self-built tree: where its sshd-session/sshd-auth are (sshbench.openssh.builds)
        self.helper_config = dict(builds.inspect(self.sshd_path, "sshd", sshd_session).helpers) if sshd else {}
        # A build sweep's other client builds (--ssh A,B): the server offers what any of them speaks
        self.other_clients: list[str] = []
        # What the config offers: the primary client and those builds, read at start()
        self._offer: list[ClientAlgorithms] = []
        # --server-cpu: sshd (and every session it forks) in a cgroup with this many cores' quota
        self.server_cpu = server_cpu
        self.quota: CpuQuota | None = None
        self.quota_stats: dict[str, int] = {}
        super().__init__(ssh=ssh, env=env)
        # sshd_config lines that override ours (e.g. a narrower Ciphers list to emulate a strict server)
        self.extra_config = dict(extra_config or {})
        # Hooks for a subclass that runs sshd elsewhere (sshbench.targets.netns_openssh: a namespace).
        self.listen_address = "127.0.0.1"
        # start() logs in once (its own `ssh true`, ~0.2 s here: the server's version and strict-kex flag for the
        # run, and a clear line when the login fails). False for a caller whose next step is a connection of its
        # own that says what failed (recommend's check of a run's config lines: one connection, not two).
        self.login_probe = login_probe

    @classmethod
    def from_spec(cls, spec: TargetSpec, env: dict[str, str] | None = None) -> PrivateOpenSSH:
        """The private sshd on 127.0.0.1 (a run with emulated links gets targets.LINK_SERVERS' instead)."""
        return cls(
            sshd=spec.sshd,
            ssh=spec.ssh,
            env=env,
            server_cpu=spec.server_cpu,
            sshd_session=spec.sshd_session,
        )

    def offer_client_builds(self, ssh_paths: list[str]) -> None:
        self.other_clients = list(ssh_paths)

    # --- set-up -------------------------------------------------------------------------------

    def start(self, cleanup: Cleanup) -> None:
        self._client = client_algorithms(self.ssh, ["-F", "/dev/null"])
        # What the config offers: every algorithm any client build speaks (sshd -t then drops what it lacks)
        self._offer = [self._client] + [client_algorithms(path, ["-F", "/dev/null"]) for path in self.other_clients]
        self.dir = cleanup.make_temp_dir()
        self._make_keys()
        if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
            # sshd as root insists on its privilege-separation dir (the system service makes it).
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        last_error = ""
        for _attempt in range(5):  # another process may grab the free port before sshd binds it
            self.port = free_port()
            config = self._write_config()
            self._server = self._server_lists(config)
            try:
                self._launch(config, cleanup)
                break
            except PortTaken as err:
                last_error = str(err)
        else:
            raise RunError(f"private sshd could not bind a port: {last_error}")
        self.label = f"private sshd {self.listen_address}:{self.port}"
        host_key = (self.dir / "host_key.pub").read_text().split()
        (self.dir / "known_hosts").write_text(f"{self.known_hosts_name()} {host_key[0]} {host_key[1]}\n")
        if not self.login_probe:
            return
        status, log = probe(self.ssh, self.client_options(), self.destination(), prefix=self.client_prefix())
        if status != 0:
            reason = failure_reason(log)
            raise RunError(f"private sshd started but a login failed: {reason}; sshd said: {self.last_log_line()}")
        parsed = parse_ssh_log(log)
        self.server_version = parsed.remote_version
        self._server.strict_kex = kexinit.server_strict_kex_from_log(log)
        self._client.strict_kex = kexinit.client_strict_kex_from_log(log)

    def _make_keys(self) -> None:
        assert self.dir is not None
        for name in ("host_key", "client_key"):
            make_ssh_keypair(self.dir / name, f"sshbench-{name}")
        shutil.copy(self.dir / "client_key.pub", self.dir / "authorized_keys")
        os.chmod(self.dir / "authorized_keys", 0o600)

    def _config_lines(self, extra: dict[str, str]) -> list[str]:
        assert self.dir is not None and self._client is not None
        offer = self._offered()
        lines = {
            "ListenAddress": self.listen_address,
            "Port": str(self.port),
            **sshd_options.base_options(str(self.dir / "host_key"), str(self.dir / "authorized_keys"), self.user),
            "Compression": "yes",
            # Everything the client can speak; the server's own lists then come from `sshd -T`.
            "Ciphers": ",".join(offer["Ciphers"]),
            "MACs": ",".join(offer["MACs"]),
            "KexAlgorithms": ",".join(offer["KexAlgorithms"]),
            **self.helper_config,
        }
        lines.update(extra)
        lines.update(self.extra_config)
        return [f"{k} {v}" for k, v in lines.items() if v != ""]  # "": the line left out (sshd's default)

    def _write_config(self) -> Path:
        """Write a config sshd accepts: drop optional options it does not know, and algorithms it lacks."""
        assert self.dir is not None and self._client is not None
        path = self.dir / "sshd_config"
        extra = dict(OPTIONAL_OPTIONS, SetEnv=sshd_options.session_env(os.environ.get("PATH")))
        for _ in range(len(OPTIONAL_OPTIONS) + 4):
            path.write_text("\n".join(self._config_lines(extra)) + "\n")
            check = self._sshd_run(["-t", "-f", str(path)])
            if check.returncode == 0:
                return path
            msg = check.stderr
            bad = re.search(r"Bad configuration option: (\S+)|Unsupported option (\S+)", msg)
            spec = re.search(r"Bad SSH2 (cipher|mac|KexAlgorithms)(?: spec)? '([^']*)'", msg, re.I)
            if bad and (bad.group(1) or bad.group(2)) in extra:
                extra.pop(bad.group(1) or bad.group(2))
            elif spec:
                self._drop_unsupported(path, extra)
            else:
                raise RunError(
                    f"sshd rejects the private config: {msg.strip().splitlines()[-1] if msg.strip() else msg}"
                )
        raise RunError("could not write an sshd config this sshd accepts")

    def _drop_unsupported(self, path: Path, extra: dict[str, str]) -> None:
        """The client speaks something this sshd does not: keep only what sshd accepts one by one."""
        assert self._client is not None
        keep: dict[str, list[str]] = {}
        for option, names in self._offered().items():
            ok = []
            others = {o: "" for o in ("Ciphers", "MACs", "KexAlgorithms") if o != option}  # tested on their own
            # without the optional options (an unknown one fails every name; the caller's loop drops it after)
            base = {k: v for k, v in extra.items() if k not in OPTIONAL_OPTIONS}
            for name in names:
                path.write_text("\n".join(self._config_lines({**base, **others, option: name})) + "\n")
                if self._sshd_run(["-t", "-f", str(path)]).returncode == 0:
                    ok.append(name)
            keep[option] = ok
        for option, names in keep.items():
            extra[option] = ",".join(names)

    def _offered(self) -> dict[str, list[str]]:
        """Ciphers, MACs and kex of every client build, the primary one's order first."""
        clients: list[ClientAlgorithms | None] = list(self._offer) or [self._client]
        return {
            option: list(dict.fromkeys(name for c in clients if c is not None for name in getattr(c, attr)))
            for option, attr in (("Ciphers", "ciphers"), ("MACs", "macs"), ("KexAlgorithms", "kex"))
        }

    def _sshd_run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.sshd_path, *args], capture_output=True, text=True, timeout=30, env=self.env, stdin=subprocess.DEVNULL
        )

    def _server_lists(self, config: Path) -> ServerAlgorithms:
        out = self._sshd_run(["-T", "-f", str(config)])
        if out.returncode != 0:
            raise RunError(f"sshd -T failed: {out.stderr.strip()}")
        effective = parse_ssh_G(out.stdout)
        return ServerAlgorithms(
            ciphers=effective.get("ciphers", "").split(","),
            macs=effective.get("macs", "").split(","),
            kex=effective.get("kexalgorithms", "").split(","),
            compression=["none", "zlib@openssh.com"] if effective.get("compression") != "no" else ["none"],
        )

    def _launch(self, config: Path, cleanup: Cleanup) -> None:
        if self.server_cpu is not None and self.quota is None:
            # Made before sshd (so undone after it is stopped), removed with whatever is still inside.
            quota = CpuQuota(self.server_cpu)

            def remove() -> None:  # the counters are kept for describe(), read after the cleanup
                self.quota_stats = quota.throttled()
                quota.destroy(kill=True)

            cleanup.push(remove)
            try:
                quota.create()
            except CpuQuotaError as err:
                raise RunError(str(err)) from None
            self.quota = quota
        self._spawn([*self.server_prefix(), self.sshd_path, "-D", "-e", "-f", str(config)], cleanup, self.env)
        if self.quota is not None and self.process is not None:
            # Before the first connection (the login probe): every session sshd forks is born inside.
            try:
                self.quota.add(self.process.pid)
            except CpuQuotaError as err:
                raise RunError(str(err)) from None

    def _ready_line(self, line: str) -> bool:
        # sshd says "Server listening on 127.0.0.1 port N." once bound
        return line.startswith(f"Server listening on {self.listen_address}")

    def server_prefix(self) -> list[str]:
        """argv prefix for sshd (e.g. `ip netns exec NS`); it must exec sshd so that its pid is sshd's."""
        return []

    def known_hosts_name(self) -> str:
        """The host name ssh looks the host key up by."""
        return f"[{self.listen_address}]:{self.port}"

    # --- the interface ----------------------------------------------------------------------------

    def server_cpu_total(self) -> float | None:
        """The listener's cutime+cstime: every finished session it reaped. Right only when the session
        process is the listener's own child, i.e. run as root (a normal user's session is reaped
        elsewhere, see the research notes); waits (bounded) until the last session is reaped."""
        if os.geteuid() != 0 or self.process is None:
            return None
        deadline = time.monotonic() + 5.0
        while descendants(self.process.pid) and time.monotonic() < deadline:
            time.sleep(0.005)  # bounded: sshd reaps its session child right after the client leaves
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return None

    def describe(self) -> dict:
        described = {**super().describe(), "sshd": self.sshd_path, "port": self.port, "user": self.user}
        if self.sshd_build:
            described["sshd_build"] = self.sshd_build
        if self.quota is not None:
            stats = self.quota.throttled() or self.quota_stats
            described["server_cpu"] = {**self.quota.describe(), "throttled": stats}
        return described
