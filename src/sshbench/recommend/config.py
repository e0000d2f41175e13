"""`sshbench recommend`: a paste-ready Ciphers/MACs/KexAlgorithms snippet from a measured run, fastest
first among what a policy allows, checked by one real connection before it is printed.

Policies (the verdict scale is in verdicts.py):
- modern: only `recommended` algorithms;
- compatible: `recommended` and `acceptable`;
- trusted-lan (seed 002's intranet case): also `weak` ciphers and MACs, each with a printed warning; never
  `broken` ones, and key exchanges stay at `acceptable` or better (the kex protects the session keys,
  whatever the network).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sshbench import summary
from sshbench.algorithms import strip_kex_pseudo
from sshbench.errors import RunError, UsageError
from sshbench.results import IMPLICIT_MAC, NO_COMPRESSION, RunResult
from sshbench.security import terrapin
from sshbench.security.verdicts import Level, Verdict, algorithm_verdict
from sshbench.summary import Summary

POLICIES: dict[str, dict[str, Level]] = {
    "modern": {"cipher": Level.RECOMMENDED, "mac": Level.RECOMMENDED, "kex": Level.RECOMMENDED},
    "compatible": {"cipher": Level.ACCEPTABLE, "mac": Level.ACCEPTABLE, "kex": Level.ACCEPTABLE},
    "trusted-lan": {"cipher": Level.WEAK, "mac": Level.WEAK, "kex": Level.ACCEPTABLE},
}
POLICY_ORDER = ("modern", "compatible", "trusted-lan")  # strictest first
FOR_CHOICES = ("client", "server")
OPTION_NAMES = {"cipher": "Ciphers", "mac": "MACs", "kex": "KexAlgorithms"}
VERIFY_TIMEOUT_S = 30.0


class NothingAllowed(RunError):
    """Every measured algorithm of some kind fails the policy."""


@dataclass
class Choice:
    """One algorithm on a recommended line, with what was measured for it."""

    kind: str
    name: str
    verdict: Verdict
    median_mib_s: float | None = None  # best median of the combinations that use it
    measured_with: str = ""  # the rest of that combination
    handshake_ms: float | None = None  # kex only: median connection set-up

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

    def settings(self) -> dict[str, str]:
        """The option lines, in the order they are written."""
        lines = {"Ciphers": ",".join(c.name for c in self.ciphers)}
        if self.macs:
            lines["MACs"] = ",".join(m.name for m in self.macs)
        lines["KexAlgorithms"] = ",".join(k.name for k in self.kex)
        lines["Compression"] = self.compression
        return lines

    def chosen(self) -> list[Choice]:
        return [*self.ciphers, *self.macs, *self.kex]

    def render(self) -> str:
        """The paste-ready snippet: each option line followed by a comment with the measured figures."""
        comments = {
            "Ciphers": "fastest first: " + ", ".join(c.figure() for c in self.ciphers),
            "MACs": "fastest first: " + ", ".join(m.figure() for m in self.macs),
            "KexAlgorithms": "quickest set-up first: " + ", ".join(k.figure() for k in self.kex),
            "Compression": self.compression_note,
        }
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
        for option, value in self.settings().items():
            body.append(f"{indent}{option} {value}")
            if comments.get(option):
                body.append(f"{indent}# {comments[option]}")
        if not self.macs:
            body.append(f"{indent}# (no MACs line: every cipher above is AEAD and carries its own integrity)")
        return "\n".join(header + body) + "\n"


def _best_by(summaries: list[Summary], key) -> dict[str, Summary]:
    best: dict[str, Summary] = {}
    for s in summaries:
        name = key(s)
        if name not in best or (s.median_mib_s or 0) > (best[name].median_mib_s or 0):
            best[name] = s
    return best


def _rate(s: Summary | None) -> str:
    return f"{s.median_mib_s:.0f} MiB/s" if s is not None and s.median_mib_s is not None else "-"


def build(
    result: RunResult, policy: str, target: str = "client", host_pattern: str | None = None, run_label: str = "the run"
) -> Recommendation:
    """Pick and order the algorithms; raises NothingAllowed (naming the closest policy that would give a
    set) when every measured algorithm of a kind fails `policy`."""
    if policy not in POLICIES:
        raise UsageError(f"unknown policy {policy!r}; choose one of: {', '.join(POLICY_ORDER)}")
    if target not in FOR_CHOICES:
        raise UsageError(f"--for must be client or server (got {target!r})")
    valid = [s for s in summary.summaries(result) if s.valid_trials > 0 and s.median_mib_s is not None]
    if not valid:
        raise RunError(f"{run_label} has no valid trials; nothing to recommend from (run `sshbench run` again)")
    try:
        return _build(result, valid, policy, target, host_pattern, run_label)
    except NothingAllowed as err:
        raise NothingAllowed(f"{err}; {_closest(result, valid, policy, target, host_pattern, run_label)}") from None


def _closest(
    result: RunResult, valid: list[Summary], policy: str, target: str, host_pattern: str | None, run_label: str
) -> str:
    for looser in POLICY_ORDER[POLICY_ORDER.index(policy) + 1 :]:
        try:
            rec = _build(result, valid, looser, target, host_pattern, run_label)
        except NothingAllowed:
            continue
        lines = "; ".join(f"{k} {v}" for k, v in rec.settings().items() if k != "Compression")
        return f"closest acceptable set (--policy {looser}): {lines}"
    return "no policy allows any measured set: measure safer algorithms (e.g. --ciphers 'aes*-gcm*')"


def _build(
    result: RunResult, valid: list[Summary], policy: str, target: str, host_pattern: str | None, run_label: str
) -> Recommendation:
    strict = terrapin.from_environment(result.environment)
    minimum = POLICIES[policy]
    measured_all = valid
    # Speeds for the Ciphers/MACs/Kex lines come from uncompressed transfers where the run has them:
    # compression is advised separately, from the crossover (_compression).
    valid = [s for s in valid if s.combination.compression == NO_COMPRESSION] or valid
    default_pattern = result.settings.host or "*"
    rec = Recommendation(
        policy=policy, target=target, host_pattern=host_pattern or default_pattern, run_label=run_label, strict=strict
    )

    def allowed(kind: str, verdict: Verdict) -> bool:
        return verdict.level >= minimum[kind]

    def leave_out(kind: str, name: str, verdict: Verdict, measured: str, why: str) -> None:
        rec.left_out.append(LeftOut(kind, name, verdict.label, measured, why))

    # MACs first: a non-AEAD cipher is usable only with an allowed MAC. A MAC's figure comes from the
    # combinations whose cipher the policy allows where there are any (a MAC timed with 3des-cbc says little).
    with_mac = [s for s in valid if s.combination.mac != IMPLICIT_MAC]
    with_allowed_cipher = [
        s for s in with_mac if allowed("cipher", algorithm_verdict("cipher", s.combination.cipher, strict.negotiated))
    ]
    mac_best = _best_by(with_allowed_cipher, lambda s: s.combination.mac)
    mac_best.update({k: v for k, v in _best_by(with_mac, lambda s: s.combination.mac).items() if k not in mac_best})
    for name, s in sorted(mac_best.items(), key=lambda kv: -(kv[1].median_mib_s or 0)):
        verdict = algorithm_verdict("mac", name)
        if allowed("mac", verdict):
            rec.macs.append(Choice("mac", name, verdict, s.median_mib_s, s.combination.cipher))
        else:
            leave_out(
                "mac",
                name,
                verdict,
                _rate(s),
                f"{verdict.reason}; policy {policy} needs {minimum['mac'].label} or better",
            )
    allowed_macs = {m.name for m in rec.macs}
    etm_allowed = any(m.endswith(terrapin.ETM_SUFFIX) for m in allowed_macs)

    cipher_best = _best_by(valid, lambda s: s.combination.cipher)
    aead = {s.combination.cipher for s in valid if s.combination.mac == IMPLICIT_MAC}
    for name, s in sorted(cipher_best.items(), key=lambda kv: -(kv[1].median_mib_s or 0)):
        verdict = algorithm_verdict("cipher", name, strict.negotiated)
        cipher_mac = "" if s.combination.mac == IMPLICIT_MAC else s.combination.mac
        if not allowed("cipher", verdict):
            leave_out(
                "cipher",
                name,
                verdict,
                _rate(s),
                f"{verdict.reason}; policy {policy} needs {minimum['cipher'].label} or better",
            )
        elif name not in aead and not allowed_macs:
            leave_out("cipher", name, verdict, _rate(s), f"not AEAD and no measured MAC meets policy {policy}")
        elif name.endswith("-cbc") and etm_allowed and not strict.negotiated:
            leave_out(
                "cipher",
                name,
                verdict,
                _rate(s),
                "CBC with the -etm MACs on the MACs line is Terrapin-affected (CVE-2023-48795) without strict kex",
            )
        else:
            rec.ciphers.append(Choice("cipher", name, verdict, s.median_mib_s, cipher_mac))
    if not rec.ciphers:
        raise NothingAllowed(
            f"none of the measured ciphers meets policy {policy} "
            f"({', '.join(f'{x.name} {x.verdict}' for x in rec.left_out if x.kind == 'cipher')})"
        )
    if all(c.name in aead for c in rec.ciphers):
        # No cipher on the line uses a MAC: the MACs line would be dead text (the dropped MACs stay explained).
        for m in rec.macs:
            leave_out(
                "mac",
                m.name,
                m.verdict,
                f"{m.median_mib_s:.0f} MiB/s" if m.median_mib_s else "-",
                "not needed: every recommended cipher is AEAD",
            )
        rec.macs = []

    handshake_ms = {h.kex: h.median_ms for h in summary.handshakes(result) if h.median_ms is not None}
    kex_names = strip_kex_pseudo(list(dict.fromkeys(s.combination.kex for s in valid)))
    for name in sorted(kex_names, key=lambda k: (handshake_ms.get(k) is None, handshake_ms.get(k) or 0.0)):
        verdict = algorithm_verdict("kex", name)
        measured = f"{handshake_ms[name]:.0f} ms" if name in handshake_ms else "-"
        if allowed("kex", verdict):
            rec.kex.append(Choice("kex", name, verdict, handshake_ms=handshake_ms.get(name)))
        else:
            leave_out(
                "kex",
                name,
                verdict,
                measured,
                f"{verdict.reason}; policy {policy} needs {minimum['kex'].label} or better",
            )
    if not rec.kex:
        raise NothingAllowed(
            f"none of the measured key exchanges meets policy {policy} "
            f"({', '.join(f'{x.name} {x.verdict}' for x in rec.left_out if x.kind == 'kex')})"
        )

    for choice in rec.chosen():
        if choice.verdict.level == Level.WEAK:
            rec.warnings.append(
                f"{choice.name} is weak ({choice.verdict.reason}): use it only on a network you trust end to end"
            )
    _compression(rec, measured_all, policy)
    return rec


def _compression(rec: Recommendation, valid: list[Summary], policy: str) -> None:
    """Compression advice from the measured crossover where the run measured both settings."""
    compressed = [s for s in valid if s.combination.compression != NO_COMPRESSION]
    if not compressed:
        rec.compression = "no"
        rec.compression_note = (
            "not measured in this run; off: zlib@openssh.com is weak (length leaks) and costs CPU on fast links"
        )
        return

    def same_but_compression(s: Summary) -> tuple:
        c = s.combination
        return c.cipher, c.mac, c.kex, c.tool, c.direction

    plain = {same_but_compression(s): s for s in valid if s.combination.compression == NO_COMPRESSION}
    pairs = [(s, plain[key]) for s in compressed if (key := same_but_compression(s)) in plain]
    faster = [(c, p) for c, p in pairs if (c.median_mib_s or 0) > (p.median_mib_s or 0)]
    figures = ", ".join(f"{c.combination.cipher}: {_rate(c)} compressed vs {_rate(p)}" for c, p in pairs[:3])
    verdict = algorithm_verdict("compression", "zlib@openssh.com")
    if faster and POLICIES[policy]["cipher"] <= verdict.level:
        rec.compression = "yes"
        rec.compression_note = f"compression was faster here ({figures})"
        rec.warnings.append(f"Compression yes is weak ({verdict.reason})")
    else:
        rec.compression = "no"
        why = "it was not faster here" if not faster else f"policy {policy} does not allow it ({verdict.reason})"
        rec.compression_note = f"off: {why}" + (f" ({figures})" if figures else "")


# --- verification: one real connection with exactly these settings --------------------------------


def sshd_syntax_check(rec: Recommendation, sshd: str | None = None) -> None:
    """`sshd -t -f` on the sshd_config lines (with a throwaway host key, which sshd -t insists on)."""
    from sshbench.targets.private_openssh import find_sshd

    sshd_path = find_sshd(sshd)
    with tempfile.TemporaryDirectory(prefix="sshbench-recommend-") as tmp:
        key = Path(tmp) / "host_key"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, capture_output=True, timeout=30
        )
        config = Path(tmp) / "sshd_config"
        config.write_text(f"HostKey {key}\n" + rec.render())
        done = subprocess.run(
            [sshd_path, "-t", "-f", str(config)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    if done.returncode != 0:
        raise RunError(
            f"sshd -t rejects the recommended sshd_config lines: "
            f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}; not printing them"
        )


def verify(rec: Recommendation, result: RunResult, sshd: str | None = None, ssh: str = "ssh") -> str:
    """Connect once to the run's target with exactly the recommended settings; one line saying what was
    negotiated. Raises RunError (the config is then not printed) when it does not connect."""
    from sshbench.cleanup import Cleanup, signals_raise
    from sshbench.settings import RunSettings
    from sshbench.sshlog import failure_reason, parse_negotiated
    from sshbench.targets import make_target
    from sshbench.targets.base import Target, probe
    from sshbench.targets.private_openssh import PrivateOpenSSH

    if rec.target == "server":
        sshd_syntax_check(rec, sshd)
    settings = rec.settings()
    host = result.settings.host
    cleanup = Cleanup()
    try:
        with signals_raise():
            target: Target
            if host is None:
                # The private sshd: with these lines in its sshd_config for --for server.
                extra = settings if rec.target == "server" else {}
                target = PrivateOpenSSH(sshd=sshd, ssh=ssh, extra_config=extra)
            elif rec.target == "server":
                # A remote server's sshd_config is not ours to change: check that it accepts these algorithms.
                target = make_target(RunSettings(host=host, ssh=ssh, ssh_config=result.settings.ssh_config))
            else:
                target = make_target(RunSettings(host=host, ssh=ssh, ssh_config=result.settings.ssh_config))
            target.start(cleanup)
            options = target.client_options()
            if rec.target == "client" or host is not None:
                options = _with_client_settings(options, rec, cleanup)
            status, log = probe(ssh, options, target.destination(), timeout_s=VERIFY_TIMEOUT_S)
    finally:
        cleanup.close()
    if status != 0:
        reason = failure_reason(log)
        raise RunError(f"the recommended settings did not connect to {target.label}: {reason}; not printing them")
    negotiated = parse_negotiated(log)
    lists = {"Ciphers": negotiated.cipher, "MACs": negotiated.mac, "KexAlgorithms": negotiated.kex}
    for option, got in lists.items():
        if (
            option in settings
            and got not in settings[option].split(",")
            and not (option == "MACs" and got == IMPLICIT_MAC)
        ):
            raise RunError(
                f"the test connection to {target.label} negotiated {option} {got}, which is not on the "
                f"recommended line; not printing it"
            )
    return (
        f"checked: connected to {target.label} with these settings (negotiated {negotiated.cipher}"
        f"{'' if negotiated.mac == IMPLICIT_MAC else ' + ' + str(negotiated.mac)}, {negotiated.kex})"
    )


def _with_client_settings(options: list[str], rec: Recommendation, cleanup) -> list[str]:
    """The target's ssh options, plus the recommended lines from a config file (`-F`) for the private sshd,
    or as `-o` options on top of the user's own config for a remote host."""
    if "-F" in options and options[options.index("-F") + 1] == "/dev/null":
        path = cleanup.make_temp_dir() / "ssh_config"
        # The same lines as the printed block, applying to any host (the Host pattern is the user's choice).
        path.write_text("".join(f"{k} {v}\n" for k, v in rec.settings().items()))
        index = options.index("-F")
        return [*options[:index], "-F", str(path), *options[index + 2 :]]
    extra: list[str] = []
    for option, value in rec.settings().items():
        extra += ["-o", f"{option}={value}"]
    return [*options, *extra]


def load_run(run_ref: str | None, from_json: str | None, db: str | None) -> tuple[RunResult, str]:
    """The run to recommend from: a `run --json`/export file, or a stored run (id or 'latest')."""
    from sshbench import store

    if from_json:
        doc, source = store.read_document(from_json)
        return store.result_from_document(doc, source), os.path.basename(from_json)
    ref = run_ref or "latest"
    with store.open_store(db, read_only=True) as opened:
        result = opened.load_result(ref)
    return result, f"run {result.run_id}" if result.run_id is not None else f"run {ref}"
