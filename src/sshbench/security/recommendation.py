"""What a policy recommends: the policies themselves (minimum verdict levels per kind), the algorithms chosen for
each line with the figures measured for them, the ones left out and why, and the Ciphers/MACs/KexAlgorithms lines
and paste-ready snippet they make (security/config_lines.py writes each line). Built by policy.build; pure.

Policies (the verdict scale is in verdicts.py):
- modern: only `recommended` algorithms;
- compatible: `recommended` and `acceptable`;
- trusted-lan (seed 002's intranet case): also `weak` ciphers and MACs, each with a printed warning; never
  `broken` ones, and key exchanges stay at `acceptable` or better (the kex protects the session keys,
  whatever the network).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sshbench.security import terrapin
from sshbench.security.config_lines import OptionLine, option_line
from sshbench.security.verdicts import Level, Verdict, algorithm_verdict

POLICIES: dict[str, dict[str, Level]] = {
    "modern": {"cipher": Level.RECOMMENDED, "mac": Level.RECOMMENDED, "kex": Level.RECOMMENDED},
    "compatible": {"cipher": Level.ACCEPTABLE, "mac": Level.ACCEPTABLE, "kex": Level.ACCEPTABLE},
    "trusted-lan": {"cipher": Level.WEAK, "mac": Level.WEAK, "kex": Level.ACCEPTABLE},
}
POLICY_ORDER = ("modern", "compatible", "trusted-lan")  # strictest first
FOR_CHOICES = ("client", "server")
OPTION_NAMES = {"cipher": "Ciphers", "mac": "MACs", "kex": "KexAlgorithms"}


@dataclass
class Choice:
    """One algorithm on a recommended line, with what was measured for it."""

    kind: str
    name: str
    verdict: Verdict
    median_mib_s: float | None = None  # the median of its best-ranked combination
    measured_with: str = ""  # the rest of that combination
    handshake_ms: float | None = None  # kex only: median connection set-up
    # Decided faster than your ssh's own first choice (policy._ahead_of_default): the prefix lines move only these
    # ahead and leave the rest in your ssh's order (kex lines: every choice).
    first_group: bool = True

    def figure(self) -> str:
        if self.kind == "kex":
            return (
                f"{self.name} {self.handshake_ms:.0f} ms set-up"
                if self.handshake_ms is not None
                else f"{self.name} (set-up not measured)"
            )
        rate = f"{self.median_mib_s:.0f} MiB/s" if self.median_mib_s is not None else "not measured"
        return f"{self.name} {rate}" + (f" (with {self.measured_with})" if self.measured_with else "")


@dataclass
class LeftOut:
    kind: str
    name: str
    verdict: str
    measured: str
    why: str


@dataclass
class Recommendation:
    policy: str
    target: str  # "client" | "server"
    host_pattern: str
    run_label: str
    strict: terrapin.StrictKex
    ciphers: list[Choice] = field(default_factory=list)
    macs: list[Choice] = field(default_factory=list)
    kex: list[Choice] = field(default_factory=list)
    compression: str = "no"
    compression_note: str = ""
    left_out: list[LeftOut] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The client's default lists by kind (None: not recorded, a run stored by an older sshbench) and version.
    client_defaults: dict[str, list[str]] | None = None
    client_version: tuple[int, int] | None = None
    full_list: bool = False  # full replacement lists: sshd_config, a specific measured Host, or asked for

    def option_lines(self) -> list[OptionLine]:
        """Ciphers, MACs, KexAlgorithms as written (security/config_lines.py): prefixes that keep the
        client's other defaults under a shared Host pattern, full lists where `full_list`."""
        minimum = POLICIES[self.policy]
        out = []
        for kind, chosen in (("cipher", self.ciphers), ("mac", self.macs), ("kex", self.kex)):
            defaults = None if self.client_defaults is None else self.client_defaults.get(kind)

            def allowed(name: str, kind: str = kind) -> bool:
                return algorithm_verdict(kind, name, self.strict.negotiated).level >= minimum[kind]

            names = [c.name for c in chosen if self.full_list or c.first_group or kind == "kex"]
            line = option_line(OPTION_NAMES[kind], names or [c.name for c in chosen][:1], defaults, allowed,
                               self.client_version, self.full_list)  # fmt: skip
            if line is not None:
                out.append(line)
        return out

    def settings(self) -> dict[str, str]:
        """The option lines, in the order they are written (values as written: `^a,b`, `-x`, or a list)."""
        lines = {line.option: line.value for line in self.option_lines()}
        lines["Compression"] = self.compression
        return lines

    def offered(self, option: str) -> list[str] | None:
        """What the client offers for `option` with these lines (None: not known, its defaults unrecorded)."""
        for line in self.option_lines():
            if line.option == option:
                return line.offered
        kind = {v: k for k, v in OPTION_NAMES.items()}[option]
        return None if self.client_defaults is None else self.client_defaults.get(kind)

    def chosen(self) -> list[Choice]:
        return [*self.ciphers, *self.macs, *self.kex]

    def render(self) -> str:
        """The paste-ready snippet: each option line followed by a comment with the measured figures."""
        figures = {
            "Ciphers": "fastest first: " + ", ".join(c.figure() for c in self.ciphers),
            "MACs": "fastest first: " + ", ".join(m.figure() for m in self.macs),
            "KexAlgorithms": "quickest set-up first: " + ", ".join(k.figure() for k in self.kex),
        }
        comments = {
            line.option: [line.comment()] + ([figures[line.option]] if line.form != "remove" else [])
            for line in self.option_lines()
        }
        comments["Compression"] = [self.compression_note] if self.compression_note else []
        where = "~/.ssh/config" if self.target == "client" else "sshd_config"
        header = [
            f"# sshbench recommend --policy {self.policy} --for {self.target} ({where})",
            f"# from {self.run_label}; {self.strict.describe()}",
        ]
        header += [f"# WARNING: {w}" for w in self.warnings]
        indent = "    " if self.target == "client" else ""
        body: list[str] = []
        if self.target == "client":
            body.append(f"Host {self.host_pattern}")
        written = self.settings()
        for option, value in written.items():
            body.append(f"{indent}{option} {value}")
            body += [f"{indent}# {c}" for c in comments.get(option, [])]
        for option in ("Ciphers", "KexAlgorithms"):
            if option not in written:
                body.append(f"{indent}# (no {option} line: your ssh's defaults already put the fastest first)")
        if not self.macs and "MACs" not in written:
            body.append(f"{indent}# (no MACs line: every cipher above is AEAD and carries its own integrity)")
        return "\n".join(header + body) + "\n"
