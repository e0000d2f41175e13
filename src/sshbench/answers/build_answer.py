"""The conclusion of a build sweep (`--ssh A,B` / `--sshd A,B`, sshbench/openssh/builds.py): what changing builds
changes here, printed under the answer (answer.py).

- the upgrade: the first pairing (first --ssh build -> first --sshd build, "what you have") against the last
  (the last of each, "the upgrade"), and each other pairing against the first;
- for the fastest cipher (the top row's cipher and MAC) and for the default combination (what a connection
  with no options negotiates between those builds, environment `builds.pairings`): the paired ratio of
  their rates (intervals.paired_ratio_ci, rounds paired: every pairing runs in the same interleaved
  rounds) and whether that is faster, slower, the same (within --tie) or undecided;
- what the default negotiates per pairing when it differs (OpenSSH 10.0: mlkem768x25519-sha256; AES-GCM
  ahead of AES-CTR);
- the set-up per kex and build: median handshake time and client CPU of each kex a pairing measured.

Pure (summaries, trials and the environment), like answer.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sshbench.model import intervals, summary
from sshbench.model import statistics as stats
from sshbench.model.summary import Summary
from sshbench.results import IMPLICIT_MAC, Combination, RunResult

Pairing = tuple[str, str]  # (ssh build label, sshd build label); "" for a side not swept


@dataclass
class Comparison:
    """`pairing` against `baseline` for one algorithm choice: rate ratio (above 1: pairing is faster)."""

    what: str  # "fastest" | "default"
    pairing: Pairing
    baseline: Pairing
    name: str  # the algorithms compared, e.g. "aes128-gcm@openssh.com"
    kex: str  # the pairing's kex (may differ from the baseline's for the default)
    baseline_kex: str
    ratio: float | None
    low: float | None
    high: float | None
    decision: str  # "faster" | "slower" | "same speed" | "undecided" | "not measured"
    rate_mib_s: float | None = None
    baseline_mib_s: float | None = None

    def to_json(self) -> dict:
        return dict(self.__dict__, pairing=list(self.pairing), baseline=list(self.baseline))


@dataclass
class BuildAnswer:
    pairings: list[Pairing]
    defaults: dict[Pairing, dict] = field(default_factory=dict)  # what a connection with no options negotiates
    comparisons: list[Comparison] = field(default_factory=list)
    handshakes: list[dict] = field(default_factory=list)  # per kex and pairing: ms, client CPU ms

    def lines(self) -> list[str]:
        if len(self.pairings) < 2:
            return []
        base, upgrade = self.pairings[0], self.pairings[-1]
        out = [f"builds: {len(self.pairings)} pairings side by side (ssh -> sshd), compared with {pairing(base)}"]
        for c in self.comparisons:
            out.append("  " + _comparison_line(c))
        changed = [p for p in self.pairings if self.defaults.get(p) != self.defaults.get(base)]
        for p in changed:
            out.append(
                f"  default of {pairing(p)}: {_default_name(self.defaults.get(p))} (was {_default_name(self.defaults.get(base))})"
            )
        kexes = sorted({h["kex"] for h in self.handshakes})
        if len(kexes) > 1 or len(self.handshakes) > 1:
            out.append("  set-up per kex and build (median ms, client CPU ms):")
            for kex in kexes:
                cells = [
                    f"{pairing(tuple(h['pairing']))} {h['median_ms']:.0f} ms, {h['client_cpu_ms']:.1f} CPU"
                    for h in self.handshakes
                    if h["kex"] == kex and h["median_ms"] is not None and h["client_cpu_ms"] is not None
                ]
                if cells:
                    out.append(f"    {_short(kex)}: " + "; ".join(cells))
        if upgrade != base:
            out.append("  " + self._upgrade_line(base, upgrade))
        return out

    def _upgrade_line(self, base: Pairing, upgrade: Pairing) -> str:
        """One sentence: what moving from the first pairing to the last changes here."""
        parts = []
        old, new = self.defaults.get(base) or {}, self.defaults.get(upgrade) or {}
        if old.get("kex") != new.get("kex") and old and new:
            parts.append(
                f"kex {_short(old['kex'])} -> {_short(new['kex'])}{self._setup_change(base, upgrade, old, new)}"
            )
        if (old.get("cipher"), old.get("mac")) != (new.get("cipher"), new.get("mac")) and old and new:
            parts.append(f"default cipher {_default_name(old, kex=False)} -> {_default_name(new, kex=False)}")
        default = next((c for c in self.comparisons if c.what == "default" and c.pairing == upgrade), None)
        if default is not None and default.ratio is not None:
            parts.append(f"default's throughput {_verdict(default)}")
        fastest = next((c for c in self.comparisons if c.what == "fastest" and c.pairing == upgrade), None)
        if fastest is not None and fastest.ratio is not None:
            parts.append(f"{_short(fastest.name)}'s {_verdict(fastest)}")
        if not parts:
            return f"upgrade {pairing(base)} => {pairing(upgrade)}: nothing measured changes"
        return f"upgrade {pairing(base)} => {pairing(upgrade)}: " + "; ".join(parts)

    def _setup_change(self, base: Pairing, upgrade: Pairing, old: dict, new: dict) -> str:
        before = self._handshake(base, old["kex"])
        after = self._handshake(upgrade, new["kex"])
        if not (before and after) or before["median_ms"] is None or after["median_ms"] is None:
            return ""
        cpu = ""
        if before.get("client_cpu_ms") is not None and after.get("client_cpu_ms") is not None:
            cpu = f", client CPU {before['client_cpu_ms']:.0f} -> {after['client_cpu_ms']:.0f} ms"
        return f" (set-up {before['median_ms']:.0f} -> {after['median_ms']:.0f} ms{cpu})"

    def _handshake(self, p: Pairing, kex: str) -> dict | None:
        return next((h for h in self.handshakes if tuple(h["pairing"]) == p and h["kex"] == kex), None)

    def to_json(self) -> dict:
        return {
            "pairings": [list(p) for p in self.pairings],
            "defaults": [{"pairing": list(p), "negotiated": d} for p, d in self.defaults.items()],
            "comparisons": [c.to_json() for c in self.comparisons],
            "handshakes": self.handshakes,
            "lines": self.lines(),
        }


def pairing(p: Pairing) -> str:
    ssh, sshd = (label.removeprefix("OpenSSH_") for label in p)
    if ssh and sshd:
        return f"{ssh} -> {sshd}"
    return f"ssh {ssh}" if ssh else f"sshd {sshd}"


def _short(name: str) -> str:
    return name.removesuffix("@openssh.com")


def _default_name(d: dict | None, kex: bool = True) -> str:
    if not d:
        return "unknown"
    mac = "" if d.get("mac") == IMPLICIT_MAC else f" + {_short(d['mac'])}"
    return f"{_short(d['cipher'])}{mac}" + (f" ({_short(d['kex'])})" if kex else "")


def _verdict(c: Comparison) -> str:
    assert c.ratio is not None
    interval = f"{c.ratio:.2f}x ({c.low:.2f}-{c.high:.2f})"
    return {
        "faster": f"{interval}: faster",
        "slower": f"{interval}: slower",
        "same speed": f"{interval}: the same speed",
    }.get(c.decision, f"{interval}: undecided")


def _comparison_line(c: Comparison) -> str:
    what = "fastest" if c.what == "fastest" else "default"
    kex = _short(c.kex) if c.kex == c.baseline_kex else f"{_short(c.baseline_kex)} -> {_short(c.kex)}"
    if c.ratio is None:
        return f"{what} {_short(c.name)} ({kex}) on {pairing(c.pairing)}: not measured on both"
    rates = f"{c.rate_mib_s:.0f} vs {c.baseline_mib_s:.0f} MiB/s" if c.rate_mib_s and c.baseline_mib_s else ""
    return f"{what} {_short(c.name)} ({kex}) on {pairing(c.pairing)}: {_verdict(c)} ({rates})"


def pairing_of(combo: Combination) -> Pairing:
    return (combo.ssh_build, combo.sshd_build)


def compute(result: RunResult) -> BuildAnswer | None:
    """None unless the run swept builds (and measured an OpenSSH <-> OpenSSH row)."""
    rows = [
        s
        for s in summary.summaries(result)
        if (s.combination.ssh_build or s.combination.sshd_build)
        and not s.combination.remedy  # HPN-SSH added by --remedies: answers.remedies compares it
        and s.combination.client == "openssh"
        and s.combination.server == "openssh"
        and s.median_mib_s
    ]
    if not rows:
        return None
    found = (result.environment.get("builds") or {}).get("pairings") or []
    order = [(p.get("ssh_build", ""), p.get("sshd_build", "")) for p in found]
    measured = list(dict.fromkeys(pairing_of(s.combination) for s in rows))
    pairings = [p for p in order if p in measured] + [p for p in measured if p not in order]
    answer = BuildAnswer(pairings=pairings)
    answer.defaults = {
        (p.get("ssh_build", ""), p.get("sshd_build", "")): p["negotiated"] for p in found if p.get("negotiated")
    }
    by_round = summary.rates_by_round(result.trials)
    tie = result.settings.tie
    base = pairings[0]
    top = min(rows, key=lambda s: (s.rank or 10**6, -(s.median_mib_s or 0.0)))

    def setup(c: Combination) -> Combination:  # everything but the kex and the builds
        return Combination(**{**c.__dict__, "kex": "", "ssh_build": "", "sshd_build": ""})

    def find(p: Pairing, cipher: str, mac: str, like: Combination, kex: str | None = None) -> Summary | None:
        matches = [
            s
            for s in rows
            if pairing_of(s.combination) == p
            and (s.combination.cipher, s.combination.mac) == (cipher, mac)
            and (kex is None or s.combination.kex == kex)
            and setup(replace_algorithms(s.combination, like)) == setup(like)
        ]
        default_kex = (answer.defaults.get(p) or {}).get("kex")
        matches.sort(key=lambda s: s.combination.kex != default_kex)  # the pairing's own default kex first
        return matches[0] if matches else None

    for p in pairings[1:]:
        top_c = top.combination
        a = find(p, top_c.cipher, top_c.mac, top_c)
        b = find(base, top_c.cipher, top_c.mac, top_c)
        answer.comparisons.append(_compare("fastest", p, base, _name(top_c), a, b, by_round, tie))
        d_new, d_old = answer.defaults.get(p), answer.defaults.get(base)
        if d_new and d_old:
            a = find(p, d_new["cipher"], d_new["mac"], top_c, d_new["kex"])
            b = find(base, d_old["cipher"], d_old["mac"], top_c, d_old["kex"])
            name = _name_of(d_new) if _name_of(d_new) == _name_of(d_old) else f"{_name_of(d_old)} -> {_name_of(d_new)}"
            answer.comparisons.append(_compare("default", p, base, name, a, b, by_round, tie))
    for h in summary.handshakes(result):
        if (h.ssh_build or h.sshd_build) and h.client == "openssh" and h.server == "openssh":
            answer.handshakes.append(
                {
                    "kex": h.kex,
                    "pairing": [h.ssh_build, h.sshd_build],
                    "median_ms": h.median_ms,
                    "client_cpu_ms": h.client_cpu_ms,
                    "valid_trials": h.valid_trials,
                }
            )
    answer.handshakes.sort(
        key=lambda h: (h["kex"], pairings.index(tuple(h["pairing"])) if tuple(h["pairing"]) in pairings else 99)
    )
    return answer


def replace_algorithms(combo: Combination, like: Combination) -> Combination:
    return Combination(**{**combo.__dict__, "cipher": like.cipher, "mac": like.mac})


def _name(c: Combination) -> str:
    return c.cipher if c.mac == IMPLICIT_MAC else f"{c.cipher} + {c.mac}"


def _name_of(d: dict) -> str:
    return d["cipher"] if d["mac"] == IMPLICIT_MAC else f"{d['cipher']} + {d['mac']}"


def paired_verdict(a: dict[int, float], b: dict[int, float], tie: float) -> tuple[intervals.RatioEstimate, str]:
    """a's rate over b's, paired by round, and in words: "faster", "slower", "same speed" (within --tie), "undecided"."""
    estimate = intervals.paired_ratio_ci(a, b)
    decision = stats.compare_pair(estimate, tie)
    label = {"tied": "same speed", "undecided": "undecided"}.get(decision, "faster" if estimate.ratio > 1 else "slower")
    return estimate, label


def _compare(
    what: str,
    p: Pairing,
    base: Pairing,
    name: str,
    a: Summary | None,
    b: Summary | None,
    by_round: dict[Combination, dict[int, float]],
    tie: float,
) -> Comparison:
    if a is None or b is None or a.combination not in by_round or b.combination not in by_round:
        return Comparison(
            what,
            p,
            base,
            name,
            a.combination.kex if a else "-",
            b.combination.kex if b else "-",
            None,
            None,
            None,
            "not measured",
        )
    estimate, label = paired_verdict(by_round[a.combination], by_round[b.combination], tie)
    return Comparison(
        what,
        p,
        base,
        name,
        a.combination.kex,
        b.combination.kex,
        estimate.ratio,
        estimate.low,
        estimate.high,
        label,
        a.median_mib_s,
        b.median_mib_s,
    )


__all__ = ["BuildAnswer", "Comparison", "compute", "paired_verdict", "pairing"]
