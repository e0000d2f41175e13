"""The private OpenSSH sshd behind an emulated link: sshd in a server network namespace, every client
program in a client namespace, the veth between them shaped per trial (sshbench.links).

One target serves every link profile of the run: `before_trial(combo)` applies `combo.link` (a tc
qdisc replace on both veth ends, read back before the trial), so trials of different links can be
interleaved like any other dimension. `loopback` here is the same veth left unshaped (no rate, no
delay): numbers of one run then all come from one sshd on one path, and the report labels it so.
"""

from __future__ import annotations

from sshbench.capabilities import RawTcpControl, RawTcpMode
from sshbench.host.cleanup import Cleanup
from sshbench.links import LinkProfile
from sshbench.links.namespaces import _find_tool, require_support
from sshbench.links.path import RAW_TCP_PORT, SERVER_ADDR, LinkPath
from sshbench.settings import TargetSpec
from sshbench.targets.private_openssh import PrivateOpenSSH

HOST_KEY_ALIAS = "sshbench-netns-sshd"  # one known_hosts entry for every path (direct or via a relay)


class NetnsOpenSSH(PrivateOpenSSH):
    kind = "netns-openssh"

    def __init__(
        self,
        links: list[LinkProfile],
        sshd: str | None = None,
        ssh: str = "ssh",
        env: dict[str, str] | None = None,
        index: int = 0,
        sshd_session: str | None = None,
    ) -> None:
        require_support(links)  # one clear line (exit 2) before anything is created
        super().__init__(sshd=sshd, ssh=ssh, env=env, sshd_session=sshd_session)
        self.path = LinkPath(links, index=index)
        self.listen_address = SERVER_ADDR
        self.current_link: str | None = None
        self._ip = _find_tool("ip") or "ip"
        self.link_report: dict[str, dict] = {}  # name -> LinkState.describe(), kept current for the report

    @classmethod
    def from_spec(cls, spec: TargetSpec, env: dict[str, str] | None = None) -> NetnsOpenSSH:
        """Every link of the run (loopback included) through one namespace pair (sshbench.links)."""
        target = cls(
            list(spec.links),
            sshd=spec.sshd,
            ssh=spec.ssh,
            env=env,
            index=spec.link_index,  # a build sweep: each sshd build behind a namespace pair of its own
            sshd_session=spec.sshd_session,
        )
        target.server_cpu = spec.server_cpu
        return target

    def start(self, cleanup: Cleanup) -> None:
        self.path.create(cleanup)
        super().start(cleanup)  # sshd in the server namespace; the login probe from the client one
        self.path.start_relays(self.port, cleanup)
        for name in self.path.states:
            self.path.measure_rtt(name, self.port)
        self.label = f"private sshd {SERVER_ADDR}:{self.port} in namespace {self.path.server_ns}"
        # Undone first (LIFO), while the qdiscs still exist: the last link's counters, then the report.
        cleanup.push(self._final_counters)
        self._refresh_report()

    def _final_counters(self) -> None:
        self.path.collect_counters()
        self._refresh_report()

    def _refresh_report(self) -> None:
        for name, state in self.path.states.items():
            self.link_report[name] = state.describe()

    # --- hooks of PrivateOpenSSH ------------------------------------------------------------------

    def server_prefix(self) -> list[str]:
        return [self._ip, "netns", "exec", self.path.server_ns]  # ip netns exec execs: the pid is sshd's

    def known_hosts_name(self) -> str:
        return HOST_KEY_ALIAS

    # --- the Target interface ---------------------------------------------------------------------

    def client_prefix(self) -> list[str]:
        return [self._ip, "netns", "exec", self.path.client_ns]

    def before_trial(self, combo) -> None:
        self.path.switch(combo.link)
        self.current_link = combo.link

    def _endpoint(self):
        name = self.current_link or next(iter(self.path.states))
        return self.path.endpoint(name, self.port) if self.path.states else None

    def client_options(self) -> list[str]:
        options = super().client_options()
        end = self._endpoint()
        port = end.port if end else self.port
        # ssh takes the first value of an option: replace the Port rather than append another.
        options = [f"Port={port}" if o.startswith("Port=") else o for o in options]
        return [*options, "-o", f"HostKeyAlias={HOST_KEY_ALIAS}"]

    def destination(self) -> list[str]:
        end = self._endpoint()
        return [end.host if end else SERVER_ADDR]

    def raw_tcp(self) -> RawTcpControl:
        return RawTcpControl(RawTcpMode.LINK)

    def raw_tcp_path(self):
        """For the raw TCP control over the current link (sshbench.baselines.raw_tcp)."""
        end = self.path.endpoint(self.current_link or next(iter(self.path.states)), self.port, "raw")
        return {
            "sink": (SERVER_ADDR, RAW_TCP_PORT),
            "sink_netns": self.path.server_ns,
            "connect": (end.host, end.port),
            "sender_netns": self.path.client_ns,
        }

    def link_details(self) -> dict[str, dict]:
        """The live per-link dict for `result.baselines["links"]` (updated at cleanup with the final counters)."""
        return self.link_report

    def describe(self) -> dict:
        return {**super().describe(), **self.path.describe()}
